"""OpenNVR's events websocket v2, the default transport: it needs only the URL and token.

``pyopennvr``'s :class:`EventStream` does the hard parts (single-use tickets, resuming
with ``since``/``epoch`` after a drop so nothing is lost or repeated, backoff with
jitter); this source maps its frames through :mod:`..normalize` into the hub and its
states onto the hub's connected flag. A token the server refuses stops the stream as
``auth_failed``, which is surfaced through ``on_auth_failed`` (the integration starts a
reauth flow) rather than retried forever.
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
from .base import (
    DEFAULT_MAX_BACKOFF,
    DEFAULT_MIN_BACKOFF,
    TaskFactory,
    default_task_factory,
    deliver,
    finish_task,
)

_LOGGER = logging.getLogger(__name__)

NAME: Final = "websocket"
#: The server sends a heartbeat after 25 s of silence; three missed mean a dead link.
SILENCE_TIMEOUT: Final = 90.0
_STOP_TIMEOUT: Final = 10.0


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
        hub.register(NAME)

    @property
    def stream(self) -> EventStream | None:
        """The running stream (its ``epoch``/``last_seq`` show where a resume starts)."""
        return self._stream

    async def start(self) -> None:
        if self._task is not None:
            return
        self._stream = EventStream(
            self._client,
            self._session,
            self._on_frame,
            on_state=self._on_state,
            min_backoff=self._min_backoff,
            max_backoff=self._max_backoff,
            silence_timeout=self._silence,
        )
        self._task = self._task_factory(self._stream.run(), "opennvr_workflows websocket")

    async def stop(self) -> None:
        stream, task = self._stream, self._task
        self._stream = self._task = None
        if stream is not None:
            await stream.stop()
        await finish_task(task, _STOP_TIMEOUT, "events websocket")
        self._hub.set_stopped(NAME)

    def _on_frame(self, frame: dict[str, Any]) -> None:
        deliver(self._hub, NAME, lambda: from_ws_frame(frame))

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
