"""OpenNVR's NATS bus: alerts (``opennvr.alerts.>``), contracted events
(``opennvr.events.>``) and the detectors' tracks (``opennvr.inference.*.*.completed``,
Tier-0's among them, for the person-in-zone trigger), for sites that expose their broker.

nats-py can reconnect by itself, but with a fixed wait and no jitter; when a broker
restarts every client would come back in the same instant. So each connection here is
made with nats-py's reconnect off, and this source's own loop reconnects (backoff with
jitter, forever) and subscribes again. nats-py also buffers silently while it
reconnects; a closed connection that is reopened by us makes the outage visible instead
(the hub marks the source disconnected, and the entities unavailable).

Delivery. When the broker has JetStream, alerts and contracted events are read through
durable pull consumers (one per subject family, named after the config entry) on the
stream that already captures them, or on this integration's own stream
(:data:`STREAM`, interest retention, bounded by age and size) when none does. Each
message is acknowledged only after the engine has committed what it started; one it
could not commit is negatively acknowledged and comes again after a delay. Messages
published while Home Assistant is away wait in the stream. Without JetStream (or without
the right to use it) the subjects are plain core subscriptions: at most once, and what
is published while the connection is down is lost. The detectors' tracks are always a
core subscription: they describe the present, and a stale one is worth nothing.
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
from nats.js import JetStreamContext
from nats.js import api as js_api
from nats.js.errors import NotFoundError

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
    TEST_TIMEOUT,
    Backoff,
    TaskFactory,
    TransportTestError,
    default_task_factory,
    deliver,
    deliver_tracked,
    finish_task,
)

_LOGGER = logging.getLogger(__name__)

NAME: Final = "nats"
#: Subjects read through JetStream when the broker has it (name suffix, subject).
DURABLE_SUBJECTS: Final = (("alerts", "opennvr.alerts.>"), ("events", "opennvr.events.>"))
#: Subjects that are always core subscriptions.
CORE_SUBJECTS: Final = ("opennvr.inference.*.*.completed",)
SUBJECTS: Final = (*(subject for _, subject in DURABLE_SUBJECTS), *CORE_SUBJECTS)
#: This integration's stream, made only when no stream captures the durable subjects.
STREAM: Final = "OPENNVR_WORKFLOWS"
STREAM_MAX_AGE_S: Final = 24 * 3600.0
STREAM_MAX_BYTES: Final = 256 * 1024 * 1024
#: How long a delivered message may go unacknowledged before JetStream sends it again.
ACK_WAIT_S: Final = 30.0
#: The most messages in flight (delivered, not yet acknowledged) per consumer.
MAX_ACK_PENDING: Final = 1000
FETCH_BATCH: Final = 256
FETCH_WAIT_S: Final = 5.0
DEFAULT_CONSUMER: Final = "ha_opennvr_workflows"
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
        consumer: str = DEFAULT_CONSUMER,
        ack_wait_s: float = ACK_WAIT_S,
    ) -> None:
        self._settings = settings
        self._hub = hub
        self._consumer = consumer
        self._ack_wait_s = ack_wait_s
        self._nak_backoff = Backoff(min_backoff, max_backoff)
        self._pullers: list[asyncio.Task[None]] = []
        #: Whether the last connection read the durable subjects through JetStream.
        self.durable = False
        self._mode_logged: bool | None = None
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
        # A message whose commit is still pending stays unacknowledged: it comes again.
        await self._stop_pullers()
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
                await self._stop_pullers()
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
            pulls = await self._durable_subscriptions(nc)
            self.durable = pulls is not None
            self._log_mode()
            core = CORE_SUBJECTS if pulls is not None else SUBJECTS
            for subject in core:
                await nc.subscribe(subject, cb=self._on_message)
            await nc.flush(timeout=int(CONNECT_TIMEOUT))
            for name, pull in pulls or []:
                self._pullers.append(
                    self._task_factory(self._pull(pull), f"opennvr_workflows nats {name}")
                )
        except (NatsError, OSError, TimeoutError, ValueError) as err:
            await self._stop_pullers()
            if nc is not None and not nc.is_closed:
                with contextlib.suppress(NatsError, OSError, TimeoutError):
                    await nc.close()
            self._log_failure(err)
            return None
        return nc

    async def _durable_subscriptions(
        self, nc: NatsClient
    ) -> list[tuple[str, JetStreamContext.PullSubscription]] | None:
        """A durable pull consumer per durable subject family, or None when the broker
        has no JetStream or refuses what it takes (then core subscriptions are used)."""
        js = nc.jetstream(timeout=CONNECT_TIMEOUT)
        try:
            await js.account_info()
        except (NatsError, TimeoutError) as err:
            _LOGGER.debug("NATS at %s has no JetStream: %s", self._settings.url, err)
            return None
        try:
            streams: dict[str, str | None] = {}
            for _, subject in DURABLE_SUBJECTS:
                try:
                    streams[subject] = await js.find_stream_name_by_subject(subject)
                except NotFoundError:
                    streams[subject] = None
            uncovered = [subject for subject, stream in streams.items() if stream is None]
            if uncovered:
                await self._own_stream(js, uncovered)
            pulls = []
            for name, subject in DURABLE_SUBJECTS:
                config = js_api.ConsumerConfig(
                    ack_policy=js_api.AckPolicy.EXPLICIT,
                    # A consumer made now starts with what is published from now on; once
                    # it exists, the broker keeps its place across disconnections.
                    deliver_policy=js_api.DeliverPolicy.NEW,
                    ack_wait=self._ack_wait_s,
                    max_ack_pending=MAX_ACK_PENDING,
                    filter_subject=subject,
                )
                pull = await js.pull_subscribe(
                    subject,
                    durable=f"{self._consumer}_{name}",
                    stream=streams[subject] or STREAM,
                    config=config,
                )
                pulls.append((name, pull))
        except (NatsError, TimeoutError) as err:
            _LOGGER.warning(
                "NATS at %s has JetStream but it could not be used (%s); events published "
                "while Home Assistant is disconnected will be lost",
                self._settings.url,
                err,
            )
            return None
        return pulls

    async def _own_stream(self, js: JetStreamContext, subjects: list[str]) -> None:
        """Make (or widen) :data:`STREAM` to capture ``subjects``."""
        try:
            info = await js.stream_info(STREAM)
        except NotFoundError:
            await js.add_stream(
                name=STREAM,
                subjects=subjects,
                # Kept while a consumer still has to acknowledge it, and never longer
                # than a day or beyond its size: a Home Assistant that never comes back
                # must not fill the broker's disk.
                retention=js_api.RetentionPolicy.INTEREST,
                storage=js_api.StorageType.FILE,
                discard=js_api.DiscardPolicy.OLD,
                max_age=STREAM_MAX_AGE_S,
                max_bytes=STREAM_MAX_BYTES,
            )
            return
        have = list(info.config.subjects or [])
        if missing := [subject for subject in subjects if subject not in have]:
            await js.update_stream(info.config, subjects=have + missing)

    async def _pull(self, pull: JetStreamContext.PullSubscription) -> None:
        """Fetch, hand each message to the hub, and acknowledge what became durable."""
        while not self._stop.is_set():
            try:
                messages = await pull.fetch(FETCH_BATCH, timeout=FETCH_WAIT_S)
            except TimeoutError:
                continue
            except (NatsError, OSError) as err:
                _LOGGER.debug("NATS fetch ended: %s", err)
                return
            waits = [(msg, self._deliver(msg)) for msg in messages]
            for msg, durable in waits:
                try:
                    await self._settle(msg, durable)
                except (NatsError, OSError) as err:
                    # The connection went; the broker sends it again on the next one.
                    _LOGGER.debug("NATS acknowledgement failed: %s", err)

    def _deliver(self, msg: Msg) -> asyncio.Future[None] | None:
        return deliver_tracked(self._hub, NAME, lambda: from_nats(msg.subject, msg.data))

    async def _settle(self, msg: Msg, durable: asyncio.Future[None] | None) -> None:
        if durable is not None:
            try:
                await durable
            except Exception as err:
                delay = self._nak_backoff.next()
                _LOGGER.debug("Not durable (%s); NATS sends it again in %.1f s", err, delay)
                await msg.nak(delay=delay)
                return
        self._nak_backoff.reset()
        await msg.ack()

    async def _stop_pullers(self) -> None:
        pullers, self._pullers = self._pullers, []
        for task in pullers:
            task.cancel()
        for task in pullers:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    def _log_mode(self) -> None:
        if self._mode_logged == self.durable:
            return
        self._mode_logged = self.durable
        if self.durable:
            _LOGGER.debug("NATS at %s: alerts and events through JetStream", self._settings.url)
        else:
            _LOGGER.info(
                "NATS at %s has no JetStream: alerts and events are received at most once, "
                "and those published while Home Assistant is disconnected are lost",
                self._settings.url,
            )

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


async def probe_nats(settings: Mapping[str, Any]) -> None:
    """Connect once with ``settings``; raise :class:`.base.TransportTestError` if that fails
    (the config flow's check, through :func:`.factory.async_test_nats`)."""
    try:
        options = connect_options(NatsSettings.from_mapping(settings))
    except (ValueError, TypeError) as err:
        raise TransportTestError("nats_cannot_connect", str(err)) from err

    async def _quiet(err: Exception) -> None:
        _LOGGER.debug("NATS test: %s", err)

    try:
        async with asyncio.timeout(TEST_TIMEOUT):
            nc = await nats.connect(**options, error_cb=_quiet)
    except (NatsError, OSError, TimeoutError) as err:
        key = "nats_auth" if is_auth_error(err) else "nats_cannot_connect"
        raise TransportTestError(key, str(err) or type(err).__name__) from err
    with contextlib.suppress(NatsError, OSError, TimeoutError):
        await nc.close()


async def _wait_any(*events: asyncio.Event) -> None:
    waiters = [asyncio.ensure_future(event.wait()) for event in events]
    try:
        await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()
        await asyncio.gather(*waiters, return_exceptions=True)
