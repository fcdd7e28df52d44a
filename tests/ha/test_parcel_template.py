"""The shipped parcel template in Home Assistant: on the default websocket a parcel the
simulator's detector tracks at the front door starts it (the detection is derived from the
tracks), and its Look step decides through the Ollama fake. With NATS or MQTT chosen nothing
is derived: OpenNVR's own ``detection.observed.v1`` on that transport starts it."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_mock_service

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
from custom_components.opennvr_workflows.engine.events import NvrEvent
from custom_components.opennvr_workflows.host.workflows import WorkflowHost
from custom_components.opennvr_workflows.nvr.observed import OBSERVED_SCHEMA
from tests.fakes.brokers import Mosquitto, NatsServer
from tests.fakes.ollama_server import FakeOllama, FromSchema
from tests.fakes.opennvr_sim import OpenNVRSimulator
from tests.fakes.publishers import SITE, cloud_event, mqtt_publish, nats_publish
from tests.nvr.conftest import until

from .conftest import PHONE, ai_options

PARCEL = "parcel_at_door"


@pytest.fixture
def entry_options(ollama: FakeOllama) -> dict[str, Any]:
    return ai_options(ollama)


async def set_up(
    hass: HomeAssistant, entry: MockConfigEntry, source: str
) -> tuple[WorkflowHost, list[NvrEvent]]:
    """Set the entry up (the templates are copied in Test), wait for ``source`` and the
    websocket; returns the host and every event the hub lets through from now on."""
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    host = entry.runtime_data.workflows
    assert host is not None
    parcel = host.files[PARCEL]
    assert parcel.workflow is not None, parcel.report.problems
    assert [s.state for s in host.engine.workflows() if s.workflow_id == PARCEL] == ["test"]
    hub = entry.runtime_data.hub
    await until(lambda: hub.connected("websocket") and hub.connected(source), "connected")
    seen: list[NvrEvent] = []
    entry.async_on_unload(hub.subscribe(seen.append))
    return host, seen


def observed(seen: list[NvrEvent]) -> list[NvrEvent]:
    return [e for e in seen if e.kind == "event" and e.type == OBSERVED_SCHEMA]


async def test_a_parcel_tracked_at_the_front_door_starts_the_template(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    sim: OpenNVRSimulator,
    ollama: FakeOllama,
) -> None:
    calls = async_mock_service(hass, "notify", PHONE)
    ollama.script(
        *[FromSchema({"decision": "parcel", "reason": "a box on the mat", "confidence": 0.9})] * 4
    )
    host, seen = await set_up(hass, config_entry, "websocket")

    stored = await sim.parcel_at_door(1.0, fps=4.0)
    assert stored is not None
    await until(lambda: host.engine.stats.started >= 1, "a run started")
    await host.engine.idle()

    # Five frames of one parcel: one detection, one run.
    tracks = [e for e in seen if e.kind == "tracks" and e.camera_id == "1"]
    assert len(tracks) == 5
    [detection] = observed(seen)
    assert (detection.source, detection.camera_id, detection.payload["label"]) == (
        "websocket",
        "1",
        "package",
    )
    assert detection.track_id == str(stored["track_id"])
    runs = await host.engine.runs(PARCEL)
    assert len(runs) == 1
    detail = await host.engine.run_detail(runs[0]["id"])
    assert detail["test"] == 1
    trigger = json.loads(detail["trigger"])
    assert trigger["type"] == OBSERVED_SCHEMA
    assert trigger["camera_role"] == "front_door"
    assert trigger["payload"]["label"] == "package"

    steps = {s["path"]: s for s in detail["steps"]}
    look = steps["then.0"]
    assert look["outcome"] == "parcel"
    assert look["reason"] == "a box on the mat"
    assert steps["then.0.parcel.0"]["status"] == "would_have"  # the notify, in Test
    assert calls == []
    # The model was really asked, with the front door's frames.
    assert ollama.chats
    names = [c["name"] for c in detail["tool_calls"]]
    assert names[-1] == "qwen2.5vl:3b"


async def _nats_event(request: pytest.FixtureRequest, envelope: dict[str, Any]) -> None:
    server: NatsServer = request.getfixturevalue("nats_server")
    body = json.dumps(envelope).encode()
    await nats_publish(server, [(f"opennvr.events.{OBSERVED_SCHEMA}.1", body)])


async def _mqtt_event(request: pytest.FixtureRequest, envelope: dict[str, Any]) -> None:
    broker: Mosquitto = request.getfixturevalue("mosquitto")
    await mqtt_publish(broker, [cloud_event("camera.1.detections", envelope)])


def _transport_options(request: pytest.FixtureRequest, transport: str) -> dict[str, Any]:
    if transport == TRANSPORT_NATS:
        server: NatsServer = request.getfixturevalue("nats_server")
        return {CONF_TRANSPORT: TRANSPORT_NATS, CONF_NATS_URL: server.url}
    broker: Mosquitto = request.getfixturevalue("mosquitto")
    return {
        CONF_TRANSPORT: TRANSPORT_MQTT,
        CONF_MQTT_USE_HA: False,
        CONF_MQTT_HOST: "127.0.0.1",
        CONF_MQTT_PORT: broker.port,
        CONF_MQTT_SITE: SITE,
    }


Publish = Callable[[pytest.FixtureRequest, dict[str, Any]], Awaitable[None]]


@pytest.mark.services
@pytest.mark.parametrize(
    ("transport", "publish"), [(TRANSPORT_NATS, _nats_event), (TRANSPORT_MQTT, _mqtt_event)]
)
async def test_with_nats_or_mqtt_only_opennvrs_own_detection_starts_it(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    sim: OpenNVRSimulator,
    ollama: FakeOllama,
    request: pytest.FixtureRequest,
    transport: str,
    publish: Publish,
) -> None:
    ollama.script(
        *[FromSchema({"decision": "parcel", "reason": "a box on the mat", "confidence": 0.9})] * 4
    )
    options = {**config_entry.options, **_transport_options(request, transport)}
    hass.config_entries.async_update_entry(config_entry, options=options)
    host, seen = await set_up(hass, config_entry, transport)

    await sim.parcel_at_door(0.5, fps=4.0)
    await until(
        lambda: sum(1 for e in seen if e.kind == "tracks" and e.camera_id == "1") == 3,
        "the parcel's tracks over the websocket",
    )
    await hass.async_block_till_done()
    assert observed(seen) == []
    assert host.engine.stats.started == 0

    envelope = {
        "id": "evt-1",
        "schema": OBSERVED_SCHEMA,
        "camera_id": 1,
        "ts": "2026-11-05T10:00:00+00:00",
        "producer": "tier0",
        "payload": {"label": "package", "score": 0.9, "track_id": "77"},
    }
    await publish(request, envelope)
    await until(lambda: host.engine.stats.started == 1, f"a run from {transport}")
    await host.engine.idle()
    [detection] = observed(seen)
    assert (detection.source, detection.track_id) == (transport, "77")
    [run] = await host.engine.runs(PARCEL)
    detail = await host.engine.run_detail(run["id"])
    assert {s["path"]: s["outcome"] for s in detail["steps"]}["then.0"] == "parcel"
