"""One normalized event stream for every transport, deduplicated by ``alert_id``.

A site can push the same alert over the events websocket and over NATS or MQTT at once;
the hub lets it through once, whichever copy comes first. It also keeps per-source
counters (received, duplicates, dropped by kind) and each source's connected state, which
the entities read to go unavailable while their transport is down.

Logging is deliberately sparse, because brokers hiccup: a source going down is one warning
and coming back one info line, however many retries happen in between; a source stopped on
purpose (an unload, a reload) is no outage and logs no warning; a flood of malformed
payloads is one warning per (source, kind), the rest only counted.

Plain Python, driven from the event loop: sources on other threads hand their messages
to the loop first.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Final

from ..engine.events import NvrEvent

_LOGGER = logging.getLogger(__name__)

#: How many recent alert ids are remembered for deduplication. A duplicate arrives
#: within seconds of its twin; this bounds memory on a site that alerts all day.
DEDUPE_WINDOW: Final = 4096

EventListener = Callable[[NvrEvent], None]
StateListener = Callable[[str, bool], None]


@dataclass
class SourceStats:
    """Counters of one source ("websocket", "nats", "mqtt"), shown on a diagnostic sensor."""

    received: int = 0
    """Events published (after deduplication)."""
    duplicates: int = 0
    dropped: int = 0
    """Malformed payloads."""
    dropped_by_kind: dict[str, int] = field(default_factory=dict)
    connected: bool = False
    last_event_at: datetime | None = None


class EventHub:
    """One normalized stream, deduped by alert_id (bounded memory), with per-source counters."""

    def __init__(self, *, dedupe_window: int = DEDUPE_WINDOW) -> None:
        self._stats: dict[str, SourceStats] = {}
        self._seen: OrderedDict[str, None] = OrderedDict()
        self._window = dedupe_window
        self._listeners: list[EventListener] = []
        self._state_listeners: list[StateListener] = []
        self._counter_listeners: list[Callable[[], None]] = []
        self._logged_drops: set[tuple[str, str]] = set()
        self._ever_connected: set[str] = set()

    # ── sources ──────────────────────────────────────────────────────────

    def register(self, source: str) -> SourceStats:
        """Make ``source`` appear in :attr:`stats` before its first event (zero counters)."""
        stats = self._stats.get(source)
        if stats is None:
            stats = self._stats[source] = SourceStats()
        return stats

    def publish(self, event: NvrEvent) -> bool:
        """Hand ``event`` to every listener; False (and counted) for a duplicate alert_id."""
        stats = self.register(event.source)
        if event.alert_id is not None:
            if event.alert_id in self._seen:
                stats.duplicates += 1
                _LOGGER.debug("Duplicate alert %s via %s dropped", event.alert_id, event.source)
                self._counters_changed()
                return False
            self._seen[event.alert_id] = None
            if len(self._seen) > self._window:
                self._seen.popitem(last=False)
        stats.received += 1
        stats.last_event_at = datetime.now(UTC)
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:
                # One broken consumer must not stop the others, nor the source.
                _LOGGER.exception("Event listener failed on %s event", event.kind)
        self._counters_changed()
        return True

    def drop(self, source: str, kind: str, detail: str) -> None:
        """Count a malformed payload; log the first of each (source, kind) as a warning."""
        stats = self.register(source)
        stats.dropped += 1
        stats.dropped_by_kind[kind] = stats.dropped_by_kind.get(kind, 0) + 1
        self._counters_changed()
        if (source, kind) in self._logged_drops:
            _LOGGER.debug("Malformed %s payload via %s dropped: %s", kind, source, detail)
            return
        self._logged_drops.add((source, kind))
        _LOGGER.warning(
            "Malformed %s payload via %s dropped: %s (further ones of this kind are only counted)",
            kind,
            source,
            detail,
        )

    def set_connected(self, source: str, connected: bool) -> None:
        """Record a source's state; log and tell state listeners only when it changes.

        A loss reported here is an outage: one warning. A source stopped on purpose says so
        with :meth:`set_stopped` instead.
        """
        stats = self.register(source)
        if stats.connected == connected:
            return
        stats.connected = connected
        if connected:
            if source in self._ever_connected:
                _LOGGER.info("OpenNVR events via %s are back", source)
            else:
                _LOGGER.debug("OpenNVR events via %s connected", source)
            self._ever_connected.add(source)
        else:
            _LOGGER.warning(
                "OpenNVR events via %s lost; its entities are unavailable until it reconnects",
                source,
            )
        self._tell_state(source, connected)

    def set_stopped(self, source: str) -> None:
        """Record that ``source`` was stopped on purpose: an unload, the reload that saving
        the options makes, Home Assistant stopping. Its entities go unavailable as after a
        loss, but it is no outage, so it logs no warning; and its next connection is a
        fresh start, not a comeback."""
        stats = self.register(source)
        self._ever_connected.discard(source)
        if not stats.connected:
            return
        stats.connected = False
        _LOGGER.debug("OpenNVR events via %s stopped", source)
        self._tell_state(source, False)

    def _tell_state(self, source: str, connected: bool) -> None:
        for listener in list(self._state_listeners):
            try:
                listener(source, connected)
            except Exception:
                _LOGGER.exception("Connection state listener failed")

    # ── consumers ────────────────────────────────────────────────────────

    def subscribe(self, listener: EventListener) -> Callable[[], None]:
        """Call ``listener`` with every published event; returns the unsubscribe function."""
        self._listeners.append(listener)
        return lambda: self._remove(self._listeners, listener)

    def subscribe_state(self, listener: StateListener) -> Callable[[], None]:
        """Call ``listener(source, connected)`` on every change; returns the unsubscribe."""
        self._state_listeners.append(listener)
        return lambda: self._remove(self._state_listeners, listener)

    def subscribe_counters(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call ``listener()`` whenever a counter moves (an event, a duplicate, a drop), so
        a display can refresh; it should batch, a flood calls it once per payload."""
        self._counter_listeners.append(listener)
        return lambda: self._remove(self._counter_listeners, listener)

    def _counters_changed(self) -> None:
        for listener in list(self._counter_listeners):
            try:
                listener()
            except Exception:
                _LOGGER.exception("Counter listener failed")

    @staticmethod
    def _remove[T](listeners: list[T], listener: T) -> None:
        if listener in listeners:
            listeners.remove(listener)

    @property
    def stats(self) -> Mapping[str, SourceStats]:
        """Live, read-only view of every known source's counters."""
        return MappingProxyType(self._stats)

    def connected(self, source: str | None = None) -> bool:
        """Whether ``source`` (or, without one, any source) is connected now."""
        if source is not None:
            stats = self._stats.get(source)
            return stats is not None and stats.connected
        return any(stats.connected for stats in self._stats.values())
