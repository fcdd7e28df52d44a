"""Diagnostic counters per event source: events received and payloads dropped.

A dropped payload (malformed, unknown shape) is logged once per kind and counted here, so a
change in what OpenNVR or a broker sends shows up on the dashboard instead of silently.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from homeassistant.components.sensor import SensorEntity, SensorStateClass
from homeassistant.const import EntityCategory
from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers.dispatcher import async_dispatcher_connect
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from .entity import OpenNVRSiteEntity
from .nvr.bridge import counters_signal, site_signal
from .nvr.hub import SourceStats
from .runtime import OpenNVRConfigEntry

PARALLEL_UPDATES = 0


@dataclass(frozen=True, slots=True)
class CounterDescription:
    key: str
    value: Callable[[SourceStats], int]


COUNTERS = (
    CounterDescription("events_received", lambda stats: stats.received),
    CounterDescription("events_dropped", lambda stats: stats.dropped),
)


async def async_setup_entry(
    hass: HomeAssistant,
    entry: OpenNVRConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    async_add_entities(
        SourceCounter(entry, source.name, counter)
        for source in entry.runtime_data.sources
        for counter in COUNTERS
    )


class SourceCounter(OpenNVRSiteEntity, SensorEntity):
    """One counter of one source, e.g. "NATS events dropped"."""

    _attr_entity_category = EntityCategory.DIAGNOSTIC
    _attr_state_class = SensorStateClass.TOTAL_INCREASING

    def __init__(
        self, entry: OpenNVRConfigEntry, source: str, description: CounterDescription
    ) -> None:
        super().__init__(entry, f"{source}_{description.key}")
        self.source = source
        self.description = description
        self._attr_translation_key = f"{source}_{description.key}"

    @property
    def _stats(self) -> SourceStats | None:
        return self.entry.runtime_data.hub.stats.get(self.source)

    @property
    def native_value(self) -> int:
        stats = self._stats
        return self.description.value(stats) if stats else 0

    @property
    def extra_state_attributes(self) -> dict[str, Any] | None:
        stats = self._stats
        if stats is None:
            return None
        if self.description.key == "events_dropped":
            return {"by_kind": dict(stats.dropped_by_kind)}
        return {
            "connected": stats.connected,
            "duplicates": stats.duplicates,
            "last_event_at": stats.last_event_at.isoformat() if stats.last_event_at else None,
        }

    async def async_added_to_hass(self) -> None:
        self.async_on_remove(
            async_dispatcher_connect(self.hass, counters_signal(self.entry), self._refresh)
        )
        self.async_on_remove(
            async_dispatcher_connect(self.hass, site_signal(self.entry), self._refresh)
        )

    @callback
    def _refresh(self) -> None:
        self.async_write_ha_state()
