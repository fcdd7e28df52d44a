"""Builds a config entry's event sources, and tests a transport before it is saved.

The websocket is always built: it is the default transport and the only one that brings
camera status and the site mode. NATS or MQTT is added when chosen; the hub's
deduplication by ``alert_id`` makes an alert that arrives both ways count once.

The NATS and MQTT modules are imported only when a site chooses them, off the event loop:
each brings its client library (nats-py, paho-mqtt: 3 to 4 MB of memory together with
the module), which a home on the websocket alone should not carry.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, Final

from homeassistant.core import HomeAssistant
from homeassistant.helpers.aiohttp_client import async_get_clientsession
from pyopennvr import OpenNVRClient

from ...const import CONF_TRANSPORT, TRANSPORT_MQTT, TRANSPORT_NATS, TRANSPORT_WEBSOCKET
from ...lazy_imports import async_import
from ..hub import EventHub
from .base import (
    DEFAULT_MAX_BACKOFF,
    DEFAULT_MIN_BACKOFF,
    TEST_TIMEOUT,
    EventSource,
    TransportTestError,
)
from .position import HaPositionStore
from .websocket import WebSocketSource

__all__ = ["TransportTestError", "async_build_sources", "async_test_mqtt", "async_test_nats"]

_LOGGER = logging.getLogger(__name__)

#: The module of each transport that has one of its own (``.nats``, ``.mqtt``).
_MODULES: Final = {TRANSPORT_NATS: "nats", TRANSPORT_MQTT: "mqtt"}


async def async_load_transport(transport: str) -> None:
    """Import ``transport``'s module, with its client library, in an executor thread (a
    first import reads files from disk); nothing for the websocket, or once it is loaded.
    The builders below then import it again for free."""
    if (name := _MODULES.get(transport)) is not None:
        await async_import(f"{__package__}.{name}")


async def async_build_sources(
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
    await async_load_transport(transport)
    try:
        if transport == TRANSPORT_NATS:
            from .nats import DEFAULT_CONSUMER, NatsSettings, NatsSource

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
            from .mqtt import DirectMqttSource, HaMqttSource, MqttSettings

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
    await async_load_transport(TRANSPORT_NATS)
    from .nats import probe_nats

    await probe_nats(settings)


async def async_test_mqtt(hass: HomeAssistant, settings: Mapping[str, Any]) -> None:
    """Check that MQTT can be used with ``settings``: Home Assistant's MQTT integration is
    set up (when chosen), or the broker accepts a login; else :class:`TransportTestError`."""
    await async_load_transport(TRANSPORT_MQTT)
    from .mqtt import MqttSettings, probe_mqtt_broker

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
