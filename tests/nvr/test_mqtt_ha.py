"""The MQTT source through Home Assistant's MQTT integration (``mqtt_mock``)."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncGenerator

import pytest
from homeassistant.components.mqtt import MQTT_CONNECTION_STATE
from homeassistant.core import HomeAssistant
from homeassistant.helpers.dispatcher import async_dispatcher_send
from opennvr_app_sdk.alerts import Alert
from pytest_homeassistant_custom_component.common import async_fire_mqtt_message
from pytest_homeassistant_custom_component.typing import MqttMockHAClient

from custom_components.opennvr_workflows.const import CONF_MQTT_SITE, CONF_MQTT_USE_HA
from custom_components.opennvr_workflows.nvr.hub import EventHub
from custom_components.opennvr_workflows.nvr.sources.factory import (
    TransportTestError,
    async_test_mqtt,
)
from custom_components.opennvr_workflows.nvr.sources.mqtt import HaMqttSource, MqttSettings

from .conftest import Collected, until

#: Home Assistant's MQTT client keeps a once-a-second housekeeping timer that only its
#: (mocked) socket closing cancels; it is not ours, so it may outlive these tests.
HA_MQTT_TIMER = pytest.mark.parametrize("expected_lingering_timers", [True])


def _our_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    """What the integration logged at info level and above."""
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno >= logging.INFO and r.name.startswith("custom_components.")
    ]


@pytest.fixture
async def ha_mqtt(
    hass: HomeAssistant, mqtt_mock: MqttMockHAClient
) -> AsyncGenerator[MqttMockHAClient]:
    """Home Assistant's MQTT integration on a mocked client, unloaded after the test."""
    yield mqtt_mock
    for entry in hass.config_entries.async_entries("mqtt"):
        await hass.config_entries.async_unload(entry.entry_id)


@HA_MQTT_TIMER
async def test_events_through_home_assistants_mqtt(
    hass: HomeAssistant,
    ha_mqtt: MqttMockHAClient,
    hub: EventHub,
    collected: Collected,
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings = MqttSettings.from_mapping({CONF_MQTT_USE_HA: True, CONF_MQTT_SITE: "abc123"})
    source = HaMqttSource(hass, settings, hub)
    await source.start()
    await until(lambda: hub.connected("mqtt"), "the MQTT subscription")

    alert = Alert(title="Person", description="", camera_id="cam4", alert_type="person")
    async_fire_mqtt_message(hass, "opennvr/alerts", json.dumps(alert.to_wire()))
    async_fire_mqtt_message(
        hass,
        "opennvr/abc123/camera.2.detections/event",
        json.dumps({"specversion": "1.0", "data": {"event_type": "car"}}),
    )
    # Another site's events are not subscribed to.
    async_fire_mqtt_message(
        hass,
        "opennvr/other/camera.2.detections/event",
        json.dumps({"specversion": "1.0", "data": {"event_type": "dog"}}),
    )
    for _ in range(5):
        async_fire_mqtt_message(hass, "opennvr/alerts", b"\xff not json")
    await hass.async_block_till_done()

    assert [(e.kind, e.type, e.camera_id) for e in collected] == [
        ("alert", "person", "4"),
        ("event", "car", "2"),
    ]
    assert collected[0].alert_id == alert.alert_id
    assert hub.stats["mqtt"].dropped_by_kind == {"alert": 5}

    # The same alert again (a retained or repeated message): counted, not re-published.
    async_fire_mqtt_message(hass, "opennvr/alerts", json.dumps(alert.to_wire()))
    await hass.async_block_till_done()
    assert len(collected) == 2
    assert hub.stats["mqtt"].duplicates == 1

    # Home Assistant's MQTT connection state drives the source's.
    async_dispatcher_send(hass, MQTT_CONNECTION_STATE, False)
    assert not hub.connected("mqtt")
    async_dispatcher_send(hass, MQTT_CONNECTION_STATE, True)
    assert hub.connected("mqtt")

    logged = _our_lines(caplog)
    assert logged[-2:] == [
        "OpenNVR events via mqtt lost; its entities are unavailable until it reconnects",
        "OpenNVR events via mqtt are back",
    ]
    await source.stop()
    assert not hub.connected("mqtt")
    # Stopped on purpose (an unload, a reload): no outage, so nothing more is logged.
    assert _our_lines(caplog) == logged
    async_fire_mqtt_message(hass, "opennvr/alerts", json.dumps(Alert("x", "", "cam1").to_wire()))
    await hass.async_block_till_done()
    assert len(collected) == 2  # unsubscribed


@HA_MQTT_TIMER
async def test_connection_test_with_home_assistants_mqtt(
    hass: HomeAssistant, ha_mqtt: MqttMockHAClient
) -> None:
    await async_test_mqtt(hass, {CONF_MQTT_USE_HA: True})


async def test_connection_test_without_home_assistants_mqtt(hass: HomeAssistant) -> None:
    with pytest.raises(TransportTestError) as info:
        await async_test_mqtt(hass, {CONF_MQTT_USE_HA: True})
    assert info.value.key == "mqtt_not_set_up"


async def test_source_without_home_assistants_mqtt_stays_down(
    hass: HomeAssistant, hub: EventHub, caplog: pytest.LogCaptureFixture
) -> None:
    source = HaMqttSource(hass, MqttSettings(), hub)
    await source.start()
    await until(lambda: "MQTT integration is not set up" in caplog.text, "the warning")
    assert not hub.connected("mqtt")
    await source.stop()
