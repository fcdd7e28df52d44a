"""The shipped blueprints, imported into a real Home Assistant and driven by the simulator,
the Ollama fake and companion-app phones: each is instantiated with inputs, its trigger
fired, and what it called is checked. Actions outside the integration (a notify group, the
logbook) are mocked; the integration's own actions (``look``, ``run_workflow``) are real.

Also: every input of every blueprint has a selector and a description; what must be
chosen (cameras, phones, triggers, the workflow) has no default, so the editor asks for it
and an automation saved without it does not load, and everything else has one; each
blueprint names the Home Assistant it needs and where it comes from, and the README links
each one for import by URL. Phones are reached by the notify action their companion app
registered, whatever the device is called."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from awesomeversion import AwesomeVersion
from homeassistant.components import person
from homeassistant.components.automation.config import AUTOMATION_BLUEPRINT_SCHEMA
from homeassistant.components.blueprint.errors import MissingInput
from homeassistant.components.blueprint.models import Blueprint, BlueprintInputs
from homeassistant.const import __version__ as HA_VERSION
from homeassistant.core import Context, HomeAssistant, ServiceCall
from homeassistant.helpers import device_registry as dr
from homeassistant.helpers import entity_registry as er
from homeassistant.setup import async_setup_component
from homeassistant.util import dt as dt_util
from homeassistant.util.yaml import load_yaml
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_fire_time_changed,
    async_mock_service,
)
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator

from custom_components.opennvr_workflows.const import DOMAIN
from custom_components.opennvr_workflows.host.workflows import WorkflowHost
from tests.fakes.ollama_server import FakeOllama, FromSchema, HttpError, Slow
from tests.fakes.opennvr_sim import OpenNVRSimulator
from tests.fakes.push_gateway import Push, PushGateway
from tests.ha.phones import EVENT_NOTIFICATION_ACTION, Phone, Phones, phones_for
from tests.nvr.conftest import until

from .conftest import ai_options
from .test_entities import entity_id, wait_for
from .test_services import ALERT_LOG, ASK, set_up

pytest_plugins = ["tests.ha.phones"]

ROOT = Path(__file__).parents[2]
BLUEPRINTS = ROOT / "blueprints" / "automation" / "opennvr_workflows"
ALERT_TO_PHONE = "camera_alert_notification.yaml"
AI_CHECK = "ai_check_on_alert.yaml"
RUN_WORKFLOW = "run_workflow_from_trigger.yaml"
MORNING_REPORT = "morning_report.yaml"
SHIPPED = {ALERT_TO_PHONE, AI_CHECK, RUN_WORKFLOW, MORNING_REPORT}
#: The inputs a user must choose: without them the automation could never fire or do
#: anything, so they have no default.
CHOSEN = {
    ALERT_TO_PHONE: {"events", "notify_devices"},
    AI_CHECK: {"cameras", "notify_devices"},
    RUN_WORKFLOW: {"triggers", "workflow"},
    MORNING_REPORT: {"cameras", "notify_action"},
}
WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")

#: What Approve starts in the AI check tests.
APPROVED = """\
contract: workflow.v1
name: Approved at the door
state: on
limits: { cooldown: 0s, per_hour: 100 }
when:
  button: {}
then:
  - log: "Approved at the door"
"""

WORTH_A_LOOK = FromSchema({"decision": "worth_a_look", "reason": "a courier with a parcel"})


@pytest.fixture
def entry_options(ollama: FakeOllama) -> dict[str, Any]:
    return ai_options(ollama)


@pytest.fixture
async def phones(
    hass: HomeAssistant, push_gateway: PushGateway, aiohttp_client: ClientSessionGenerator
) -> Phones:
    """Phones on a Home Assistant whose HTTP app takes views after it started serving, as
    Home Assistant's own server allows (the integration is set up after the phones)."""
    assert await async_setup_component(hass, "http", {})
    hass.http.app._router.freeze = lambda: None  # what HomeAssistantHTTP.start does
    return await phones_for(hass, push_gateway, aiohttp_client)


async def use_blueprint(hass: HomeAssistant, *automations: tuple[str, str, dict[str, Any]]) -> None:
    """Copy the shipped blueprints into the config folder and set up one automation per
    ``(alias, file, inputs)``, as a user importing them would (with none: only copy)."""
    target = Path(hass.config.path("blueprints", "automation", DOMAIN))

    def copy() -> None:
        target.mkdir(parents=True, exist_ok=True)
        for name in SHIPPED:
            shutil.copy(BLUEPRINTS / name, target)

    await hass.async_add_executor_job(copy)
    if not automations:
        return
    assert await async_setup_component(
        hass,
        "automation",
        {
            "automation": [
                {
                    "id": alias.lower().replace(" ", "_"),
                    "alias": alias,
                    "use_blueprint": {"path": f"{DOMAIN}/{name}", "input": inputs},
                }
                for alias, name, inputs in automations
            ]
        },
    )
    await hass.async_block_till_done()
    for alias, _, _ in automations:
        state = hass.states.get(f"automation.{alias.lower().replace(' ', '_')}")
        assert state is not None, f"{alias} did not set up"
        assert state.state == "on", f"{alias} is {state.state}"


def idle(hass: HomeAssistant, automation: str) -> bool:
    """Whether ``automation`` has no run going (a single-mode one takes the next trigger)."""
    state = hass.states.get(automation)
    return state is not None and state.attributes.get("current") == 0


# ── what every blueprint declares ───────────────────────────────────────────────────────


def inputs_of(blueprint: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every input, those inside sections included."""
    for key, value in blueprint["input"].items():
        if "input" in value:
            yield from value["input"].items()
        else:
            yield key, value


def raw_url(name: str) -> str:
    manifest = json.loads((ROOT / "custom_components" / DOMAIN / "manifest.json").read_text())
    repository = manifest["documentation"].removeprefix("https://github.com/")
    return (
        f"https://raw.githubusercontent.com/{repository}/main/blueprints/automation/{DOMAIN}/{name}"
    )


def load_blueprint(name: str) -> Blueprint:
    data = load_yaml(BLUEPRINTS / name)
    assert isinstance(data, dict)
    return Blueprint(data, expected_domain="automation", schema=AUTOMATION_BLUEPRINT_SCHEMA)


def test_every_blueprint_is_valid_and_only_what_must_be_chosen_has_no_default() -> None:
    assert {p.name for p in BLUEPRINTS.glob("*.yaml")} == SHIPPED, "each blueprint is tested here"
    assert set(CHOSEN) == SHIPPED
    for name in sorted(SHIPPED):
        blueprint = load_blueprint(name)
        assert blueprint.validate() is None, f"{name} needs a newer Home Assistant"
        meta = blueprint.data["blueprint"]
        min_version = meta["homeassistant"]["min_version"]
        assert AwesomeVersion(min_version) <= AwesomeVersion(HA_VERSION)
        assert meta["source_url"] == raw_url(name).replace(
            "raw.githubusercontent.com", "github.com"
        ).replace("/main/", "/blob/main/", 1)
        assert meta["description"].strip()
        without_default = set()
        for key, spec in inputs_of(meta):
            where = f"{name}: input {key}"
            assert spec.get("description", "").strip(), f"{where} has no description"
            assert "selector" in spec, f"{where} has no selector"
            if "default" not in spec:
                without_default.add(key)
        assert without_default == CHOSEN[name], name


def test_every_choice_of_a_select_reads_as_words() -> None:
    """Issue 23, item 19: the form shows "Line crossing", not ``line_crossing``: a select
    whose values are keys gives each a label (its value stays the key the trigger sees)."""
    for name in sorted(SHIPPED):
        meta = load_blueprint(name).data["blueprint"]
        for key, spec in inputs_of(meta):
            options = spec["selector"].get("select", {}).get("options")
            if not options or "custom_value" in spec["selector"]["select"]:
                continue
            where = f"{name}: input {key}"
            assert all(isinstance(o, dict) for o in options), f"{where}: options without labels"
            for option in options:
                assert option["label"] != option["value"], f"{where}: {option}"
                assert "_" not in option["label"], f"{where}: {option}"
    kinds = dict(inputs_of(load_blueprint("ai_check_on_alert.yaml").data["blueprint"]))
    labels = {o["value"]: o["label"] for o in kinds["alert_kinds"]["selector"]["select"]["options"]}
    assert labels["line_crossing"] == "Line crossing"
    assert labels["fire_smoke"] == "Fire or smoke"


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_an_automation_without_what_must_be_chosen_does_not_validate(name: str) -> None:
    """Home Assistant refuses the automation and names each missing input; given them
    (and nothing else), it is complete."""
    blueprint = load_blueprint(name)
    config = {"use_blueprint": {"path": f"{DOMAIN}/{name}", "input": {}}}
    with pytest.raises(MissingInput) as refused:
        BlueprintInputs(blueprint, config).validate()
    assert f"Missing input {', '.join(sorted(CHOSEN[name]))}" in str(refused.value)
    chosen = {key: ["x"] for key in CHOSEN[name]}
    BlueprintInputs(blueprint, {"use_blueprint": {"path": name, "input": chosen}}).validate()


async def test_an_automation_saved_without_its_cameras_is_not_turned_on(
    hass: HomeAssistant,
) -> None:
    """What the editor would save if it let the cameras be skipped: the automation does not
    load, so it never sits there looking armed."""
    await use_blueprint(hass)
    assert await async_setup_component(
        hass,
        "automation",
        {
            "automation": [
                {
                    "id": "no_cameras",
                    "alias": "No cameras",
                    "use_blueprint": {
                        "path": f"{DOMAIN}/{ALERT_TO_PHONE}",
                        "input": {"notify_devices": ["a_phone"]},
                    },
                }
            ]
        },
    )
    await hass.async_block_till_done()
    state = hass.states.get("automation.no_cameras")
    assert state is None or state.state == "unavailable"


def test_the_readme_links_each_blueprint_for_import_by_url() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for name in SHIPPED:
        link = "https://my.home-assistant.io/redirect/blueprint_import/?blueprint_url=" + quote(
            raw_url(name), safe=""
        )
        assert link in readme, f"the README has no import link for {name}"


# ── camera alert to phone (no AI) ───────────────────────────────────────────────────────


async def test_camera_alert_blueprint_notifies_the_phones(
    hass: HomeAssistant, config_entry: MockConfigEntry, sim: OpenNVRSimulator, phones: Phones
) -> None:
    await set_up(hass, config_entry)
    pixel, iphone = await phones_of(phones)
    events = entity_id(hass, sim, "event", "1_events")
    camera = entity_id(hass, sim, "camera", "1_camera")
    inputs = {
        "events": [events, entity_id(hass, sim, "event", "2_events")],
        "alert_types": ["person", "parcel"],
        "notify_devices": [pixel.device_id, iphone.device_id],
        "cooldown": 0,
    }
    await use_blueprint(hass, ("Front door to phone", ALERT_TO_PHONE, inputs))
    await wait_for(hass, lambda: config_entry.runtime_data.hub.connected("websocket"))

    await sim.emit_alert(1, "vehicle")  # not one of the chosen types
    await sim.emit_alert(1, "parcel", severity="low", title="Parcel at the door")
    sent = await pixel.wait_for(lambda p: p["title"] == "Parcel at the door")
    assert sent["message"] == "Parcel on Front Door (low)"
    tag = f"opennvr-{camera}"
    picture = f"/api/camera_proxy/{camera}"
    assert {key: sent["data"].get(key) for key in ("image", "tag", "group", "ai_derived")} == {
        "image": picture,
        "tag": tag,
        "group": "opennvr",
        "ai_derived": False,
    }
    # The iPhone gets the picture as iOS takes it.
    ios = await iphone.wait_for(lambda p: p["title"] == "Parcel at the door")
    assert ios["data"]["attachment"] == {"url": picture, "content-type": "jpeg"}
    assert "image" not in ios["data"]

    # One run at a time (a run's cooldown is its last step): the next alert once it ended.
    await wait_for(hass, lambda: idle(hass, "automation.front_door_to_phone"))
    await sim.emit_alert(1, "person", severity="high")
    await pixel.wait_for(lambda p: p["message"] == "Person on Front Door (high)")
    # The second camera: its own picture and its own notification (tag).
    await wait_for(hass, lambda: idle(hass, "automation.front_door_to_phone"))
    await sim.emit_alert(2, "person", severity="high")
    driveway = await pixel.wait_for(lambda p: p["message"] == "Person on Driveway (high)")
    assert driveway["data"]["tag"] == f"opennvr-{entity_id(hass, sim, 'camera', '2_camera')}"
    assert not [p for p in pushes(pixel) if p["message"].startswith("Vehicle")]


async def test_a_phone_is_reached_by_the_action_its_app_registered_whatever_its_name(
    hass: HomeAssistant, config_entry: MockConfigEntry, sim: OpenNVRSimulator, phones: Phones
) -> None:
    """The companion app's notify action is named after the name the app registered with
    (``mobile_app_`` and that name, made a slug as a whole): a name with accents and
    brackets, a device the user renamed in Home Assistant, and an app that renamed itself
    afterwards all still get the notification."""
    await set_up(hass, config_entry)
    alice = await phones.user("Alice")
    tablet = await phones.register(alice, "Küche Tablet (2)")
    assert hass.services.has_service("notify", "mobile_app_kuche_tablet_2")
    dr.async_get(hass).async_update_device(tablet.device_id, name_by_user="Kitchen")
    inputs = {
        "events": [entity_id(hass, sim, "event", "1_events")],
        "alert_types": [],
        "notify_devices": [tablet.device_id],
        "cooldown": 0,
    }
    await use_blueprint(hass, ("To the tablet", ALERT_TO_PHONE, inputs))
    await wait_for(hass, lambda: config_entry.runtime_data.hub.connected("websocket"))

    await sim.emit_alert(1, "parcel", title="First parcel")
    await tablet.wait_for(lambda p: p["title"] == "First parcel")
    await wait_for(hass, lambda: idle(hass, "automation.to_the_tablet"))

    # The app registers under a new name: mobile_app renames its action; the device keeps
    # the name the user gave it.
    await tablet.webhook(
        {
            "type": "update_registration",
            "data": {
                "app_version": tablet.registration["app_version"],
                "device_name": "Kitchen Wall",
                "manufacturer": tablet.registration["manufacturer"],
                "model": tablet.registration["model"],
            },
        }
    )
    await wait_for(hass, lambda: hass.services.has_service("notify", "mobile_app_kitchen_wall"))
    assert not hass.services.has_service("notify", "mobile_app_kuche_tablet_2")
    device = dr.async_get(hass).async_get(tablet.device_id)
    assert device is not None
    assert device.name_by_user == "Kitchen"
    await sim.emit_alert(1, "parcel", title="Second parcel")
    await tablet.wait_for(lambda p: p["title"] == "Second parcel")


# ── AI check on an alert ────────────────────────────────────────────────────────────────


async def phones_of(phones: Phones) -> tuple[Phone, Phone]:
    """Alice's Android phone and Bob's iPhone, Alice known as a person."""
    alice, bob = await phones.user("Alice"), await phones.user("Bob")
    await person.async_create_person(phones.hass, "Alice", user_id=alice.id)
    return (
        await phones.register(alice, "Alice's Pixel"),
        await phones.register(bob, "Bob's iPhone", os="ios"),
    )


def ai_check_inputs(sim_events: list[str], *phones: Phone, **more: Any) -> dict[str, Any]:
    return {
        "cameras": sim_events,
        "alert_kinds": ["person", "parcel"],
        "notify_devices": [phone.device_id for phone in phones],
        "cooldown": 0,
        **more,
    }


def tap_listeners(hass: HomeAssistant) -> int:
    """How many listen for a notification button's tap (the run's wait adds its own)."""
    return hass.bus.async_listeners().get(EVENT_NOTIFICATION_ACTION, 0)


async def waiting_for_a_tap(hass: HomeAssistant, before: int, buttons: int) -> None:
    """Until the automation run waits for its buttons: a real tap comes seconds after the
    notification, by when the run is waiting; a test must not tap sooner. (Polled without
    waiting for Home Assistant to be idle: the waiting run keeps it busy.)"""
    await until(lambda: tap_listeners(hass) == before + buttons, "the run waits for a tap")


def pushes(phone: Phone) -> list[Push]:
    return phone.received()


def actions_of(push: Push) -> list[str]:
    return [a["title"] for a in push["data"].get("actions", [])]


async def test_ai_check_notifies_at_once_then_updates_with_the_verdict_and_approve_runs_a_workflow(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    sim: OpenNVRSimulator,
    ollama: FakeOllama,
    phones: Phones,
) -> None:
    host = await set_up(hass, config_entry, door_approved=APPROVED)
    pixel, iphone = await phones_of(phones)
    logbook = async_mock_service(hass, "logbook", "log")
    events = entity_id(hass, sim, "event", "1_events")
    camera = entity_id(hass, sim, "camera", "1_camera")
    inputs = ai_check_inputs(
        [events], pixel, iphone, approve_workflow="door_approved", silence_minutes=15, debug=True
    )
    await use_blueprint(hass, ("Door check", AI_CHECK, inputs))
    await wait_for(hass, lambda: config_entry.runtime_data.hub.connected("websocket"))
    ollama.script(Slow(seconds=1.0, then=WORTH_A_LOOK))
    listening = tap_listeners(hass)

    await sim.emit_alert(1, "vehicle")  # not a chosen kind: nothing
    await sim.emit_alert(1, "parcel", severity="low", title="Parcel at the door")

    # 1. At once, before the model has answered: the picture and a Silence button.
    quick = await pixel.wait_for(lambda p: "checking" in p["message"])
    assert [p["message"] for p in pushes(pixel)] == [quick["message"]], "no verdict yet"
    assert (quick["title"], quick["message"]) == (
        "Parcel at the door",
        "Parcel on Front Door, checking the picture…",
    )
    tag = f"opennvr-{camera}"
    assert quick["data"]["tag"] == tag
    assert quick["data"]["image"] == f"/api/camera_proxy/{camera}"
    device = er.async_get(hass).async_get(events)
    assert device is not None
    assert quick["data"]["clickAction"] == f"/config/devices/device/{device.device_id}"
    assert actions_of(quick) == ["Silence 15 min"]
    ios_quick = await iphone.wait_for(lambda p: "checking" in p["message"])
    assert ios_quick["data"]["attachment"] == {
        "url": f"/api/camera_proxy/{camera}",
        "content-type": "jpeg",
    }
    assert ios_quick["data"]["url"] == quick["data"]["clickAction"]
    assert ios_quick["data"]["entity_id"] == camera
    assert ios_quick["data"]["push"] == {"interruption-level": "time-sensitive"}
    assert "image" not in ios_quick["data"]
    assert "clickAction" not in ios_quick["data"]

    # 2. The model looked at the front door with the question and the alert.
    verdict = await pixel.wait_for(lambda p: "Worth a look" in p["message"])
    (chat,) = ollama.chats
    assert "Parcel at the door (parcel)" in chat.system
    assert "Shadows, animals, rain and passing lights are not." in chat.system
    assert len(chat.images) == 1
    assert ("GET", "/api/v1/cameras/1/snapshot") in sim.requests

    # 3. The same notification (tag) updated quietly, with Approve and Deny.
    assert verdict["message"] == (
        "Parcel on Front Door. Worth a look (AI): a courier with a parcel"
    )
    assert verdict["data"]["ai_derived"] is True, "the verdict says it is the model's"
    assert verdict["data"]["tag"] == tag
    assert verdict["data"]["alert_once"] is True
    assert actions_of(verdict) == ["Approve", "Deny", "Silence 15 min"]
    ios_verdict = await iphone.wait_for(lambda p: "Worth a look" in p["message"])
    assert ios_verdict["data"]["tag"] == tag
    assert ios_verdict["data"]["push"] == {"interruption-level": "passive"}
    assert len(pushes(pixel)) == len(pushes(iphone)) == 2, "an update, not a new one"

    # 4. Alice taps Approve: the workflow starts with what the check knew and who tapped.
    approve = verdict["data"]["actions"][0]["action"]
    await waiting_for_a_tap(hass, listening, 3)
    await pixel.tap(approve, tag=tag)
    await until(lambda: host.engine.stats.started == 1, "Approve started the workflow")
    await host.engine.idle()
    (run,) = await host.engine.runs("door_approved")
    assert run["status"] == "done"
    payload = json.loads(run["trigger"])["payload"]
    assert payload == {
        "camera_entity": camera,
        "camera_name": "Front Door",
        "alert_type": "parcel",
        "decision": "worth_a_look",
        "reason": "a courier with a parcel",
        "answered_by": "Alice",
        "answered_by_user": pixel.user.id,
    }
    done = await iphone.wait_for(lambda p: "Approved" in p["message"])
    assert done["message"] == (
        "Parcel on Front Door. Worth a look (AI): a courier with a parcel "
        "Approved by Alice, door_approved started."
    )
    assert done["data"]["tag"] == tag
    assert "actions" not in done["data"], "the buttons are taken off"

    # Debug: each step in the logbook.
    await wait_for(hass, lambda: len(logbook) == 3)
    lines = [call.data["message"] for call in logbook]
    assert lines[0] == "Parcel on Front Door: Parcel at the door (low); asking the model"
    assert lines[1].startswith("Parcel on Front Door: Worth a look (AI): a courier with a parcel")
    assert "qwen2.5vl:3b" in lines[1]
    assert lines[2] == "Parcel on Front Door: answer approve by Alice"
    assert {call.data["entity_id"] for call in logbook} == {events}
    # A tap on the old buttons now does nothing: the run is over.
    await pixel.tap(approve, tag=tag)
    await host.engine.idle()
    assert len(await host.engine.runs("door_approved")) == 1


async def test_ai_check_silence_turns_the_automation_off_for_a_while_and_cooldown_holds(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    sim: OpenNVRSimulator,
    ollama: FakeOllama,
    phones: Phones,
) -> None:
    await set_up(hass, config_entry)
    pixel, _ = await phones_of(phones)
    cameras = [entity_id(hass, sim, "event", f"{n}_events") for n in (1, 2)]
    inputs = ai_check_inputs(cameras, pixel, silence_minutes=5, cooldown=3600)
    await use_blueprint(hass, ("Yard check", AI_CHECK, inputs))
    await wait_for(hass, lambda: config_entry.runtime_data.hub.connected("websocket"))
    ollama.script(WORTH_A_LOOK)
    listening = tap_listeners(hass)

    await sim.emit_alert(1, "person")
    verdict = await pixel.wait_for(lambda p: "Worth a look" in p["message"])
    # No workflow to approve with: Silence is the only button.
    assert actions_of(verdict) == ["Silence 5 min"]
    await waiting_for_a_tap(hass, listening, 3)
    # The tap as the app's webhook fires it, without waiting for Home Assistant to be idle
    # (the silenced run sleeps on).
    hass.bus.async_fire(
        EVENT_NOTIFICATION_ACTION,
        {"action": verdict["data"]["actions"][0]["action"], "tag": verdict["data"]["tag"]},
        context=Context(user_id=pixel.user.id),
    )
    silenced = await pixel.wait_for(lambda p: "Silenced" in p["message"])
    assert silenced["message"].endswith("Silenced for 5 min by Alice.")
    assert "actions" not in silenced["data"]
    await until(lambda: hass.states.is_state("automation.yard_check", "off"), "silenced")

    async_fire_time_changed(hass, dt_util.utcnow() + timedelta(minutes=5, seconds=1))
    await wait_for(hass, lambda: hass.states.is_state("automation.yard_check", "on"))

    # Back on, but within the cooldown of the first notification: the driveway stays quiet.
    sent = len(pushes(pixel))
    await sim.emit_alert(2, "person")
    await wait_for(
        hass, lambda: hass.states.get(cameras[1]).attributes.get("event_type") == "person"
    )
    await hass.async_block_till_done()
    assert len(pushes(pixel)) == sent
    assert len(ollama.chats) == 1


async def test_ai_check_clears_on_a_false_alarm_and_says_when_the_model_could_not_decide(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    sim: OpenNVRSimulator,
    ollama: FakeOllama,
    phones: Phones,
) -> None:
    await set_up(hass, config_entry)
    pixel, _ = await phones_of(phones)
    door = entity_id(hass, sim, "event", "1_events")
    garden = entity_id(hass, sim, "event", "3_events")
    inputs = ai_check_inputs([door], pixel, approve_workflow="door_approved")
    # A decision list the action refuses ("unsure" is never listed): the look fails.
    broken = ai_check_inputs([garden], pixel, options=["someone", "unsure"])
    await use_blueprint(hass, ("Door check", AI_CHECK, inputs), ("Garden", AI_CHECK, broken))
    await wait_for(hass, lambda: config_entry.runtime_data.hub.connected("websocket"))
    ollama.script(FromSchema({"decision": "false_alarm", "reason": "a moth on the lens"}))

    await sim.emit_alert(1, "person", title="Person at the door")
    cleared = await pixel.wait_for(lambda p: p["message"] == "clear_notification")
    assert cleared["data"] == {"tag": f"opennvr-{entity_id(hass, sim, 'camera', '1_camera')}"}
    assert len(pushes(pixel)) == 2

    # The model's runner crashes: the action answers unsure, and the update says why.
    ollama.script(*[HttpError(500)] * 8)
    await sim.emit_alert(1, "parcel", title="Parcel at the door")
    unsure = await pixel.wait_for(lambda p: "Unsure" in p["message"], within=30)
    assert unsure["message"].startswith(
        "Parcel on Front Door. Unsure (AI): the model did not answer"
    ), unsure["message"]
    assert actions_of(unsure) == ["Silence 30 min"], "unsure is not a decision to approve"

    await sim.emit_alert(3, "person", title="Person in the garden")
    failed = await pixel.wait_for(lambda p: "Not checked" in p["message"])
    assert failed["message"] == (
        "Person on Back Garden. Not checked: the AI check failed, so have a look yourself"
    )
    assert actions_of(failed) == ["Silence 30 min"]


async def test_ai_check_deny_and_an_unanswered_question_take_the_buttons_off(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    sim: OpenNVRSimulator,
    ollama: FakeOllama,
    phones: Phones,
) -> None:
    host = await set_up(hass, config_entry, door_approved=APPROVED)
    pixel, _ = await phones_of(phones)
    events = entity_id(hass, sim, "event", "1_events")
    inputs = ai_check_inputs([events], pixel, approve_workflow="door_approved", answer_minutes=10)
    await use_blueprint(hass, ("Door check", AI_CHECK, inputs))
    await wait_for(hass, lambda: config_entry.runtime_data.hub.connected("websocket"))
    ollama.script(WORTH_A_LOOK, WORTH_A_LOOK)
    listening = tap_listeners(hass)

    await sim.emit_alert(1, "person", title="Person at the door")
    verdict = await pixel.wait_for(lambda p: "Worth a look" in p["message"])
    await waiting_for_a_tap(hass, listening, 3)
    await pixel.tap(verdict["data"]["actions"][1]["action"], tag=verdict["data"]["tag"])
    denied = await pixel.wait_for(lambda p: "Denied" in p["message"])
    assert denied["message"].endswith("Denied by Alice.")  # no Deny workflow named
    assert "actions" not in denied["data"]
    assert await host.engine.runs("door_approved") == [], "Deny starts nothing here"

    # Nobody answers the next one: after the answer window its buttons are taken off.
    await sim.emit_alert(1, "parcel", title="Parcel at the door")
    await pixel.wait_for(lambda p: p["title"] == "Parcel at the door" and "Worth" in p["message"])
    await waiting_for_a_tap(hass, listening, 3)
    async_fire_time_changed(hass, dt_util.utcnow() + timedelta(minutes=10, seconds=1))
    late = await pixel.wait_for(lambda p: p["message"].endswith("No answer."))
    assert late["message"] == (
        "Parcel on Front Door. Worth a look (AI): a courier with a parcel No answer."
    )
    assert "actions" not in late["data"]
    assert await host.engine.runs("door_approved") == []


# ── run a workflow from any trigger ─────────────────────────────────────────────────────


async def test_any_trigger_runs_a_workflow_with_variables_or_a_message(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    host: WorkflowHost = await set_up(hass, config_entry, door=ALERT_LOG, ask=ASK)
    replies: list[Any] = []
    hass.bus.async_listen(f"{DOMAIN}_reply", replies.append)
    doorbell = {
        "triggers": [{"trigger": "event", "event_type": "doorbell_pressed"}],
        "conditions": [
            {"condition": "template", "value_template": "{{ trigger.event.data.who != 'nobody' }}"}
        ],
        "workflow": "door",
        "variables": {"description": "{{ trigger.event.data.who }} rang", "severity": "high"},
    }
    question = {
        "triggers": [{"trigger": "event", "event_type": "gate_question"}],
        "workflow": "ask",
        "message": "{{ trigger.event.data.text }}",
    }
    await use_blueprint(
        hass, ("Doorbell", RUN_WORKFLOW, doorbell), ("Gate question", RUN_WORKFLOW, question)
    )

    hass.bus.async_fire("doorbell_pressed", {"who": "nobody"})  # the condition holds it
    hass.bus.async_fire("doorbell_pressed", {"who": "the courier"})
    await hass.async_block_till_done()
    await until(lambda: host.engine.stats.started == 1, "the doorbell started a run")
    await host.engine.idle()
    (run,) = await host.engine.runs("door")
    trigger = json.loads(run["trigger"])
    assert (trigger["source"], trigger["camera_role"], trigger["payload"]) == (
        "action",
        "front_door",
        {"description": "the courier rang"},
    )
    assert run["status"] == "done"

    hass.bus.async_fire("gate_question", {"text": "Who opened the gate?"})
    await hass.async_block_till_done()
    await until(lambda: host.engine.stats.started == 2, "the question started a run")
    await host.engine.idle()
    await hass.async_block_till_done()
    assert [e.data["message"] for e in replies] == [" asked: Who opened the gate?"]


# ── morning report ──────────────────────────────────────────────────────────────────────


async def test_morning_report_looks_at_each_camera_and_sends_one_summary(
    hass: HomeAssistant, config_entry: MockConfigEntry, sim: OpenNVRSimulator, ollama: FakeOllama
) -> None:
    await set_up(hass, config_entry)
    family = async_mock_service(hass, "notify", "family")
    elsewhere = async_mock_service(hass, "notify", "other_days")
    door = entity_id(hass, sim, "camera", "1_camera")
    garden = entity_id(hass, sim, "camera", "3_camera")
    at = dt_util.now().replace(hour=7, minute=30, second=0, microsecond=0) + timedelta(days=1)
    # The day condition reads the clock, which firing the time trigger does not move.
    today = WEEKDAYS[dt_util.now().weekday()]

    def report(action: str, days: list[str]) -> dict[str, Any]:
        return {
            "at": "07:30:00",
            "weekdays": days,
            "cameras": [door, garden, "camera.not_opennvr"],
            "notify_action": action,
        }

    await use_blueprint(
        hass,
        ("Morning", MORNING_REPORT, report("notify.family", [today])),
        (
            "Other days",
            MORNING_REPORT,
            report("notify.other_days", [d for d in WEEKDAYS if d != today]),
        ),
    )
    ollama.script(
        FromSchema({"decision": "all_clear", "reason": "an empty porch in daylight"}),
        FromSchema({"decision": "needs_attention", "reason": "the gate is open"}),
    )

    async_fire_time_changed(hass, at)
    await wait_for(hass, lambda: len(family) == 1, within=15)
    call: ServiceCall = family[0]
    assert call.data["title"] == "Morning report"
    assert call.data["message"].splitlines() == [
        "Front Door: all clear, an empty porch in daylight",
        "Back Garden: needs attention, the gate is open",
        "camera.not_opennvr: could not be looked at",
    ]
    assert call.data["data"] == {
        "tag": "opennvr-morning-report",
        "group": "opennvr",
        "ai_derived": True,
    }
    assert len(ollama.chats) == 2
    assert all("In one sentence" in chat.system for chat in ollama.chats)
    assert elsewhere == [], "not one of its days"
    # Off, so their time triggers stop waiting for tomorrow.
    await hass.services.async_call("automation", "turn_off", {"entity_id": "all"}, blocking=True)
