"""What stays in the house: Home Assistant's history keeps no plate, alert title, question
or model reason from this integration's entities (the real recorder, on SQLite), and
camera pictures go only to an Ollama on the local network unless an admin allows another.
"""

from __future__ import annotations

import asyncio
import socket
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from homeassistant.components.recorder import get_instance
from homeassistant.components.recorder.db_schema import StateAttributes
from homeassistant.components.recorder.history import get_significant_states
from homeassistant.components.recorder.util import session_scope
from homeassistant.const import Platform
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import entity_registry as er
from homeassistant.helpers import issue_registry as ir
from pytest_homeassistant_custom_component.common import MockConfigEntry, MockUser
from pytest_homeassistant_custom_component.components.recorder.common import (
    async_wait_recording_done,
)

from custom_components.opennvr_workflows.const import (
    CONF_AI_ENABLED,
    CONF_APPROVERS,
    CONF_OLLAMA_ANYWHERE,
    CONF_OLLAMA_URL,
    CONF_VISION_MODEL,
    DOMAIN,
)
from custom_components.opennvr_workflows.engine import NvrEvent
from custom_components.opennvr_workflows.flows import steps as flow_steps
from custom_components.opennvr_workflows.flows.steps import CONF_SKIP_AI
from custom_components.opennvr_workflows.host import issues
from custom_components.opennvr_workflows.host.ids import workflow_unique_id
from custom_components.opennvr_workflows.local_network import async_is_local
from tests.fakes.ollama_server import FakeOllama, FromSchema, Received, Reply
from tests.fakes.opennvr_sim import OpenNVRSimulator

from .conftest import WEBSOCKET_OPTIONS, ai_options
from .test_services import set_up

PLATE = "KX-417-PQ"
#: A Look whose reason names the plate, then a question that shows the reason.
GATE = """\
contract: workflow.v1
name: Gate check
state: on
needs: [vision_model]
limits: { cooldown: 0s, per_hour: 100 }
when:
  alert: { alert_type: plate, cameras: [front_door] }
then:
  - ai:
      mode: look
      prompt: Which car is at the gate?
      input: picture
      decision: [known, unknown]
      known:
        - ask_person:
            who: role:owner
            message: "Open the gate for {reason}?"
            replies: [Open, Keep closed]
            timeout: 1h
            default: Keep closed
          Open: []
          Keep closed: []
      unknown: []
      unsure: []
"""
#: An address on no local network (TEST-NET-3, for documentation).
OUTSIDE = "http://203.0.113.7:11434"


@pytest.fixture(autouse=True)
def auto_enable_custom_integrations(recorder_mock: Any, enable_custom_integrations: None) -> None:
    """The real recorder first (SQLite), then custom integrations."""


def entity_of(hass: HomeAssistant, platform: str, unique_id: str) -> str:
    found = er.async_get(hass).async_get_entity_id(platform, DOMAIN, unique_id)
    assert found is not None, unique_id
    return found


def reads_the_plate(received: Received) -> Reply:
    return FromSchema(values={"decision": "known", "reason": f"the car with plate {PLATE}"})


async def test_history_keeps_no_plate_title_question_or_reason(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    sim: OpenNVRSimulator,
    ollama: FakeOllama,
    hass_admin_user: MockUser,
) -> None:
    since = datetime.now(UTC) - timedelta(seconds=1)
    hass.config_entries.async_update_entry(
        config_entry,
        options={
            **ai_options(ollama),
            CONF_APPROVERS: {"roles": {"owner": [hass_admin_user.id]}},
        },
    )
    ollama.responder = reads_the_plate
    host = await set_up(hass, config_entry, gate=GATE)
    site = sim.config.site_id
    events = entity_of(hass, Platform.EVENT, f"{site}_1_events")
    questions = entity_of(hass, Platform.SENSOR, f"{site}_pending_approvals")
    outcome = entity_of(hass, Platform.SENSOR, workflow_unique_id(site, "gate", "last_outcome"))

    # A plate read at the gate: the event entity carries it for automations ...
    config_entry.runtime_data.hub.publish(
        NvrEvent(
            kind="alert",
            source="websocket",
            time=datetime.now(UTC),
            type="plate",
            camera_id="1",
            alert_id="alrt_plate_1",
            plate=PLATE,
            title=f"Plate {PLATE} at the gate",
        )
    )
    # ... and the gate workflow looks, reads the plate, and asks.
    await host.engine.idle()
    for _ in range(100):
        await hass.async_block_till_done()
        if host.desk.pending() and hass.states.get(outcome).attributes.get("reason"):
            break
        await asyncio.sleep(0.02)

    # Live, what automations and dashboards read is there ...
    assert hass.states.get(events).attributes["plate"] == PLATE
    assert PLATE in hass.states.get(events).attributes["title"]
    assert PLATE in hass.states.get(outcome).attributes["reason"]
    # ... but a question's text only where its people are asked (their phones, the panel,
    # the card): a state reaches every user who may read the entity.
    (ticket,) = host.desk.pending()
    assert PLATE in ticket.message
    (question,) = hass.states.get(questions).attributes["questions"]
    assert question["approval_id"] == ticket.approval_id
    assert PLATE not in str(hass.states.get(questions).as_dict())

    # Recorded: the states are, their personal attributes are not.
    await async_wait_recording_done(hass)
    history = await get_instance(hass).async_add_executor_job(
        lambda: get_significant_states(
            hass,
            since,
            entity_ids=[events, questions, outcome],
            significant_changes_only=False,
            minimal_response=False,
        )
    )
    assert set(history) == {events, questions, outcome}
    for entity_id, states in history.items():
        for state in states:
            attributes = dict(state.attributes)
            assert not {"plate", "title", "questions", "reason"} & set(attributes), entity_id
    stored = await get_instance(hass).async_add_executor_job(_all_recorded_attributes, hass)
    assert stored
    assert not [row for row in stored if PLATE in row]


def _all_recorded_attributes(hass: HomeAssistant) -> list[str]:
    with session_scope(hass=hass, read_only=True) as session:
        return [str(row.shared_attrs) for row in session.query(StateAttributes).all()]


# ── where frames may go ─────────────────────────────────────────────────────────────────


async def test_what_counts_as_the_local_network(monkeypatch: pytest.MonkeyPatch) -> None:
    assert await async_is_local("http://127.0.0.1:11434")
    assert await async_is_local("http://localhost:11434")
    assert await async_is_local("http://192.168.1.20:11434")
    assert await async_is_local("http://10.0.0.5")
    assert await async_is_local("http://169.254.3.4:11434")
    assert await async_is_local("http://[fd00::5]:11434")
    assert await async_is_local("http://127.0.0.1:99999")  # a bad port is not a "where"
    assert not await async_is_local(OUTSIDE)
    assert not await async_is_local("http://[2001:db8::1]:11434")
    assert not await async_is_local("not a url")

    answers = {
        "nas.lan": ["192.168.1.9"],
        "ollama.example.com": ["93.184.215.14"],
        "split.example": ["192.168.1.9", "93.184.215.14"],
    }

    async def resolve(_loop: Any, host: str, *_args: Any, **_kwargs: Any) -> list[Any]:
        if host not in answers:
            raise socket.gaierror("no such name")
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, 0)) for a in answers[host]]

    monkeypatch.setattr(asyncio.get_running_loop().__class__, "getaddrinfo", resolve)
    assert await async_is_local("http://nas.lan:11434")
    assert not await async_is_local("https://ollama.example.com")
    assert not await async_is_local("http://split.example:11434")  # one address outside
    assert not await async_is_local("http://nowhere.invalid:11434")


async def test_the_ollama_page_refuses_a_server_outside_unless_allowed(
    hass: HomeAssistant,
    setup_entry: MockConfigEntry,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    result = await hass.config_entries.options.async_init(setup_entry.entry_id)
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {"next_step_id": "ollama"}
    )
    assert result["step_id"] == "ollama"
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {CONF_OLLAMA_URL: OUTSIDE, CONF_SKIP_AI: False}
    )
    assert result["errors"] == {CONF_OLLAMA_URL: "ollama_not_local"}

    async def models(url: str) -> dict[str, tuple[str, ...]]:
        assert url == OUTSIDE  # asked only once an admin allowed it
        return {"qwen2.5vl:3b": ("completion", "vision")}

    monkeypatch.setattr(flow_steps, "async_model_capabilities", models)
    result = await hass.config_entries.options.async_configure(
        result["flow_id"],
        {CONF_OLLAMA_URL: OUTSIDE, CONF_OLLAMA_ANYWHERE: True, CONF_SKIP_AI: False},
    )
    assert result["step_id"] == "models"


@pytest.fixture
def entry_options() -> dict[str, Any]:
    return {
        **WEBSOCKET_OPTIONS,
        CONF_AI_ENABLED: True,
        CONF_OLLAMA_URL: OUTSIDE,
        CONF_VISION_MODEL: "qwen2.5vl:3b",
        "camera_roles": {"front_door": "1"},
    }


async def test_a_server_outside_gets_no_frame_and_says_why(
    hass: HomeAssistant, config_entry: MockConfigEntry, sim: OpenNVRSimulator
) -> None:
    host = await set_up(hass, config_entry, gate=GATE)
    issue = ir.async_get(hass).async_get_issue(DOMAIN, issues.not_local_id(config_entry.entry_id))
    assert issue is not None
    assert issue.translation_placeholders == {"url": OUTSIDE}
    assert not host.ai.may_send()

    (run_id,) = host.engine.start_now("gate", {"camera": "front_door"}).run_ids
    await host.engine.idle()
    (step,) = [s for s in (await host.engine.run_detail(run_id))["steps"] if s["kind"] == "ai"]
    assert (step["outcome"], step["unsure_reason"]) == ("unsure", "not_local")

    with pytest.raises(HomeAssistantError) as refused:
        await hass.services.async_call(
            DOMAIN,
            "look",
            {"camera": "front_door", "prompt": "Anyone?", "decision": ["yes", "no"]},
            blocking=True,
            return_response=True,
        )
    assert refused.value.translation_key == "ollama_not_local"
    assert OUTSIDE in str(refused.value)
