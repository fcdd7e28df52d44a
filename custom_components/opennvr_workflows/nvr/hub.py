"""One normalized event stream for every transport, deduplicated by ``alert_id``.

A site can push the same alert over the events websocket and over NATS or MQTT at once;
the hub lets it through once, whichever copy comes first. It also keeps per-source
counters (received, duplicates, dropped by kind) and each source's connected state, which
the entities read to go unavailable while their transport is down.

Logging is deliberately sparse, because brokers hiccup: a source going down is one warning
and coming back one info line, however many retries happen in between; a source stopped on
purpose (an unload, a reload) is no outage and logs no warning; a flood of malformed
payloads is one warning per (source, kind), the rest only counted.

Consumers that must make an event durable (the workflow engine) subscribe with
:meth:`EventHub.subscribe_durable`. :meth:`EventHub.publish_tracked` starts them at once
and returns what to wait on, so a source that can acknowledge its broker does so only after
the engine has committed the event's runs; a failure forgets the alert id again, so the
redelivered copy is not taken for a duplicate.

Detector tracks arrive several times a second per camera whether or not a workflow reads
them. The hub drops a ``tracks`` event of a camera no workflow watches (see
:mod:`.watch`; the host hands over the watched cameras with :meth:`EventHub.watch_tracks`
whenever its workflows load or change state) as the first thing it does, before the
dedupe, the counters' listeners and every consumer: it is only counted
(``tracks_unwatched``), so such a camera costs its parsing and nothing more.

Plain Python, driven from the event loop: sources on other threads hand their messages
to the loop first.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections import OrderedDict
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from types import MappingProxyType
from typing import Any, Final

from ..engine.events import NvrEvent
from .watch import EVERY_CAMERA, TrackWatch

_LOGGER = logging.getLogger(__name__)

#: How many recent alert ids are remembered for deduplication. A duplicate arrives
#: within seconds of its twin; this bounds memory on a site that alerts all day.
DEDUPE_WINDOW: Final = 4096

EventListener = Callable[[NvrEvent], None]
_DUPLICATE: Final = object()
_UNWATCHED: Final = object()
#: ``normalize.TRACKS_KIND`` (not imported: normalize reads the SDK, the hub stays light).
_TRACKS: Final = "tracks"
#: The context the hub's own settle callbacks run in: they read no context variable, and
#: a copy of the caller's context per waiting event would be one more object each.
_QUIET: Final = contextvars.Context()
StateListener = Callable[[str, bool], None]
#: A consumer that makes an event durable. It returns None when the event is durable
#: already, or what to wait on: a future (the engine's, without a task per event) or a
#: coroutine that returns once the event is durable; either raises if it could not.
DurableListener = Callable[[NvrEvent], "asyncio.Future[None] | Coroutine[Any, Any, None] | None"]


class DeliveryError(Exception):
    """A durable consumer failed on an event: it is not durable, so it is not acknowledged."""


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
    failed: int = 0
    """Events a durable consumer failed on (left unacknowledged, for the source to redeliver)."""
    resyncs: int = 0
    """Times the source could not resume where it stopped and started over from a snapshot."""
    tracks_unwatched: int = 0
    """Tracks frames of cameras no workflow watches, dropped after parsing (not received:
    they reach no consumer, and moving this counter tells no listener)."""


class EventHub:
    """One normalized stream, deduped by alert_id (bounded memory), with per-source counters."""

    def __init__(self, *, dedupe_window: int = DEDUPE_WINDOW) -> None:
        self._stats: dict[str, SourceStats] = {}
        #: Alert ids seen recently, each with its durability (None once durable).
        self._seen: OrderedDict[str, asyncio.Future[None] | None] = OrderedDict()
        self._window = dedupe_window
        self._listeners: list[EventListener] = []
        self._durable: list[DurableListener] = []
        #: Set once a durable consumer subscribed: from then on an event is durable only
        #: when one took it, and none listening (the engine stopping) means "not durable".
        self._durable_required = False
        #: Durable consumers' tasks in flight (a reference keeps each alive).
        self._tasks: set[asyncio.Task[None]] = set()
        self._state_listeners: list[StateListener] = []
        self._counter_listeners: list[Callable[[], None]] = []
        self._logged_drops: set[tuple[str, str]] = set()
        self._ever_connected: set[str] = set()
        #: The cameras whose tracks some workflow reads (every camera until told).
        self._watch: TrackWatch = EVERY_CAMERA

    # ── sources ──────────────────────────────────────────────────────────

    def register(self, source: str) -> SourceStats:
        """Make ``source`` appear in :attr:`stats` before its first event (zero counters)."""
        stats = self._stats.get(source)
        if stats is None:
            stats = self._stats[source] = SourceStats()
        return stats

    def publish(self, event: NvrEvent) -> bool:
        """Hand ``event`` to every listener; False (and counted) for a duplicate alert_id
        and for tracks of a camera no workflow watches.

        Durable consumers are started too but not waited on; their failure is logged and
        counted. A source that can acknowledge uses :meth:`publish_tracked` instead."""
        admitted = self._admit(event)
        return admitted is not _DUPLICATE and admitted is not _UNWATCHED

    def publish_tracked(self, event: NvrEvent) -> asyncio.Future[None] | None:
        """:meth:`publish`, returning what to wait on before acknowledging ``event``: a
        future that resolves once every durable consumer has made it durable (and raises
        :class:`DeliveryError` if one could not), or None when there is nothing to wait
        for. A duplicate waits on its first copy."""
        admitted = self._admit(event)
        if admitted is _UNWATCHED:
            return None
        if admitted is _DUPLICATE:
            first = self._seen.get(event.alert_id or "")
            return None if first is None else asyncio.shield(first)
        # Shielded: a waiter that is cancelled must not cancel what others wait on.
        return asyncio.shield(admitted) if isinstance(admitted, asyncio.Future) else None

    def _admit(self, event: NvrEvent) -> asyncio.Future[None] | object | None:
        if event.kind == _TRACKS and not self._watch.wants(event.camera_id):
            self.register(event.source).tracks_unwatched += 1
            return _UNWATCHED
        stats = self.register(event.source)
        if event.alert_id is not None:
            if event.alert_id in self._seen:
                stats.duplicates += 1
                _LOGGER.debug("Duplicate alert %s via %s dropped", event.alert_id, event.source)
                self._counters_changed()
                return _DUPLICATE
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
        durable = self._start_durable(event)
        self._counters_changed()
        return durable

    def _start_durable(self, event: NvrEvent) -> asyncio.Future[None] | None:
        """Start every durable consumer eagerly (each runs up to its first wait right now,
        so the engine sees events in the order they were published)."""
        if not self._durable:
            if not self._durable_required:
                return None
            # The engine was listening and has stopped (an unload in progress): what
            # arrives now is not durable, so it must not be acknowledged either.
            if event.alert_id is not None:
                self._seen.pop(event.alert_id, None)
            refused: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            refused.set_exception(DeliveryError("no durable consumer is listening"))
            refused.exception()
            return refused
        loop = asyncio.get_running_loop()
        tasks: list[asyncio.Future[None]] = []
        for listener in list(self._durable):
            task = self._offer_durable(loop, listener, event)
            if task is not None:
                tasks.append(task)
        if all(t.done() and not t.cancelled() and t.exception() is None for t in tasks):
            return None
        done: asyncio.Future[None] = loop.create_future()
        if event.alert_id is not None:
            self._seen[event.alert_id] = done
        if len(tasks) == 1:
            # The usual case (one engine): one callback object while the event waits, in
            # a context shared by all rather than a copy of the current one each.
            tasks[0].add_done_callback(partial(self._settle, event, tasks, done), context=_QUIET)
            return done
        remaining = [len(tasks)]

        def _settled(_task: asyncio.Future[None]) -> None:
            remaining[0] -= 1
            if remaining[0] == 0:
                self._settle(event, tasks, done)

        for task in tasks:
            task.add_done_callback(_settled)
        return done

    def _offer_durable(
        self, loop: asyncio.AbstractEventLoop, listener: DurableListener, event: NvrEvent
    ) -> asyncio.Future[None] | None:
        """Hand ``event`` to one durable consumer: what to wait on (None: durable now). A
        coroutine runs in an eagerly started task (up to its first wait right now, so the
        consumer sees events in the order they were published); a consumer that raises
        at once gives a failed future, like a task that failed."""
        try:
            offered = listener(event)
        except Exception as err:
            failed: asyncio.Future[None] = loop.create_future()
            failed.set_exception(err)
            return failed
        if offered is None or isinstance(offered, asyncio.Future):
            return offered
        task = asyncio.Task(offered, loop=loop, eager_start=True)
        if not task.done():
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        return task

    def _settle(
        self,
        event: NvrEvent,
        tasks: list[asyncio.Future[None]],
        done: asyncio.Future[None],
        _last: asyncio.Future[None] | None = None,
    ) -> None:
        """Settle ``done`` once every consumer's ``tasks`` ended (``_last``: the one whose
        done callback this is, when it is called as one)."""
        errors: list[BaseException] = []
        for task in tasks:
            if task.cancelled():
                errors.append(asyncio.CancelledError())
            elif (err := task.exception()) is not None:
                errors.append(err)
        if event.alert_id is not None and self._seen.get(event.alert_id) is done:
            if errors:
                # Not durable: the redelivered copy must not be taken for a duplicate.
                del self._seen[event.alert_id]
            else:
                self._seen[event.alert_id] = None
        if done.done():
            return
        if not errors:
            done.set_result(None)
            return
        stats = self.register(event.source)
        stats.failed += 1
        self._counters_changed()
        _LOGGER.error(
            "A %s event via %s could not be made durable: %r", event.kind, event.source, errors[0]
        )
        done.set_exception(DeliveryError(f"{event.kind} event via {event.source}: {errors[0]!r}"))
        # Nobody may be waiting (a plain publish): the failure is logged above.
        done.exception()

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

        A loss reported here is an outage: one line when it goes, one when it is back, both
        at info level (as Home Assistant's rule for an unavailable service asks: the
        entities going unavailable are the signal; the log says why and when). A source
        stopped on purpose says so with :meth:`set_stopped` instead.
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
            _LOGGER.info(
                "OpenNVR events via %s lost; its entities are unavailable until it reconnects",
                source,
            )
        self._tell_state(source, connected)

    def set_stopped(self, source: str) -> None:
        """Record that ``source`` was stopped on purpose: an unload, the reload that saving
        the options makes, Home Assistant stopping. Its entities go unavailable as after a
        loss, but it is no outage, so it logs nothing above debug; and its next connection is a
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

    def watch_tracks(self, watch: TrackWatch) -> None:
        """The cameras whose tracks a consumer needs from now on; the others' are dropped
        (and counted) as they arrive. The host calls it whenever its workflows load or
        change state."""
        if watch != self._watch:
            _LOGGER.debug("Tracks watched from now on: %s", watch)
        self._watch = watch

    @property
    def track_watch(self) -> TrackWatch:
        """The cameras whose tracks are let through (what :meth:`watch_tracks` was given)."""
        return self._watch

    def subscribe(self, listener: EventListener) -> Callable[[], None]:
        """Call ``listener`` with every published event; returns the unsubscribe function."""
        self._listeners.append(listener)
        return lambda: self._remove(self._listeners, listener)

    def subscribe_durable(self, listener: DurableListener) -> Callable[[], None]:
        """Call ``listener(event)`` with every published event; what it returns (see
        :data:`DurableListener`) says when the event is durable, which is when a tracked
        publication resolves and its source may acknowledge it. Returns the unsubscribe
        function."""
        self._durable.append(listener)
        self._durable_required = True
        return lambda: self._remove(self._durable, listener)

    def resynced(self, source: str, detail: str) -> None:
        """Count and log that ``source`` lost its place and started over from a snapshot:
        events between the two were not seen."""
        self.register(source).resyncs += 1
        self._counters_changed()
        _LOGGER.warning("OpenNVR events via %s resynchronised: %s", source, detail)

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
