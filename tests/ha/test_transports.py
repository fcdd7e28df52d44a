"""Alerts from every transport reach the right camera's event entity once, through a broker
restart, and malformed payloads are counted on the diagnostic sensor.

Real components throughout: the OpenNVR simulator over the events websocket, a real
nats-server with a real nats-py publisher, a real mosquitto with a real paho publisher, and
Home Assistant's own MQTT integration (``mqtt_mock``).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from homeassistant.const import ATTR_ENTITY_ID
from homeassistant.core import Event, HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_fire_mqtt_message

from custom_components.opennvr_workflows.const import (
    CONF_MQTT_HOST,
    CONF_MQTT_PORT,
    CONF_MQTT_SITE,
    CONF_MQTT_USE_HA,
    CONF_NATS_URL,
    CONF_TRANSPORT,
    TRANSPORT_MQTT,
    TRANSPORT_NATS,
)
from tests.fakes.brokers import Mosquitto, NatsServer
from tests.fakes.opennvr_sim import OpenNVRSimulator
from tests.fakes.publishers import SITE, mqtt_publish, nats_publish, sdk_alert, webhook_alert

from .conftest import WEBSOCKET_OPTIONS
from .test_config_flow import _site_step
from .test_entities import enable_counters, entity_id, wait_for

pytestmark = pytest.mark.services


def event_changes(hass: HomeAssistant, target: str) -> list[dict[str, Any]]:
    """Every event the entity fires from now on (its attributes at that moment)."""
    seen: list[dict[str, Any]] = []

    def _record(event: Event) -> None:
        new = event.data["new_state"]
        if event.data[ATTR_ENTITY_ID] == target and new is not None and new.state != "unavailable":
            old = event.data["old_state"]
            if old is None or old.state != new.state:
                seen.append(dict(new.attributes))

    hass.bus.async_listen("state_changed", _record)
    return seen


async def restarted(hass: HomeAssistant, entry: MockConfigEntry, source: str, restart: Any) -> None:
    """Restart a broker and wait until the source has noticed the loss AND reconnected
    (right after a quick restart it may not have noticed anything yet)."""
    transitions: list[bool] = []
    unsubscribe = entry.runtime_data.hub.subscribe_state(
        lambda name, up: transitions.append(up) if name == source else None
    )
    restart()
    try:
        await wait_for(hass, lambda: False in transitions and transitions[-1], within=30)
    finally:
        unsubscribe()


async def _setup(hass: HomeAssistant, entry: MockConfigEntry, source: str) -> None:
    enable_counters(hass, entry, source)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    await wait_for(hass, lambda: entry.runtime_data.hub.connected(source), within=15)


# ── NATS ─────────────────────────────────────────────────────────────────────


@pytest.fixture
def nats_entry_options(nats_server: NatsServer) -> dict[str, Any]:
    return {**WEBSOCKET_OPTIONS, CONF_TRANSPORT: TRANSPORT_NATS, CONF_NATS_URL: nats_server.url}


async def test_nats_alerts_reach_the_event_entity_through_a_restart(
    hass: HomeAssistant,
    sim: OpenNVRSimulator,
    nats_server: NatsServer,
    nats_entry_options: dict[str, Any],
    config_entry: MockConfigEntry,
) -> None:
    hass.config_entries.async_update_entry(config_entry, options=nats_entry_options)
    await _setup(hass, config_entry, "nats")
    events_2 = entity_id(hass, sim, "event", "2_events")
    fired = event_changes(hass, events_2)

    subject, payload = sdk_alert("cam2", alert_id="alrt_00000000aa01")
    await nats_publish(nats_server, [(subject, payload), (subject, payload)])  # resent once
    await wait_for(hass, lambda: len(fired) == 1)
    assert fired[0]["alert_id"] == "alrt_00000000aa01"
    assert fired[0]["source"] == "nats"
    assert fired[0]["event_type"] == "person"

    await restarted(hass, config_entry, "nats", nats_server.restart)
    await nats_publish(nats_server, [sdk_alert("cam2", alert_id="alrt_00000000aa02")])
    await wait_for(hass, lambda: len(fired) == 2, within=10)
    assert fired[1]["alert_id"] == "alrt_00000000aa02"

    dropped = entity_id(hass, sim, "sensor", "nats_events_dropped")
    flood = [("opennvr.alerts.app.x.cam1", b"{not json")] * 30
    flood += [("opennvr.alerts.app.x.cam1", json.dumps({"title": "no id"}).encode())] * 20
    await nats_publish(nats_server, flood)
    await wait_for(hass, lambda: hass.states.get(dropped).state == "50")
    assert len(fired) == 2


async def test_same_alert_by_websocket_and_nats_is_one_event(
    hass: HomeAssistant,
    sim: OpenNVRSimulator,
    nats_server: NatsServer,
    nats_entry_options: dict[str, Any],
    config_entry: MockConfigEntry,
) -> None:
    hass.config_entries.async_update_entry(config_entry, options=nats_entry_options)
    await _setup(hass, config_entry, "nats")
    await wait_for(hass, lambda: config_entry.runtime_data.hub.connected("websocket"))
    events_1 = entity_id(hass, sim, "event", "1_events")
    fired = event_changes(hass, events_1)

    await sim.emit_alert(1, "person", alert_id="alrt_00000000bb01")
    await nats_publish(nats_server, [sdk_alert("cam1", alert_id="alrt_00000000bb01")])
    await wait_for(hass, lambda: len(fired) == 1)
    stats = config_entry.runtime_data.hub.stats
    await wait_for(hass, lambda: stats["nats"].duplicates + stats["websocket"].duplicates == 1)
    assert len(fired) == 1


async def test_config_flow_tests_the_nats_broker(
    hass: HomeAssistant, sim: OpenNVRSimulator, nats_server: NatsServer
) -> None:
    result = await _site_step(hass, sim)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_TRANSPORT: TRANSPORT_NATS}
    )
    assert result["step_id"] == "nats"
    nats_server.stop()
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_NATS_URL: nats_server.url, "nats_tls_verify": True}
    )
    assert result["errors"] == {"base": "nats_cannot_connect"}
    nats_server.start()
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_NATS_URL: nats_server.url, "nats_tls_verify": True}
    )
    assert result["step_id"] == "ollama"


# ── MQTT, direct client ──────────────────────────────────────────────────────


async def test_mqtt_alerts_reach_the_event_entity_through_a_restart(
    hass: HomeAssistant,
    sim: OpenNVRSimulator,
    mosquitto: Mosquitto,
    config_entry: MockConfigEntry,
) -> None:
    options = {
        **WEBSOCKET_OPTIONS,
        CONF_TRANSPORT: TRANSPORT_MQTT,
        CONF_MQTT_USE_HA: False,
        CONF_MQTT_HOST: "127.0.0.1",
        CONF_MQTT_PORT: mosquitto.port,
        CONF_MQTT_SITE: SITE,
    }
    hass.config_entries.async_update_entry(config_entry, options=options)
    await _setup(hass, config_entry, "mqtt")
    events_3 = entity_id(hass, sim, "event", "3_events")
    fired = event_changes(hass, events_3)

    alert = webhook_alert("cam3", alert_id="alrt_00000000cc01")
    await mqtt_publish(mosquitto, [alert, alert])
    await wait_for(hass, lambda: len(fired) == 1)
    assert fired[0]["event_type"] == "parcel"
    assert fired[0]["source"] == "mqtt"

    await restarted(hass, config_entry, "mqtt", mosquitto.restart)
    await mqtt_publish(mosquitto, [webhook_alert("cam3", alert_id="alrt_00000000cc02")])
    await wait_for(hass, lambda: len(fired) == 2, within=10)

    dropped = entity_id(hass, sim, "sensor", "mqtt_events_dropped")
    await mqtt_publish(mosquitto, [("opennvr/alerts", b"\xff garbage")] * 25)
    await wait_for(hass, lambda: hass.states.get(dropped).state == "25")
    assert len(fired) == 2


async def test_config_flow_tests_the_mqtt_broker(
    hass: HomeAssistant, sim: OpenNVRSimulator, mosquitto: Mosquitto
) -> None:
    result = await _site_step(hass, sim)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_TRANSPORT: TRANSPORT_MQTT}
    )
    assert result["step_id"] == "mqtt_broker"
    form = {CONF_MQTT_USE_HA: True, CONF_MQTT_PORT: 1883, "mqtt_tls": False, CONF_MQTT_SITE: "+"}
    result = await hass.config_entries.flow.async_configure(result["flow_id"], form)
    assert result["errors"] == {"base": "mqtt_not_set_up"}

    form[CONF_MQTT_USE_HA] = False
    result = await hass.config_entries.flow.async_configure(result["flow_id"], form)
    assert result["errors"] == {CONF_MQTT_HOST: "mqtt_host_required"}

    form |= {CONF_MQTT_HOST: "127.0.0.1", CONF_MQTT_PORT: mosquitto.port}
    result = await hass.config_entries.flow.async_configure(result["flow_id"], form)
    assert result["step_id"] == "ollama"
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"ollama_url": "http://127.0.0.1:9", "skip_ai": True}
    )
    await hass.async_block_till_done()
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["options"][CONF_MQTT_PORT] == mosquitto.port
    assert result["options"][CONF_TRANSPORT] == TRANSPORT_MQTT


# ── MQTT through Home Assistant's MQTT integration ───────────────────────────


@pytest.mark.parametrize("expected_lingering_timers", [True])  # HA's MQTT client's own timer
async def test_mqtt_through_home_assistants_integration(
    hass: HomeAssistant,
    sim: OpenNVRSimulator,
    mqtt_mock: Any,
    config_entry: MockConfigEntry,
) -> None:
    options = {
        **WEBSOCKET_OPTIONS,
        CONF_TRANSPORT: TRANSPORT_MQTT,
        CONF_MQTT_USE_HA: True,
        CONF_MQTT_SITE: SITE,
    }
    hass.config_entries.async_update_entry(config_entry, options=options)
    await _setup(hass, config_entry, "mqtt")
    events_2 = entity_id(hass, sim, "event", "2_events")
    fired = event_changes(hass, events_2)

    topic, payload = webhook_alert("cam2", alert_id="alrt_00000000dd01")
    async_fire_mqtt_message(hass, topic, payload)
    async_fire_mqtt_message(hass, topic, payload)
    async_fire_mqtt_message(hass, "opennvr/alerts", "not json")
    await wait_for(hass, lambda: len(fired) == 1)
    assert fired[0]["alert_id"] == "alrt_00000000dd01"
    dropped = entity_id(hass, sim, "sensor", "mqtt_events_dropped")
    await wait_for(hass, lambda: hass.states.get(dropped).state == "1")


# ── websocket position ───────────────────────────────────────────────────────


async def test_websocket_resumes_from_the_stored_position_after_a_restart(
    hass: HomeAssistant,
    sim: OpenNVRSimulator,
    config_entry: MockConfigEntry,
    hass_storage: dict[str, Any],
) -> None:
    await _setup(hass, config_entry, "websocket")
    events_1 = entity_id(hass, sim, "event", "1_events")
    fired = event_changes(hass, events_1)
    await sim.emit_alert(1, "person", alert_id="alrt_00000000cc01")
    await wait_for(hass, lambda: len(fired) == 1)
    seq_before = sim.seq

    # Unloading stops the source, which writes its last durable position.
    assert await hass.config_entries.async_unload(config_entry.entry_id)
    await hass.async_block_till_done()
    key = f"opennvr_workflows.{config_entry.entry_id}.ws_position"
    assert hass_storage[key]["data"] == {"epoch": sim.epoch, "seq": seq_before}

    await sim.emit_alert(1, "person", alert_id="alrt_00000000cc02")  # while it is down
    resumes = len(sim.ws_resumes)
    await _setup(hass, config_entry, "websocket")
    # (The reloaded entity restores its last event first, which shows as a change too.)
    await wait_for(hass, lambda: fired[-1]["alert_id"] == "alrt_00000000cc02", within=10)
    assert [f["alert_id"] for f in fired].count("alrt_00000000cc02") == 1
    assert sim.ws_resumes[resumes] == (str(seq_before), sim.epoch)
    assert config_entry.runtime_data.hub.stats["websocket"].resyncs == 0
