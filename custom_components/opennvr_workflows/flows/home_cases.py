"""The options' *Own cases and measuring* page: the form and what it saves.

Keeping marked runs as cases stores pictures of the home's cameras on disk, so it is off
until the homeowner turns it on, with a retention period and a size cap beside it
(:class:`..host.cases.store.HomeCaseSettings`). The same page can require each workflow
with an Investigate step to have its own measured bound before it goes On.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import probatio as vol
from homeassistant.helpers.selector import (
    BooleanSelector,
    NumberSelector,
    NumberSelectorConfig,
    NumberSelectorMode,
)

from ..host.cases.store import CONF_HOME_CASES, HomeCaseSettings


def home_cases_schema(options: Mapping[str, Any]) -> vol.Schema:
    """The page's fields, filled with what is stored."""
    current = HomeCaseSettings.from_options(options)
    fields: dict[Any, Any] = {vol.Required("keep", default=current.keep): BooleanSelector()}
    for key, (low, high) in HomeCaseSettings.RANGES.items():
        fields[vol.Required(key, default=getattr(current, key))] = NumberSelector(
            NumberSelectorConfig(min=low, max=high, step=1, mode=NumberSelectorMode.BOX)
        )
    fields[vol.Required("require_measured", default=current.require_measured)] = BooleanSelector()
    return vol.Schema(fields)


def home_cases_option(user_input: Mapping[str, Any]) -> dict[str, Any]:
    """The option the page saves (numbers kept within their bounds)."""
    return {
        CONF_HOME_CASES: HomeCaseSettings.from_options(
            {CONF_HOME_CASES: {**user_input, "keep": bool(user_input.get("keep"))}}
        ).as_option()
    }
