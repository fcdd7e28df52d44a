"""async_build_sources in Home Assistant, and one alert arriving by two transports at once."""

from __future__ import annotations

import json
from typing import Any

import pytest
from homeassistant.core import HomeAssistant
from homeassistant.helpers.aiohttp_client import async_get_clientsession
from opennvr_app_sdk.alerts import Alert, AlertSource, alert_subject
from pyopennvr import OpenNVRClient

from custom_components.opennvr_workflows.const import (
    CONF_MQTT_HOST,
    CONF_MQTT_USE_HA,
    CONF_NATS_URL,
    CONF_TRANSPORT,
)
from custom_components.opennvr_workflows.nvr.hub import EventHub
from custom_components.opennvr_workflows.nvr.sources.factory import async_build_sources
from custom_components.opennvr_workflows.nvr.sources.mqtt import DirectMqttSource, HaMqttSource
from custom_components.opennvr_workflows.nvr.sources.nats import NatsSource
from custom_components.opennvr_workflows.nvr.sources.websocket import WebSocketSource
from tests.fakes.brokers import NatsServer
from tests.fakes.opennvr_sim import OpenNVRSimulator
from tests.fakes.publishers import nats_publish

from .conftest import Collected, until


def client_for(hass: HomeAssistant, url: str = "http://127.0.0.1:1") -> OpenNVRClient:
    return OpenNVRClient(url, "onvr_test0001_secret", async_get_clientsession(hass))


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ({}, [WebSocketSource]),
        ({CONF_TRANSPORT: "websocket"}, [WebSocketSource]),
        ({CONF_TRANSPORT: "nats", CONF_NATS_URL: "nats://nvr:4222"}, [WebSocketSource, NatsSource]),
        ({CONF_TRANSPORT: "mqtt"}, [WebSocketSource, HaMqttSource]),
        (
            {CONF_TRANSPORT: "mqtt", CONF_MQTT_USE_HA: False, CONF_MQTT_HOST: "broker"},
            [WebSocketSource, DirectMqttSource],
        ),
        # Unusable settings leave the websocket running rather than failing the setup.
        ({CONF_TRANSPORT: "nats"}, [WebSocketSource]),
        ({CONF_TRANSPORT: "mqtt", CONF_MQTT_USE_HA: False}, [WebSocketSource]),
        ({CONF_TRANSPORT: "carrier-pigeon"}, [WebSocketSource]),
    ],
)
async def test_build_sources_for_each_transport(
    hass: HomeAssistant, settings: dict[str, Any], expected: list[type]
) -> None:
    hub = EventHub()
    sources = await async_build_sources(
        hass, settings, client_for(hass), hub, on_auth_failed=lambda: None
    )
    assert [type(s) for s in sources] == expected
    assert set(hub.stats) == {s.name for s in sources}


@pytest.mark.services
async def test_same_alert_via_websocket_and_nats_is_one_event(
    hass: HomeAssistant, sim: OpenNVRSimulator, nats_server: NatsServer
) -> None:
    hub = EventHub()
    collected = Collected()
    hub.subscribe(collected.append)
    sources = await async_build_sources(
        hass,
        {CONF_TRANSPORT: "nats", CONF_NATS_URL: nats_server.url},
        OpenNVRClient(sim.url, sim.config.token, async_get_clientsession(hass)),
        hub,
        on_auth_failed=lambda: None,
        min_backoff=0.05,
        max_backoff=0.3,
    )
    for source in sources:
        await source.start()
    try:
        await until(lambda: hub.connected("websocket") and hub.connected("nats"), "both sources")
        alert = Alert(
            title="Person at the Front Door",
            description="",
            camera_id="cam1",
            severity="medium",
            source=AlertSource(kind="app", name="intrusion", version="1"),
            alert_type="person",
        )
        # OpenNVR pushes the alert on the websocket and the app publishes it on NATS.
        await sim.emit_alert(1, "person", alert_id=alert.alert_id)
        await nats_publish(
            nats_server, [(alert_subject(alert), json.dumps(alert.to_wire()).encode())]
        )
        await until(
            lambda: hub.stats["websocket"].duplicates + hub.stats["nats"].duplicates == 1,
            "the second copy to be recognised",
        )
        [event] = collected.of("alert")
        assert (event.alert_id, event.camera_id, event.type) == (alert.alert_id, "1", "person")
    finally:
        for source in sources:
            await source.stop()
    assert not hub.connected()
