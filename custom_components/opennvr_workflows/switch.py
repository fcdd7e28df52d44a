"""The site's *Pause all workflows* switch: one place to stop every workflow at once.

On: no workflow starts a run (each trigger that would have is counted, in the
``triggers_not_run`` attribute and the workflows' hourly counters, never queued), and
runs waiting for a question or a ``wait`` stay waiting until it is off again
(:mod:`.engine.pause`). The choice survives restarts. Only an admin may switch it (its
door in :mod:`.host.permissions`): leaving the house to a sitter, or a model that
misbehaves, is the household admin's call.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Final

from homeassistant.components.switch import SwitchEntity
from homeassistant.core import CALLBACK_TYPE, HomeAssistant, callback
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback
from homeassistant.helpers.event import async_track_time_interval

from .coordinator import OpenNVRConfigEntry
from .entity import OpenNVRSiteEntity
from .host.permissions import async_allow_entity
from .host.site_pause import SitePause

PARALLEL_UPDATES = 1
#: How often the count of triggers not run is refreshed while paused.
COUNT_EVERY: Final = timedelta(seconds=30)


async def async_setup_entry(
    hass: HomeAssistant,
    entry: OpenNVRConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    if (host := entry.runtime_data.workflows) is not None:
        async_add_entities([PauseWorkflowsSwitch(entry, host.pause)])


class PauseWorkflowsSwitch(OpenNVRSiteEntity, SwitchEntity):
    """On while every workflow of the site is paused."""

    _attr_translation_key = "pause_workflows"

    def __init__(self, entry: OpenNVRConfigEntry, pause: SitePause) -> None:
        super().__init__(entry, "pause_workflows")
        self._pause = pause
        self._shown_count = -1
        self._unsub_count: CALLBACK_TYPE | None = None

    async def async_added_to_hass(self) -> None:
        self.async_on_remove(self._pause.subscribe(self._changed))
        self.async_on_remove(self._stop_counting)
        self._follow_count()

    @property
    def is_on(self) -> bool:
        return self._pause.paused

    @property
    def extra_state_attributes(self) -> dict[str, Any]:
        return {"since": self._pause.since, "triggers_not_run": self._pause.not_run}

    async def async_turn_on(self, **kwargs: Any) -> None:
        await async_allow_entity(self)
        await self._pause.async_set(True, self._context)

    async def async_turn_off(self, **kwargs: Any) -> None:
        await async_allow_entity(self)
        await self._pause.async_set(False, self._context)

    @callback
    def _changed(self) -> None:
        self._follow_count()
        self.async_write_ha_state()

    @callback
    def _follow_count(self) -> None:
        """While paused, show the count of triggers not run as it grows (a refused
        start emits nothing, so a flood costs no state writes beyond this)."""
        if self._pause.paused and self._unsub_count is None:
            self._unsub_count = async_track_time_interval(
                self.hass, self._recount, COUNT_EVERY, name="opennvr_workflows pause count"
            )
        elif not self._pause.paused:
            self._stop_counting()

    @callback
    def _stop_counting(self) -> None:
        if self._unsub_count is not None:
            self._unsub_count()
            self._unsub_count = None

    @callback
    def _recount(self, _now: datetime) -> None:
        if self._pause.not_run != self._shown_count:
            self._shown_count = self._pause.not_run
            self.async_write_ha_state()
