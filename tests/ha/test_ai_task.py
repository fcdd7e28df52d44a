"""The site's AI Task entity in a real Home Assistant, against the OpenNVR simulator and the
Ollama fake: ``ai_task.generate_data`` with a camera attachment answered through the Look
path (typed answer, trace rows, evidence, unsure), its clear errors (budget, model down, no
camera, a structure a Look cannot answer), and who may ask about which camera."""

from __future__ import annotations

from typing import Any

import probatio as vol
import pytest
from homeassistant.auth.models import User
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError, ServiceValidationError
from homeassistant.helpers import selector
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_mock_service

from custom_components.opennvr_workflows.const import (
    CONF_CAMERA_ROLES,
    CONF_DEFAULT_LIMITS,
    CONF_HARDWARE,
    HARDWARE_GPU,
)
from custom_components.opennvr_workflows.host.model.task_look import AI_TASK_RUNS
from custom_components.opennvr_workflows.host.model.task_structure import StructureError, plan_of
from tests.fakes.ollama_server import FakeOllama, FromSchema
from tests.fakes.opennvr_sim import OpenNVRSimulator
from tests.nvr.conftest import until

from .ai_task_support import (
    camera_entity,
    driveway_only,
    generate,
    model_entity,
    no_frame_wait,  # noqa: F401
    set_up,
)
from .conftest import ai_options
from .test_blueprints import AI_CHECK, use_blueprint
from .test_entities import entity_id, wait_for

PARCEL = {
    "decision": {
        "description": "What lies on the doorstep",
        "required": True,
        "selector": {"select": {"options": ["parcel", "No parcel"]}},
    },
    "people": {"selector": {"number": {"min": 0, "max": 3}}},
    "courier": {"selector": {"boolean": {}}},
    "description": {"selector": {"text": {}}},
}


@pytest.fixture
def entry_options(ollama: FakeOllama) -> dict[str, Any]:
    return {**ai_options(ollama), CONF_CAMERA_ROLES: {"front_door": "1", "driveway": "2"}}


@pytest.mark.usefixtures("no_frame_wait")
async def test_a_structure_gets_a_typed_decision_from_frames_with_a_trace_and_evidence(
    hass: HomeAssistant, config_entry: MockConfigEntry, ollama: FakeOllama
) -> None:
    host = await set_up(hass, config_entry)
    ollama.default = FromSchema(
        {
            "decision": "parcel",
            "reason": "a brown box lies on the mat",
            "confidence": 0.92,
            "people": "1",
            "courier": "yes",
        }
    )
    door = camera_entity(hass, 1)
    data = await generate(hass, structure=PARCEL, cameras=[door])

    assert data == {
        "decision": "parcel",
        "people": 1,
        "courier": True,
        "description": "a brown box lies on the mat",
        "reason": "a brown box lies on the mat",
        "confidence": data["confidence"],  # the step's, from its evidence check
        "unsure_reason": None,
        "run_id": data["run_id"],
    }
    assert data["confidence"] >= 0.75
    (chat,) = [r for r in ollama.requests if r.path == "/api/chat"]
    assert len(chat.images) == 3, "a decision is looked at on several frames"
    assert "Is there a parcel on the doorstep?" in chat.user + chat.system
    assert "What lies on the doorstep" in chat.user + chat.system
    schema = chat.format
    assert set(schema["properties"]["decision"]["enum"]) >= {"parcel", "no_parcel"}

    await host.engine.store.flush()
    run = await host.engine.run_detail(data["run_id"])
    assert run["workflow_id"] == AI_TASK_RUNS
    assert run["status"] == "done"
    assert run["outcome"] == "parcel"
    (step,) = run["steps"]
    assert step["kind"] == "ai"
    assert step["reason"] == "a brown box lies on the mat"
    kinds = [(c["kind"], c["name"], c["status"]) for c in run["tool_calls"]]
    assert kinds.count(("tool", "frames", "ok")) == 3
    assert ("llm", "qwen2.5vl:3b", "ok") in kinds
    kept = await host.evidence_store.async_read(data["run_id"])
    assert kept is not None
    assert kept.image
    assert kept.camera == "front_door"
    assert [r.run_id for r in host.evidence_store.listed()] == [data["run_id"]]


@pytest.mark.usefixtures("no_frame_wait")
async def test_unsure_comes_back_as_an_answer(
    hass: HomeAssistant, config_entry: MockConfigEntry, ollama: FakeOllama
) -> None:
    """The model's own unsure, and a GPU site's draws that disagree (below the floor)."""
    hass.config_entries.async_update_entry(
        config_entry, options={**config_entry.options, CONF_HARDWARE: HARDWARE_GPU}
    )
    await set_up(hass, config_entry)
    door = camera_entity(hass, 1)
    ollama.default = FromSchema(
        {"decision": "unsure", "reason": "the doorstep is in deep shadow", "confidence": 0.4}
    )
    data = await generate(hass, structure=PARCEL, cameras=[door])
    assert data["decision"] == "unsure"
    assert data["reason"] == "the doorstep is in deep shadow"
    assert data["people"] is None
    assert data["courier"] is None

    ollama.script(
        FromSchema({"decision": "parcel", "reason": "a box", "people": "1"}),
        FromSchema({"decision": "no_parcel", "reason": "nothing"}),
        FromSchema({"decision": "no_parcel", "reason": "nothing"}),
    )
    data = await generate(hass, structure=PARCEL, cameras=[door])
    assert (data["decision"], data["unsure_reason"]) == ("unsure", "below_floor")
    assert data["people"] is None
    # A yes/no decision is null when unsure, never a truthy "unsure".
    data = await generate(
        hass,
        instructions="Is someone at the door?",
        structure={"someone": {"selector": {"boolean": {}}}},
        cameras=[door],
    )
    assert data["someone"] is None
    assert data["reason"] == "the doorstep is in deep shadow"


async def test_without_a_structure_the_answer_is_the_models_sentence(
    hass: HomeAssistant, config_entry: MockConfigEntry, ollama: FakeOllama
) -> None:
    await set_up(hass, config_entry)
    ollama.default = FromSchema(
        {"decision": "answered", "reason": "A courier holds a parcel.", "confidence": 0.9}
    )
    data = await generate(
        hass, instructions="What is at the door?", cameras=[camera_entity(hass, 1)]
    )
    assert data == "A courier holds a parcel."
    (chat,) = [r for r in ollama.requests if r.path == "/api/chat"]
    assert len(chat.images) == 1, "no decision asked: one picture"


async def test_over_budget_is_a_clear_error(
    hass: HomeAssistant, config_entry: MockConfigEntry, ollama: FakeOllama
) -> None:
    hass.config_entries.async_update_entry(
        config_entry, options={**config_entry.options, CONF_DEFAULT_LIMITS: {"ai_per_hour": 1}}
    )
    host = await set_up(hass, config_entry)
    ollama.default = FromSchema({"decision": "answered", "reason": "a cat", "confidence": 0.9})
    door = camera_entity(hass, 1)
    assert await generate(hass, instructions="What is there?", cameras=[door]) == "a cat"
    with pytest.raises(HomeAssistantError) as refused:
        await generate(hass, instructions="And now?", cameras=[door])
    assert refused.value.translation_key == "task_over_budget"
    assert refused.value.translation_placeholders == {"budget": "1"}
    assert len([r for r in ollama.requests if r.path == "/api/chat"]) == 1
    assert host.engine.limiter(AI_TASK_RUNS).ai_remaining(host.engine.now_ts()) == 0
    # The hour's calls are in the run database: a restart of the site does not refill it.
    await hass.config_entries.async_reload(config_entry.entry_id)
    await hass.async_block_till_done()
    with pytest.raises(HomeAssistantError) as refused:
        await generate(hass, instructions="After a restart?", cameras=[door])
    assert refused.value.translation_key == "task_over_budget"


async def test_model_down_is_a_clear_error_and_leaves_its_trace(
    hass: HomeAssistant, config_entry: MockConfigEntry, ollama: FakeOllama
) -> None:
    host = await set_up(hass, config_entry)
    await host.model_watch.async_settled()
    await ollama.stop()
    with pytest.raises(HomeAssistantError) as refused:
        await generate(hass, instructions="What is there?", cameras=[camera_entity(hass, 1)])
    assert refused.value.translation_key == "task_model_down"
    assert refused.value.translation_placeholders == {"url": ollama.url, "model": "qwen2.5vl:3b"}
    await host.engine.store.flush()
    (run,) = await host.engine.runs(AI_TASK_RUNS)
    detail = await host.engine.run_detail(run["id"])
    assert detail["outcome"] == "unsure"
    assert detail["steps"][0]["unsure_reason"] == "llm_down"


async def test_a_user_who_may_not_see_the_camera_is_refused_like_an_unknown_camera(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    ollama: FakeOllama,
    hass_read_only_user: User,
) -> None:
    await set_up(hass, config_entry)
    ollama.default = FromSchema({"decision": "answered", "reason": "a car", "confidence": 0.9})
    some = driveway_only(hass)
    with pytest.raises(ServiceValidationError) as refused:
        await generate(hass, cameras=[camera_entity(hass, 1)], user=some)
    assert refused.value.translation_key == "unknown_camera"
    assert refused.value.translation_placeholders["roles"] == "driveway"
    assert not [r for r in ollama.requests if r.path == "/api/chat"], "nothing was asked"
    # Their own camera is answered; a read-only user may ask about any camera.
    assert await generate(hass, cameras=[camera_entity(hass, 2)], user=some) == "a car"
    assert await generate(hass, cameras=[camera_entity(hass, 1)], user=hass_read_only_user)


async def test_a_task_without_a_camera_is_refused_with_the_reason(
    hass: HomeAssistant, config_entry: MockConfigEntry, ollama: FakeOllama
) -> None:
    await set_up(hass, config_entry)
    with pytest.raises(ServiceValidationError) as refused:
        await generate(hass, instructions="Write a poem about parcels")
    assert refused.value.translation_key == "task_needs_camera"
    with pytest.raises(ServiceValidationError) as refused:
        await generate(hass, cameras=[camera_entity(hass, 1), camera_entity(hass, 2)])
    assert refused.value.translation_key == "task_one_camera"
    assert not [r for r in ollama.requests if r.path == "/api/chat"]


async def test_a_structure_a_look_cannot_answer_is_refused_by_name(
    hass: HomeAssistant, config_entry: MockConfigEntry, ollama: FakeOllama
) -> None:
    await set_up(hass, config_entry)
    with pytest.raises(ServiceValidationError) as refused:
        await generate(
            hass,
            structure={"when": {"selector": {"datetime": {}}}},
            cameras=[camera_entity(hass, 1)],
        )
    assert refused.value.translation_key == "task_field_unsupported"
    assert refused.value.translation_placeholders == {"field": "when", "kind": "datetime"}
    assert not [r for r in ollama.requests if r.path == "/api/chat"]


# ── the structure, read alone ───────────────────────────────────────────────────────────


def _schema(fields: dict[str, Any]) -> vol.Schema:
    return vol.Schema(
        {vol.Optional(name): selector.selector(config) for name, config in fields.items()}
    )


def test_the_decision_is_the_select_named_decision_else_the_first_select_else_a_boolean() -> None:
    plan = plan_of(
        _schema(
            {
                "kind": {"select": {"options": ["car", "van"]}},
                "decision": {"select": {"options": ["Yes", "No way", "unsure"]}},
            }
        )
    )
    assert plan.decision is not None
    assert plan.decision.name == "decision"
    assert plan.options == ("yes", "no_way")
    assert plan.step_fields() == {"kind": ["car", "van"]}
    answer = plan.answer("no_way", {"kind": "van"}, "r", 0.9, None, "run")
    assert answer["decision"] == "No way"
    assert answer["kind"] == "van"
    plan = plan_of(_schema({"kind": {"select": {"options": ["car", "van"]}}}))
    assert plan.decision is not None
    assert plan.decision.name == "kind"
    plan = plan_of(_schema({"person": {"boolean": {}}, "count": {"number": {"min": 1, "max": 4}}}))
    assert plan.options == ("yes", "no")
    assert plan.step_fields() == {"count": ["1", "2", "3", "4"]}
    assert plan_of(_schema({"count": {"number": {"min": 0, "max": 2}}})).options == ("answered",)


@pytest.mark.parametrize(
    ("fields", "key"),
    [
        ({"tags": {"select": {"options": ["a", "b"], "multiple": True}}}, "task_field_multiple"),
        ({"n": {"number": {"min": 0, "max": 100}}}, "task_field_too_many_values"),
        ({"n": {"number": {"min": 0, "max": 1, "step": 0.5}}}, "task_field_unsupported"),
        ({"a": {"text": {}}, "b": {"text": {}}}, "task_text_twice"),
        ({"run_id": {"text": {}}}, "task_field_reserved"),
        ({"reason": {"boolean": {}}}, "task_field_reserved"),
        ({"who": {"entity": {}}}, "task_field_unsupported"),
        ({"x": {"select": {"options": ["Yes", "yes!"]}}}, "task_options_clash"),
    ],
)
def test_what_a_look_cannot_answer_is_named(fields: dict[str, Any], key: str) -> None:
    with pytest.raises(StructureError) as refused:
        plan_of(_schema(fields))
    assert refused.value.key == key


def test_field_names_the_step_reserves_are_renamed_for_the_model_only() -> None:
    plan = plan_of(
        _schema({"time": {"select": {"options": ["day", "night"]}}, "d": {"boolean": {}}})
    )
    assert plan.decision is not None
    assert plan.decision.name == "time"
    plan = plan_of(
        _schema({"go": {"boolean": {}}, "time": {"select": {"options": ["day", "night"]}}})
    )
    # "time" is the decision (a select comes first); "go" is a field
    assert plan.step_fields() == {"go": ["yes", "no"]}
    plan = plan_of(
        _schema(
            {
                "decision": {"select": {"options": ["a", "b"]}},
                "time": {"select": {"options": ["day", "night"]}},
            }
        )
    )
    assert plan.step_fields() == {"time_value": ["day", "night"]}
    assert plan.answer("a", {"time_value": "night"}, "", 0.9, None, "r")["time"] == "night"


# ── the AI-check blueprint, through the AI Task ─────────────────────────────────────────


@pytest.mark.usefixtures("no_frame_wait")
async def test_the_ai_check_blueprint_asks_through_the_ai_task_entity(
    hass: HomeAssistant, config_entry: MockConfigEntry, sim: OpenNVRSimulator, ollama: FakeOllama
) -> None:
    host = await set_up(hass, config_entry)
    logbook = async_mock_service(hass, "logbook", "log")
    inputs = {
        "cameras": [entity_id(hass, sim, "event", "1_events")],
        "alert_kinds": ["parcel"],
        # No phone: the verdict is read from the logbook (debug) and the AI Task's record.
        "notify_devices": [],
        "cooldown": 0,
        "ai_task": model_entity(hass, "ai_task", "ai_task"),
        "debug": True,
    }
    await use_blueprint(hass, ("Door check", AI_CHECK, inputs))
    await wait_for(hass, lambda: config_entry.runtime_data.hub.connected("websocket"))
    ollama.default = FromSchema(
        {"decision": "worth_a_look", "reason": "a courier with a parcel", "confidence": 0.9}
    )
    await sim.emit_alert(1, "parcel", title="Parcel at the door")
    await until(lambda: any("(AI)" in c.data["message"] for c in logbook), "the verdict")
    (line,) = [c.data["message"] for c in logbook if "(AI)" in c.data["message"]]
    assert line.startswith("Parcel on Front Door: Worth a look (AI): a courier with a parcel")
    await host.engine.store.flush()
    (run,) = await host.engine.runs(AI_TASK_RUNS)
    assert run["outcome"] == "worth_a_look"
    (chat,) = [r for r in ollama.requests if r.path == "/api/chat"]
    assert "Parcel at the door (parcel)" in chat.user + chat.system
