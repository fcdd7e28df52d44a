"""The entities of each workflow (a device per workflow file, under the site device), in a
real Home Assistant with the OpenNVR simulator and the Ollama fake."""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from freezegun.api import FrozenDateTimeFactory
from homeassistant.auth.const import GROUP_ID_USER
from homeassistant.auth.models import User
from homeassistant.components.image import async_get_image
from homeassistant.const import ATTR_ENTITY_ID, STATE_OFF, STATE_ON, STATE_UNKNOWN
from homeassistant.core import Context, Event, HomeAssistant, callback
from homeassistant.exceptions import HomeAssistantError, Unauthorized
from homeassistant.helpers import device_registry as dr
from homeassistant.helpers import entity_registry as er
from homeassistant.util import dt as dt_util
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_fire_time_changed

from custom_components.opennvr_workflows.ai import prepare_image
from custom_components.opennvr_workflows.const import (
    CONF_AI_ENABLED,
    CONF_CAMERA_ROLES,
    CONF_OLLAMA_URL,
    CONF_SITE_LISTS,
    CONF_VISION_MODEL,
    DOMAIN,
    WORKFLOW_FOLDER,
)
from custom_components.opennvr_workflows.engine import Accuracy, wilson_interval
from custom_components.opennvr_workflows.engine.versions import step_hash
from custom_components.opennvr_workflows.entity import WRITE_COOLDOWN_S
from custom_components.opennvr_workflows.host import workflows as workflows_module
from custom_components.opennvr_workflows.host.folder.files import TEMPLATES_MARKER
from custom_components.opennvr_workflows.host.ids import (
    workflow_device_identifier,
    workflow_unique_id,
)
from custom_components.opennvr_workflows.host.runs.summary import workflow_accuracy
from custom_components.opennvr_workflows.host.workflows import WorkflowHost
from custom_components.opennvr_workflows.workflow import validate_text, walk_steps
from custom_components.opennvr_workflows.workflow.model import AIStep
from tests.fakes.ollama_server import FakeOllama, FromSchema
from tests.fakes.opennvr_sim import OpenNVRSimulator
from tests.nvr.conftest import until

from .conftest import WEBSOCKET_OPTIONS
from .workflow_files import DOOR_LOOK, write_workflow

PORCH_CHECK = """\
contract: workflow.v1
name: Porch check
state: test
limits: { cooldown: 0s, per_hour: 100 }
when:
  button: {}
then:
  - log: "Checked the porch"
"""

PORCH_LIGHT = """\
contract: workflow.v1
name: Porch light
state: test
when:
  button: { label: Light the porch }
if:
  - site_mode: [disarmed, armed_home, armed_away]
then:
  - home_assistant: { action: light.turn_on, target: { entity_id: light.porch } }
"""

#: The front door's workflow with its AI step taken out: a rule only.
DOOR_RULE_ONLY = """\
contract: workflow.v1
name: Visitor at the front door
state: test
limits: { cooldown: 0s, per_hour: 100 }
when:
  alert: { alert_type: person, cameras: [front_door] }
then:
  - notify: { who: role:household, title: Front door, message: "Somebody at the door" }
"""

GUEST_CHECK = """\
contract: workflow.v1
name: Guest check
state: test
when:
  button: {}
if:
  - list: { value: "{user}", in: guests }
then:
  - log: "{user} is expected"
"""

#: Every workflow's entities by platform and unique id key (the button only where the
#: trigger is a button), and those only a workflow with an AI step has.
KEYS = {
    "select": "state",
    "binary_sensor": "problem",
}
SENSOR_KEYS = ("last_outcome", "runs_today")
AI_KEYS = (("image", "evidence"), ("sensor", "accuracy"))


@pytest.fixture
def entry_options(ollama: FakeOllama) -> dict[str, Any]:
    return {
        **WEBSOCKET_OPTIONS,
        CONF_AI_ENABLED: True,
        CONF_OLLAMA_URL: ollama.url,
        CONF_VISION_MODEL: "qwen2.5vl:3b",
        CONF_CAMERA_ROLES: {"front_door": "1"},
        CONF_SITE_LISTS: {"guests": ["Ann"]},
    }


def only(hass: HomeAssistant, **files: str) -> None:
    """The workflow folder holds exactly these files (the templates are not copied)."""
    folder = Path(hass.config.path(WORKFLOW_FOLDER))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / TEMPLATES_MARKER).write_text("", encoding="utf-8")
    for name, text in files.items():
        write_workflow(hass, name, text)


async def set_up(hass: HomeAssistant, entry: MockConfigEntry) -> WorkflowHost:
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    host = entry.runtime_data.workflows
    assert host is not None
    return host


def entity_id_of(hass: HomeAssistant, platform: str, workflow_id: str, key: str) -> str | None:
    """The registered entity of a workflow's ``key`` on ``platform`` (None: none)."""
    site_id = hass.config_entries.async_entries(DOMAIN)[0].unique_id
    assert site_id is not None
    unique_id = workflow_unique_id(site_id, workflow_id, key)
    return er.async_get(hass).async_get_entity_id(platform, DOMAIN, unique_id)


def entity(hass: HomeAssistant, platform: str, workflow_id: str, key: str) -> str:
    found = entity_id_of(hass, platform, workflow_id, key)
    assert found is not None, f"no {platform} {key} for workflow {workflow_id}"
    return found


def registered(hass: HomeAssistant, platform: str, workflow_id: str, key: str) -> bool:
    return entity_id_of(hass, platform, workflow_id, key) is not None


def state_of(hass: HomeAssistant, platform: str, workflow_id: str, key: str) -> Any:
    state = hass.states.get(entity(hass, platform, workflow_id, key))
    assert state is not None
    return state


async def flush_writes(hass: HomeAssistant) -> None:
    """Let the spaced-out writes of per-run entities happen."""
    async_fire_time_changed(hass, dt_util.utcnow() + timedelta(seconds=WRITE_COOLDOWN_S * 2))
    await hass.async_block_till_done()


async def household_user(hass: HomeAssistant) -> User:
    """A user who may control entities but is not an admin."""
    return await hass.auth.async_create_user("Household", group_ids=[GROUP_ID_USER])


async def select(
    hass: HomeAssistant, workflow_id: str, option: str, context: Context | None = None
) -> None:
    await hass.services.async_call(
        "select",
        "select_option",
        {ATTR_ENTITY_ID: entity(hass, "select", workflow_id, "state"), "option": option},
        blocking=True,
        context=context,
    )


async def press(hass: HomeAssistant, workflow_id: str, context: Context | None = None) -> None:
    await hass.services.async_call(
        "button",
        "press",
        {ATTR_ENTITY_ID: entity(hass, "button", workflow_id, "run_now")},
        blocking=True,
        context=context,
    )


async def test_each_workflow_file_gets_a_device_under_the_site(
    hass: HomeAssistant, config_entry: MockConfigEntry, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_workflow(hass, "door", DOOR_LOOK.format(state="test"))
    write_workflow(hass, "porch", PORCH_CHECK)
    # A file's name is read with the file, in the executor: never again on the event loop
    # for each of its entities (issue 23, item 20: 7 templates waiting for roles held the
    # loop for every options save's reload while their YAML was parsed per entity).
    loop_thread = threading.get_ident()
    read = workflows_module.load_yaml

    def off_the_loop(text: str) -> Any:
        assert threading.get_ident() != loop_thread, "YAML parsed on the event loop"
        return read(text)

    monkeypatch.setattr(workflows_module, "load_yaml", off_the_loop)
    host = await set_up(hass, config_entry)
    devices = dr.async_get(hass)
    site_id = config_entry.runtime_data.info.site_id
    site_device = config_entry.runtime_data.site_device_id
    # The templates were copied too: every file has its device, valid at this site or not.
    assert len(host.files) > 2
    assert any(f.workflow is None for f in host.files.values()), "a template this site cannot run"
    waiting_with_ai = 0
    for workflow_id, loaded in host.files.items():
        device = devices.async_get_device_by_identifier(
            workflow_device_identifier(site_id, workflow_id), config_entry.entry_id
        )
        assert device is not None, workflow_id
        assert device.via_device_id == site_device
        if loaded.workflow is not None:
            assert device.name == loaded.workflow.name
        else:
            # Not runnable here (a camera role or skill missing), yet named as its file
            # names it, not by its file name.
            assert device.name == loaded.declared_name, workflow_id
            assert device.name != workflow_id
        for platform, key in [*KEYS.items(), *(("sensor", k) for k in SENSOR_KEYS)]:
            found = er.async_get(hass).async_get(entity(hass, platform, workflow_id, key))
            assert found is not None
            assert found.device_id == device.id, (workflow_id, key)
        # The picture and the accuracy only for a workflow with an AI step, as its file
        # describes it (also one this site cannot run yet): a rule-only one has neither.
        described = validate_text(loaded.text or "").workflow
        with_ai = described is not None and any(
            isinstance(step, AIStep) for _, step in walk_steps(described)
        )
        waiting_with_ai += with_ai and loaded.workflow is None
        for platform, key in AI_KEYS:
            assert registered(hass, platform, workflow_id, key) == with_ai, (workflow_id, key)
        problem = state_of(hass, "binary_sensor", workflow_id, "problem")
        select_state = state_of(hass, "select", workflow_id, "state")
        if loaded.workflow is None:
            # A file this site cannot run: its problem sensor says why, the rest waits.
            assert problem.state == STATE_ON
            assert loaded.path.name in problem.attributes["reason"]
            assert select_state.state == "unavailable"
        else:
            assert problem.state == STATE_OFF
            assert select_state.state == host.engine.workflow_status(workflow_id).state
    assert waiting_with_ai, "a template with an AI step that this site cannot run yet"
    # Only the button-triggered workflow has a "Run now" button.
    registry = er.async_get(hass)
    buttons = [
        e.unique_id
        for e in er.async_entries_for_config_entry(registry, config_entry.entry_id)
        if e.domain == "button"
    ]
    assert buttons == [workflow_unique_id(site_id, "porch", "run_now")]
    # The effects find the select by its "state" key for logbook lines.
    assert registry.async_get_entity_id(
        "select", DOMAIN, workflow_unique_id(site_id, "door", "state")
    ) == entity(hass, "select", "door", "state")


async def test_the_state_chosen_survives_a_restart(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    only(hass, door=DOOR_LOOK.format(state="test"))
    host = await set_up(hass, config_entry)
    assert state_of(hass, "select", "door", "state").state == "test"
    await select(hass, "door", "on")
    assert host.engine.workflow_status("door").state == "on"
    assert state_of(hass, "select", "door", "state").state == "on"

    assert await hass.config_entries.async_unload(config_entry.entry_id)
    await hass.async_block_till_done()
    host = await set_up(hass, config_entry)
    assert host.engine.workflow_status("door").state == "on"
    assert state_of(hass, "select", "door", "state").state == "on"
    await select(hass, "door", "off")
    assert host.engine.workflow_status("door").state == "off"


async def test_only_an_admin_changes_a_workflows_state(
    hass: HomeAssistant, config_entry: MockConfigEntry, hass_admin_user: User
) -> None:
    only(hass, light=PORCH_LIGHT, door=DOOR_LOOK.format(state="test"))
    host = await set_up(hass, config_entry)
    household = Context(user_id=(await household_user(hass)).id)

    for workflow, option in (("light", "on"), ("light", "off"), ("door", "on")):
        with pytest.raises(Unauthorized) as refused:
            await select(hass, workflow, option, household)
        assert refused.value.translation_key == "not_allowed"
    assert host.engine.workflow_status("light").state == "test"
    assert host.engine.workflow_status("door").state == "test"
    assert state_of(hass, "select", "light", "state").state == "test"

    await select(hass, "light", "on", Context(user_id=hass_admin_user.id))
    assert host.engine.workflow_status("light").state == "on"
    assert state_of(hass, "select", "light", "state").state == "on"


async def test_a_look_run_shows_its_outcome_runs_today_and_the_picture(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    sim: OpenNVRSimulator,
    ollama: FakeOllama,
) -> None:
    only(hass, door=DOOR_LOOK.format(state="test"))
    host = await set_up(hass, config_entry)
    outcome = state_of(hass, "sensor", "door", "last_outcome")
    assert outcome.state == STATE_UNKNOWN
    assert state_of(hass, "sensor", "door", "runs_today").state == "0"
    assert state_of(hass, "image", "door", "evidence").state == STATE_UNKNOWN
    ollama.script(
        *[FromSchema({"decision": "visitor", "reason": "a courier", "confidence": 0.9})] * 4
    )

    await until(lambda: config_entry.runtime_data.hub.connected("websocket"), "connected")
    await sim.emit_alert(1, "person")
    await until(lambda: host.engine.stats.ended == 1, "the run ended")
    await host.engine.idle()
    await flush_writes(hass)

    (run,) = await host.engine.runs("door")
    outcome = state_of(hass, "sensor", "door", "last_outcome")
    assert outcome.state == "visitor"
    assert outcome.attributes["reason"] == "a courier"
    look = next(s for s in (await host.engine.run_detail(run["id"]))["steps"] if s["kind"] == "ai")
    assert outcome.attributes["confidence"] == look["confidence"]
    assert outcome.attributes["run_id"] == run["id"]
    assert outcome.attributes["test"] is True
    assert outcome.attributes["status"] == "done"
    assert state_of(hass, "sensor", "door", "runs_today").state == "1"

    # The image is the frame the model was shown with the question (the camera's JPEG, which
    # the AI step scales and re-encodes for the model the same way every time).
    image_state = state_of(hass, "image", "door", "evidence")
    assert image_state.state != STATE_UNKNOWN
    assert image_state.attributes["run_id"] == run["id"]
    image = await async_get_image(hass, image_state.entity_id)
    assert image.content_type == "image/jpeg"
    assert image.content[:2] == b"\xff\xd8"
    shown = [i for chat in ollama.chats for i in chat.images]
    assert shown
    assert prepare_image(image.content) == shown[-1]

    # After a restart the last outcome and today's runs are read back from the database.
    assert await hass.config_entries.async_unload(config_entry.entry_id)
    await hass.async_block_till_done()
    await set_up(hass, config_entry)
    assert state_of(hass, "sensor", "door", "last_outcome").state == "visitor"
    assert state_of(hass, "sensor", "door", "runs_today").state == "1"


async def test_the_last_outcome_shows_a_decided_run_that_waits(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    sim: OpenNVRSimulator,
    ollama: FakeOllama,
) -> None:
    """A parcel run decides, then waits half an hour to remind: its decision shows while
    it waits, not only when it ends."""
    waits = DOOR_LOOK.format(state="test").replace(
        "      visitor:\n", "      visitor:\n        - wait: 30m\n"
    )
    assert "wait: 30m" in waits
    only(hass, door=waits)
    host = await set_up(hass, config_entry)
    ollama.script(
        *[FromSchema({"decision": "visitor", "reason": "a courier", "confidence": 0.9})] * 4
    )
    await until(lambda: config_entry.runtime_data.hub.connected("websocket"), "connected")
    await sim.emit_alert(1, "person")
    await until(lambda: host.engine.stats.started == 1, "the run started")
    await host.engine.idle()
    await flush_writes(hass)
    (run,) = host.engine.active_runs()
    assert run.status == "waiting"
    outcome = state_of(hass, "sensor", "door", "last_outcome")
    assert outcome.state == "visitor"
    assert outcome.attributes["status"] == "waiting"
    assert outcome.attributes["run_id"] == run.run_id
    # Read back the same way after a restart.
    assert await hass.config_entries.async_unload(config_entry.entry_id)
    await hass.async_block_till_done()
    await set_up(hass, config_entry)
    assert state_of(hass, "sensor", "door", "last_outcome").attributes["status"] == "waiting"


async def test_accuracy_follows_the_marks(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    sim: OpenNVRSimulator,
    ollama: FakeOllama,
) -> None:
    only(hass, door=DOOR_LOOK.format(state="test"))
    host = await set_up(hass, config_entry)
    ollama.script(*[FromSchema({"decision": "nobody", "reason": "empty porch"})] * 4)
    await until(lambda: config_entry.runtime_data.hub.connected("websocket"), "connected")
    await sim.emit_alert(1, "person")
    await until(lambda: host.engine.stats.ended == 1, "the run ended")
    await host.engine.idle()
    accuracy = state_of(hass, "sensor", "door", "accuracy")
    assert accuracy.state == STATE_UNKNOWN
    assert accuracy.attributes["marked"] == 0

    (run,) = await host.engine.runs("door")
    await host.engine.mark_run(run["id"], True, "ann")
    await hass.async_block_till_done()
    accuracy = state_of(hass, "sensor", "door", "accuracy")
    lower, _ = wilson_interval(1, 1)
    assert float(accuracy.state) == pytest.approx(round(lower * 100, 1))
    # A lower bound beside "1 of 1 right" reads as a contradiction unless it says it is
    # one (issue 23, item 13): "Accuracy (at least) 21 %", with the counts beside it.
    assert accuracy.attributes["friendly_name"].endswith("Accuracy (at least)")
    assert accuracy.attributes["marked"] == 1
    assert accuracy.attributes["right"] == 1
    assert accuracy.attributes["trusted"] is False
    assert accuracy.attributes["step"].startswith("door/then.0@")

    # Marking the run again replaces the mark.
    await host.engine.mark_run(run["id"], False, "ann")
    await hass.async_block_till_done()
    accuracy = state_of(hass, "sensor", "door", "accuracy")
    assert float(accuracy.state) == 0.0
    assert accuracy.attributes["marked"] == 1
    assert accuracy.attributes["right"] == 0


async def test_run_now_starts_a_run_as_the_user_who_pressed(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    hass_admin_user: User,
    freezer: FrozenDateTimeFactory,
) -> None:
    only(hass, porch=PORCH_CHECK, light=PORCH_LIGHT)
    host = await set_up(hass, config_entry)
    # The trigger's label names the button; without one it is "Run now".
    light_button = state_of(hass, "button", "light", "run_now")
    assert light_button.attributes["friendly_name"] == "Porch light Light the porch"
    assert state_of(hass, "button", "porch", "run_now").attributes["friendly_name"] == (
        "Porch check Run now"
    )

    await press(hass, "porch", Context(user_id=hass_admin_user.id))
    await host.engine.idle()
    await flush_writes(hass)
    (run,) = await host.engine.runs("porch")
    assert hass_admin_user.id in run["trigger"]
    assert run["status"] == "done"
    assert state_of(hass, "sensor", "porch", "runs_today").state == "1"
    assert state_of(hass, "sensor", "porch", "last_outcome").state == "done"

    # An Off workflow does not start; the press says so.
    await select(hass, "porch", "off")
    with pytest.raises(HomeAssistantError) as refused:
        await press(hass, "porch")
    assert refused.value.translation_key == "workflow_not_started"
    assert len(await host.engine.runs("porch")) == 1

    # A new day (local midnight) starts the count again.
    midnight = dt_util.start_of_local_day() + timedelta(days=1)
    freezer.move_to(midnight)
    async_fire_time_changed(hass, midnight)
    await hass.async_block_till_done()
    assert state_of(hass, "sensor", "porch", "runs_today").state == "0"


async def test_the_problem_sensor_shows_needs_attention_until_a_person_sets_the_state(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    only(hass, guests=GUEST_CHECK)
    host = await set_up(hass, config_entry)
    assert state_of(hass, "binary_sensor", "guests", "problem").state == STATE_OFF

    # The site list the condition reads is gone at run time (it was there at import):
    # the engine parks the workflow rather than read it as empty.
    site = replace(host.settings.site, lists={})
    host.update_settings(replace(host.settings, site=site))
    await press(hass, "guests")
    await host.engine.idle()
    await hass.async_block_till_done()
    assert host.engine.workflow_status("guests").state == "needs_attention"
    problem = state_of(hass, "binary_sensor", "guests", "problem")
    assert problem.state == STATE_ON
    assert problem.attributes["device_class"] == "problem"
    assert "guests" in problem.attributes["reason"]
    # The select shows no option while parked; choosing one is how a person clears it.
    assert state_of(hass, "select", "guests", "state").state == STATE_UNKNOWN
    await flush_writes(hass)
    assert state_of(hass, "sensor", "guests", "last_outcome").state == "failed"

    await select(hass, "guests", "test")
    assert host.engine.workflow_status("guests").state == "test"
    problem = state_of(hass, "binary_sensor", "guests", "problem")
    assert problem.state == STATE_OFF
    assert problem.attributes["reason"] is None


async def test_entities_follow_the_folder_on_reload(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    only(hass, porch=PORCH_CHECK)
    host = await set_up(hass, config_entry)
    registry = er.async_get(hass)
    devices = dr.async_get(hass)
    site_id = config_entry.runtime_data.info.site_id

    # A new file: its device and entities appear with the reload.
    write_workflow(hass, "door", DOOR_LOOK.format(state="test"))
    await host.async_reload()
    await hass.async_block_till_done()
    door_device = devices.async_get_device_by_identifier(
        workflow_device_identifier(site_id, "door"), config_entry.entry_id
    )
    assert door_device is not None
    assert door_device.name == "Visitor at the front door"
    door_entities = er.async_entries_for_device(registry, door_device.id)
    assert len(door_entities) == len(KEYS) + len(SENSOR_KEYS) + len(AI_KEYS)
    assert state_of(hass, "select", "door", "state").state == "test"
    assert not any(registered(hass, platform, "porch", key) for platform, key in AI_KEYS)

    # A renamed workflow renames its device; a trigger that is no longer a button loses
    # its "Run now" button; a typo leaves the entities there, unavailable, with the reason.
    write_workflow(hass, "door", DOOR_LOOK.format(state="test").replace("Visitor at", "Caller at"))
    porch = write_workflow(
        hass,
        "porch",
        PORCH_CHECK.replace("button: {}", "camera_offline: { cameras: [front_door], for: 5m }"),
    )
    await host.async_reload()
    await hass.async_block_till_done()
    assert host.files["porch"].workflow is not None, host.files["porch"].report.problems
    assert devices.async_get(door_device.id).name == "Caller at the front door"
    assert (
        registry.async_get_entity_id(
            "button", DOMAIN, workflow_unique_id(site_id, "porch", "run_now")
        )
        is None
    )
    write_workflow(hass, "door", "contract: workflow.v1\nname: [broken\n")
    await host.async_reload()
    await hass.async_block_till_done()
    assert state_of(hass, "select", "door", "state").state == "unavailable"
    assert state_of(hass, "binary_sensor", "door", "problem").state == STATE_ON
    assert devices.async_get(door_device.id).name == "Caller at the front door"

    # Its AI step edited away: its picture and accuracy go, and come back with the step.
    write_workflow(hass, "door", DOOR_RULE_ONLY)
    await host.async_reload()
    await hass.async_block_till_done()
    assert host.files["door"].workflow is not None, host.files["door"].report.problems
    assert not any(registered(hass, platform, "door", key) for platform, key in AI_KEYS)
    assert state_of(hass, "select", "door", "state").state == "test"
    write_workflow(hass, "door", DOOR_LOOK.format(state="test"))
    await host.async_reload()
    await hass.async_block_till_done()
    assert all(registered(hass, platform, "door", key) for platform, key in AI_KEYS)

    # A file removed: its device and entities go.
    select_id = entity(hass, "select", "door", "state")
    Path(hass.config.path(WORKFLOW_FOLDER, "door.yaml")).unlink()
    await host.async_reload()
    await hass.async_block_till_done()
    assert devices.async_get(door_device.id) is None
    assert er.async_entries_for_device(registry, door_device.id) == []
    assert hass.states.get(select_id) is None
    assert porch.exists()
    assert state_of(hass, "select", "porch", "state").state == "test"

    # And back again.
    write_workflow(hass, "door", DOOR_LOOK.format(state="test"))
    await host.async_reload()
    await hass.async_block_till_done()
    assert state_of(hass, "select", "door", "state").state == "test"


async def test_an_ai_step_edited_away_while_stopped_leaves_no_stale_entities(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    """The picture and accuracy registered before a restart go when the workflow comes back
    without its AI step: not left behind as entities the integration no longer provides."""
    only(hass, door=DOOR_LOOK.format(state="test"))
    await set_up(hass, config_entry)
    picture = entity(hass, "image", "door", "evidence")
    accuracy = entity(hass, "sensor", "door", "accuracy")
    assert await hass.config_entries.async_unload(config_entry.entry_id)
    await hass.async_block_till_done()
    registry = er.async_get(hass)
    assert registry.async_get(picture) is not None, "kept while the entry is unloaded"
    write_workflow(hass, "door", DOOR_RULE_ONLY)
    await set_up(hass, config_entry)
    assert registry.async_get(picture) is None
    assert registry.async_get(accuracy) is None
    assert hass.states.get(picture) is None
    assert state_of(hass, "select", "door", "state").state == "test"
    assert registered(hass, "sensor", "door", "runs_today")


async def test_a_burst_of_runs_writes_little_and_only_its_own_workflow(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    only(hass, porch=PORCH_CHECK, guests=GUEST_CHECK, door=DOOR_LOOK.format(state="test"))
    host = await set_up(hass, config_entry)
    await host.engine.idle()
    await flush_writes(hass)
    written: list[str] = []

    def _written(event: Event) -> None:
        written.append(event.data[ATTR_ENTITY_ID])

    hass.bus.async_listen("state_changed", _written)
    hass.bus.async_listen("state_reported", _written, event_filter=callback(lambda _: True))
    runs = 20
    for _ in range(runs):
        # One at a time per camera: each run ends before the next press.
        assert host.engine.run_now("porch")
        await host.engine.idle()
    await hass.async_block_till_done()
    await flush_writes(hass)
    await flush_writes(hass)

    runs_today = entity(hass, "sensor", "porch", "runs_today")
    last_outcome = entity(hass, "sensor", "porch", "last_outcome")
    assert state_of(hass, "sensor", "porch", "runs_today").state == str(runs)
    assert state_of(hass, "sensor", "porch", "last_outcome").state == "done"
    # A few writes for twenty runs, and none for what the runs did not change.
    assert 1 <= written.count(runs_today) <= 3
    assert 1 <= written.count(last_outcome) <= 3
    others = {
        entity(hass, "select", "porch", "state"),
        entity(hass, "binary_sensor", "porch", "problem"),
    }
    assert not others & set(written)
    # A rule-only workflow has no picture and no accuracy to write.
    assert not any(registered(hass, platform, "porch", key) for platform, key in AI_KEYS)
    devices = dr.async_get(hass)
    site_id = config_entry.runtime_data.info.site_id
    for workflow_id in ("guests", "door"):
        device = devices.async_get_device_by_identifier(
            workflow_device_identifier(site_id, workflow_id), config_entry.entry_id
        )
        assert device is not None
        untouched = {
            e.entity_id for e in er.async_entries_for_device(er.async_get(hass), device.id)
        }
        expected = len(KEYS) + len(SENSOR_KEYS)
        expected += 1 if workflow_id == "guests" else len(AI_KEYS)  # its button; its AI's
        assert len(untouched) == expected
        assert not untouched & set(written)


TWO_LOOKS = """\
contract: workflow.v1
name: Two looks
state: test
needs: [vision_model]
when:
  alert: { alert_type: person, cameras: [front_door] }
then:
  - ai:
      mode: look
      prompt: Is somebody at the door?
      input: picture
      decision: [somebody, nobody]
      somebody:
        - ai:
            mode: look
            prompt: Is it a courier?
            input: picture
            decision: [courier, other]
            courier: [ log: "Courier" ]
            other: [ log: "Someone else" ]
            unsure: [ log: "Not sure" ]
      nobody: [ log: "Nobody" ]
      unsure: [ log: "Not sure" ]
"""


def test_accuracy_is_the_weakest_current_ai_step() -> None:
    workflow = validate_text(TWO_LOOKS).workflow
    assert workflow is not None
    first, second = [s for _, s in walk_steps(workflow) if isinstance(s, AIStep)]
    records = {
        f"two/then.0@{step_hash(first)}": Accuracy(18, 20),
        f"two/then.0.somebody.0@{step_hash(second)}": Accuracy(3, 4),
        # A step of an earlier version (edited since): its record no longer counts.
        "two/then.0@0123456789ab": Accuracy(0, 30),
    }
    weakest = workflow_accuracy(workflow, records)
    assert weakest is not None
    assert weakest.step == f"two/then.0.somebody.0@{step_hash(second)}"
    assert weakest.lower_bound == wilson_interval(3, 4)[0]
    assert (weakest.right, weakest.marked, weakest.trusted) == (3, 4, False)
    assert workflow_accuracy(workflow, {"two/then.0@0123456789ab": Accuracy(0, 30)}) is None
