"""One entry's own evaluation: its kept cases and its measurements, started with it.

:class:`HomeEvaluation` is what the actions, the options, the *Accuracy* sensor and the
State doors reach through ``entry.runtime_data.evaluation``. The cases' bounds (the
retention period and the size cap) are applied when a case is kept, when the entry
starts, and every six hours, so cases age out even when nobody marks runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Final

from homeassistant.core import HomeAssistant, ServiceCall, callback
from homeassistant.helpers.event import async_track_time_interval

from .action_support import entry_of, invalid
from .home_cases import HomeCases, HomeCaseSettings
from .measurements import Measurements

if TYPE_CHECKING:
    from ..runtime import OpenNVRConfigEntry

PRUNE_EVERY: Final = timedelta(hours=6)


@dataclass(frozen=True)
class HomeEvaluation:
    """An entry's kept cases, its measurements, and the options' page that bounds them."""

    cases: HomeCases
    measurements: Measurements
    settings: Callable[[], HomeCaseSettings]


async def async_start_home_evaluation(
    hass: HomeAssistant, entry: OpenNVRConfigEntry
) -> HomeEvaluation:
    """Load the measurements, apply the cases' bounds in the background, and keep
    applying them while the entry is loaded."""

    def settings() -> HomeCaseSettings:
        return HomeCaseSettings.from_options(entry.options)

    evaluation = HomeEvaluation(
        HomeCases(hass, entry.entry_id, settings), Measurements(hass, entry.entry_id), settings
    )
    await evaluation.measurements.async_load()

    @callback
    def prune(_now: datetime | None = None) -> None:
        entry.async_create_background_task(
            hass, evaluation.cases.async_prune(), "opennvr_workflows kept cases bounds"
        )

    prune()
    entry.async_on_unload(
        async_track_time_interval(hass, prune, PRUNE_EVERY, name="opennvr_workflows cases")
    )
    return evaluation


def evaluation_of(hass: HomeAssistant, call: ServiceCall) -> HomeEvaluation:
    """The evaluation of the call's entry."""
    evaluation = entry_of(hass, call).runtime_data.evaluation
    if evaluation is None:
        raise invalid("no_loaded_entry")
    return evaluation
