"""OpenNVR's events websocket v2, the default transport: it needs only the URL and token.

``pyopennvr``'s :class:`EventStream` does the hard parts (single-use tickets, resuming
with ``since``/``epoch`` after a drop so nothing is lost or repeated, backoff with
jitter); this source maps its frames through :mod:`..normalize` into the hub and its
states onto the hub's connected flag. A token the server refuses stops the stream as
``auth_failed``, which is surfaced through ``on_auth_failed`` (the integration starts a
reauth flow) rather than retried forever.

Across restarts the source resumes from the last position whose events the engine has
committed (:mod:`.position`). An event the engine could not make durable stops the
position there, and the stream is reopened from it after a backoff, so the server sends
it again. When the server cannot replay that far (its window has passed, or it restarted
with a new epoch) it sends a ``state_snapshot`` with ``resync: true``: the cameras' and
site mode's state is rebuilt from it, the gap is counted and logged, and the position
starts over from the snapshot.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, Final

import aiohttp
from pyopennvr import EventStream, OpenNVRClient

from ..hub import EventHub
from ..normalize import from_ws_frame
from .acks import InOrderAcks
from .base import (
    DEFAULT_MAX_BACKOFF,
    DEFAULT_MIN_BACKOFF,
    Backoff,
    TaskFactory,
    default_task_factory,
    deliver_tracked,
    finish_task,
)
from .position import MemoryPositionStore, Position, PositionStore

_LOGGER = logging.getLogger(__name__)

NAME: Final = "websocket"
#: The server sends a heartbeat after 25 s of silence; three missed mean a dead link.
SILENCE_TIMEOUT: Final = 90.0
_STOP_TIMEOUT: Final = 10.0
#: Frames that carry the server's current seq rather than an event's own.
_UNTRACKED: Final = frozenset({"subscribed", "heartbeat", "lagged"})


class WebSocketSource:
    """Runs one :class:`EventStream` in the background while started."""

    name: Final = NAME

    def __init__(
        self,
        client: OpenNVRClient,
        session: aiohttp.ClientSession,
        hub: EventHub,
        *,
        on_auth_failed: Callable[[], None],
        min_backoff: float = DEFAULT_MIN_BACKOFF,
        max_backoff: float = DEFAULT_MAX_BACKOFF,
        silence_timeout: float = SILENCE_TIMEOUT,
        task_factory: TaskFactory = default_task_factory,
        positions: PositionStore | None = None,
    ) -> None:
        self._client = client
        self._session = session
        self._hub = hub
        self._on_auth_failed = on_auth_failed
        self._min_backoff = min_backoff
        self._max_backoff = max_backoff
        self._silence = silence_timeout
        self._task_factory = task_factory
        self._stream: EventStream | None = None
        self._task: asyncio.Task[None] | None = None
        #: Whether the current outage has been logged: by the hub ("lost") once a
        #: connection had worked, else by the first failed attempt. One line per outage.
        self._outage_reported = False
        self._positions: PositionStore = positions or MemoryPositionStore()
        #: The last position whose events are all durable: where a restart resumes.
        self.durable_position: Position | None = None
        self._acks: InOrderAcks[Position] = InOrderAcks(self._on_durable, self._on_not_durable)
        self._reopen_backoff = Backoff(min_backoff, max_backoff)
        self._reopen: asyncio.Task[None] | None = None
        self._running = False
        hub.register(NAME)

    @property
    def stream(self) -> EventStream | None:
        """The running stream (its ``epoch``/``last_seq`` show where a resume starts)."""
        return self._stream

    async def start(self) -> None:
        if self._running:
            return
        self._running = True
        try:
            self.durable_position = await self._positions.load()
        except Exception:  # an unreadable file must not keep the events away
            _LOGGER.exception("The saved events position is unreadable; starting afresh")
            self.durable_position = None
        self._open()

    def _open(self) -> None:
        """Start a stream that resumes from the durable position (if there is one)."""
        self._acks.reset()
        self._stream = EventStream(
            self._client,
            self._session,
            self._on_frame,
            on_state=self._on_state,
            min_backoff=self._min_backoff,
            max_backoff=self._max_backoff,
            silence_timeout=self._silence,
        )
        if (position := self.durable_position) is not None:
            self._stream.epoch, self._stream.last_seq = position.epoch, position.seq
        self._task = self._task_factory(self._stream.run(), "opennvr_workflows websocket")

    async def stop(self) -> None:
        self._running = False
        reopen, self._reopen = self._reopen, None
        if reopen is not None:
            reopen.cancel()
        await self._close()
        self._hub.set_stopped(NAME)
        try:
            await self._positions.flush()
        except Exception:
            _LOGGER.exception("Saving the events position failed")

    async def _close(self) -> None:
        stream, task = self._stream, self._task
        self._stream = self._task = None
        if stream is not None:
            await stream.stop()
        await finish_task(task, _STOP_TIMEOUT, "events websocket")

    def _on_frame(self, frame: dict[str, Any]) -> None:
        stream = self._stream
        frame_type = frame.get("event_type")
        seq = frame.get("seq")
        if frame_type == "state_snapshot" and frame.get("resync") is True:
            self._resynced(seq)
        durable = deliver_tracked(self._hub, NAME, lambda: from_ws_frame(frame))
        if (
            stream is not None
            and stream.epoch
            and type(seq) is int
            and frame_type not in _UNTRACKED
        ):
            self._acks.add(Position(stream.epoch, seq), durable)

    def _resynced(self, seq: Any) -> None:
        was = self.durable_position
        where = f"seq {was.seq} of epoch {was.epoch}" if was else "where it stopped"
        self._hub.resynced(
            NAME,
            f"OpenNVR could not replay its events from {where} (its replay window has "
            f"passed or it restarted); state rebuilt from its snapshot at seq {seq}, "
            "events in between were not seen",
        )

    def _on_durable(self, position: Position) -> None:
        self.durable_position = position
        self._reopen_backoff.reset()
        self._positions.save(position)

    def _on_not_durable(self, position: Position, err: BaseException) -> None:
        """Reopen from the last durable position, so the server sends the event again."""
        _LOGGER.warning(
            "OpenNVR event %s could not be made durable (%s); reopening the events "
            "websocket from %s to receive it again",
            position.seq,
            err,
            self.durable_position.seq if self.durable_position else "the server's snapshot",
        )
        if self._running and self._reopen is None:
            self._reopen = self._task_factory(self._reopen_later(), "opennvr_workflows reopen")

    async def _reopen_later(self) -> None:
        try:
            await self._close()
            await asyncio.sleep(self._reopen_backoff.next())
            if self._running:
                self._open()
        finally:
            self._reopen = None

    def _on_state(self, state: str) -> None:
        if state == "stopped":
            # The stream ends this way only when stop() asked it to: no outage.
            self._hub.set_stopped(NAME)
            return
        self._hub.set_connected(NAME, state == "connected")
        if state == "connected":
            self._outage_reported = True
        elif state == "disconnected" and not self._outage_reported:
            self._outage_reported = True
            _LOGGER.warning(
                "Cannot connect to OpenNVR's events websocket at %s; retrying in the background",
                self._client.base_url,
            )
        if state == "auth_failed":
            _LOGGER.error("OpenNVR refused the API token on the events websocket")
            try:
                self._on_auth_failed()
            except Exception:
                _LOGGER.exception("Reporting the refused token failed")
