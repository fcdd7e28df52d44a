"""The logbook, read as the frontend reads it (the recorder and ``logbook/get_events``):
each run, alert and reply names its workflow, and a state change a run caused says it was
triggered by that workflow's run."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
from homeassistant.util import dt as dt_util
from pytest_homeassistant_custom_component.common import MockConfigEntry
from pytest_homeassistant_custom_component.components.recorder.common import (
    async_wait_recording_done,
)
from pytest_homeassistant_custom_component.typing import WebSocketGenerator

from custom_components.opennvr_workflows.const import DOMAIN
from custom_components.opennvr_workflows.engine import NvrEvent
from custom_components.opennvr_workflows.host.effects.port import EVENT_ALERT, EVENT_REPLY
from custom_components.opennvr_workflows.host.runs.context import EVENT_RUN
from custom_components.opennvr_workflows.host.workflows import WorkflowHost

from .workflow_files import write_workflow

PORCH = """\
contract: workflow.v1
name: Porch light
state: on
when:
  button: {}
if:
  - site_mode: [disarmed]
then:
  - home_assistant: { action: input_boolean.turn_on, target: { entity_id: input_boolean.porch } }
  - alert: { severity: high, title: Porch lit, message: "The porch light is on" }
"""
ANSWER = """\
contract: workflow.v1
name: Answer me
state: on
when:
  message: {}
then:
  - reply: "Nothing to see at the door"
"""


@pytest.fixture(autouse=True)
def auto_enable_custom_integrations(recorder_mock: Any, enable_custom_integrations: None) -> None:
    """The recorder first (the logbook reads from it), then custom integrations."""


async def setup_logbook(hass: HomeAssistant) -> None:
    """The logbook (and the frontend it needs, which the integration's panel needs too)."""
    assert await async_setup_component(hass, "logbook", {})


def host_of(entry: MockConfigEntry) -> WorkflowHost:
    host = entry.runtime_data.workflows
    assert host is not None
    return host


async def logbook_rows(
    hass: HomeAssistant, client_factory: WebSocketGenerator, since: datetime
) -> list[dict[str, Any]]:
    await async_wait_recording_done(hass)
    client = await client_factory()
    await client.send_json_auto_id(
        {
            "type": "logbook/get_events",
            "start_time": since.isoformat(),
            "end_time": (dt_util.utcnow() + timedelta(seconds=5)).isoformat(),
        }
    )
    response = await client.receive_json()
    assert response["success"], response
    rows: list[dict[str, Any]] = response["result"]
    return rows


async def test_a_runs_changes_are_attributed_to_its_workflow(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    hass_ws_client: WebSocketGenerator,
) -> None:
    since = dt_util.utcnow() - timedelta(seconds=1)
    await setup_logbook(hass)
    assert await async_setup_component(hass, "input_boolean", {"input_boolean": {"porch": {}}})
    write_workflow(hass, "porch_light", PORCH)
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    host = host_of(config_entry)
    assert host.engine.workflow_status("porch_light").state == "on"

    (run_id,) = host.engine.run_now("porch_light")
    await host.engine.idle()
    await hass.async_block_till_done()
    assert hass.states.get("input_boolean.porch").state == "on"

    rows = await logbook_rows(hass, hass_ws_client, since)
    ours = [r for r in rows if r.get("domain") == DOMAIN]
    run_rows = [r for r in ours if r.get("message") == f"started run {run_id}"]
    assert len(run_rows) == 1, rows
    assert run_rows[0]["name"] == "Porch light"
    assert "context_event_type" not in run_rows[0]  # it is where the run's changes start

    alert_rows = [r for r in ours if str(r.get("message", "")).startswith("raised")]
    assert [r["message"] for r in alert_rows] == ["raised a high alert: Porch lit"]
    assert alert_rows[0]["name"] == "Porch light"
    # The alert happened inside the run: the logbook says which run caused it.
    assert alert_rows[0]["context_event_type"] == EVENT_RUN

    porch = [r for r in rows if r.get("entity_id") == "input_boolean.porch"]
    assert [r["state"] for r in porch] == ["on"]
    assert porch[0]["context_event_type"] == EVENT_RUN
    assert porch[0]["context_domain"] == DOMAIN
    assert porch[0]["context_name"] == "Porch light"
    assert porch[0]["context_message"] == f"started run {run_id}"


async def test_a_reply_is_described_with_its_workflow(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    hass_ws_client: WebSocketGenerator,
) -> None:
    since = dt_util.utcnow() - timedelta(seconds=1)
    await setup_logbook(hass)
    write_workflow(hass, "answer", ANSWER)
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    host = host_of(config_entry)
    replies = []
    hass.bus.async_listen(EVENT_REPLY, replies.append)

    host.engine.submit(
        NvrEvent(
            kind="message",
            source="assist",
            time=datetime.now(UTC),
            payload={"message": "anyone at the door?", "user": "user-1"},
        )
    )
    await host.engine.idle()
    await hass.async_block_till_done()
    assert len(replies) == 1

    rows = await logbook_rows(hass, hass_ws_client, since)
    reply_rows = [r for r in rows if r.get("message") == "replied: Nothing to see at the door"]
    assert len(reply_rows) == 1, rows
    assert reply_rows[0]["name"] == "Answer me"
    assert reply_rows[0]["context_event_type"] == EVENT_RUN
    assert reply_rows[0]["context_name"] == "Answer me"


async def test_long_replies_are_cut_and_alerts_without_severity_read_well(
    hass: HomeAssistant,
) -> None:
    """The describers alone, on events as the effects fire them."""
    from custom_components.opennvr_workflows import logbook as described

    found: dict[str, Any] = {}
    described.async_describe_events(hass, lambda _d, kind, fn: found.__setitem__(kind, fn))
    assert set(found) == {EVENT_RUN, EVENT_ALERT, EVENT_REPLY}

    class Event:
        def __init__(self, data: dict[str, Any]) -> None:
            self.data = data

    reply = found[EVENT_REPLY](Event({"workflow_id": "gone", "message": "word " * 100}))
    assert reply["name"] == "gone"
    assert len(reply["message"]) <= len("replied: ") + described.REPLY_CHARS
    assert reply["message"].endswith("…")
    alert = found[EVENT_ALERT](Event({"workflow": "Gate", "title": "Open"}))
    assert alert["message"] == "raised an alert: Open"
    assert found[EVENT_ALERT](Event({"workflow": "Gate", "severity": "info"}))["message"] == (
        "raised an info alert"
    )
