"""The RFC's own example (section 5, night intrusion triage) in Home Assistant: a person
lingering in a zone in the simulator starts it, and it runs in Test mode as written."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from homeassistant.core import HomeAssistant
from homeassistant.util import dt as dt_util
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_mock_service

from custom_components.opennvr_workflows.const import (
    CONF_AI_ENABLED,
    CONF_APPROVERS,
    CONF_CAMERA_ROLES,
    CONF_MODEL_GATE,
    CONF_OLLAMA_URL,
    CONF_SITE_LISTS,
    CONF_TEXT_MODEL,
    CONF_VISION_MODEL,
)
from custom_components.opennvr_workflows.host.workflows import WorkflowHost
from tests.fakes.ollama_server import FakeOllama, FromSchema, ToolCalls
from tests.fakes.opennvr_sim import OpenNVRSimulator
from tests.nvr.conftest import until

from .conftest import PASSED_GATE, WEBSOCKET_OPTIONS
from .workflow_files import write_workflow

RFC_FILE = Path(__file__).parent.parent / "workflow" / "rfc_night_intrusion.yaml"
PHONE = "mobile_app_guard"


@pytest.fixture
def entry_options(ollama: FakeOllama) -> dict[str, Any]:
    return {
        **WEBSOCKET_OPTIONS,
        CONF_AI_ENABLED: True,
        CONF_OLLAMA_URL: ollama.url,
        CONF_VISION_MODEL: "qwen2.5vl:3b",
        CONF_TEXT_MODEL: "qwen2.5vl:3b",
        CONF_CAMERA_ROLES: {"yard-east": "3", "yard-west": "2"},
        CONF_APPROVERS: {"users": [], "notify": [f"notify.{PHONE}"]},
        CONF_SITE_LISTS: {"staff": ["Ann"]},
        CONF_MODEL_GATE: dict(PASSED_GATE),  # the example's Investigate step needs it
    }


async def start(
    hass: HomeAssistant, entry: MockConfigEntry, sim: OpenNVRSimulator, text: str
) -> WorkflowHost:
    await sim.set_site_mode("armed_away")
    write_workflow(hass, "night_intrusion", text)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    host = entry.runtime_data.workflows
    assert host is not None
    loaded = host.files["night_intrusion"]
    assert loaded.workflow is not None, loaded.report.problems
    assert {p.code for p in loaded.report.problems} <= {"WF-NEEDS-MISSING", "WF-ASK-PATH-MISSING"}
    await until(lambda: entry.runtime_data.hub.connected("websocket"), "websocket connected")
    await until(lambda: host.dwell_thresholds() == {5.0}, "the dwell threshold watched")
    return host


async def linger_and_run(host: WorkflowHost, sim: OpenNVRSimulator) -> dict[str, Any]:
    # Zones are read once a threshold is wanted; give the first read a moment.
    await until(
        lambda: bool(sim.requests) and any("/zones" in p for _, p in sim.requests), "zones read"
    )
    await sim.linger(3, "Fence line", 6.0, track_id=8812, fps=2.0)
    await until(lambda: host.engine.stats.started >= 1, "a run started")
    await host.engine.idle()
    runs = await host.engine.runs("night_intrusion")
    assert len(runs) == 1
    return await host.engine.run_detail(runs[0]["id"])


async def test_the_rfc_example_as_written_starts_on_a_person_lingering(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    sim: OpenNVRSimulator,
    ollama: FakeOllama,
) -> None:
    ollama.script(*[FromSchema({"decision": "watch", "who": "unknown", "confidence": 0.9})] * 6)
    host = await start(hass, config_entry, sim, RFC_FILE.read_text())
    detail = await linger_and_run(host, sim)
    assert detail["test"] == 1
    assert json.loads(detail["trigger"])["kind"] == "person_in_zone"
    assert json.loads(detail["trigger"])["track_id"] == "8812"
    now: datetime = dt_util.now()
    at_night = now.hour >= 22 or now.hour < 6
    ai_ran = any(s["kind"] == "ai" for s in detail["steps"])
    assert ai_ran == at_night, detail["steps"]


async def test_the_rfc_example_investigates_and_would_alert_in_test(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    sim: OpenNVRSimulator,
    ollama: FakeOllama,
) -> None:
    calls = async_mock_service(hass, "notify", PHONE)
    # As written, but at any hour (the RFC's 22:00 to 06:00 window removed).
    text = RFC_FILE.read_text().replace('  - time: { from: "22:00", to: "06:00" }\n', "")
    ollama.script(
        ToolCalls([("describe_camera", {"camera_id": "yard-east"})]),
        ToolCalls([("site_lookup", {"list": "staff"})]),
        *[
            FromSchema(
                {
                    "decision": "alert",
                    "who": "unknown",
                    "reason": "an unknown adult at the fence at night",
                    "confidence": 0.9,
                }
            )
        ]
        * 4,
    )
    host = await start(hass, config_entry, sim, text)
    detail = await linger_and_run(host, sim)
    steps = {s["path"]: s for s in detail["steps"]}
    assert steps["then.0"]["outcome"] == "alert"
    assert steps["then.0.alert.0"]["status"] == "would_have"
    tools = [c["name"] for c in detail["tool_calls"] if c["kind"] == "tool"]
    assert tools[:2] == ["describe_camera", "site_lookup"]
    assert calls == []  # Test mode: nothing sent
