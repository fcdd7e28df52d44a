"""Assist's built-in agent with the integration's sentences: looking at a camera, alerts,
answering a question by voice, switching a workflow, and a message to the workflows.

Everything is real Home Assistant: the sentences are installed through the options page
"Voice sentences" into this test's configuration folder, and every sentence goes through
``conversation.async_converse`` (the default agent recognises it from that file and calls
the integration's intent handler), spoken as a user of ``hass.auth``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from homeassistant.auth.const import GROUP_ID_ADMIN, GROUP_ID_USER
from homeassistant.auth.models import User
from homeassistant.components import conversation
from homeassistant.core import Context, HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.helpers import entity_registry as er
from homeassistant.helpers import intent
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import MockConfigEntry, MockUser

from custom_components.opennvr_workflows.const import CONF_APPROVERS, CONF_CAMERA_ROLES, DOMAIN
from custom_components.opennvr_workflows.host import sentences
from custom_components.opennvr_workflows.host.ids import camera_unique_id
from custom_components.opennvr_workflows.host.runs import messages as assistant_messages
from custom_components.opennvr_workflows.host.workflows import WorkflowHost
from custom_components.opennvr_workflows.intents import (
    INTENT_APPROVE,
    INTENT_DENY,
    reply_for,
    spoken_name,
)
from tests.fakes.ollama_server import FakeOllama, FromSchema
from tests.fakes.opennvr_sim import OpenNVRSimulator
from tests.nvr.conftest import until

from .conftest import ai_options
from .workflow_files import write_workflow

GATE = """\
contract: workflow.v1
name: Gate
state: on
limits: { cooldown: 0s, per_hour: 100 }
when:
  alert: { alert_type: person, cameras: [gate] }
then:
  - ask_person:
      who: role:owner
      message: Somebody at the gate. Open it?
      replies: [Open, Keep closed]
      timeout: 1h
      default: Keep closed
    Open: [ log: "opened for {answered_by}" ]
    Keep closed: [ log: "kept closed" ]
"""

PARCEL = """\
contract: workflow.v1
name: Parcel check
state: on
limits: { cooldown: 0s, per_hour: 100 }
when:
  message: { contains: [parcel] }
then:
  - reply: "{user} asked: {message}"
"""

#: In Test: nothing leaves the run, so Assist says what it would have replied.
GARDEN = """\
contract: workflow.v1
name: Garden check
state: test
limits: { cooldown: 0s, per_hour: 100 }
when:
  message: { contains: [garden] }
then:
  - reply: "The garden is quiet"
"""

#: Replies only after an hour: Assist stops waiting and says it is still working.
SLOW = """\
contract: workflow.v1
name: Slow check
state: on
limits: { cooldown: 0s, per_hour: 100 }
when:
  message: { contains: [slowly] }
then:
  - wait: 1h
  - reply: "done at last"
"""

OFF = """\
contract: workflow.v1
name: Shed check
state: off
when:
  message: { contains: [shed] }
then:
  - reply: "shed is shut"
"""


class People:
    """Alice and Bob answer for the owners (Bob is an admin, Alice is not); Carol is a
    household user asked nothing."""

    def __init__(self, alice: User, bob: User, carol: User) -> None:
        self.alice, self.bob, self.carol = alice, bob, carol


@pytest.fixture
async def people(hass: HomeAssistant) -> People:
    # The first user made is the owner (an admin whatever the group): Bob.
    bob = await hass.auth.async_create_user("Bob", group_ids=[GROUP_ID_ADMIN])
    alice = await hass.auth.async_create_user("Alice", group_ids=[GROUP_ID_USER])
    carol = await hass.auth.async_create_user("Carol", group_ids=[GROUP_ID_USER])
    return People(alice, bob, carol)


@pytest.fixture
def entry_options(ollama: FakeOllama, people: People) -> dict[str, Any]:
    return {
        **ai_options(ollama),
        CONF_CAMERA_ROLES: {"front_door": "1", "gate": "2"},
        CONF_APPROVERS: {"roles": {"owner": [people.alice.id, people.bob.id]}},
    }


@pytest.fixture
async def assist(
    hass: HomeAssistant, config_entry: MockConfigEntry, sim: OpenNVRSimulator
) -> WorkflowHost:
    """The site with its workflows, Assist, and the sentences installed through the
    options page; returns the workflow host."""
    for name, text in (
        ("gate", GATE),
        ("parcel", PARCEL),
        ("garden", GARDEN),
        ("slow", SLOW),
        ("shed", OFF),
    ):
        write_workflow(hass, name, text)
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    await until(lambda: config_entry.runtime_data.hub.connected("websocket"), "connected")
    assert await async_setup_component(hass, "homeassistant", {})
    assert await async_setup_component(hass, "conversation", {})
    options = hass.config_entries.options
    result = await options.async_init(config_entry.entry_id)
    result = await options.async_configure(result["flow_id"], {"next_step_id": "voice_sentences"})
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "voice_sentences"
    result = await options.async_configure(result["flow_id"], {})
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "sentences_installed"
    host: WorkflowHost | None = config_entry.runtime_data.workflows
    assert host is not None
    return host


async def say(hass: HomeAssistant, text: str, user: User | None = None) -> intent.IntentResponse:
    result = await conversation.async_converse(
        hass, text, None, Context(user_id=user.id if user else None), language="en"
    )
    return result.response


def speech(response: intent.IntentResponse) -> str:
    return str(response.speech["plain"]["speech"])


# ── the sentences file ─────────────────────────────────────────────────────────────────


async def test_the_options_page_installs_the_shipped_sentences(
    hass: HomeAssistant, assist: WorkflowHost
) -> None:
    installed = sentences.installed_path(Path(hass.config.config_dir), "en")
    shipped = sentences.SHIPPED / "en" / sentences.FILE_NAME
    assert installed.read_text() == shipped.read_text()
    # Installing again replaces a copy someone edited.
    installed.write_text("language: en\nintents: {}\n")
    await sentences.async_install(hass)
    assert installed.read_text() == shipped.read_text()


async def test_a_folder_that_cannot_be_written_is_a_form_error(
    hass: HomeAssistant, assist: WorkflowHost, config_entry: MockConfigEntry
) -> None:
    # A file where the language folder should be: the copy cannot be made.
    folder = Path(hass.config.config_dir) / "custom_sentences"
    sentences.installed_path(Path(hass.config.config_dir), "en").unlink()
    (folder / "en").rmdir()
    (folder / "en").write_text("not a folder")
    options = hass.config_entries.options
    result = await options.async_init(config_entry.entry_id)
    result = await options.async_configure(result["flow_id"], {"next_step_id": "voice_sentences"})
    result = await options.async_configure(result["flow_id"], {})
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"base": "sentences_write_failed"}


# ── looking ─────────────────────────────────────────────────────────────────────────────


async def test_whats_at_the_front_door_is_a_look_with_the_spoken_question(
    hass: HomeAssistant, assist: WorkflowHost, ollama: FakeOllama, people: People
) -> None:
    ollama.script(
        *[FromSchema({"decision": "something", "reason": "a courier holding a parcel"})] * 4
    )
    response = await say(hass, "what's at the front door", people.alice)
    assert response.response_type is intent.IntentResponseType.ACTION_DONE
    assert speech(response) == "At the front door: a courier holding a parcel"
    chat = ollama.chats[0]
    assert "what's at the front door" in chat.system
    assert len(chat.images) == 1
    assert chat.format["properties"]["decision"]["enum"] == ["something", "nothing", "unsure"]


async def test_a_camera_role_nobody_mapped_is_named_with_the_known_ones(
    hass: HomeAssistant, assist: WorkflowHost, ollama: FakeOllama
) -> None:
    response = await say(hass, "what's at the back yard")
    assert response.response_type is intent.IntentResponseType.ERROR
    assert speech(response) == (
        "I don't know a camera called back yard. The cameras I know: front door, gate."
    )
    assert ollama.chats == []


async def test_an_unsure_look_says_why(
    hass: HomeAssistant, assist: WorkflowHost, ollama: FakeOllama
) -> None:
    ollama.script(*[FromSchema({"decision": "unsure", "reason": "the lens is fogged"})] * 4)
    response = await say(hass, "does the gate camera see anyone")
    assert speech(response).startswith("I can't tell what is at the gate: ")
    assert "fogged" in speech(response)


# ── alerts ──────────────────────────────────────────────────────────────────────────────


async def test_any_alerts_names_the_newest_unacknowledged_ones(
    hass: HomeAssistant, assist: WorkflowHost, sim: OpenNVRSimulator
) -> None:
    assert speech(await say(hass, "any alerts")) == "No alerts waiting."
    await sim.emit_alert(1, "vehicle", title="Car in the drive")
    await sim.emit_alert(1, "animal", title="Fox on the lawn")
    said = speech(await say(hass, "any alerts"))
    assert said.startswith("Alerts waiting: 2. The latest: ")
    assert said.index("Fox on the lawn") < said.index("Car in the drive")
    sim.alerts[0]["acknowledged_at"] = "2026-01-01T00:00:00Z"
    said = speech(await say(hass, "are there any new alerts"))
    assert said.startswith("Alerts waiting: 1.")
    assert "Car in the drive" not in said


async def test_alerts_of_a_camera_the_speaker_may_not_see_are_not_said(
    hass: HomeAssistant,
    assist: WorkflowHost,
    sim: OpenNVRSimulator,
    config_entry: MockConfigEntry,
    people: People,
) -> None:
    await sim.emit_alert(1, "vehicle", title="Car in the drive")
    await sim.emit_alert(2, "animal", title="Fox at the gate")
    front_door = er.async_get(hass).async_get_entity_id(
        "camera", DOMAIN, camera_unique_id(config_entry.runtime_data.info.site_id, "1")
    )
    assert front_door is not None
    dana = MockUser(name="Dana").add_to_hass(hass)
    dana.mock_policy({"entities": {"entity_ids": {front_door: True}}})
    said = speech(await say(hass, "any alerts", dana))
    assert said.startswith("Alerts waiting: 1. The latest: Car in the drive")
    assert "Fox" not in said
    said = speech(await say(hass, "any alerts", people.bob))
    assert said.startswith("Alerts waiting: 2.")


async def test_any_alerts_says_opennvrs_total_not_the_length_of_a_page(
    hass: HomeAssistant,
    assist: WorkflowHost,
    sim: OpenNVRSimulator,
    config_entry: MockConfigEntry,
    people: People,
) -> None:
    """Issue 23, item 15: 86 alerts waiting are said as 86, not as the page of 50 read; a
    person who sees only some cameras hears the count of theirs, read over every page."""
    car = await sim.emit_alert(1, "vehicle", title="Car in the drive")
    for i in range(85):
        sim.alerts.append({**car, "id": len(sim.alerts) + 1, "alert_id": f"alrt_{i}"})
    fox = await sim.emit_alert(2, "animal", title="Fox at the gate")
    for i in range(2):
        sim.alerts.append({**fox, "id": len(sim.alerts) + 1, "alert_id": f"fox_{i}"})
    said = speech(await say(hass, "any alerts", people.bob))
    assert said.startswith("Alerts waiting: 89. The latest: ")
    front_door = er.async_get(hass).async_get_entity_id(
        "camera", DOMAIN, camera_unique_id(config_entry.runtime_data.info.site_id, "1")
    )
    assert front_door is not None
    dana = MockUser(name="Dana").add_to_hass(hass)
    dana.mock_policy({"entities": {"entity_ids": {front_door: True}}})
    said = speech(await say(hass, "any alerts", dana))
    assert said.startswith("Alerts waiting: 86. The latest: Car in the drive")
    assert "Fox" not in said


# ── answering by voice ──────────────────────────────────────────────────────────────────


async def ask(host: WorkflowHost, sim: OpenNVRSimulator) -> str:
    """A person at the gate; the run id of the question it starts."""
    await sim.emit_alert(2, "person")
    await until(lambda: bool(host.desk.pending()), "the question was asked")
    return host.desk.pending()[0].run_id


async def steps(hass: HomeAssistant, host: WorkflowHost, run_id: str) -> dict[str, Any]:
    await host.engine.idle()
    await hass.async_block_till_done()
    return await host.engine.run_detail(run_id)


async def test_approve_by_an_addressee_continues_the_run(
    hass: HomeAssistant, assist: WorkflowHost, sim: OpenNVRSimulator, people: People
) -> None:
    run_id = await ask(assist, sim)
    response = await say(hass, "approve", people.alice)
    assert response.response_type is intent.IntentResponseType.ACTION_DONE
    assert speech(response) == "Answered Open to Gate."
    detail = await steps(hass, assist, run_id)
    assert detail["status"] == "done"
    assert [(s["path"], s["outcome"]) for s in detail["steps"]][:2] == [
        ("then.0", "Open"),
        ("then.0.Open.0", "done"),
    ]
    log = [(n["event"], n["user"], n["detail"]) for n in detail["approval_log"]]
    assert ("answered", people.alice.id, "Open (voice)") in log
    assert assist.desk.pending() == []
    # Nothing is open any more.
    response = await say(hass, "approve", people.bob)
    assert speech(response) == "Nothing is waiting for an answer."


async def test_approve_by_someone_not_asked_is_refused_and_logged(
    hass: HomeAssistant, assist: WorkflowHost, sim: OpenNVRSimulator, people: People
) -> None:
    run_id = await ask(assist, sim)
    response = await say(hass, "approve", people.carol)
    assert response.response_type is intent.IntentResponseType.ERROR
    assert "Carol" in speech(response)
    assert assist.desk.refused["not_addressee"] == 1
    # Nobody signed in (a voice satellite): refused too, for that reason.
    response = await say(hass, "approve")
    assert response.response_type is intent.IntentResponseType.ERROR
    assert assist.desk.refused["no_user"] == 1
    # The run still waits; the refusal is on the question's record.
    assert [t.run_id for t in assist.desk.pending()] == [run_id]
    detail = await steps(hass, assist, run_id)
    assert detail["status"] != "done"
    log = [(n["event"], n["user"], n["detail"]) for n in detail["approval_log"]]
    assert ("refused", people.carol.id, "not_addressee (voice)") in log


async def test_deny_takes_the_default_and_answer_names_a_reply(
    hass: HomeAssistant, assist: WorkflowHost, sim: OpenNVRSimulator, people: People
) -> None:
    run_id = await ask(assist, sim)
    response = await say(hass, "deny", people.bob)
    assert speech(response) == "Answered Keep closed to Gate."
    detail = await steps(hass, assist, run_id)
    assert detail["steps"][0]["outcome"] == "Keep closed"

    run_id = await ask(assist, sim)
    response = await say(hass, "answer maybe later", people.alice)
    assert response.response_type is intent.IntentResponseType.ERROR
    assert speech(response) == (
        "That question takes no answer maybe later. Its answers: Open, Keep closed."
    )
    response = await say(hass, "answer keep closed", people.alice)
    assert speech(response) == "Answered Keep closed to Gate."
    assert (await steps(hass, assist, run_id))["steps"][0]["outcome"] == "Keep closed"


#: A question whose replies do different things: REPLIES, the first the default.
LOCK = """\
contract: workflow.v1
name: Lock
state: on
limits: {{ cooldown: 0s, per_hour: 100 }}
when:
  alert: {{ alert_type: vehicle, cameras: [gate] }}
then:
  - ask_person:
      who: role:owner
      message: A car at the gate. Unlock?
      replies: [{first}, {second}]
      timeout: 1h
      {default}
    {first}: {first_path}
    {second}: [ home_assistant: {{ action: lock.unlock, data: {{ entity_id: lock.gate }} }} ]
"""
UNLOCK_BACK = "[ home_assistant: { action: lock.unlock, data: { entity_id: lock.back } } ]"


async def ask_lock(
    hass: HomeAssistant, host: WorkflowHost, sim: OpenNVRSimulator, **parts: str
) -> Any:
    write_workflow(hass, "lock", LOCK.format(**parts))
    await host.async_reload()
    await sim.emit_alert(2, "vehicle")
    await until(lambda: any(t.workflow_id == "lock" for t in host.desk.pending()), "asked")
    return next(t for t in host.desk.pending() if t.workflow_id == "lock")


async def test_deny_never_picks_a_reply_that_moves_something(
    hass: HomeAssistant, assist: WorkflowHost, sim: OpenNVRSimulator, people: People
) -> None:
    # Attack: [Keep closed, Open] with the first as default: "deny" used to take the last
    # reply, Open. Deny is the reply that moves nothing.
    ticket = await ask_lock(
        hass,
        assist,
        sim,
        first="Keep closed",
        second="Open",
        default="default: Keep closed",
        first_path="[]",
    )
    # The question says what each reply does, before its own words.
    assert ticket.message.splitlines() == [
        "“Keep closed”: moves nothing.",
        "“Open”: lock.unlock lock.gate.",
        "A car at the gate. Unlock?",
    ]
    assert ticket.moving_replies == ["Open"]
    response = await say(hass, "deny", people.bob)
    assert speech(response) == "Answered Keep closed to Lock."
    assert await steps(hass, assist, ticket.run_id)
    # When every reply moves something, deny is refused with the reason, and the
    # question still waits for the reply the person means.
    ticket = await ask_lock(
        hass, assist, sim, first="Unlock back", second="Open", default="", first_path=UNLOCK_BACK
    )
    response = await say(hass, "deny", people.bob)
    assert response.response_type is intent.IntentResponseType.ERROR
    assert speech(response) == (
        "Every reply to this question moves something (Unlock back, Open), so “deny” cannot "
        "answer it. Say the reply you want, or answer on your phone."
    )
    assert ticket.approval_id in {t.approval_id for t in assist.desk.pending()}


def test_the_reply_rule() -> None:
    two = ["Open", "Keep closed"]
    assert reply_for(INTENT_APPROVE, two, "Keep closed", "") == "Open"
    assert reply_for(INTENT_DENY, two, "Keep closed", "") == "Keep closed"
    # A default that is the first reply is not a "no": the last reply is.
    assert reply_for(INTENT_DENY, ["Yes", "Later", "No"], "Yes", "") == "No"
    assert reply_for(INTENT_DENY, ["Yes", "Later", "No"], "Later", "") == "Later"
    assert reply_for(INTENT_DENY, ["Yes", "No"], None, "") == "No"
    assert reply_for(INTENT_DENY, ["Acknowledge"], None, "") is None
    # Deny picks only among the replies that move nothing (class 11 of the safety rule).
    assert reply_for(INTENT_DENY, ["Keep closed", "Open"], "Keep closed", "", ["Open"]) == (
        "Keep closed"
    )
    assert reply_for(INTENT_DENY, ["Open", "Later", "No"], None, "", ["Open", "No"]) == "Later"
    assert reply_for(INTENT_DENY, ["Open", "Unlock"], None, "", ["Open", "Unlock"]) is None
    assert reply_for("OpenNVRAnswer", two, None, "keep-closed") == "Keep closed"
    assert reply_for("OpenNVRAnswer", two, None, "close") is None
    assert spoken_name("The Front_Door camera?") == "front door"


# ── switching a workflow ────────────────────────────────────────────────────────────────


async def test_an_admin_switches_a_workflow_and_nobody_else_may(
    hass: HomeAssistant, assist: WorkflowHost, people: People
) -> None:
    response = await say(hass, "set the gate workflow to test", people.alice)
    assert response.response_type is intent.IntentResponseType.ERROR
    assert speech(response) == "Only an administrator, signed in, may switch workflows by voice."
    response = await say(hass, "set the gate workflow to test")
    assert response.response_type is intent.IntentResponseType.ERROR
    assert assist.engine.workflow_status("gate").state == "on"

    response = await say(hass, "set the gate workflow to test", people.bob)
    assert speech(response) == "Gate is now test."
    assert assist.engine.workflow_status("gate").state == "test"
    response = await say(hass, "put workflow parcel check into off mode", people.bob)
    assert speech(response) == "Parcel check is now off."
    assert assist.engine.workflow_status("parcel").state == "off"
    response = await say(hass, "set the pool workflow to on", people.bob)
    assert response.response_type is intent.IntentResponseType.ERROR
    assert speech(response).startswith("I don't know a workflow called pool.")


# ── a message to the workflows ──────────────────────────────────────────────────────────


async def test_a_message_starts_the_message_workflow_and_assist_says_its_reply(
    hass: HomeAssistant, assist: WorkflowHost, people: People
) -> None:
    response = await say(hass, "ask the cameras is the parcel still there", people.alice)
    assert response.response_type is intent.IntentResponseType.ACTION_DONE
    assert speech(response) == "Alice asked: is the parcel still there"
    runs = await assist.engine.runs("parcel")
    assert len(runs) == 1
    assert runs[0]["status"] == "done"
    # Only the workflow whose words the message has ran.
    assert await assist.engine.runs("garden") == []


async def test_a_workflow_in_test_says_what_it_would_reply(
    hass: HomeAssistant, assist: WorkflowHost
) -> None:
    response = await say(hass, "ask the cameras whether the garden is quiet")
    assert speech(response) == "Garden check, in Test, would reply: The garden is quiet"


async def test_a_message_no_workflow_takes_or_one_that_is_off(
    hass: HomeAssistant, assist: WorkflowHost
) -> None:
    response = await say(hass, "ask the cameras about the weather")
    assert speech(response) == "No workflow takes that message."
    response = await say(hass, "ask the cameras if the shed is shut")
    assert speech(response) == "No workflow took the message: Shed check: off."
    assert await assist.engine.runs("shed") == []


async def test_assist_stops_waiting_and_says_the_run_is_still_working(
    hass: HomeAssistant, assist: WorkflowHost, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(assistant_messages, "REPLY_WAIT_S", 0.2)
    monkeypatch.setattr(
        assistant_messages.ask_workflows,
        "__kwdefaults__",
        {"wait_s": 0.2},
    )
    response = await say(hass, "ask the cameras to check slowly")
    assert speech(response) == "Still working on it: Slow check."
    runs = await assist.engine.runs("slow")
    assert len(runs) == 1
    assert runs[0]["status"] != "done"
