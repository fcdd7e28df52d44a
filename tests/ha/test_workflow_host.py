"""The engine hosted in Home Assistant: an alert from the simulator's websocket starts a
workflow whose Look step decides through the Ollama fake and whose decided path notifies."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from homeassistant.core import HomeAssistant
from homeassistant.helpers import issue_registry as ir
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_mock_service

from custom_components.opennvr_workflows.const import (
    CONF_CAMERA_ROLES,
    CONF_FULL_TEXT_TO,
    DOMAIN,
    WORKFLOW_FOLDER,
)
from custom_components.opennvr_workflows.host.workflows import WorkflowHost
from custom_components.opennvr_workflows.workflow import template_names
from tests.fakes.ollama_server import FakeOllama, FromSchema
from tests.fakes.opennvr_sim import OpenNVRSimulator
from tests.nvr.conftest import until

from .conftest import PHONE, WEBSOCKET_OPTIONS, ai_options
from .workflow_files import DOOR_LOOK, REMIND, log_on_alert, write_workflow


@pytest.fixture
def entry_options(ollama: FakeOllama) -> dict[str, Any]:
    return ai_options(ollama)


def host_of(entry: MockConfigEntry) -> WorkflowHost:
    host = entry.runtime_data.workflows
    assert host is not None
    return host


async def test_first_setup_copies_templates_in_test_state(
    hass: HomeAssistant, setup_entry: MockConfigEntry
) -> None:
    folder = Path(hass.config.path(WORKFLOW_FOLDER))
    names = sorted(p.stem for p in folder.glob("*.yaml"))
    assert names == sorted(template_names())
    host = host_of(setup_entry)
    for status in host.engine.workflows():
        assert status.state == "test"
    # Templates that wait for this site (camera roles to map, a model) make one to-do in
    # Repairs, not one error per file.
    ours = [i for (d, i) in ir.async_get(hass).issues if d == DOMAIN]
    assert ours == [f"{setup_entry.entry_id}_waiting_for_site"]
    issue = ir.async_get(hass).async_get_issue(DOMAIN, ours[0])
    assert issue is not None
    waiting = issue.translation_placeholders["files"]
    assert "`gate_concierge.yaml`: the camera role 'gate' is not mapped" in waiting
    # The parcel template needs only what this site has (front_door, a vision model).
    assert "parcel_at_door" not in waiting
    assert host.files["parcel_at_door"].workflow is not None


async def test_a_broken_file_gets_its_own_repair_and_the_others_run(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    write_workflow(hass, "door", log_on_alert("Door", "front_door"))
    broken = write_workflow(hass, "broken", "contract: workflow.v1\nname: Broken\nwhen: {}\n")
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    host = host_of(config_entry)
    assert host.files["door"].workflow is not None
    issue = ir.async_get(hass).async_get_issue(DOMAIN, f"{config_entry.entry_id}_invalid_broken")
    assert issue is not None
    assert issue.translation_placeholders["file"] == "broken.yaml"
    first = host.files["broken"].errors[0]
    assert issue.translation_placeholders["line"] == str(first.line)
    assert first.code in issue.translation_placeholders["problem"]
    # Fixed and reloaded: the repair goes away and the workflow runs.
    broken.write_text(log_on_alert("Broken no more", "front_door"))
    await host.async_reload()
    assert (
        ir.async_get(hass).async_get_issue(DOMAIN, f"{config_entry.entry_id}_invalid_broken")
        is None
    )
    assert host.files["broken"].workflow is not None


async def test_templates_never_overwrite_a_users_file(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    mine = write_workflow(hass, "parcel_at_door", DOOR_LOOK.format(state="test"))
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    assert mine.read_text() == DOOR_LOOK.format(state="test")


@pytest.mark.parametrize("state", ["on", "test"])
async def test_alert_starts_a_look_that_notifies(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    sim: OpenNVRSimulator,
    ollama: FakeOllama,
    state: str,
) -> None:
    calls = async_mock_service(hass, "notify", PHONE)
    write_workflow(hass, "door", DOOR_LOOK.format(state=state))
    # The phone may carry the model's words (test_notify_privacy: what it gets otherwise).
    hass.config_entries.async_update_entry(
        config_entry, options={**config_entry.options, CONF_FULL_TEXT_TO: [f"notify.{PHONE}"]}
    )
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    host = host_of(config_entry)
    assert host.files["door"].workflow is not None, host.files["door"].report.problems
    ollama.script(
        *[FromSchema({"decision": "visitor", "reason": "a courier", "confidence": 0.9})] * 4
    )

    await until(lambda: config_entry.runtime_data.hub.connected("websocket"), "connected")
    await sim.emit_alert(1, "person")
    await until(lambda: host.engine.stats.started == 1, "a run started")
    await host.engine.idle()
    runs = await host.engine.runs("door")
    assert len(runs) == 1
    detail = await host.engine.run_detail(runs[0]["id"])
    steps = {s["path"]: s for s in detail["steps"]}
    look = steps["then.0"]
    assert look["outcome"] == "visitor"
    notify = steps["then.0.visitor.0"]
    if state == "on":
        assert notify["status"] == "done"
        assert len(calls) == 1
        assert calls[0].data["message"] == "Visitor: a courier"
    else:
        assert notify["status"] == "would_have"
        assert calls == []
    # The model was really asked, with the camera's picture, and the trace says so.
    assert ollama.chats
    assert [c["name"] for c in detail["tool_calls"]] == ["picture", "qwen2.5vl:3b"]


@pytest.mark.parametrize(
    "entry_options",
    [{**WEBSOCKET_OPTIONS, CONF_CAMERA_ROLES: {"front_door": "1", "porch": "1", "garden": "3"}}],
)
async def test_a_camera_with_two_roles_starts_each_workflow_once(
    hass: HomeAssistant, config_entry: MockConfigEntry, sim: OpenNVRSimulator
) -> None:
    write_workflow(hass, "door", log_on_alert("Door", "front_door"))
    write_workflow(hass, "porch", log_on_alert("Porch", "porch"))
    write_workflow(hass, "anywhere", log_on_alert("Anywhere"))
    write_workflow(hass, "garden", log_on_alert("Garden", "garden"))
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    host = host_of(config_entry)
    assert not {"door", "porch", "anywhere", "garden"} & set(host.summary()["invalid"])
    await until(lambda: config_entry.runtime_data.hub.connected("websocket"), "connected")

    await sim.emit_alert(1, "person")
    await until(lambda: host.engine.stats.started >= 3, "three runs")
    await host.engine.idle()
    started = {w: len(await host.engine.runs(w)) for w in ("door", "porch", "anywhere", "garden")}
    assert started == {"door": 1, "porch": 1, "anywhere": 1, "garden": 0}


async def test_runs_are_the_entrys_background_tasks_and_unload_stops_them(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    write_workflow(hass, "later", REMIND)
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    host = host_of(config_entry)
    # A run's task is one of the entry's background tasks.
    held = list(host.engine.run_now("later"))
    assert held
    names = {t.get_name() for t in config_entry._background_tasks}
    assert "workflow later run" in names
    await host.engine.idle()
    (run,) = host.engine.active_runs()
    assert run.status == "waiting"
    assert await hass.config_entries.async_unload(config_entry.entry_id)
    assert not config_entry._background_tasks
    # The waiting run is kept and comes back with the entry.
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    (again,) = host_of(config_entry).engine.active_runs()
    assert (again.run_id, again.status) == (run.run_id, "waiting")
