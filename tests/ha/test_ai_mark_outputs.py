"""What a workflow's AI output becomes in Home Assistant says so, carries the run's
context, and stays within the AI cap, on a real companion-app phone:

* a chain of runs started by AI-raised alerts never rings a phone critically, never raises
  a critical alert and never sounds the siren (the same chain from a plain alert does);
* the model's words in a notify step never become a command to the phone;
* the alert bus event, the camera's event entity, the Last outcome sensor, the logbook
  line, the phone notification and Home Assistant's own notification each say
  ``ai_derived``, and those that can carry a context carry the run's."""

from __future__ import annotations

import json
from typing import Any

import pytest
from homeassistant.components import persistent_notification
from homeassistant.core import Event, HomeAssistant
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_capture_events,
    async_mock_service,
)
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator

from custom_components.opennvr_workflows.const import CONF_FULL_TEXT_TO
from custom_components.opennvr_workflows.engine import NvrEvent
from custom_components.opennvr_workflows.host.effects.port import AI_NOTIFICATION_PREFIX
from custom_components.opennvr_workflows.host.runs.context import EVENT_RUN
from custom_components.opennvr_workflows.host.workflows import WorkflowHost
from tests.fakes.ollama_server import FakeOllama, FromSchema
from tests.fakes.opennvr_sim import OpenNVRSimulator
from tests.fakes.push_gateway import Push, PushGateway
from tests.ha.phones import Phone

from .ai_mark_support import (
    ALERT_EVENT,
    RAISE_AI,
    RAISE_PLAIN,
    phones_before_setup,
    settled_run,
    step,
    workflow_entity,
)
from .conftest import ai_options
from .test_entities import entity_id, wait_for
from .test_services import set_up

pytest_plugins = ["tests.ha.phones"]

PHONE = "notify.mobile_app_alices_phone"

#: Started by every alert a workflow raises: a phone notification asking for every kind of
#: urgency, a critical alert, and the siren, behind a plain rule.
ESCALATE = """\
contract: workflow.v1
name: Escalate {name}
state: on
limits: {{ cooldown: 0s, per_hour: 100 }}
when:
  alert: {{ alert_type: opennvr_workflows }}
if:
  - site_mode: [disarmed, armed_home, armed_away]
then:
  - home_assistant:
      action: notify.mobile_app_alices_phone
      data:
        title: Intruder
        message: "{{title}}"
        data:
          push: {{ interruption-level: critical, sound: {{ name: alarm, critical: 1 }} }}
          channel: alarm_stream
          importance: max
          priority: high
          ttl: 0
  - alert: {{ severity: critical, title: "Escalated: {{title}}" }}
  - home_assistant: {{ action: siren.turn_on, target: {{ entity_id: siren.yard }} }}
"""

#: The model's words as a notification, a log line and an alert.
SAYS = """\
contract: workflow.v1
name: Door says
state: on
needs: [vision_model]
limits: { cooldown: 0s, per_hour: 100 }
when:
  alert: { alert_type: person, cameras: [front_door] }
then:
  - ai:
      mode: look
      prompt: Is somebody waiting at the front door?
      input: picture
      decision: [visitor, nobody]
      visitor:
        - notify: { who: role:household, title: "{reason}", message: "{reason}" }
        - log: "Seen: {reason}"
      nobody: []
      unsure: []
"""


def push_context(hass: HomeAssistant, host: WorkflowHost, run_id: str) -> str:
    """The id of the context the run acted under."""
    context = host.effects.contexts.find(run_id)
    assert context is not None
    return context.id


def looks(reason: str) -> FromSchema:
    return FromSchema({"decision": "visitor", "reason": reason})


@pytest.fixture
def entry_options(ollama: FakeOllama) -> dict[str, Any]:
    ollama.default = looks("a courier at the door")
    return ai_options(ollama)


@pytest.fixture
async def phone(
    hass: HomeAssistant, push_gateway: PushGateway, aiohttp_client: ClientSessionGenerator
) -> Phone:
    """Alice's Android phone (the approvers' phone of the options), registered before the
    integration is set up, as at a real site."""
    phones = await phones_before_setup(hass, push_gateway, aiohttp_client)
    pixel = await phones.register(await phones.user("Alice"), "Alices Phone")
    assert pixel.notify_action == PHONE
    return pixel


async def quiet(hass: HomeAssistant, host: WorkflowHost) -> None:
    """Until no run starts any more (the chain has run its course)."""
    seen = -1
    while seen != host.engine.stats.started:
        seen = host.engine.stats.started
        for _ in range(5):
            await hass.async_block_till_done()
            await host.engine.idle()


def urgent(push: Push) -> list[str]:
    """What in a push asks the phone for more than medium."""
    data = push.get("data") or {}
    found = []
    level = (data.get("push") or {}).get("interruption-level")
    if level in ("critical", "time-sensitive"):
        found.append(f"push.interruption-level={level}")
    if (data.get("push") or {}).get("sound", {}).get("critical"):
        found.append("push.sound.critical")
    for key, loud in (("channel", "alarm_stream"), ("importance", "max"), ("priority", "high")):
        if data.get(key) == loud:
            found.append(key)
    if data.get("ttl") == 0:
        found.append("ttl")
    return found


@pytest.mark.parametrize("raise_with_ai", [True, False], ids=["ai-alert", "plain-alert"])
async def test_a_chain_of_runs_from_ai_output_never_rings_critically(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    sim: OpenNVRSimulator,
    phone: Phone,
    raise_with_ai: bool,
) -> None:
    siren = async_mock_service(hass, "siren", "turn_on")
    alerts = async_capture_events(hass, ALERT_EVENT)
    host = await set_up(
        hass,
        config_entry,
        door=RAISE_AI if raise_with_ai else RAISE_PLAIN,
        escalate=ESCALATE.format(name="one"),
        relay=ESCALATE.format(name="two"),
    )
    assert all(f.workflow is not None for f in host.files.values()), host.summary()
    await wait_for(hass, lambda: config_entry.runtime_data.hub.connected("websocket"))

    await sim.emit_alert(1, "person", title="Someone at the front door")
    await settled_run(hass, host, "door")
    await quiet(hass, host)
    escalated = [a for a in alerts if a.data["workflow_id"] != "door"]
    assert len(escalated) >= 2, "the chain ran: each escalating workflow raised its alert"
    pushes = phone.received()
    assert pushes, "the escalating workflows notified the phone"

    if not raise_with_ai:
        # The plain chain may wake people: the rule is the homeowner's.
        assert any(urgent(p) for p in pushes)
        assert any(a.data["severity"] == "critical" for a in escalated)
        assert siren
        return
    assert [urgent(p) for p in pushes] == [[] for _ in pushes], "nothing rang critically"
    assert {a.data["severity"] for a in escalated} == {"medium"}
    assert all(a.data["ai_derived"] for a in alerts)
    assert siren == [], "the siren sounded on the model's word"
    # Each run's trace says why: what was lowered, and why the siren was refused.
    for workflow_id in ("escalate", "relay"):
        run = await host.engine.run_detail(str((await host.engine.runs(workflow_id))[-1]["id"]))
        push = next(s for s in run["steps"] if s["path"] == "then.0")
        result = json.loads(push["result"])
        assert result["capped_by"] == "ai_derived_trigger"
        assert result["severity"] == "medium"
        assert "channel" in result["lowered"]
        alert = json.loads(next(s for s in run["steps"] if s["path"] == "then.1")["inputs"])
        assert (alert["severity"], alert["capped_by"]) == ("medium", "ai_derived_trigger")
        refused = next(s for s in run["steps"] if s["path"] == "then.2")
        assert refused["status"] == "refused"


@pytest.mark.parametrize(
    ("reason", "shown"),
    [
        ("command_screen_on", "\u201ccommand_screen_on\u201d"),
        ("TTS", "\u201cTTS\u201d"),
        (" request_location_update ", "\u201crequest_location_update\u201d"),
        ("a courier at the door", "a courier at the door"),
    ],
)
async def test_the_models_words_never_become_a_command_to_the_phone(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    sim: OpenNVRSimulator,
    ollama: FakeOllama,
    phone: Phone,
    reason: str,
    shown: str,
) -> None:
    ollama.default = looks(reason)
    logbook: list[Event] = async_capture_events(hass, "logbook_entry")
    # The admin lets the phone carry a step's full text (by default, text that carries AI
    # output stays in the house and the phone is told to look in Home Assistant).
    hass.config_entries.async_update_entry(
        config_entry, options={**config_entry.options, CONF_FULL_TEXT_TO: [PHONE]}
    )
    host = await set_up(hass, config_entry, says=SAYS)
    await wait_for(hass, lambda: config_entry.runtime_data.hub.connected("websocket"))
    await sim.emit_alert(1, "person")
    run = await settled_run(hass, host, "says")
    (push,) = phone.received()
    assert push["message"] == shown
    assert push["title"] == shown
    assert push["data"]["ai_derived"] is True
    (line,) = [e for e in logbook if e.data.get("domain") == "opennvr_workflows"]
    assert line.data["ai_derived"] is True
    assert line.context.id == push_context(hass, host, run["id"])
    told = step(run, "notify")
    if shown != reason:
        assert "is a command to the phone" in told["result"]["shown_as_text"][0]
    else:
        assert "shown_as_text" not in told["result"]


@pytest.mark.parametrize("raise_with_ai", [True, False], ids=["ai-alert", "plain-alert"])
async def test_everything_a_run_emits_says_whether_it_is_ai_output_and_carries_the_run(
    hass: HomeAssistant, config_entry: MockConfigEntry, sim: OpenNVRSimulator, raise_with_ai: bool
) -> None:
    await async_setup_component(hass, persistent_notification.DOMAIN, {})
    runs = async_capture_events(hass, EVENT_RUN)
    alerts = async_capture_events(hass, ALERT_EVENT)
    published: list[NvrEvent] = []
    host = await set_up(hass, config_entry, door=RAISE_AI if raise_with_ai else RAISE_PLAIN)
    config_entry.runtime_data.hub.subscribe(published.append)
    await wait_for(hass, lambda: config_entry.runtime_data.hub.connected("websocket"))
    events = entity_id(hass, sim, "event", "1_events")
    outcome = workflow_entity(hass, sim, "sensor", "door", "last_outcome")

    changes = async_capture_events(hass, "state_changed")
    await sim.emit_alert(1, "person", title="Someone at the front door")
    run = await settled_run(hass, host, "door")
    # The camera's own alert: the world's, not AI output.
    (world,) = [
        e.data["new_state"]
        for e in changes
        if e.data["entity_id"] == events
        and e.data["new_state"].attributes["app"] != "opennvr_workflows"
    ]
    assert world.attributes["ai_derived"] is False
    await wait_for(
        hass,
        lambda: hass.states.get(events).attributes.get("alert_type") == "opennvr_workflows",
    )
    await wait_for(hass, lambda: hass.states.get(outcome).attributes.get("run_id") == run["id"])

    (started,) = [e for e in runs if e.data["run_id"] == run["id"]]
    context_id = started.context.id
    (alert,) = alerts
    assert alert.data["ai_derived"] is raise_with_ai
    assert alert.context.id == context_id
    shown = hass.states.get(events)
    assert shown.attributes["ai_derived"] is raise_with_ai
    assert shown.context.id == context_id
    last = hass.states.get(outcome)
    assert last.attributes["ai_derived"] is raise_with_ai
    assert last.context.id == context_id
    notes = hass.data[persistent_notification.DOMAIN]
    (note_id,) = [n for n in notes if n.startswith("opennvr_workflows_")]
    assert note_id.startswith(AI_NOTIFICATION_PREFIX) is raise_with_ai
    assert notes[note_id]["title"].endswith("(medium, AI)" if raise_with_ai else "(medium)")
    # The alert comes back into the hub with the run in its chain once.
    (back,) = [e for e in published if e.source == "engine"]
    assert back.chain == (f"door/{run['id']}",)
    assert back.ai_derived is raise_with_ai
