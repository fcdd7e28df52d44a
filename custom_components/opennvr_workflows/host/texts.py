"""User-visible texts the host writes itself (phone cards, the answer page, logbook lines),
read from the integration's translations in Home Assistant's language.

They live in ``strings.json`` under ``exceptions`` (the only backend category Home
Assistant lets an integration read for free text), each as ``{"message": ...}`` with
``{placeholders}``. A text that is missing or malformed shows its key rather than failing.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.helpers.translation import async_get_translations

from ..const import DOMAIN

_LOGGER = logging.getLogger(__name__)


class Texts:
    """``texts(key, placeholders)`` in the configured language (English as a fallback)."""

    def __init__(self, hass: HomeAssistant) -> None:
        self._hass = hass
        self._strings: dict[str, str] = {}

    async def async_load(self) -> None:
        self._strings = await async_get_translations(
            self._hass, self._hass.config.language, "exceptions", {DOMAIN}
        )

    def __call__(self, key: str, placeholders: Mapping[str, Any]) -> str:
        template = self._strings.get(f"component.{DOMAIN}.exceptions.{key}.message")
        if template is None:
            _LOGGER.debug("No text %s", key)
            return key
        try:
            return template.format(**placeholders)
        except (KeyError, IndexError, ValueError):
            _LOGGER.debug("Text %s does not take %s", key, sorted(placeholders))
            return template
