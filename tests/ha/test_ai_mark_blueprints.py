"""The shipped blueprints keep the AI mark: the run-a-workflow blueprint set off by an
AI-derived alert starts a run that cannot open the door (a plain alert's can); the AI
check's Approve starts a run marked as AI-derived (the model chose what was approved);
its verdict says it is AI output, and an alert a workflow raised from AI output never
reaches the phone more urgently than the AI cap allows; the camera-alert blueprint says
when the alert it forwards is AI output."""

from __future__ import annotations

from typing import Any

import pytest
from homeassistant.core import Context, HomeAssistant
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_mock_service
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator

from custom_components.opennvr_workflows.const import DOMAIN
from tests.fakes.ollama_server import FakeOllama, FromSchema
from tests.fakes.opennvr_sim import OpenNVRSimulator
from tests.fakes.push_gateway import PushGateway
from tests.ha.phones import Phones
from tests.nvr.conftest import until

from .ai_mark_support import (
    RAISE_AI,
    RAISE_PLAIN,
    UNLOCK,
    VISITOR,
    WORKFLOW_ALERT,
    mark_options,
    phones_before_setup,
    settled_run,
    site,
    step,
)
from .test_blueprints import (
    AI_CHECK,
    ALERT_TO_PHONE,
    RUN_WORKFLOW,
    actions_of,
    ai_check_inputs,
    phones_of,
    tap_listeners,
    use_blueprint,
    waiting_for_a_tap,
)
from .test_entities import entity_id, wait_for
from .test_services import set_up

pytest_plugins = ["tests.ha.phones"]

WORTH_A_LOOK = FromSchema({"decision": "worth_a_look", "reason": "a courier with a parcel"})


@pytest.fixture
def entry_options(ollama: FakeOllama) -> dict[str, Any]:
    return mark_options(ollama)


@pytest.fixture
async def phones(
    hass: HomeAssistant, push_gateway: PushGateway, aiohttp_client: ClientSessionGenerator
) -> Phones:
    return await phones_before_setup(hass, push_gateway, aiohttp_client)


@pytest.mark.parametrize("raise_with_ai", [True, False], ids=["ai-alert", "plain-alert"])
async def test_the_run_a_workflow_blueprint_keeps_the_mark(
    hass: HomeAssistant, config_entry: MockConfigEntry, sim: OpenNVRSimulator, raise_with_ai: bool
) -> None:
    host, lock = await site(hass, config_entry, raise_with_ai)
    inputs = {
        "triggers": [{"trigger": "state", "entity_id": entity_id(hass, sim, "event", "1_events")}],
        "conditions": [WORKFLOW_ALERT],
        "workflow": "unlock",
        "variables": {"who": "{{ trigger.to_state.attributes.title }}"},
    }
    await use_blueprint(hass, ("Let in on an alert", RUN_WORKFLOW, inputs))
    await sim.emit_alert(1, "person", title="Someone at the front door")
    run = await settled_run(hass, host, "unlock")
    unlock = step(run, "home_assistant")
    if raise_with_ai:
        assert lock == []
        assert (unlock["status"], unlock["result"]["ai_origin"]) == ("refused", "lineage")
    else:
        assert len(lock) == 1
        assert unlock["status"] == "done"


async def test_a_caller_may_name_where_it_came_from_which_only_adds_the_mark(
    hass: HomeAssistant, config_entry: MockConfigEntry, sim: OpenNVRSimulator
) -> None:
    """``from_context`` (what the blueprint passes) adds the mark of a context the caller
    descends from; naming a clean one, or none, takes nothing away."""
    host, lock = await site(hass, config_entry, raise_with_ai=False)
    marked, clean = Context(), Context()
    host.effects.contexts.lineage.mark(marked.id)
    for n, named in enumerate((clean.id, "", marked.id)):
        await hass.services.async_call(
            DOMAIN, "run_workflow", {"workflow": "unlock", "from_context": named}, blocking=True
        )
        run = await settled_run(hass, host, "unlock", after=n)
    assert len(lock) == 2, "the clean and the empty one opened, the marked one did not"
    assert step(run, "home_assistant")["result"]["ai_origin"] == "lineage"


async def test_the_ai_checks_approve_starts_a_run_marked_by_the_models_verdict(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    sim: OpenNVRSimulator,
    ollama: FakeOllama,
    phones: Phones,
) -> None:
    pixel, _ = await phones_of(phones)
    lock = async_mock_service(hass, "lock", "unlock")
    host = await set_up(hass, config_entry, unlock=UNLOCK)
    events = entity_id(hass, sim, "event", "1_events")
    inputs = ai_check_inputs([events], pixel, approve_workflow="unlock")
    await use_blueprint(hass, ("Door check", AI_CHECK, inputs))
    await wait_for(hass, lambda: config_entry.runtime_data.hub.connected("websocket"))
    ollama.script(WORTH_A_LOOK)
    listening = tap_listeners(hass)

    await sim.emit_alert(1, "parcel", title="Parcel at the door")
    quick = await pixel.wait_for(lambda p: "checking" in p["message"])
    # The camera's own alert is not AI output: it may be urgent.
    assert quick["data"]["ai_derived"] is False
    assert (quick["data"]["priority"], quick["data"]["ttl"]) == ("high", 0)
    verdict = await pixel.wait_for(lambda p: "Worth a look" in p["message"])
    assert "Worth a look (AI)" in verdict["message"]
    assert verdict["data"]["ai_derived"] is True
    assert actions_of(verdict)[0] == "Approve"

    await waiting_for_a_tap(hass, listening, 3)
    await pixel.tap(verdict["data"]["actions"][0]["action"], tag=verdict["data"]["tag"])
    await until(lambda: host.engine.stats.started == 1, "Approve started the workflow")
    run = await settled_run(hass, host, "unlock")
    assert lock == [], "a tap on the model's verdict is not a person's reply in the run"
    refused = step(run, "home_assistant")
    assert (refused["status"], refused["result"]["ai_origin"]) == ("refused", "lineage")
    done = await pixel.wait_for(lambda p: "Approved" in p["message"])
    assert done["data"]["ai_derived"] is True


@pytest.mark.parametrize("raise_with_ai", [True, False], ids=["ai-alert", "plain-alert"])
async def test_an_ai_raised_alert_never_reaches_a_phone_urgently_through_a_blueprint(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    sim: OpenNVRSimulator,
    ollama: FakeOllama,
    phones: Phones,
    raise_with_ai: bool,
) -> None:
    pixel, iphone = await phones_of(phones)
    tablet = await phones.register(await phones.user("Carol"), "Kitchen tablet")
    await set_up(hass, config_entry, door=RAISE_AI if raise_with_ai else RAISE_PLAIN)
    events = entity_id(hass, sim, "event", "1_events")
    check = ai_check_inputs([events], pixel, iphone, alert_kinds=["other"])
    forward = {
        "events": [events],
        "alert_types": ["other"],
        "notify_devices": [tablet.device_id],
        "cooldown": 0,
    }
    await use_blueprint(
        hass, ("Workflow alert check", AI_CHECK, check), ("To the tablet", ALERT_TO_PHONE, forward)
    )
    await wait_for(hass, lambda: config_entry.runtime_data.hub.connected("websocket"))
    ollama.script(VISITOR, WORTH_A_LOOK)  # the workflow's look, then the blueprint's

    await sim.emit_alert(1, "person", title="Someone at the front door")
    quick = await pixel.wait_for(lambda p: "checking" in p["message"])
    ios = await iphone.wait_for(lambda p: "checking" in p["message"])
    sent = await tablet.wait_for(lambda p: "(medium" in p["message"])
    assert sent["data"]["ai_derived"] is raise_with_ai
    assert quick["data"]["ai_derived"] is raise_with_ai
    if raise_with_ai:
        assert "priority" not in quick["data"]
        assert "ttl" not in quick["data"]
        assert ios["data"]["push"] == {"interruption-level": "active"}
        assert sent["message"].endswith("(medium, AI)")
    else:
        assert (quick["data"]["priority"], quick["data"]["ttl"]) == ("high", 0)
        assert ios["data"]["push"] == {"interruption-level": "time-sensitive"}
        assert sent["message"].endswith("(medium)")
