"""The direct paho-mqtt source against a real mosquitto, fed by a real MQTT publisher."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import pytest
from homeassistant.core import HomeAssistant

from custom_components.opennvr_workflows.const import (
    CONF_MQTT_HOST,
    CONF_MQTT_PASSWORD,
    CONF_MQTT_PORT,
    CONF_MQTT_USE_HA,
    CONF_MQTT_USER,
)
from custom_components.opennvr_workflows.nvr.hub import EventHub
from custom_components.opennvr_workflows.nvr.sources.factory import (
    TransportTestError,
    async_test_mqtt,
)
from custom_components.opennvr_workflows.nvr.sources.mqtt import DirectMqttSource, MqttSettings
from tests.fakes.brokers import Mosquitto, free_port, running
from tests.fakes.publishers import SITE, cloud_event, webhook_alert
from tests.fakes.publishers import mqtt_publish as publish

from .conftest import Collected, until

pytestmark = pytest.mark.services


def settings_for(broker: Mosquitto, **extra: Any) -> dict[str, Any]:
    return {
        CONF_MQTT_USE_HA: False,
        CONF_MQTT_HOST: "127.0.0.1",
        CONF_MQTT_PORT: broker.port,
        **extra,
    }


async def start_source(settings: dict[str, Any], hub: EventHub) -> DirectMqttSource:
    source = DirectMqttSource(
        MqttSettings.from_mapping(settings), hub, min_backoff=0.05, max_backoff=0.3
    )
    await source.start()
    return source


@pytest.fixture
async def source(mosquitto: Mosquitto, hub: EventHub) -> AsyncGenerator[DirectMqttSource]:
    source = await start_source(settings_for(mosquitto), hub)
    await until(lambda: hub.connected("mqtt"), "MQTT to connect")
    yield source
    await source.stop()


async def test_alerts_and_cloudevents_arrive(
    mosquitto: Mosquitto, source: DirectMqttSource, hub: EventHub, collected: Collected
) -> None:
    alert_msg = webhook_alert("cam2")
    await publish(
        mosquitto,
        [
            alert_msg,
            cloud_event(
                "camera.3.alerts",
                {"event_type": "alert", "alert_id": "alrt_cecece", "severity": "info"},
            ),
            cloud_event("camera.1.detections", {"event_type": "person", "score": 0.8}),
            (f"opennvr/{SITE}/status", "online"),
            (f"opennvr/{SITE}/camera.1.online/state", "ON"),
        ],
    )
    await until(lambda: len(collected) == 3, "two alerts and a detection")
    first, second, detection = collected
    assert (first.kind, first.source, first.camera_id, first.type) == (
        "alert",
        "mqtt",
        "2",
        "parcel",
    )
    assert first.alert_id == json.loads(alert_msg[1])["alert_id"]
    assert (second.alert_id, second.camera_id, second.severity) == ("alrt_cecece", "3", "low")
    assert (detection.kind, detection.type, detection.camera_id) == ("event", "person", "1")
    assert hub.stats["mqtt"].dropped == 0


async def test_only_the_configured_site_is_heard(
    socket_enabled: None, mosquitto: Mosquitto, hub: EventHub, collected: Collected
) -> None:
    source = await start_source(settings_for(mosquitto, mqtt_site=SITE), hub)
    try:
        await until(lambda: hub.connected("mqtt"), "MQTT to connect")
        other = cloud_event("camera.1.detections", {"event_type": "dog"}, site="another0site")
        mine = cloud_event("camera.1.detections", {"event_type": "cat"})
        await publish(mosquitto, [other, mine])
        await until(lambda: len(collected) == 1, "this site's event")
        await asyncio.sleep(0.2)
        assert [e.type for e in collected] == ["cat"]
    finally:
        await source.stop()


async def test_broker_restart_mid_stream(
    mosquitto: Mosquitto,
    source: DirectMqttSource,
    hub: EventHub,
    collected: Collected,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    before = [webhook_alert(f"cam{n}") for n in range(3)]
    await publish(mosquitto, before)
    await until(lambda: len(collected) == 3, "the alerts before the restart")

    states: list[bool] = []
    hub.subscribe_state(lambda name, up: states.append(up))
    await asyncio.to_thread(mosquitto.restart)
    await until(lambda: states[-2:] == [False, True], "MQTT to go down and come back")

    after = [webhook_alert(f"cam{n}") for n in range(3)]
    await publish(mosquitto, after)
    await until(lambda: len(collected) == 6, "the alerts after the restart")
    sent = [json.loads(body)["alert_id"] for _, body in before + after]
    assert collected.alert_ids() == sent
    lines = [r.getMessage() for r in caplog.records if "mqtt" in r.getMessage().lower()]
    assert lines == [
        "OpenNVR events via mqtt lost; its entities are unavailable until it reconnects",
        "OpenNVR events via mqtt are back",
    ]


async def test_stopping_is_not_an_outage(
    mosquitto: Mosquitto, hub: EventHub, caplog: pytest.LogCaptureFixture
) -> None:
    states: list[bool] = []
    hub.subscribe_state(lambda name, up: states.append(up))
    for _ in range(2):  # stopped, then started again and stopped: as a reload does
        source = await start_source(settings_for(mosquitto), hub)
        await until(lambda: hub.connected("mqtt"), "MQTT to connect")
        await source.stop()
        await asyncio.sleep(0.1)  # anything the stopped client thread still hands over
        assert not hub.connected("mqtt")
    assert states == [True, False, True, False]
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


async def test_malformed_flood_is_counted_and_logged_once_per_kind(
    mosquitto: Mosquitto,
    source: DirectMqttSource,
    hub: EventHub,
    collected: Collected,
    caplog: pytest.LogCaptureFixture,
) -> None:
    flood: list[tuple[str, str | bytes]] = [("opennvr/alerts", b"\xff\xfe garbage")] * 150
    flood += [("opennvr/alerts", '{"title": "no alert_id"}')] * 50
    flood += [(f"opennvr/{SITE}/camera.1.detections/event", '{"specversion": "1.0"}')] * 40
    await publish(mosquitto, [*flood, webhook_alert()])
    await until(lambda: len(collected) == 1, "the good alert behind the flood")
    await until(lambda: hub.stats["mqtt"].dropped == 240, "every drop to be counted")
    assert hub.stats["mqtt"].dropped_by_kind == {"alert": 200, "cloudevent": 40}
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 2
    assert all("Malformed" in r.getMessage() for r in warnings)


async def test_password_login_and_a_refused_one(
    socket_enabled: None, tmp_path: Path, hub: EventHub, caplog: pytest.LogCaptureFixture
) -> None:
    with running(Mosquitto(tmp_path, user="ha", password="pw")) as broker:
        assert isinstance(broker, Mosquitto)
        good = settings_for(broker, **{CONF_MQTT_USER: "ha", CONF_MQTT_PASSWORD: "pw"})
        source = await start_source(good, hub)
        try:
            await until(lambda: hub.connected("mqtt"), "a password login")
        finally:
            await source.stop()
        bad = {**good, CONF_MQTT_PASSWORD: "wrong"}
        refused = await start_source(bad, hub)
        try:
            await asyncio.sleep(1.0)  # several refused attempts
            assert not hub.connected("mqtt")
        finally:
            await refused.stop()
    cannot = [r for r in caplog.records if "Cannot connect to the MQTT broker" in r.getMessage()]
    assert len(cannot) == 1
    assert "refused" in cannot[0].getMessage()


async def test_connection_tests(hass: HomeAssistant, socket_enabled: None, tmp_path: Path) -> None:
    with running(Mosquitto(tmp_path, user="ha", password="pw")) as broker:
        assert isinstance(broker, Mosquitto)
        good = settings_for(broker, **{CONF_MQTT_USER: "ha", CONF_MQTT_PASSWORD: "pw"})
        await async_test_mqtt(hass, good)
        with pytest.raises(TransportTestError) as info:
            await async_test_mqtt(hass, {**good, CONF_MQTT_PASSWORD: "wrong"})
        assert info.value.key == "mqtt_auth"
    with pytest.raises(TransportTestError) as info:
        await async_test_mqtt(hass, {**good, CONF_MQTT_PORT: free_port()})
    assert info.value.key == "mqtt_cannot_connect"
    with pytest.raises(TransportTestError) as info:
        await async_test_mqtt(hass, {CONF_MQTT_USE_HA: False, CONF_MQTT_HOST: ""})
    assert info.value.key == "mqtt_cannot_connect"


async def test_stopping_while_the_broker_is_down(socket_enabled: None, hub: EventHub) -> None:
    source = await start_source(
        {CONF_MQTT_USE_HA: False, CONF_MQTT_HOST: "127.0.0.1", CONF_MQTT_PORT: free_port()}, hub
    )
    await asyncio.sleep(0.3)
    await source.stop()  # the thread is joined: verify_cleanup fails the test otherwise
    assert not hub.connected("mqtt")
