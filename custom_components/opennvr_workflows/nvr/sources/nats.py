"""OpenNVR's NATS bus: alerts (``opennvr.alerts.>``), contracted events
(``opennvr.events.>``) and the detectors' tracks (``opennvr.inference.*.*.completed``,
Tier-0's among them, for the person-in-zone trigger), for sites that expose their broker.

nats-py can reconnect by itself, but with a fixed wait and no jitter; when a broker
restarts every client would come back in the same instant. So each connection here is
made with nats-py's reconnect off, and this source's own loop reconnects (backoff with
jitter, forever) and subscribes again. nats-py also buffers silently while it
reconnects; a closed connection that is reopened by us makes the outage visible instead
(the hub marks the source disconnected, and the entities unavailable).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import nats
from homeassistant.util.ssl import client_context, client_context_no_verify
from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg
from nats.errors import AuthorizationError
from nats.errors import Error as NatsError

from ...const import (
    CONF_NATS_PASSWORD,
    CONF_NATS_TLS_VERIFY,
    CONF_NATS_TOKEN,
    CONF_NATS_URL,
    CONF_NATS_USER,
)
from ..hub import EventHub
from ..normalize import from_nats
from .base import (
    DEFAULT_MAX_BACKOFF,
    DEFAULT_MIN_BACKOFF,
    Backoff,
    TaskFactory,
    default_task_factory,
    deliver,
    finish_task,
)

_LOGGER = logging.getLogger(__name__)

NAME: Final = "nats"
SUBJECTS: Final = ("opennvr.alerts.>", "opennvr.events.>", "opennvr.inference.*.*.completed")
CONNECT_TIMEOUT: Final = 5.0
#: A half-open TCP connection is noticed after ping_interval * (max_outstanding + 1).
PING_INTERVAL: Final = 20.0
MAX_OUTSTANDING_PINGS: Final = 2
_STOP_TIMEOUT: Final = 2.0


@dataclass(frozen=True, slots=True)
class NatsSettings:
    """Where the broker is and how to log in (token, or user and password)."""

    url: str
    token: str | None = None
    user: str | None = None
    password: str | None = None
    tls_verify: bool = True

    @classmethod
    def from_mapping(cls, settings: Mapping[str, Any]) -> NatsSettings:
        url = str(settings.get(CONF_NATS_URL) or "").strip()
        if not url:
            raise ValueError("NATS needs a URL")
        return cls(
            url=url,
            token=settings.get(CONF_NATS_TOKEN) or None,
            user=settings.get(CONF_NATS_USER) or None,
            password=settings.get(CONF_NATS_PASSWORD) or None,
            tls_verify=bool(settings.get(CONF_NATS_TLS_VERIFY, True)),
        )

    @property
    def uses_tls(self) -> bool:
        return self.url.lower().startswith("tls://")


def is_auth_error(err: BaseException) -> bool:
    """nats-py reports a refused login as a plain ``Error`` during connect."""
    if isinstance(err, AuthorizationError):
        return True
    text = str(err).lower()
    return "authorization violation" in text or "authentication" in text


def connect_options(settings: NatsSettings) -> dict[str, Any]:
    """``nats.connect`` keyword arguments for one attempt, reconnecting left to the caller.

    TLS contexts are Home Assistant's shared, pre-built ones (building a context loads
    certificates from disk, which must not happen in the event loop).
    """
    options: dict[str, Any] = {
        "servers": [settings.url],
        "name": "home-assistant-opennvr-workflows",
        "connect_timeout": CONNECT_TIMEOUT,
        "allow_reconnect": False,
        # With reconnecting off, nats-py still loops over its server pool; one retry
        # makes a failed connect raise promptly instead of looping.
        "max_reconnect_attempts": 1,
        "reconnect_time_wait": 0,
        "ping_interval": PING_INTERVAL,
        "max_outstanding_pings": MAX_OUTSTANDING_PINGS,
    }
    if settings.token:
        options["token"] = settings.token
    elif settings.user:
        options["user"] = settings.user
        options["password"] = settings.password or ""
    if settings.uses_tls:
        options["tls"] = client_context() if settings.tls_verify else client_context_no_verify()
    return options


class NatsSource:
    """Subscribes to OpenNVR's alert, event and inference subjects while started."""

    name: Final = NAME

    def __init__(
        self,
        settings: NatsSettings,
        hub: EventHub,
        *,
        min_backoff: float = DEFAULT_MIN_BACKOFF,
        max_backoff: float = DEFAULT_MAX_BACKOFF,
        task_factory: TaskFactory = default_task_factory,
    ) -> None:
        self._settings = settings
        self._hub = hub
        self._backoff = Backoff(min_backoff, max_backoff)
        self._task_factory = task_factory
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._nc: NatsClient | None = None
        #: Whether the current outage has been logged: by the hub ("lost") once a
        #: connection had worked, else by the first failed attempt. One line per outage.
        self._outage_reported = False
        hub.register(NAME)

    async def start(self) -> None:
        if self._task is None:
            self._stop.clear()
            self._task = self._task_factory(self._run(), "opennvr_workflows nats")

    async def stop(self) -> None:
        self._stop.set()
        nc, task = self._nc, self._task
        self._task = None
        if nc is not None and not nc.is_closed:
            with contextlib.suppress(NatsError, OSError, TimeoutError):
                await nc.close()
        # A connect attempt in flight ends by itself within CONNECT_TIMEOUT; do not make
        # unloading wait that long.
        await finish_task(task, _STOP_TIMEOUT, "NATS subscription")
        self._hub.set_stopped(NAME)

    async def _run(self) -> None:
        while not self._stop.is_set():
            closed = asyncio.Event()
            nc = await self._connect(closed)
            if nc is not None:
                self._nc = nc
                self._outage_reported = True
                self._backoff.reset()
                self._hub.set_connected(NAME, True)
                await _wait_any(closed, self._stop)
                if self._stop.is_set():
                    self._hub.set_stopped(NAME)
                else:
                    self._hub.set_connected(NAME, False)
                self._nc = None
                if not nc.is_closed:
                    with contextlib.suppress(NatsError, OSError, TimeoutError):
                        await nc.close()
            if self._stop.is_set():
                break
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self._backoff.next()):
                    await self._stop.wait()

    async def _connect(self, closed: asyncio.Event) -> NatsClient | None:
        """One connection with every subscription, or None (logged once per outage)."""

        async def _closed() -> None:
            closed.set()

        async def _error(err: Exception) -> None:
            _LOGGER.debug("NATS error: %s", err)

        nc: NatsClient | None = None
        try:
            nc = await nats.connect(
                **connect_options(self._settings), closed_cb=_closed, error_cb=_error
            )
            for subject in SUBJECTS:
                await nc.subscribe(subject, cb=self._on_message)
            await nc.flush(timeout=int(CONNECT_TIMEOUT))
        except (NatsError, OSError, TimeoutError, ValueError) as err:
            if nc is not None and not nc.is_closed:
                with contextlib.suppress(NatsError, OSError, TimeoutError):
                    await nc.close()
            self._log_failure(err)
            return None
        return nc

    def _log_failure(self, err: BaseException) -> None:
        if self._outage_reported:
            _LOGGER.debug("NATS at %s unreachable: %s", self._settings.url, err)
            return
        self._outage_reported = True
        if is_auth_error(err):
            _LOGGER.warning(
                "NATS at %s refused the credentials; retrying in the background",
                self._settings.url,
            )
        else:
            _LOGGER.warning(
                "Cannot connect to NATS at %s (%s); retrying in the background",
                self._settings.url,
                err or type(err).__name__,
            )

    async def _on_message(self, msg: Msg) -> None:
        deliver(self._hub, NAME, lambda: from_nats(msg.subject, msg.data))


async def _wait_any(*events: asyncio.Event) -> None:
    waiters = [asyncio.ensure_future(event.wait()) for event in events]
    try:
        await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()
        await asyncio.gather(*waiters, return_exceptions=True)
