"""Builds a config entry's event sources, and tests a transport before it is saved.

The websocket is always built: it is the default transport and the only one that brings
camera status and the site mode. NATS or MQTT is added when chosen; the hub's
deduplication by ``alert_id`` makes an alert that arrives both ways count once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import threading
import time
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, Final

import nats
from homeassistant.core import HomeAssistant
from homeassistant.helpers.aiohttp_client import async_get_clientsession
from nats.errors import Error as NatsError
from pyopennvr import OpenNVRClient

from ...const import CONF_TRANSPORT, TRANSPORT_MQTT, TRANSPORT_NATS, TRANSPORT_WEBSOCKET
from ..hub import EventHub
from .base import DEFAULT_MAX_BACKOFF, DEFAULT_MIN_BACKOFF, EventSource
from .mqtt import DirectMqttSource, HaMqttSource, MqttSettings, new_paho_client
from .nats import DEFAULT_CONSUMER, NatsSettings, NatsSource, connect_options, is_auth_error
from .position import HaPositionStore
from .websocket import WebSocketSource

_LOGGER = logging.getLogger(__name__)

#: How long a connection test may take before the broker counts as unreachable.
TEST_TIMEOUT: Final = 10.0
#: MQTT CONNACK reason codes (v5 numbering; paho maps v3.1.1's 4 and 5 onto them).
_MQTT_AUTH_REASONS: Final = frozenset({134, 135})


class TransportTestError(Exception):
    """A transport test failed; ``key`` is the config flow's error translation key:
    nats_cannot_connect, nats_auth, mqtt_cannot_connect, mqtt_auth, mqtt_not_set_up."""

    def __init__(self, key: str, detail: str = "") -> None:
        super().__init__(detail or key)
        self.key = key


def build_sources(
    hass: HomeAssistant,
    settings: Mapping[str, Any],
    client: OpenNVRClient,
    hub: EventHub,
    *,
    on_auth_failed: Callable[[], None],
    min_backoff: float = DEFAULT_MIN_BACKOFF,
    max_backoff: float = DEFAULT_MAX_BACKOFF,
    entry_id: str | None = None,
) -> list[EventSource]:
    """The sources ``settings`` ask for (not started). Settings a source cannot use (a
    missing broker URL) are logged and that source left out; the websocket always runs.

    ``entry_id`` names what must outlive a restart: the websocket's saved position, the
    NATS durable consumers and the MQTT session's client id. Without it nothing is kept.
    """
    stable = re.sub(r"[^A-Za-z0-9_-]", "_", entry_id) if entry_id else None

    def task_factory(coro: Coroutine[Any, Any, None], name: str) -> asyncio.Task[None]:
        return hass.async_create_background_task(coro, name)

    # The client's session is Home Assistant's shared one for the same TLS setting.
    session = async_get_clientsession(hass, verify_ssl=client.ssl is not False)
    sources: list[EventSource] = [
        WebSocketSource(
            client,
            session,
            hub,
            on_auth_failed=on_auth_failed,
            min_backoff=min_backoff,
            max_backoff=max_backoff,
            task_factory=task_factory,
            positions=HaPositionStore(hass, entry_id) if entry_id else None,
        )
    ]
    transport = settings.get(CONF_TRANSPORT, TRANSPORT_WEBSOCKET)
    try:
        if transport == TRANSPORT_NATS:
            sources.append(
                NatsSource(
                    NatsSettings.from_mapping(settings),
                    hub,
                    min_backoff=min_backoff,
                    max_backoff=max_backoff,
                    task_factory=task_factory,
                    consumer=f"{DEFAULT_CONSUMER}_{stable}" if stable else DEFAULT_CONSUMER,
                )
            )
        elif transport == TRANSPORT_MQTT:
            mqtt_settings = MqttSettings.from_mapping(settings)
            if mqtt_settings.use_ha:
                sources.append(HaMqttSource(hass, mqtt_settings, hub, task_factory=task_factory))
            else:
                sources.append(
                    DirectMqttSource(
                        mqtt_settings,
                        hub,
                        min_backoff=min_backoff,
                        max_backoff=max_backoff,
                        client_id=f"ha-opennvr-workflows-{stable}" if stable else None,
                    )
                )
        elif transport != TRANSPORT_WEBSOCKET:
            _LOGGER.error("Unknown event transport %r; using the websocket only", transport)
    except (ValueError, TypeError) as err:
        _LOGGER.warning(
            "The %s settings are unusable (%s); using the websocket only", transport, err
        )
    return sources


# ── connection tests for the config flow ───────────────────────────────────


async def async_test_nats(settings: Mapping[str, Any]) -> None:
    """Connect once with ``settings``; raise :class:`TransportTestError` if that fails."""
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


async def async_test_mqtt(hass: HomeAssistant, settings: Mapping[str, Any]) -> None:
    """Check that MQTT can be used with ``settings``: Home Assistant's MQTT integration is
    set up (when chosen), or the broker accepts a login; else :class:`TransportTestError`."""
    try:
        mqtt_settings = MqttSettings.from_mapping(settings)
    except (ValueError, TypeError) as err:
        raise TransportTestError("mqtt_cannot_connect", str(err)) from err
    if mqtt_settings.use_ha:
        from homeassistant.components import mqtt

        if not await mqtt.async_wait_for_mqtt_client(hass):
            raise TransportTestError("mqtt_not_set_up")
        return
    if not mqtt_settings.host:
        raise TransportTestError("mqtt_cannot_connect", "no broker host")
    await hass.async_add_executor_job(probe_mqtt_broker, mqtt_settings, TEST_TIMEOUT)


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
