"""The Home Assistant host keeps the AI mark: an alert a run raised from AI output comes
back into the hub marked, and a workflow it starts moves nothing without a person; the
host tells the engine which camera roles are mapped, so a rule on another fails closed."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest
from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_mock_service

from custom_components.opennvr_workflows.const import CONF_CAMERA_ROLES
from custom_components.opennvr_workflows.engine import AlertRequest, NvrEvent, RunContext
from custom_components.opennvr_workflows.host.workflows import WorkflowHost

from .conftest import WEBSOCKET_OPTIONS
from .workflow_files import write_workflow

LIGHTS = """\
contract: workflow.v1
name: Lights on alerts
state: on
limits: { cooldown: 0s, per_hour: 100 }
when:
  alert: { alert_type: opennvr_workflows }
if:
  - site_mode: [disarmed, armed_home]
then:
  - home_assistant: { action: light.turn_on, target: { entity_id: light.porch } }
"""


@pytest.fixture
def entry_options() -> dict[str, Any]:
    return {**WEBSOCKET_OPTIONS, CONF_CAMERA_ROLES: {"front_door": "1", "drive": "2"}}


def host_of(entry: MockConfigEntry) -> WorkflowHost:
    host = entry.runtime_data.workflows
    assert host is not None
    return host


def ctx(ai_derived: bool) -> RunContext:
    return RunContext(
        workflow_id="door",
        workflow_name="Door",
        version="v1",
        run_id=f"run-{ai_derived}",
        correlation_id=f"door/run-{ai_derived}",
        chain=(f"door/run-{ai_derived}",),
        step_path="then.0.person.0",
        test=False,
        trigger=NvrEvent(kind="alert", source="websocket", time=datetime.now(UTC)),
        ai_derived=ai_derived,
    )


@pytest.mark.parametrize("ai_derived", [True, False])
async def test_a_raised_alert_comes_back_with_its_mark(
    hass: HomeAssistant, setup_entry: MockConfigEntry, ai_derived: bool
) -> None:
    published: list[NvrEvent] = []
    setup_entry.runtime_data.hub.subscribe(published.append)
    request = AlertRequest(severity="low", requested="low", title="Yard", ai_derived=ai_derived)
    await host_of(setup_entry).effects.alert(ctx(ai_derived), request)
    await hass.async_block_till_done()
    (back,) = [e for e in published if e.source == "engine"]
    assert back.ai_derived is ai_derived


def test_the_host_names_the_mapped_camera_roles(setup_entry: MockConfigEntry) -> None:
    assert host_of(setup_entry).effects.mapped_camera_roles() == {"front_door", "drive"}


@pytest.mark.parametrize(("ai_derived", "lit"), [(False, 1), (True, 0)])
async def test_a_workflow_started_by_an_ai_alert_moves_nothing(
    hass: HomeAssistant, config_entry: MockConfigEntry, ai_derived: bool, lit: int
) -> None:
    """The same file, the same rule: a plain workflow alert turns the light on; one that
    carries AI output is refused, traced, and the workflow needs attention."""
    calls = async_mock_service(hass, "light", "turn_on")
    write_workflow(hass, "lights", LIGHTS)
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    host = host_of(config_entry)
    assert host.files["lights"].workflow is not None
    raised = NvrEvent(
        kind="alert",
        source="engine",
        time=datetime.now(UTC),
        type="opennvr_workflows",
        app="opennvr_workflows",
        camera_id="1",
        alert_id=f"wf_{ai_derived}",
        correlation_id="door/run1",
        chain=("door/run1",),
        ai_derived=ai_derived,
    )
    config_entry.runtime_data.hub.publish(raised)
    await host.engine.idle()
    await hass.async_block_till_done()
    assert len(calls) == lit
    state = host.engine.workflow_status("lights").state
    assert state == ("needs_attention" if ai_derived else "on")
    (run,) = await host.engine.runs("lights")
    detail = await host.engine.run_detail(run["id"])
    statuses = {s["path"]: s["status"] for s in detail["steps"]}
    assert statuses["then.0"] == ("refused" if ai_derived else "done")


async def test_a_camera_role_unmapped_after_import_stops_the_run(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    write_workflow(
        hass,
        "drive",
        """\
contract: workflow.v1
name: Drive check
state: on
when:
  button: {}
then:
  - for_each: { cameras: [drive] }
    do:
      - log: "checked {camera}"
""",
    )
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    host = host_of(config_entry)
    assert host.files["drive"].workflow is not None
    host.update_settings(replace(host.settings, roles={"front_door": 1}))
    assert host.engine.run_now("drive")
    await host.engine.idle()
    status = host.engine.workflow_status("drive")
    assert status.state == "needs_attention"
    assert status.reason is not None
    assert "'drive'" in status.reason
