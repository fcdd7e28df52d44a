"""The logbook, read as the frontend reads it (the recorder and ``logbook/get_events``):
each run, alert and reply names its workflow, and a state change a run caused says it was
triggered by that workflow's run."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

import pytest
from homeassistant.auth.models import User
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
from homeassistant.util import dt as dt_util
from pytest_homeassistant_custom_component.common import MockConfigEntry
from pytest_homeassistant_custom_component.components.recorder.common import (
    async_wait_recording_done,
)
from pytest_homeassistant_custom_component.typing import WebSocketGenerator

from custom_components.opennvr_workflows.const import DOMAIN
from custom_components.opennvr_workflows.engine import Engine, NvrEvent
from custom_components.opennvr_workflows.engine.testing import ManualClock
from custom_components.opennvr_workflows.host import workflows as workflows_module
from custom_components.opennvr_workflows.host.effects.port import EVENT_ALERT, EVENT_REPLY
from custom_components.opennvr_workflows.host.runs.context import EVENT_RUN
from custom_components.opennvr_workflows.host.runs.held import held_text, local_time
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


# ── issue 23, item 16 and the limits: what the logbook says of waits, limits, answers ──

LATER = """\
contract: workflow.v1
name: Later
state: on
when:
  button: {}
then:
  - wait: 1h
  - alert: { severity: low, title: An hour on }
"""
ASK_OWNER = """\
contract: workflow.v1
name: Gate question
state: on
limits: { cooldown: 0s }
when:
  button: {}
then:
  - ask_person:
      who: role:owner
      message: Open the gate?
      replies: [Open, Keep closed]
      timeout: 1h
    Open: [ log: opened ]
    Keep closed: [ log: kept closed ]
"""


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> ManualClock:
    """The engine's clock, moved by the test."""
    manual = ManualClock(datetime.now(UTC))
    monkeypatch.setattr(workflows_module, "Engine", partial(Engine, clock=manual))
    return manual


async def test_a_resumed_run_is_logged_as_resumed_and_a_join_says_why_and_until_when(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    hass_ws_client: WebSocketGenerator,
    clock: ManualClock,
) -> None:
    """A run that first acts after its wait is "resumed", never "started"; a press while
    it waits starts nothing, and the logbook says which limit held it and until when."""
    since = dt_util.utcnow() - timedelta(seconds=1)
    await setup_logbook(hass)
    write_workflow(hass, "later", LATER)
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    host = host_of(config_entry)
    started = clock.now().timestamp()
    (run_id,) = host.engine.run_now("later")
    await host.engine.idle()
    assert host.engine.run_now("later") == (run_id,)  # joined: one run at a time
    await clock.advance(3600)
    await host.engine.idle()
    await hass.async_block_till_done()
    assert (await host.engine.run_detail(run_id))["status"] == "done"

    rows = await logbook_rows(hass, hass_ws_client, since)
    ours = [r for r in rows if r.get("domain") == DOMAIN and r.get("name") == "Later"]
    messages = [r["message"] for r in ours]
    assert f"resumed run {run_id}" in messages
    assert f"started run {run_id}" not in messages
    until = local_time(started + 3600)
    held = (
        f"started no run: run {run_id} is still going (one run at a time) until {until}; "
        "the event joined it"
    )
    assert messages.count(held) == 1, messages
    state_entity = next(r["entity_id"] for r in ours if r["message"] == held)
    assert state_entity.startswith("select.")


async def test_an_answer_from_the_dashboard_card_is_logged_as_from_the_card(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    hass_ws_client: WebSocketGenerator,
    hass_admin_user: User,
) -> None:
    since = dt_util.utcnow() - timedelta(seconds=1)
    await setup_logbook(hass)
    write_workflow(hass, "gate", ASK_OWNER)
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    host = host_of(config_entry)
    host.update_settings(replace(host.settings, approver_users=(hass_admin_user.id,)))
    ws = await hass_ws_client(hass)

    async def ask_and_answer(source: str | None) -> None:
        host.engine.run_now("gate")
        await host.engine.idle()
        await hass.async_block_till_done()
        rows: list[dict[str, Any]] = []
        for _ in range(100):  # the question lists once the desk has delivered it
            await ws.send_json_auto_id({"type": f"{DOMAIN}/approvals/list"})
            rows = (await ws.receive_json())["result"]["approvals"]
            if rows:
                break
            await asyncio.sleep(0.02)
        (row,) = rows
        answer = {"approval_id": row["approval_id"], "reply": "Open"}
        await ws.send_json_auto_id(
            {"type": f"{DOMAIN}/approvals/answer", **answer}
            | ({"source": source} if source else {})
        )
        assert (await ws.receive_json())["success"] is True
        await host.engine.idle()
        await hass.async_block_till_done()

    await ask_and_answer("card")
    await ask_and_answer(None)
    rows = await logbook_rows(hass, hass_ws_client, since)
    answered = [
        r["message"]
        for r in rows
        if r.get("name") == "Gate question" and "answered" in str(r.get("message"))
    ]
    assert len(answered) == 2, rows
    assert answered[0].endswith("“Open” (dashboard card)")
    assert answered[1].endswith("“Open” (panel)")
    await ws.send_json_auto_id(
        {"type": f"{DOMAIN}/approvals/answer", "approval_id": "x", "reply": "y", "source": "x"}
    )
    assert (await ws.receive_json())["success"] is False


def test_each_hold_names_its_limit_and_a_test_runs_limit_says_so() -> None:
    """The text of each hold (the keys are in ``strings.json``, read by the real logbook
    test above): the limit's own text, "until it ends" for a run not on a wait, and the
    Test runs' limit marked as theirs."""

    def texts(key: str, placeholders: Mapping[str, Any]) -> str:
        return f"{key}({','.join(f'{k}={v}' for k, v in sorted(placeholders.items()))})"

    at = datetime(2026, 1, 5, 12, 0, tzinfo=UTC).timestamp()
    joined = {"limit": "one_at_a_time", "until": None, "run_id": "r1", "test": True}
    assert held_text(texts, joined) == (
        "held_in_test(text=held_back_one_at_a_time_open(limit=one_at_a_time,run_id=r1,until=))"
    )
    cooldown = {"limit": "cooldown", "until": at, "run_id": None, "test": False}
    assert held_text(texts, cooldown) == (
        f"held_back_cooldown(limit=cooldown,run_id=,until={local_time(at)})"
    )
    assert held_text(texts, {"limit": "new_limit"}).startswith("held_back_limit(")
