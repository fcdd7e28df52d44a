"""OpenNVR on MQTT: ``opennvr/alerts`` (every alert) and ``opennvr/<site>/<key>/event``
(CloudEvents 1.0).

Two ways in. When Home Assistant's MQTT integration is set up, its connection is reused
(:class:`HaMqttSource`): one broker login, HA's own reconnect handling, and its connected
state drives ours. Otherwise (:class:`DirectMqttSource`) a paho-mqtt client runs on a
thread of its own, hands each message to the event loop, and reconnects with backoff
and jitter; stopping it joins the thread, so nothing is left running after an unload.

Delivery. The direct client speaks MQTT 5 with a persistent session: a stable client id
(one per config entry), ``clean_start=False`` and a session expiry, and QoS 1
subscriptions, so the broker keeps what is published while the client is away and sends
it when it returns. Messages are acknowledged by hand (paho's ``manual_ack``), in the
order they came, each only once the engine has committed what it started; one that
could not be committed ends the connection, and the broker sends it again on the next.
Home Assistant's MQTT integration acknowledges each message itself as soon as it arrives
and has a session of its own: through it, delivery is at most once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import paho.mqtt.client as paho
from homeassistant.core import HomeAssistant, callback
from homeassistant.util.ssl import client_context
from paho.mqtt.enums import CallbackAPIVersion, MQTTErrorCode, MQTTProtocolVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from ...const import (
    CONF_MQTT_HOST,
    CONF_MQTT_PASSWORD,
    CONF_MQTT_PORT,
    CONF_MQTT_SITE,
    CONF_MQTT_TLS,
    CONF_MQTT_USE_HA,
    CONF_MQTT_USER,
)
from ..hub import EventHub
from ..normalize import ALERTS_TOPIC, from_mqtt
from .acks import InOrderAcks
from .base import (
    DEFAULT_MAX_BACKOFF,
    DEFAULT_MIN_BACKOFF,
    Backoff,
    TaskFactory,
    TransportTestError,
    default_task_factory,
    deliver,
    deliver_tracked,
)

if TYPE_CHECKING:
    from homeassistant.components.mqtt import ReceiveMessage

_LOGGER = logging.getLogger(__name__)

NAME: Final = "mqtt"
DEFAULT_PORT: Final = 1883
KEEPALIVE: Final = 30
#: How often the client thread looks up from the socket to see whether it should stop.
_POLL_S: Final = 0.2
_JOIN_TIMEOUT: Final = 10.0
#: How long the broker keeps the session (and the QoS 1 messages for it) while the client
#: is away: a day covers a Home Assistant update or a night without power.
SESSION_EXPIRY_S: Final = 24 * 3600
QOS: Final = 1


@dataclass(frozen=True, slots=True)
class MqttSettings:
    """The broker (direct client only) and the OpenNVR site segment of the topics."""

    use_ha: bool = True
    host: str | None = None
    port: int = DEFAULT_PORT
    user: str | None = None
    password: str | None = None
    tls: bool = False
    site: str = "+"

    @classmethod
    def from_mapping(cls, settings: Mapping[str, Any]) -> MqttSettings:
        site = str(settings.get(CONF_MQTT_SITE) or "+").strip() or "+"
        if "/" in site or "#" in site:
            raise ValueError(f"MQTT site {site!r} must be one topic level")
        return cls(
            use_ha=bool(settings.get(CONF_MQTT_USE_HA, True)),
            host=str(settings.get(CONF_MQTT_HOST) or "").strip() or None,
            port=int(settings.get(CONF_MQTT_PORT) or DEFAULT_PORT),
            user=settings.get(CONF_MQTT_USER) or None,
            password=settings.get(CONF_MQTT_PASSWORD) or None,
            tls=bool(settings.get(CONF_MQTT_TLS, False)),
            site=site,
        )

    @property
    def topics(self) -> tuple[str, str]:
        return (ALERTS_TOPIC, f"opennvr/{self.site}/+/event")


def new_paho_client(
    settings: MqttSettings, purpose: str, *, client_id: str | None = None
) -> paho.Client:
    """A paho client for ``settings``. Without ``client_id``: a unique one and a clean
    session, so two HA instances (or the connection tester) never kick each other off
    the broker. With one: MQTT 5 and acknowledgements by hand, for a persistent session
    that the same id resumes."""
    if client_id is None:
        client = paho.Client(
            CallbackAPIVersion.VERSION2,
            client_id=f"ha-opennvr-workflows-{purpose}-{uuid.uuid4().hex[:8]}",
            clean_session=True,
        )
    else:
        client = paho.Client(
            CallbackAPIVersion.VERSION2,
            client_id=client_id,
            protocol=MQTTProtocolVersion.MQTTv5,
            manual_ack=True,
        )
    if settings.user:
        client.username_pw_set(settings.user, settings.password)
    if settings.tls:
        client.tls_set_context(client_context())
    return client


def session_properties(expiry_s: int) -> Properties:
    """CONNECT properties asking the broker to keep the session ``expiry_s`` seconds."""
    properties = Properties(PacketTypes.CONNECT)  # type: ignore[no-untyped-call]
    properties.SessionExpiryInterval = expiry_s
    return properties


# ── through Home Assistant's MQTT integration ──────────────────────────────


class HaMqttSource:
    """Subscribes through Home Assistant's MQTT integration."""

    name: Final = NAME

    def __init__(
        self,
        hass: HomeAssistant,
        settings: MqttSettings,
        hub: EventHub,
        *,
        task_factory: TaskFactory = default_task_factory,
    ) -> None:
        self._hass = hass
        self._settings = settings
        self._hub = hub
        self._task_factory = task_factory
        self._task: asyncio.Task[None] | None = None
        self._unsubscribe: list[Callable[[], None]] = []
        hub.register(NAME)

    async def start(self) -> None:
        # Waiting for the MQTT client can take a while if it is still setting up; that
        # must not hold up this integration's setup.
        if self._task is None:
            self._task = self._task_factory(self._subscribe(), "opennvr_workflows mqtt")

    async def _subscribe(self) -> None:
        from homeassistant.components import mqtt

        if not await mqtt.async_wait_for_mqtt_client(self._hass):
            _LOGGER.warning(
                "Home Assistant's MQTT integration is not set up; OpenNVR events over "
                "MQTT are unavailable"
            )
            return
        for topic in self._settings.topics:
            self._unsubscribe.append(
                await mqtt.async_subscribe(
                    self._hass, topic, self._on_message, qos=QOS, encoding=None
                )
            )
        self._unsubscribe.append(
            mqtt.async_subscribe_connection_status(self._hass, self._on_status)
        )
        self._hub.set_connected(NAME, mqtt.is_connected(self._hass))

    @callback
    def _on_status(self, connected: bool) -> None:
        self._hub.set_connected(NAME, connected)

    @callback
    def _on_message(self, msg: ReceiveMessage) -> None:
        payload = msg.payload
        deliver(self._hub, NAME, lambda: from_mqtt(msg.topic, payload))

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        while self._unsubscribe:
            self._unsubscribe.pop()()
        self._hub.set_stopped(NAME)


# ── a direct paho-mqtt client ──────────────────────────────────────────────


class DirectMqttSource:
    """A paho-mqtt client on its own thread, reconnecting with backoff and jitter."""

    name: Final = NAME

    def __init__(
        self,
        settings: MqttSettings,
        hub: EventHub,
        *,
        min_backoff: float = DEFAULT_MIN_BACKOFF,
        max_backoff: float = DEFAULT_MAX_BACKOFF,
        keepalive: int = KEEPALIVE,
        client_id: str | None = None,
        session_expiry_s: int = SESSION_EXPIRY_S,
    ) -> None:
        if not settings.host:
            raise ValueError("a direct MQTT connection needs a broker host")
        #: Stable across restarts, so the broker resumes this client's session.
        self.client_id = client_id or f"ha-opennvr-workflows-{uuid.uuid4().hex[:12]}"
        self._session_expiry_s = session_expiry_s
        self._client: paho.Client | None = None
        #: Set (from the loop) to end the connection so the broker sends again what was
        #: not acknowledged.
        self._reconnect = threading.Event()
        #: Which connection the loop side is on; acknowledgements of an older one are
        #: dropped (the broker sends those messages again).
        self._generation = 0
        self._thread_generation = 0
        self._acks: InOrderAcks[tuple[int, int, int]] = InOrderAcks(self._ack, self._not_durable)
        self._settings = settings
        self._hub = hub
        self._min_backoff = min_backoff
        self._max_backoff = max_backoff
        self._keepalive = keepalive
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        #: Set by on_connect when the broker accepted this connection (thread side).
        self._accepted = False
        #: Whether the current outage has been logged: by the hub ("lost") once a
        #: connection had worked, else by the first failed attempt. One line per outage.
        self._outage_reported = False
        hub.register(NAME)

    @property
    def broker(self) -> str:
        return f"{self._settings.host}:{self._settings.port}"

    async def start(self) -> None:
        if self._thread is not None:
            return
        self._loop = asyncio.get_running_loop()
        self._stopping.clear()
        self._thread = threading.Thread(
            target=self._run, name="opennvr_workflows mqtt", daemon=True
        )
        self._thread.start()

    async def stop(self) -> None:
        thread, self._thread = self._thread, None
        self._stopping.set()
        if thread is not None:
            await asyncio.to_thread(thread.join, _JOIN_TIMEOUT)
            if thread.is_alive():
                _LOGGER.warning("The MQTT client thread did not stop in time")
        self._hub.set_stopped(NAME)

    # ── the client thread ────────────────────────────────────────────────

    def _to_loop(self, func: Callable[..., None], *args: Any) -> None:
        loop = self._loop
        if loop is None:
            return
        # The loop may already be closing during shutdown: nothing left to tell.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(func, *args)

    def _run(self) -> None:
        client = new_paho_client(self._settings, "events", client_id=self.client_id)
        client.on_connect = self._on_connect
        client.on_message = self._on_message
        self._client = client
        backoff = Backoff(self._min_backoff, self._max_backoff)
        while not self._stopping.is_set():
            self._accepted = False
            self._reconnect.clear()
            try:
                client.connect(
                    self._settings.host or "",
                    self._settings.port,
                    self._keepalive,
                    clean_start=False,
                    properties=session_properties(self._session_expiry_s),
                )
            except (OSError, ValueError) as err:
                self._to_loop(self._log_failure, f"{type(err).__name__}: {err}")
            else:
                self._pump(client)
            if self._accepted:
                backoff.reset()
            if self._stopping.is_set():
                self._to_loop(self._hub.set_stopped, NAME)
            else:
                self._to_loop(self._hub.set_connected, NAME, False)
            if not self._stopping.is_set():
                self._stopping.wait(backoff.next())

    def _pump(self, client: paho.Client) -> None:
        """Run the connection until it breaks or the source stops."""
        while not self._stopping.is_set() and not self._reconnect.is_set():
            rc = client.loop(timeout=_POLL_S)
            if rc != MQTTErrorCode.MQTT_ERR_SUCCESS:
                if not self._accepted:
                    self._to_loop(self._log_failure, paho.error_string(rc))
                return
        # A normal disconnect: with the session's expiry set, the broker keeps it.
        client.disconnect()
        # Let the DISCONNECT packet go out before the socket is closed.
        client.loop(timeout=_POLL_S)

    def _on_connect(
        self,
        client: paho.Client,
        userdata: Any,
        flags: Any,
        reason: Any,
        properties: Any = None,
    ) -> None:
        if reason.is_failure:
            self._to_loop(self._log_failure, f"refused: {reason}")
            return
        self._accepted = True
        self._thread_generation += 1
        # Before any message of this connection reaches the loop (the loop runs them in
        # the order they were handed over).
        self._to_loop(self._connected, self._thread_generation)
        for topic in self._settings.topics:
            client.subscribe(topic, qos=QOS)

    def _on_message(self, client: paho.Client, userdata: Any, msg: paho.MQTTMessage) -> None:
        self._to_loop(
            self._handle, msg.topic, bytes(msg.payload), msg.mid, msg.qos, self._thread_generation
        )

    # ── on the event loop ────────────────────────────────────────────────

    def _connected(self, generation: int) -> None:
        # Whatever the last connection left unacknowledged comes again on this one.
        self._generation = generation
        self._acks.reset()
        # From now on a loss is the hub's to log ("lost ... unavailable").
        self._outage_reported = True
        self._hub.set_connected(NAME, True)

    def _handle(self, topic: str, payload: bytes, mid: int, qos: int, generation: int) -> None:
        durable = deliver_tracked(self._hub, NAME, lambda: from_mqtt(topic, payload))
        if qos > 0 and generation == self._generation:
            self._acks.add((generation, mid, qos), durable)

    def _ack(self, token: tuple[int, int, int]) -> None:
        generation, mid, qos = token
        client = self._client
        if client is not None and generation == self._generation:
            # paho queues the PUBACK and wakes its thread to send it.
            client.ack(mid, qos)

    def _not_durable(self, token: tuple[int, int, int], err: BaseException) -> None:
        _LOGGER.warning(
            "An MQTT message could not be made durable (%s); reconnecting so the broker "
            "sends it again",
            err,
        )
        self._reconnect.set()

    def _log_failure(self, detail: str) -> None:
        if self._outage_reported:
            _LOGGER.debug("MQTT broker %s unreachable: %s", self.broker, detail)
            return
        self._outage_reported = True
        _LOGGER.warning(
            "Cannot connect to the MQTT broker %s (%s); retrying in the background",
            self.broker,
            detail,
        )


#: MQTT CONNACK reason codes (v5 numbering; paho maps v3.1.1's 4 and 5 onto them).
_MQTT_AUTH_REASONS: Final = frozenset({134, 135})


def probe_mqtt_broker(settings: MqttSettings, timeout: float) -> None:
    """Log in to the broker once (blocking; run it in an executor)."""
    client = new_paho_client(settings, "test")
    answered = threading.Event()
    outcome: list[Any] = []

    def _on_connect(
        _client: Any, _userdata: Any, _flags: Any, reason: Any, _props: Any = None
    ) -> None:
        outcome.append(reason)
        answered.set()

    client.on_connect = _on_connect
    try:
        client.connect(settings.host or "", settings.port, keepalive=30)
    except (OSError, ValueError) as err:
        raise TransportTestError("mqtt_cannot_connect", str(err)) from err
    try:
        deadline = time.monotonic() + timeout
        while not answered.is_set() and time.monotonic() < deadline:
            if client.loop(timeout=0.2) != 0 and not answered.is_set():
                raise TransportTestError("mqtt_cannot_connect", "the broker closed the connection")
        if not outcome:
            raise TransportTestError("mqtt_cannot_connect", "no answer from the broker")
        reason = outcome[0]
        if reason.is_failure:
            key = "mqtt_auth" if reason.value in _MQTT_AUTH_REASONS else "mqtt_cannot_connect"
            raise TransportTestError(key, str(reason))
    finally:
        with contextlib.suppress(Exception):
            client.disconnect()
            client.loop(timeout=0.2)
