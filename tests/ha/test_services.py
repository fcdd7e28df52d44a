"""The integration's actions in a real Home Assistant, against the OpenNVR simulator and
the Ollama fake: each action, its response, its translated errors, who may call it, and
what it leaves in the logbook."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import probatio as vol
import pytest
import yaml
from homeassistant.auth.const import GROUP_ID_USER
from homeassistant.auth.models import User
from homeassistant.components import automation
from homeassistant.core import Context, Event, HomeAssistant, ServiceResponse
from homeassistant.exceptions import HomeAssistantError, ServiceValidationError, Unauthorized
from homeassistant.helpers import entity_registry as er
from homeassistant.helpers.service import async_get_all_descriptions
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_capture_events,
    async_mock_service,
)

from custom_components.opennvr_workflows.ai import READ_TOOLS
from custom_components.opennvr_workflows.const import (
    CONF_AI_ENABLED,
    CONF_APPROVERS,
    CONF_CAMERA_ROLES,
    CONF_MODEL_ALLOW_LIST,
    CONF_MODEL_GATE,
    CONF_OLLAMA_URL,
    CONF_TEXT_MODEL,
    CONF_VISION_MODEL,
    DOMAIN,
    WORKFLOW_FOLDER,
)
from custom_components.opennvr_workflows.host.folder.files import TEMPLATES_MARKER
from custom_components.opennvr_workflows.host.folder.preview import in_state
from custom_components.opennvr_workflows.host.workflows import WorkflowHost
from custom_components.opennvr_workflows.workflow import template_names, validate_text
from tests.fakes.ollama_server import FakeOllama, FromSchema, ToolCalls
from tests.fakes.opennvr_sim import OpenNVRSimulator
from tests.nvr.conftest import until

from .conftest import PASSED_GATE, WEBSOCKET_OPTIONS
from .workflow_files import DOOR_LOOK, write_workflow

INTEGRATION = Path(__file__).parents[2] / "custom_components" / DOMAIN
PHONE = "mobile_app_alices_phone"
VISITOR = FromSchema(
    {"decision": "visitor", "reason": "a courier with a parcel", "confidence": 0.9}
)

BUTTON_LOG = """\
contract: workflow.v1
name: Porch check
state: {state}
limits: {{ cooldown: 0s, per_hour: 100 }}
when:
  button: {{}}
then:
  - log: "Checked for {{user}}"
"""

ALERT_LOG = """\
contract: workflow.v1
name: Door alert
state: on
limits: { cooldown: 0s, per_hour: 100 }
when:
  alert: { alert_type: person, cameras: [front_door] }
then:
  - log: "{severity} {alert_type} at {camera}: {description}"
"""

ASK = """\
contract: workflow.v1
name: Ask the house
state: on
limits: { cooldown: 0s, per_hour: 100 }
when:
  message: { contains: [gate] }
then:
  - reply: "{user} asked: {message}"
"""

#: A workflow that moves things: switching the site mode.
ARM = """\
contract: workflow.v1
name: Arm at night
state: test
limits: { cooldown: 0s, per_hour: 100 }
when:
  button: {}
if:
  - site_mode: [disarmed]
then:
  - site_mode: armed_away
"""


@pytest.fixture
def entry_options(ollama: FakeOllama, hass_read_only_user: User) -> dict[str, Any]:
    return {
        **WEBSOCKET_OPTIONS,
        CONF_AI_ENABLED: True,
        CONF_OLLAMA_URL: ollama.url,
        CONF_VISION_MODEL: "qwen2.5vl:3b",
        CONF_TEXT_MODEL: "qwen3:1.7b",
        CONF_MODEL_ALLOW_LIST: ["llava:13b"],
        CONF_CAMERA_ROLES: {"front_door": "1", "driveway": "2"},
        CONF_APPROVERS: {"users": [], "notify": [f"notify.{PHONE}"]},
        CONF_MODEL_GATE: dict(PASSED_GATE),
    }


async def set_up(hass: HomeAssistant, entry: MockConfigEntry, **files: str) -> WorkflowHost:
    """Set up the entry with exactly these workflow files (no templates copied)."""
    folder = Path(hass.config.path(WORKFLOW_FOLDER))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / TEMPLATES_MARKER).write_text("", encoding="utf-8")
    for name, text in files.items():
        write_workflow(hass, name, text)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    host = entry.runtime_data.workflows
    assert host is not None
    return host


async def act(
    hass: HomeAssistant,
    service: str,
    data: dict[str, Any] | None = None,
    user: User | None = None,
    *,
    response: bool = True,
) -> ServiceResponse:
    return await hass.services.async_call(
        DOMAIN,
        service,
        data or {},
        blocking=True,
        return_response=response,
        context=Context(user_id=user.id) if user is not None else None,
    )


async def refused(
    hass: HomeAssistant, service: str, data: dict[str, Any], user: User | None = None
) -> HomeAssistantError:
    """Call an action that must fail; returns the error, its message rendered."""
    with pytest.raises(HomeAssistantError) as caught:
        await act(hass, service, data, user)
    assert caught.value.translation_domain == DOMAIN
    assert str(caught.value), "the error has a rendered message"
    return caught.value


def logbook(events: list[Event]) -> list[tuple[str, str, str | None]]:
    return [(e.data["name"], e.data["message"], e.context.user_id) for e in events]


# ── registration, descriptions, translations ────────────────────────────────────────────


async def test_every_action_is_registered_described_translated_and_has_an_icon(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    await set_up(hass, config_entry)
    # Home Assistant's own reading of services.yaml (its schema checks every selector).
    ours = (await async_get_all_descriptions(hass))[DOMAIN]
    assert ours["look"]["fields"]["camera"]["selector"]["entity"]["filter"] == [
        {"integration": DOMAIN, "domain": ["camera"]}
    ]
    assert ours["set_workflow_state"]["fields"]["state"]["selector"]["select"]["options"] == [
        "off",
        "test",
        "on",
    ]
    assert ours["set_workflow_state"]["fields"]["state"]["required"] is True
    described = yaml.safe_load((INTEGRATION / "services.yaml").read_text())
    strings = json.loads((INTEGRATION / "strings.json").read_text())
    icons = json.loads((INTEGRATION / "icons.json").read_text())
    registered = set(hass.services.async_services_for_domain(DOMAIN))
    assert registered == set(described) == set(strings["services"]) == set(icons["services"])
    for name, spec in described.items():
        assert set(spec["fields"]) == set(strings["services"][name]["fields"]), name
        assert "config_entry_id" in spec["fields"], name
    tools = described["investigate"]["fields"]["tools"]["selector"]["select"]["options"]
    assert tools == list(READ_TOOLS)
    assert set(strings["selector"]["ai_tool"]["options"]) == set(READ_TOOLS)
    templates = described["import_workflow"]["fields"]["template"]["selector"]["select"]
    assert templates["options"] == list(template_names())
    assert set(strings["selector"]["workflow_template"]["options"]) == set(template_names())
    assert (INTEGRATION / "translations" / "en.json").read_text() == (
        INTEGRATION / "strings.json"
    ).read_text()


async def test_actions_need_a_loaded_entry_and_take_one_by_id(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    await set_up(hass, config_entry)
    summary = await act(hass, "reload", {"config_entry_id": config_entry.entry_id})
    assert summary == {"loaded": [], "invalid": {}}
    assert await hass.config_entries.async_unload(config_entry.entry_id)
    err = await refused(hass, "reload", {})
    assert err.translation_key == "no_loaded_entry"
    with pytest.raises(ServiceValidationError):  # Home Assistant's own "not loaded"
        await act(hass, "reload", {"config_entry_id": config_entry.entry_id})


# ── look and investigate ────────────────────────────────────────────────────────────────


async def test_look_by_role_decides_through_the_model_with_the_cameras_picture(
    hass: HomeAssistant, config_entry: MockConfigEntry, ollama: FakeOllama
) -> None:
    await set_up(hass, config_entry)
    ollama.script(*[FromSchema({**VISITOR.values, "company": "food"})] * 4)
    response = await act(
        hass,
        "look",
        {
            "camera": "front_door",
            "prompt": "Who is at the door?",
            "decision": ["visitor", "nobody"],
            "fields": {"company": ["parcel_service", "food", "none"]},
        },
    )
    assert response == {
        "decision": "visitor",
        "fields": {"company": "food"},
        "reason": "a courier with a parcel",
        "confidence": 1.0,  # the agreement of the draws (one on CPU), not the self-report
        "unsure_reason": None,
        "model": "qwen2.5vl:3b",
    }
    chat = ollama.chats[0]
    assert chat.model == "qwen2.5vl:3b"
    assert "Who is at the door?" in chat.system
    assert len(chat.images) == 1
    assert chat.format["properties"]["decision"]["enum"] == ["visitor", "nobody", "unsure"]


async def test_look_at_a_camera_entity_without_a_role(
    hass: HomeAssistant, config_entry: MockConfigEntry, ollama: FakeOllama, sim: OpenNVRSimulator
) -> None:
    """The Back Garden (camera 3) plays no role: picked by its entity, it is still seen."""
    await set_up(hass, config_entry)
    garden = er.async_get(hass).async_get_entity_id(
        "camera", DOMAIN, f"{sim.config.site_id}_3_camera"
    )
    assert garden is not None
    ollama.script(*[FromSchema({"decision": "nobody", "reason": "an empty lawn"})] * 4)
    response = await act(
        hass,
        "look",
        {"camera": garden, "prompt": "Anyone there?", "decision": ["visitor", "nobody"]},
    )
    assert (response["decision"], response["reason"]) == ("nobody", "an empty lawn")
    assert ("GET", "/api/v1/cameras/3/snapshot") in sim.requests


async def test_look_at_frames_sends_that_many_pictures(
    hass: HomeAssistant, config_entry: MockConfigEntry, ollama: FakeOllama
) -> None:
    await set_up(hass, config_entry)
    ollama.script(*[FromSchema({"decision": "moving", "reason": "the car drives off"})] * 4)
    response = await act(
        hass,
        "look",
        {
            "camera": "driveway",
            "prompt": "Is the car moving?",
            "decision": ["moving", "parked"],
            "frames": 2,
        },
    )
    assert response["decision"] == "moving"
    assert len(ollama.chats[0].images) == 2


async def test_look_refuses_what_it_cannot_do_with_specific_errors(
    hass: HomeAssistant, config_entry: MockConfigEntry, ollama: FakeOllama
) -> None:
    host = await set_up(hass, config_entry)
    base = {"camera": "front_door", "prompt": "Who?", "decision": ["visitor", "nobody"]}
    err = await refused(hass, "look", {**base, "camera": "back_yard"})
    assert err.translation_key == "unknown_camera"
    assert str(err) == (
        "back_yard is neither a camera of this site nor a camera role. Roles: driveway, front_door"
    )
    err = await refused(hass, "look", {**base, "camera": "camera.not_ours"})
    assert err.translation_key == "unknown_camera"
    err = await refused(hass, "look", {**base, "decision": ["visitor", "unsure"]})
    assert err.translation_key == "invalid_request"
    assert "WF-AI-UNSURE-LISTED" in str(err)
    host.update_settings(replace(host.settings, ai_enabled=False))
    err = await refused(hass, "look", base)
    assert err.translation_key == "ai_off"
    assert ollama.chats == []


async def test_only_admins_choose_a_model_and_only_an_allowed_one(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    ollama: FakeOllama,
    hass_admin_user: User,
    hass_read_only_user: User,
) -> None:
    await set_up(hass, config_entry)
    ollama.models["llava:13b"] = ("completion", "vision")
    look = {"camera": "front_door", "prompt": "Who?", "decision": ["visitor", "nobody"]}
    err = await refused(hass, "look", {**look, "model": "llava:13b"}, hass_read_only_user)
    assert err.translation_key == "model_needs_admin"
    err = await refused(hass, "look", {**look, "model": "llama3:70b"}, hass_admin_user)
    assert err.translation_key == "model_not_allowed"
    assert "llava:13b" in str(err)
    assert ollama.chats == []
    ollama.script(*[VISITOR] * 4)
    response = await act(hass, "look", {**look, "model": "llava:13b"}, hass_admin_user)
    assert (response["decision"], response["model"]) == ("visitor", "llava:13b")
    assert {c.model for c in ollama.chats} == {"llava:13b"}
    # Without a model named, a read-only user may look.
    ollama.script(*[VISITOR] * 4)
    response = await act(hass, "look", look, hass_read_only_user)
    assert response["model"] == "qwen2.5vl:3b"


async def test_investigate_runs_read_tools_and_returns_their_calls(
    hass: HomeAssistant, config_entry: MockConfigEntry, ollama: FakeOllama, sim: OpenNVRSimulator
) -> None:
    await set_up(hass, config_entry)
    sim.add_event(2, "car", plate="KA01AB1234")
    ollama.script(
        ToolCalls([("recent_events", {"camera_id": "driveway", "window_seconds": 3600})]),
        *[FromSchema({"decision": "car_seen", "reason": "a car on the driveway at dusk"})] * 4,
    )
    response = await act(
        hass,
        "investigate",
        {
            "goal": "Was a car on the driveway in the last hour?",
            "tools": ["recent_events"],
            "decision": ["car_seen", "nothing"],
            "camera": "driveway",
        },
    )
    assert (response["decision"], response["reason"]) == (
        "car_seen",
        "a car on the driveway at dusk",
    )
    (call,) = response["tool_calls"]
    assert (call["name"], call["status"]) == ("recent_events", "ok")
    assert "car" in call["result"]
    assert response["model"] == "qwen3:1.7b"
    assert ollama.chats[0].tool_names == ["recent_events"]
    err = await refused(
        hass,
        "investigate",
        {"goal": "Ask", "tools": ["ask_person"], "decision": ["yes", "no"]},
    )
    assert err.translation_key == "tool_not_allowed"


# ── run_workflow ────────────────────────────────────────────────────────────────────────


async def test_an_automation_starts_a_workflow_with_variables(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    host = await set_up(hass, config_entry, door=ALERT_LOG)
    lines = async_capture_events(hass, "logbook_entry")
    assert await async_setup_component(
        hass,
        automation.DOMAIN,
        {
            automation.DOMAIN: {
                "triggers": [{"trigger": "event", "event_type": "doorbell_pressed"}],
                "actions": [
                    {
                        "action": f"{DOMAIN}.run_workflow",
                        "data": {
                            "workflow": "door",
                            "variables": {
                                "description": "{{ trigger.event.data.who }} rang",
                                "severity": "high",
                            },
                        },
                    }
                ],
            }
        },
    )
    hass.bus.async_fire("doorbell_pressed", {"who": "the courier"})
    await hass.async_block_till_done()
    await until(lambda: host.engine.stats.started == 1, "the automation started a run")
    await host.engine.idle()
    await hass.async_block_till_done()
    (run,) = await host.engine.runs("door")
    assert (run["status"], run["test"]) == ("done", 0)
    trigger = json.loads(run["trigger"])
    assert (trigger["kind"], trigger["source"], trigger["camera_role"], trigger["payload"]) == (
        "alert",
        "action",
        "front_door",
        {"description": "the courier rang"},
    )
    assert [(e.data["name"], e.data["message"]) for e in lines] == [
        ("Door alert", "high person at front_door: the courier rang")
    ]


async def test_run_workflow_answers_with_the_run_or_why_there_is_none(
    hass: HomeAssistant, config_entry: MockConfigEntry, hass_admin_user: User
) -> None:
    host = await set_up(
        hass, config_entry, porch=BUTTON_LOG.format(state="off"), ask=ASK, broken="name: x\n"
    )
    replies = async_capture_events(hass, f"{DOMAIN}_reply")
    assert await act(hass, "run_workflow", {"workflow": "porch"}) == {
        "run_ids": [],
        "joined": False,
        "reason": "off",
    }
    assert await act(
        hass, "run_workflow", {"workflow": "ask", "message": "hello"}, hass_admin_user
    ) == {"run_ids": [], "joined": False, "reason": "no_match"}
    started = await act(
        hass,
        "run_workflow",
        {"workflow": "ask", "message": "Who opened the gate?"},
        hass_admin_user,
    )
    assert started["reason"] is None
    (run_id,) = started["run_ids"]
    await host.engine.idle()
    await hass.async_block_till_done()
    assert [(e.data["run_id"], e.data["message"]) for e in replies] == [
        (run_id, f"{hass_admin_user.name} asked: Who opened the gate?")
    ]
    # Called without wanting a response (as an automation does), it still starts the run.
    assert (
        await act(hass, "run_workflow", {"workflow": "ask", "message": "gate?"}, response=False)
        is None
    )
    await host.engine.idle()
    assert len(await host.engine.runs("ask")) == 2

    err = await refused(hass, "run_workflow", {"workflow": "nope"})
    assert err.translation_key == "unknown_workflow"
    assert str(err) == "There is no workflow nope. Workflows: ask, broken, porch"
    err = await refused(hass, "run_workflow", {"workflow": "broken"})
    assert err.translation_key == "workflow_not_loaded"
    assert "broken" in str(err)


async def test_a_workflow_that_sets_off_its_own_start_stops_at_the_depth_limit(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    """An automation answers the run's logbook line by starting the same workflow: the
    chain travels from the run's context to the automation's, so the fourth start is
    dropped at the depth limit (3) instead of looping for ever."""
    again = """\
contract: workflow.v1
name: Again
state: on
limits: { cooldown: 0s, per_hour: 100 }
when:
  button: {}
then:
  - log: "once more"
"""
    host = await set_up(hass, config_entry, again=again)
    assert await async_setup_component(
        hass,
        automation.DOMAIN,
        {
            automation.DOMAIN: {
                "mode": "queued",
                "triggers": [
                    {
                        "trigger": "event",
                        "event_type": "logbook_entry",
                        "event_data": {"name": "Again"},
                    }
                ],
                "actions": [{"action": f"{DOMAIN}.run_workflow", "data": {"workflow": "again"}}],
            }
        },
    )
    await act(hass, "run_workflow", {"workflow": "again"})
    for _ in range(10):
        await host.engine.idle()
        await hass.async_block_till_done()
    runs = await host.engine.runs("again")
    assert sorted(r["depth"] for r in runs) == [1, 2, 3]
    # The logbook line saying the depth limit held the fourth start back descends from
    # that start: the automation answers it once more, dropped alike and not said again.
    assert host.engine.stats.dropped == {"chain_depth": 2}


# ── import, export, validate, roll back ─────────────────────────────────────────────────


async def test_import_export_validate_round_trip(
    hass: HomeAssistant, config_entry: MockConfigEntry, hass_admin_user: User
) -> None:
    """A shared file that says ``state: on`` lands in Test, keeps its comments, and
    comes back out as written."""
    host = await set_up(hass, config_entry)
    lines = async_capture_events(hass, "logbook_entry")
    shared = "# Shared by a neighbour\n" + DOOR_LOOK.format(state="on  # live at once")
    preview = await act(hass, "import_workflow", {"yaml": shared, "dry_run": True})
    assert preview["written"] is False
    assert not (host.folder / "visitor_at_the_front_door.yaml").exists()

    imported = await act(hass, "import_workflow", {"yaml": shared}, hass_admin_user)
    assert {k: imported[k] for k in ("workflow_id", "file", "written", "replaced", "state")} == {
        "workflow_id": "visitor_at_the_front_door",
        "file": "visitor_at_the_front_door.yaml",
        "written": True,
        "replaced": False,
        "state": "test",
    }
    assert imported["name"] == "Visitor at the front door"
    assert imported["needs"] == ["vision_model"]
    assert imported["triggers"] == [{"alert": {"alert_type": "person", "cameras": ["front_door"]}}]
    assert imported["actuators"] == []
    assert imported["needs_admin_to_turn_on"] is False
    written = (host.folder / "visitor_at_the_front_door.yaml").read_text()
    assert written == shared.replace("state: on  # live at once", "state: test  # live at once")
    assert host.engine.workflow_status("visitor_at_the_front_door").state == "test"
    assert logbook(lines) == [
        (
            "Visitor at the front door",
            "imported from YAML into visitor_at_the_front_door.yaml, in Test",
            hass_admin_user.id,
        )
    ]

    exported = await act(hass, "export_workflow", {"workflow": "visitor_at_the_front_door"})
    assert exported == {
        "workflow_id": "visitor_at_the_front_door",
        "file": "visitor_at_the_front_door.yaml",
        "yaml": written,
    }
    for source in ({"yaml": exported["yaml"]}, {"file": "visitor_at_the_front_door.yaml"}):
        assert await act(hass, "validate_workflow", source) == {"valid": True, "problems": []}

    err = await refused(hass, "import_workflow", {"yaml": shared})
    assert err.translation_key == "file_exists"
    again = await act(hass, "import_workflow", {"yaml": shared, "overwrite": True})
    assert (again["written"], again["replaced"]) == (True, True)


async def test_a_template_imports_under_its_own_or_a_given_name(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    host = await set_up(hass, config_entry)
    imported = await act(hass, "import_workflow", {"template": "parcel_at_door"})
    assert (imported["file"], imported["needs"]) == (
        "parcel_at_door.yaml",
        ["detector", "vision_model"],
    )
    assert imported["triggers"] == [
        {
            "event": {
                "type": "detection.observed.v1",
                "cameras": ["front_door"],
                "match": {"label": ["package"]},
            }
        }
    ]
    # What moves things is said before anything is written.
    arm = await act(hass, "import_workflow", {"yaml": ARM, "dry_run": True})
    assert (arm["file"], arm["written"], arm["needs_admin_to_turn_on"]) == (
        "arm_at_night.yaml",
        False,
        True,
    )
    assert arm["actuators"] == [
        {"path": "$.then[0]", "action": "site_mode", "data": {"mode": "armed_away"}}
    ]
    copy = await act(
        hass, "import_workflow", {"template": "parcel_at_door", "file_name": "parcel_copy"}
    )
    assert copy["file"] == "parcel_copy.yaml"
    assert sorted(s.workflow_id for s in host.engine.workflows()) == [
        "parcel_at_door",
        "parcel_copy",
    ]


async def test_import_and_validate_say_what_is_wrong(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    host = await set_up(hass, config_entry)
    # A Look on a camera role this site has not mapped: refused with the line.
    unmapped = DOOR_LOOK.format(state="test").replace("front_door", "back_gate")
    checked = await act(hass, "validate_workflow", {"yaml": unmapped})
    assert checked["valid"] is False
    (problem,) = [p for p in checked["problems"] if p["severity"] == "error"]
    assert (problem["code"], problem["line"]) == ("WF-CAMERA-ROLE-UNMAPPED", 7)
    err = await refused(hass, "import_workflow", {"yaml": unmapped})
    assert err.translation_key == "workflow_invalid"
    assert "line 7: WF-CAMERA-ROLE-UNMAPPED" in str(err)
    err = await refused(hass, "import_workflow", {"yaml": "when: [unclosed"})
    assert err.translation_key == "workflow_invalid"
    for data, key in (
        ({"yaml": DOOR_LOOK, "template": "parcel_at_door"}, "yaml_or_template"),
        ({}, "yaml_or_template"),
        ({"template": "no_such_template"}, "unknown_template"),
        ({"template": "parcel_at_door", "file_name": "../../secrets.yaml"}, "bad_file_name"),
        ({"template": "parcel_at_door", "file_name": "door\n"}, "bad_file_name"),
    ):
        assert (await refused(hass, "import_workflow", data)).translation_key == key
    for data, key in (
        ({"file": "../configuration.yaml"}, "unknown_file"),
        ({"file": "missing.yaml"}, "unknown_file"),
        ({}, "yaml_or_file"),
    ):
        assert (await refused(hass, "validate_workflow", data)).translation_key == key
    assert (await refused(hass, "export_workflow", {"workflow": "nope"})).translation_key == (
        "unknown_workflow"
    )
    assert sorted(p.name for p in host.folder.glob("*.yaml")) == []


async def test_rollback_writes_a_recorded_version_back_in_the_current_state(
    hass: HomeAssistant, config_entry: MockConfigEntry, hass_admin_user: User
) -> None:
    host = await set_up(hass, config_entry, door=DOOR_LOOK.format(state="on"))
    v1 = host.engine.workflow_status("door").version
    edited = DOOR_LOOK.format(state="on").replace(
        "Is somebody waiting at the front door?", "Is a courier at the front door?"
    )
    await act(hass, "import_workflow", {"yaml": edited, "file_name": "door", "overwrite": True})
    v2 = host.engine.workflow_status("door").version
    assert v2 != v1
    await act(hass, "set_workflow_state", {"workflow": "door", "state": "on"})
    lines = async_capture_events(hass, "logbook_entry")

    err = await refused(hass, "rollback_workflow", {"workflow": "door", "version": "0badc0de"})
    assert err.translation_key == "unknown_version"
    assert str(err) == (
        f"No version 0badc0de of door was recorded. Versions: {', '.join(sorted((v1, v2)))}"
    )
    rolled = await act(
        hass, "rollback_workflow", {"workflow": "door", "version": v1}, hass_admin_user
    )
    assert rolled == {"workflow_id": "door", "file": "door.yaml", "version": v1, "state": "on"}
    text = (host.folder / "door.yaml").read_text()
    # The text the version was saved as, layout kept, in the state the workflow is in now.
    assert text == DOOR_LOOK.format(state="on")
    status = host.engine.workflow_status("door")
    assert (status.version, status.state) == (v1, "on")
    assert logbook(lines) == [
        ("Visitor at the front door", f"rolled back to version {v1}", hass_admin_user.id)
    ]


async def test_rollback_restores_the_authors_comments(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    """Issue 23, item 11: a version keeps the text it was saved as, comments and all; a
    file saved again with only its comments changed keeps the latest text."""
    first = "# Our front door: keep the doorbell quiet at night.\n" + DOOR_LOOK.format(
        state="test"
    ).replace("input: picture", "input: picture  # the doorbell's still")
    host = await set_up(hass, config_entry, door=first)
    v1 = host.engine.workflow_status("door").version
    commented = first.replace("# Our front door", "# Our FRONT door")
    await act(hass, "import_workflow", {"yaml": commented, "file_name": "door", "overwrite": True})
    assert host.engine.workflow_status("door").version == v1
    edited = commented.replace("Is somebody waiting", "Is a courier waiting")
    await act(hass, "import_workflow", {"yaml": edited, "file_name": "door", "overwrite": True})
    assert host.engine.workflow_status("door").version != v1

    await act(hass, "rollback_workflow", {"workflow": "door", "version": v1})
    assert (host.folder / "door.yaml").read_text() == commented
    assert host.engine.workflow_status("door").version == v1


def test_a_state_is_set_in_the_authors_text() -> None:
    """The rollback's (and import's) state change edits one line of the author's text: the
    ``state:`` line, or one added after ``name:`` when the file has none."""
    with_state = "# mine\n" + DOOR_LOOK.format(state="test  # while I try it")
    without = with_state.replace("state: test  # while I try it\n", "")
    for text in (with_state, without):
        workflow = validate_text(text).workflow
        assert workflow is not None
        edited, result = in_state(text, workflow, "on", validate_text)
        assert result == replace(workflow, state="on")
        assert edited.startswith("# mine\n")
        assert "state: 'on'" in edited
        assert (
            edited.replace("state: 'on'  # while I try it\n", "").replace("state: 'on'\n", "")
            == without
        )


async def test_rollback_to_a_version_recorded_without_its_text_rebuilds_it(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    """A version recorded before texts were kept (saved_text NULL) still rolls back, in the
    canonical form, and the file says why its comments are gone."""
    host = await set_up(hass, config_entry, door=DOOR_LOOK.format(state="test"))
    v1 = host.engine.workflow_status("door").version
    edited = DOOR_LOOK.format(state="test").replace("Is somebody", "Is a courier")
    await act(hass, "import_workflow", {"yaml": edited, "file_name": "door", "overwrite": True})
    await host.engine.store.submit(
        lambda c: c.execute("UPDATE workflow_versions SET saved_text=NULL WHERE version=?", (v1,))
    )
    assert await host.engine.version_text("door", v1) is None

    await act(hass, "rollback_workflow", {"workflow": "door", "version": v1})
    text = (host.folder / "door.yaml").read_text()
    assert text.startswith(f"# Rolled back to version {v1} on ")
    assert "text was not kept" in text
    assert "Is somebody waiting at the front door?" in text
    assert host.engine.workflow_status("door").version == v1


# ── state, marks, trials, reload ────────────────────────────────────────────────────────


async def test_changing_a_workflows_state_is_an_admins(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    hass_admin_user: User,
    hass_read_only_user: User,
) -> None:
    host = await set_up(hass, config_entry, arm=ARM, porch=BUTTON_LOG.format(state="test"))
    lines = async_capture_events(hass, "logbook_entry")
    household = await hass.auth.async_create_user("Household", group_ids=[GROUP_ID_USER])
    for user in (hass_read_only_user, household):
        for workflow, state in (("arm", "on"), ("arm", "off"), ("porch", "on")):
            with pytest.raises(Unauthorized) as caught:
                await act(hass, "set_workflow_state", {"workflow": workflow, "state": state}, user)
            assert caught.value.translation_key == "not_allowed"
            assert "set_workflow_state" in str(caught.value)
    assert host.engine.workflow_status("arm").state == "test"
    assert host.engine.workflow_status("porch").state == "test"
    await act(hass, "set_workflow_state", {"workflow": "arm", "state": "off"}, hass_admin_user)
    await act(hass, "set_workflow_state", {"workflow": "arm", "state": "on"}, hass_admin_user)
    assert host.engine.workflow_status("arm").state == "on"
    assert logbook(lines) == [
        ("Arm at night", "was switched from test to off", hass_admin_user.id),
        ("Arm at night", "was switched from off to on", hass_admin_user.id),
    ]
    # The state chosen is the engine's, kept across a restart of the entry.
    assert await hass.config_entries.async_reload(config_entry.entry_id)
    await hass.async_block_till_done()
    reloaded = config_entry.runtime_data.workflows
    assert reloaded is not None
    assert reloaded.engine.workflow_status("arm").state == "on"
    with pytest.raises(vol.Invalid, match="one of"):  # the schema refuses other states
        await act(hass, "set_workflow_state", {"workflow": "arm", "state": "maybe"})


async def test_marks_come_from_admins_and_approvers_and_return_the_accuracy(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    ollama: FakeOllama,
    hass_admin_user: User,
    hass_read_only_user: User,
) -> None:
    host = await set_up(hass, config_entry, door=DOOR_LOOK.format(state="test"))
    ollama.script(*[VISITOR] * 4)
    started = await act(hass, "run_workflow", {"workflow": "door"})
    (run_id,) = started["run_ids"]
    await host.engine.idle()
    lines = async_capture_events(hass, "logbook_entry")

    with pytest.raises(Unauthorized) as caught:
        await act(hass, "mark_run", {"run_id": run_id, "right": True}, hass_read_only_user)
    assert caught.value.translation_key == "not_allowed"
    marked = await act(hass, "mark_run", {"run_id": run_id, "right": True}, hass_admin_user)
    (key,) = marked["accuracy"]
    assert key.startswith("door/then.0@")
    assert marked == {
        "run_id": run_id,
        "workflow_id": "door",
        "right": True,
        "accuracy": {
            key: {"right": 1, "total": 1, "ratio": 1.0, "lower_bound": 0.2065, "trusted": False}
        },
    }
    # An approver who is not an admin may mark too; marking again replaces the mark.
    host.update_settings(replace(host.settings, approver_users=(hass_read_only_user.id,)))
    again = await act(hass, "mark_run", {"run_id": run_id, "right": False}, hass_read_only_user)
    assert again["accuracy"][key]["right"] == 0
    assert again["accuracy"][key]["total"] == 1
    assert logbook(lines) == [
        ("Visitor at the front door", f"run {run_id} was marked right", hass_admin_user.id),
        ("Visitor at the front door", f"run {run_id} was marked wrong", hass_read_only_user.id),
    ]
    err = await refused(hass, "mark_run", {"run_id": "no-such-run", "right": True})
    assert err.translation_key == "unknown_run"


async def test_get_runs_shows_every_step_of_the_latest_runs(
    hass: HomeAssistant, config_entry: MockConfigEntry, ollama: FakeOllama
) -> None:
    calls = async_mock_service(hass, "notify", PHONE)
    host = await set_up(hass, config_entry, door=DOOR_LOOK.format(state="on"))
    ollama.script(*[VISITOR] * 8)
    first = (await act(hass, "run_workflow", {"workflow": "door"}))["run_ids"][0]
    await host.engine.idle()
    second = (await act(hass, "run_workflow", {"workflow": "door"}))["run_ids"][0]
    await host.engine.idle()
    assert len(calls) == 2

    runs = (await act(hass, "get_runs", {"workflow": "door"}))["runs"]
    assert [r["run_id"] for r in runs] == [second, first]
    latest = runs[0]
    assert latest["status"] == "done"
    assert latest["test"] is False
    assert latest["trigger"]["kind"] == "alert"
    look, notify = latest["steps"]
    assert (look["kind"], look["outcome"], look["reason"]) == (
        "ai",
        "visitor",
        "a courier with a parcel",
    )
    assert notify["kind"] == "notify"
    assert notify["status"] == "done"
    assert notify["request"]["message"] == "Visitor: a courier with a parcel"
    assert [c["kind"] for c in latest["tool_calls"]] == ["tool", "llm"]

    one = await act(hass, "get_runs", {"workflow": "door", "run_id": first, "limit": 1})
    assert [r["run_id"] for r in one["runs"]] == [first]
    assert len((await act(hass, "get_runs", {"workflow": "door", "limit": 1}))["runs"]) == 1
    err = await refused(hass, "get_runs", {"workflow": "door", "run_id": "nope"})
    assert err.translation_key == "unknown_run"


async def test_try_replays_recent_matching_events_in_test_whatever_the_state(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    ollama: FakeOllama,
    sim: OpenNVRSimulator,
) -> None:
    """The door workflow is Off. Three people at the front door and a car on the
    driveway are stored: the three people are replayed, newest first, the model really
    looks, the notification is only what it would have sent."""
    host = await set_up(hass, config_entry, door=DOOR_LOOK.format(state="off"))
    stored = [sim.add_event(1, "person"), sim.add_event(2, "car"), sim.add_event(1, "person")]
    stored.append(sim.add_event(1, "person"))
    ollama.script(*[VISITOR] * 12)
    notified = async_mock_service(hass, "notify", PHONE)

    tried = await act(hass, "try_workflow", {"workflow": "door"})
    assert tried["workflow_id"] == "door"
    assert tried["filters"] == [{"camera_id": 1, "label": "person"}]
    assert [e["event"]["id"] for e in tried["events"]] == [4, 3, 1]
    first = tried["events"][0]
    assert (first["status"], first["decision"], first["reason"]) == (
        "done",
        "visitor",
        "a courier with a parcel",
    )
    assert first["event"] == {
        "id": 4,
        "camera_id": 1,
        "camera": "front_door",
        "label": "person",
        "time": stored[3]["started_at"],
    }
    assert [(s["path"], s["status"], s["outcome"]) for s in first["trace"]] == [
        ("then.0", "done", "visitor"),
        ("then.0.visitor.0", "would_have", "done"),
    ]
    assert first["trace"][1]["request"]["message"] == "Visitor: a courier with a parcel"
    assert [c["name"] for c in first["tool_calls"]] == ["picture", "qwen2.5vl:3b"]
    assert len(ollama.chats) == 3
    assert notified == []
    assert host.engine.workflow_status("door").state == "off"
    assert await host.engine.count_runs("door", 0) == 0  # trials are not runs of the workflow

    two = await act(hass, "try_workflow", {"workflow": "door", "count": 2})
    assert [e["event"]["id"] for e in two["events"]] == [4, 3]
    with pytest.raises(vol.Invalid, match="20"):
        await act(hass, "try_workflow", {"workflow": "door", "count": 21})


async def test_try_needs_the_workflows_cameras_mapped(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    await set_up(hass, config_entry, porch=BUTTON_LOG.format(state="off"))
    host = config_entry.runtime_data.workflows
    assert host is not None
    # A button-started workflow has no stored events to replay (issue 23, item 6).
    err = await refused(hass, "try_workflow", {"workflow": "porch"})
    assert err.translation_key == "try_trigger_not_replayed"
    door = DOOR_LOOK.format(state="off")
    await act(hass, "import_workflow", {"yaml": door, "file_name": "door"})
    host.update_settings(replace(host.settings, roles={"driveway": 2}))
    err = await refused(hass, "try_workflow", {"workflow": "door"})
    assert err.translation_key == "try_no_camera"
    assert "front_door" in str(err)


async def test_reload_picks_up_edits_and_reports_broken_files(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    host = await set_up(hass, config_entry, porch=BUTTON_LOG.format(state="test"))
    write_workflow(hass, "broken", "contract: workflow.v1\nname: Broken\n")
    summary = await act(hass, "reload", {})
    assert summary["loaded"] == ["porch"]
    assert list(summary["invalid"]) == ["broken"]
    assert summary["invalid"]["broken"][0]["code"].startswith("WF-")
    assert sorted(host.files) == ["broken", "porch"]
