"""OpenNVR on MQTT: ``opennvr/alerts`` (every alert) and ``opennvr/<site>/<key>/event``
(CloudEvents 1.0).

Two ways in. When Home Assistant's MQTT integration is set up, its connection is reused
(:class:`HaMqttSource`): one broker login, HA's own reconnect handling, and its connected
state drives ours. Otherwise (:class:`DirectMqttSource`) a paho-mqtt client runs on a
thread of its own, hands each message to the event loop, and reconnects with backoff
and jitter; stopping it joins the thread, so nothing is left running after an unload.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import paho.mqtt.client as paho
from homeassistant.core import HomeAssistant, callback
from homeassistant.util.ssl import client_context
from paho.mqtt.enums import CallbackAPIVersion, MQTTErrorCode

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
from .base import (
    DEFAULT_MAX_BACKOFF,
    DEFAULT_MIN_BACKOFF,
    Backoff,
    TaskFactory,
    default_task_factory,
    deliver,
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


def new_paho_client(settings: MqttSettings, purpose: str) -> paho.Client:
    """A paho client for ``settings``; a unique client id so two HA instances (or the
    connection tester) never kick each other off the broker."""
    client = paho.Client(
        CallbackAPIVersion.VERSION2,
        client_id=f"ha-opennvr-workflows-{purpose}-{uuid.uuid4().hex[:8]}",
        clean_session=True,
    )
    if settings.user:
        client.username_pw_set(settings.user, settings.password)
    if settings.tls:
        client.tls_set_context(client_context())
    return client


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
                    self._hass, topic, self._on_message, qos=0, encoding=None
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
    ) -> None:
        if not settings.host:
            raise ValueError("a direct MQTT connection needs a broker host")
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
        client = new_paho_client(self._settings, "events")
        client.on_connect = self._on_connect
        client.on_message = self._on_message
        backoff = Backoff(self._min_backoff, self._max_backoff)
        while not self._stopping.is_set():
            self._accepted = False
            try:
                client.connect(self._settings.host or "", self._settings.port, self._keepalive)
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
        while not self._stopping.is_set():
            rc = client.loop(timeout=_POLL_S)
            if rc != MQTTErrorCode.MQTT_ERR_SUCCESS:
                if not self._accepted:
                    self._to_loop(self._log_failure, paho.error_string(rc))
                return
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
        for topic in self._settings.topics:
            client.subscribe(topic, qos=0)
        self._to_loop(self._connected)

    def _on_message(self, client: paho.Client, userdata: Any, msg: paho.MQTTMessage) -> None:
        self._to_loop(self._handle, msg.topic, bytes(msg.payload))

    # ── on the event loop ────────────────────────────────────────────────

    def _connected(self) -> None:
        # From now on a loss is the hub's to log ("lost ... unavailable").
        self._outage_reported = True
        self._hub.set_connected(NAME, True)

    def _handle(self, topic: str, payload: bytes) -> None:
        deliver(self._hub, NAME, lambda: from_mqtt(topic, payload))

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
