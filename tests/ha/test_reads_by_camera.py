"""What the reading doors show a person who may see only some cameras, in a real Home
Assistant with the simulator (1 Front Door, 2 Driveway, 3 Back Garden) and the Ollama fake.

Each attack is made as Dee, who may see the driveway camera and nothing else: she asks for
what touches the front door, and the answer holds nothing of it (or no picture is served);
beside it, the same request by someone who may see that camera gets it, so every test
fails both ways."""

from __future__ import annotations

from http import HTTPStatus
from pathlib import Path
from typing import Any

import pytest
from homeassistant.core import Context, HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import intent
from pytest_homeassistant_custom_component.common import CLIENT_ID, MockConfigEntry, MockUser
from pytest_homeassistant_custom_component.typing import (
    ClientSessionGenerator,
    WebSocketGenerator,
)

from custom_components.opennvr_workflows.const import (
    CONF_CAMERA_ROLES,
    CONF_SITE_LISTS,
    DOMAIN,
    WORKFLOW_FOLDER,
)
from custom_components.opennvr_workflows.host.approvals.links import picture_link
from custom_components.opennvr_workflows.host.folder.files import TEMPLATES_MARKER
from custom_components.opennvr_workflows.host.permissions import Caller
from custom_components.opennvr_workflows.host.workflows import WorkflowHost
from custom_components.opennvr_workflows.intents import INTENT_LOOK
from custom_components.opennvr_workflows.panel.evidence import evidence_link
from tests.fakes.ollama_server import FakeOllama, FromSchema, ToolCalls
from tests.fakes.opennvr_sim import OpenNVRSimulator
from tests.ha.assist_support import call, camera_entity

from .conftest import ai_options
from .test_panel_api import Client
from .workflow_files import DOOR_LOOK, write_workflow

#: Names no camera: visible to Dee; its runs are each the camera its trigger names.
ANY_LOOK = """\
contract: workflow.v1
name: Who is there
state: test
needs: [vision_model]
limits: { cooldown: 0s, per_hour: 100 }
when:
  alert: { alert_type: person }
then:
  - ai:
      mode: look
      prompt: Is somebody there?
      input: picture
      decision: [visitor, nobody]
      visitor: [ log: "visitor: {reason}" ]
      nobody: [ log: "nobody: {reason}" ]
      unsure: [ log: "unsure: {reason}" ]
"""

#: A button starts it (no camera in its trigger); its Look is on the front door.
PEEK = """\
contract: workflow.v1
name: Porch peek
state: test
needs: [vision_model]
limits: { cooldown: 0s, per_hour: 100 }
when:
  button: {}
then:
  - ai:
      mode: look
      prompt: Is the porch clear?
      input: picture
      camera: front_door
      decision: [clear, busy]
      clear: [ log: clear ]
      busy: [ log: busy ]
      unsure: [ log: unsure ]
"""

#: An alert on any camera, whose Look is always on the front door.
DOOR_ON_ANY_ALERT = PEEK.replace("name: Porch peek", "name: Door on any alert").replace(
    "  button: {}", "  alert: { alert_type: person }"
)

FRONT_REASON = "a courier in a yellow coat at the front door"
DRIVE_REASON = "a red car parked on the driveway"


@pytest.fixture
def entry_options(ollama: FakeOllama) -> dict[str, Any]:
    return {
        **ai_options(ollama),
        CONF_CAMERA_ROLES: {"front_door": "1", "driveway": "2"},
        CONF_SITE_LISTS: {"household_plates": ["AB123CD"], "couriers": ["DHL", "UPS"]},
    }


@pytest.fixture
async def host(hass: HomeAssistant, config_entry: MockConfigEntry) -> WorkflowHost:
    """The site with its workflows (no templates): ``any``, ``peek``, ``door``, ``yard``."""
    folder = Path(hass.config.path(WORKFLOW_FOLDER))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / TEMPLATES_MARKER).write_text("", encoding="utf-8")
    for name, text in (
        ("any", ANY_LOOK),
        ("peek", PEEK),
        ("door", DOOR_LOOK.format(state="test")),
        ("yard", DOOR_ON_ANY_ALERT),
    ):
        write_workflow(hass, name, text)
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    workflows = config_entry.runtime_data.workflows
    assert workflows is not None
    return workflows


def person(
    hass: HomeAssistant, entry: MockConfigEntry, name: str, cameras: tuple[int, ...]
) -> MockUser:
    """A household member who may see exactly ``cameras`` (their camera entities)."""
    user = MockUser(name=name).add_to_hass(hass)
    user.mock_policy(
        {"entities": {"entity_ids": {camera_entity(hass, entry, c): True for c in cameras}}}
    )
    return user


@pytest.fixture
def dee(hass: HomeAssistant, host: WorkflowHost, config_entry: MockConfigEntry) -> MockUser:
    """May see the driveway, nothing else."""
    return person(hass, config_entry, "Dee", (2,))


@pytest.fixture
def fay(hass: HomeAssistant, host: WorkflowHost, config_entry: MockConfigEntry) -> MockUser:
    """May see the front door and the driveway (not an admin)."""
    return person(hass, config_entry, "Fay", (1, 2))


async def token(hass: HomeAssistant, user: MockUser) -> str:
    refresh = await hass.auth.async_create_refresh_token(user, CLIENT_ID)
    return hass.auth.async_create_access_token(refresh)


async def act(
    hass: HomeAssistant, service: str, data: dict[str, Any], user: MockUser | None
) -> Any:
    return await hass.services.async_call(
        DOMAIN,
        service,
        data,
        blocking=True,
        return_response=True,
        context=Context(user_id=user.id if user is not None else None),
    )


async def refused(
    hass: HomeAssistant, service: str, data: dict[str, Any], user: MockUser | None
) -> HomeAssistantError:
    with pytest.raises(HomeAssistantError) as caught:
        await act(hass, service, data, user)
    return caught.value


async def start(host: WorkflowHost, ollama: FakeOllama, workflow: str, **variables: str) -> str:
    """A run of ``workflow`` (its Look answering with the camera's own reason); its id."""
    on_front = workflow in ("peek", "yard") or variables.get("camera") == "front_door"
    reason = FRONT_REASON if on_front else DRIVE_REASON
    decision = "busy" if workflow in ("peek", "yard") else "visitor"
    ollama.default = FromSchema({"decision": decision, "reason": reason, "confidence": 0.9})
    (run_id,) = host.engine.start_now(workflow, variables).run_ids
    await host.engine.idle()
    return run_id


async def two_runs(host: WorkflowHost, ollama: FakeOllama) -> tuple[str, str]:
    """A run of ``any`` on the driveway, then a newer one on the front door."""
    drive = await start(host, ollama, "any", camera="driveway", camera_id="2")
    front = await start(host, ollama, "any", camera="front_door", camera_id="1")
    return drive, front


def same_but_names(first: str, second: str, name_1: str, name_2: str) -> bool:
    return first.replace(name_1, "X") == second.replace(name_2, "X")


# ── (5) look, investigate and the voice Look ─────────────────────────────────────────────


async def test_look_refuses_a_hidden_camera_exactly_like_an_unknown_one(
    hass: HomeAssistant,
    host: WorkflowHost,
    ollama: FakeOllama,
    config_entry: MockConfigEntry,
    dee: MockUser,
    fay: MockUser,
) -> None:
    ask = {"prompt": "Who is there?", "decision": ["visitor", "nobody"]}
    for camera in ("front_door", camera_entity(hass, config_entry, 1)):
        hidden = await refused(hass, "look", {**ask, "camera": camera}, dee)
        unknown = await refused(hass, "look", {**ask, "camera": "attic"}, dee)
        assert hidden.translation_key == unknown.translation_key == "unknown_camera"
        assert same_but_names(str(hidden), str(unknown), camera, "attic")
        assert "front_door" not in str(unknown)
        assert str(unknown).endswith("Roles: driveway")
    assert ollama.chats == [], "no picture of the front door went to the model"

    ollama.default = FromSchema({"decision": "visitor", "reason": FRONT_REASON})
    seen = await act(hass, "look", {**ask, "camera": "front_door"}, fay)
    assert seen["reason"] == FRONT_REASON
    assert len(ollama.chats[-1].images) == 1
    drive = await act(hass, "look", {**ask, "camera": "driveway"}, dee)
    assert drive["decision"] == "visitor"


async def test_investigate_reads_only_the_callers_cameras(
    hass: HomeAssistant,
    host: WorkflowHost,
    ollama: FakeOllama,
    sim: OpenNVRSimulator,
    dee: MockUser,
) -> None:
    hidden = sim.add_event(1, "car", plate="HIDE111")
    sim.add_event(2, "car", plate="SEEN222")
    goal = {"goal": "Which cars came?", "decision": ["car", "none"]}

    async def investigate(user: MockUser | None, *calls: tuple[str, Any]) -> Any:
        ollama.script(ToolCalls(list(calls)))
        ollama.default = FromSchema({"decision": "car", "reason": "a car came"})
        tools = sorted({name for name, _ in calls})
        return await act(hass, "investigate", {**goal, "tools": tools}, user)

    anywhere = ("recent_events", {"camera_id": "__any__", "window_seconds": 3600})
    response = await investigate(dee, anywhere)
    (row,) = response["tool_calls"]
    assert "SEEN222" in row["result"]
    assert "HIDE111" not in row["result"]
    # The tool's camera argument offers the driveway only; naming the front door fails.
    (offered,) = [t for t in ollama.chats[0].body["tools"] if t["function"]["name"] == row["name"]]
    assert offered["function"]["parameters"]["properties"]["camera_id"]["enum"] == [
        "driveway",
        "__any__",
    ]
    named = await investigate(dee, ("recent_events", {"camera_id": "front_door"}))
    assert named["tool_calls"][0]["status"] != "ok"
    assert "HIDE111" not in str(named)
    guessed = await investigate(dee, ("describe_event", {"event_id": hidden["id"]}))
    assert guessed["tool_calls"][0]["status"] != "ok"
    assert sim.requests.count(("GET", f"/api/v1/events/{hidden['id']}/evidence")) == 0

    # The admin (Home Assistant itself here) reads every camera.
    everything = await investigate(None, anywhere)
    assert "HIDE111" in everything["tool_calls"][0]["result"]
    pictured = await investigate(None, ("describe_event", {"event_id": hidden["id"]}))
    assert pictured["tool_calls"][0]["status"] == "ok"


async def test_plates_faces_and_their_lists_are_for_admins_outside_workflows(
    hass: HomeAssistant,
    host: WorkflowHost,
    ollama: FakeOllama,
    dee: MockUser,
    hass_admin_user: MockUser,
) -> None:
    goal = {"goal": "Is the car ours?", "decision": ["ours", "stranger"]}
    plates = await refused(hass, "investigate", {**goal, "tools": ["recent_plates"]}, dee)
    assert plates.translation_key == "tool_needs_admin"
    assert ollama.chats == []

    lookup = ("site_lookup", {"list": "household_plates"})
    ollama.script(ToolCalls([lookup]))
    ollama.default = FromSchema({"decision": "stranger", "reason": "not on a list"})
    answer = await act(hass, "investigate", {**goal, "tools": ["site_lookup"]}, dee)
    (offered,) = ollama.chats[0].body["tools"]
    assert offered["function"]["parameters"]["properties"]["list"]["enum"] == ["couriers"]
    assert answer["tool_calls"][0]["status"] != "ok"
    assert "AB123CD" not in str(answer)

    ollama.script(ToolCalls([lookup]))
    mine = await act(
        hass, "investigate", {**goal, "tools": ["site_lookup", "recent_plates"]}, hass_admin_user
    )
    assert "AB123CD" in mine["tool_calls"][0]["result"]


async def test_the_voice_look_knows_only_the_speakers_cameras(
    hass: HomeAssistant,
    host: WorkflowHost,
    ollama: FakeOllama,
    dee: MockUser,
    fay: MockUser,
) -> None:
    async def say(camera: str, user: MockUser) -> intent.IntentResponse:
        return await intent.async_handle(
            hass,
            "test",
            INTENT_LOOK,
            {"camera": {"value": camera}},
            text_input=f"what's at the {camera}",
            context=Context(user_id=user.id),
            language="en",
        )

    hidden = await say("front door", dee)
    unknown = await say("attic", dee)
    assert hidden.response_type is intent.IntentResponseType.ERROR
    assert same_but_names(
        hidden.speech["plain"]["speech"], unknown.speech["plain"]["speech"], "front door", "attic"
    )
    assert unknown.speech["plain"]["speech"].endswith("The cameras I know: driveway.")
    assert ollama.chats == []

    ollama.default = FromSchema({"decision": "something", "reason": FRONT_REASON})
    seen = await say("front door", fay)
    assert seen.response_type is intent.IntentResponseType.ACTION_DONE
    assert FRONT_REASON in seen.speech["plain"]["speech"]


# ── (6) the panel and get_runs ──────────────────────────────────────────────────────────


async def test_the_panel_shows_only_runs_and_workflows_of_visible_cameras(
    hass: HomeAssistant,
    host: WorkflowHost,
    ollama: FakeOllama,
    dee: MockUser,
    hass_ws_client: WebSocketGenerator,
) -> None:
    drive, front = await two_runs(host, ollama)
    mine = Client(await hass_ws_client(hass, access_token=await token(hass, dee)))
    admin = Client(await hass_ws_client(hass))

    rows = (await mine.ok("workflows/list"))["workflows"]
    assert [r["workflow_id"] for r in rows] == ["any"]
    assert rows[0]["last_run"]["run_id"] == drive
    every = {r["workflow_id"]: r for r in (await admin.ok("workflows/list"))["workflows"]}
    assert set(every) == {"any", "peek", "door", "yard"}
    assert every["any"]["last_run"]["run_id"] == front

    page = await mine.ok("workflows/runs", workflow="any")
    assert [r["run_id"] for r in page["runs"]] == [drive]
    assert [r["run_id"] for r in (await admin.ok("workflows/runs", workflow="any"))["runs"]] == [
        front,
        drive,
    ]

    hidden = await mine.refused("workflows/run", run_id=front)
    unknown = await mine.refused("workflows/run", run_id="nope")
    assert hidden["translation_key"] == unknown["translation_key"] == "unknown_run"
    assert same_but_names(hidden["message"], unknown["message"], front, "nope")
    assert DRIVE_REASON in str(await mine.ok("workflows/run", run_id=drive))
    shown = await admin.ok("workflows/run", run_id=front)
    assert shown["steps"][0]["reason"] == FRONT_REASON

    for command in ("workflows/versions", "workflows/source", "workflows/runs"):
        door = await mine.refused(command, workflow="door")
        assert door["translation_key"] == "unknown_workflow", command
        assert "peek" not in door["message"]
        assert await admin.ok(command, workflow="door")
    assert (await mine.ok("workflows/versions", workflow="any"))["versions"]


async def test_get_runs_shows_only_runs_of_visible_cameras(
    hass: HomeAssistant, host: WorkflowHost, ollama: FakeOllama, dee: MockUser, fay: MockUser
) -> None:
    drive, front = await two_runs(host, ollama)
    runs = (await act(hass, "get_runs", {"workflow": "any"}, dee))["runs"]
    assert [r["run_id"] for r in runs] == [drive]
    assert FRONT_REASON not in str(runs)
    hidden = await refused(hass, "get_runs", {"workflow": "any", "run_id": front}, dee)
    assert hidden.translation_key == "unknown_run"
    door = await refused(hass, "get_runs", {"workflow": "door"}, dee)
    assert door.translation_key == "unknown_workflow"

    both = (await act(hass, "get_runs", {"workflow": "any"}, fay))["runs"]
    assert [r["run_id"] for r in both] == [front, drive]
    one = await act(hass, "get_runs", {"workflow": "any", "run_id": front}, fay)
    assert one["runs"][0]["steps"][0]["reason"] == FRONT_REASON


async def test_a_button_run_whose_look_was_on_a_hidden_camera_is_hidden(
    hass: HomeAssistant,
    host: WorkflowHost,
    ollama: FakeOllama,
    config_entry: MockConfigEntry,
    dee: MockUser,
    fay: MockUser,
) -> None:
    """No camera in the trigger: the Look's own camera decides (get_runs and Assist)."""
    peek = await start(host, ollama, "peek")
    hidden = await call(hass, config_entry, "run_trace", {"run_id": peek}, dee)
    unknown = await call(hass, config_entry, "run_trace", {"run_id": "nope"}, dee)
    assert hidden.error
    assert same_but_names(str(hidden.data), str(unknown.data), peek, "nope")
    shown = await call(hass, config_entry, "run_trace", {"run_id": peek}, fay)
    assert not shown.error, shown.data
    assert shown.data["run"]["steps"][0]["reason"] == FRONT_REASON
    # The same run through the action.
    assert (await act(hass, "get_runs", {"workflow": "peek", "run_id": peek}, fay))["runs"]
    refusal = await refused(hass, "get_runs", {"workflow": "peek", "run_id": peek}, dee)
    assert refusal.translation_key == "unknown_workflow"


async def test_the_live_feed_keeps_hidden_runs_and_workflows_from_a_connection(
    hass: HomeAssistant,
    host: WorkflowHost,
    ollama: FakeOllama,
    dee: MockUser,
    hass_ws_client: WebSocketGenerator,
) -> None:
    mine = Client(await hass_ws_client(hass, access_token=await token(hass, dee)))
    admin = Client(await hass_ws_client(hass))
    live = {
        mine: await mine.send("workflows/subscribe"),
        admin: await admin.send("workflows/subscribe"),
    }
    for client in live:
        assert (await client.socket.receive_json())["success"] is True

    host.engine.set_workflow_state("door", "off")
    front = await start(host, ollama, "any", camera="front_door", camera_id="1")
    drive = await start(host, ollama, "any", camera="driveway", camera_id="2")

    async def heard(client: Client) -> list[dict[str, Any]]:
        """The events ``client`` hears until the driveway run's end."""
        out: list[dict[str, Any]] = []
        while True:
            message = await client.receive()
            if message.get("id") != live[client] or message.get("type") != "event":
                continue
            event: dict[str, Any] = message["event"]
            out.append(event)
            if event["kind"] == "run_ended" and event["run_id"] == drive:
                return out

    dees = await heard(mine)
    assert {e["run_id"] for e in dees if e.get("run_id")} == {drive}
    assert all(e.get("workflow_id") in (None, "any") for e in dees)
    admins = await heard(admin)
    assert {e["run_id"] for e in admins if e.get("run_id")} == {front, drive}
    assert any(e["kind"] == "workflow_state" and e["workflow_id"] == "door" for e in admins)


# ── (7) pictures only through signed links made for someone who may see them ───────────


async def test_a_runs_frame_is_served_only_through_a_link_signed_for_its_viewer(
    hass: HomeAssistant,
    host: WorkflowHost,
    ollama: FakeOllama,
    dee: MockUser,
    fay: MockUser,
    hass_ws_client: WebSocketGenerator,
    hass_client: ClientSessionGenerator,
    hass_client_no_auth: ClientSessionGenerator,
) -> None:
    _, front = await two_runs(host, ollama)
    page = await Client(await hass_ws_client(hass)).ok("workflows/run", run_id=front)
    (frame,) = [e for e in page["evidence"] if e["kind"] == "frame"]
    path = frame["url"].split("?")[0]

    deed = await hass_client(access_token=await token(hass, dee))
    assert (await deed.get(path)).status == HTTPStatus.FORBIDDEN
    assert (await deed.get(frame["url"])).status == HTTPStatus.FORBIDDEN
    assert (await (await hass_client()).get(path)).status == HTTPStatus.FORBIDDEN
    signed = await (await hass_client_no_auth()).get(frame["url"])
    assert signed.status == HTTPStatus.OK
    assert await signed.read() == host.evidence["any"].image

    # A link is made only for someone who may see the frame's camera.
    assert evidence_link(hass, host, Caller(dee), front, "front_door", 60) is None
    assert evidence_link(hass, host, Caller(fay), front, "front_door", 60)


async def test_a_questions_picture_is_served_only_through_a_signed_link(
    hass: HomeAssistant,
    host: WorkflowHost,
    config_entry: MockConfigEntry,
    dee: MockUser,
    hass_client: ClientSessionGenerator,
    hass_client_no_auth: ClientSessionGenerator,
) -> None:
    """A person who computes a picture's file name gets nothing with their own login."""
    host.desk.pictures.mkdir(parents=True, exist_ok=True)
    (host.desk.pictures / "q1.jpg").write_bytes(b"\xff\xd8 a front door frame")
    url = picture_link(hass, config_entry.entry_id, "q1.jpg", 60)
    path = url.split("?")[0]
    for client in (
        await hass_client(access_token=await token(hass, dee)),
        await hass_client(),
    ):
        assert (await client.get(path)).status == HTTPStatus.FORBIDDEN
    signed = await (await hass_client_no_auth()).get(url)
    assert signed.status == HTTPStatus.OK
    assert await signed.read() == b"\xff\xd8 a front door frame"


# ── (8) Assist ──────────────────────────────────────────────────────────────────────────


async def test_assist_lists_and_traces_only_what_the_asker_may_see(
    hass: HomeAssistant,
    host: WorkflowHost,
    ollama: FakeOllama,
    config_entry: MockConfigEntry,
    dee: MockUser,
    fay: MockUser,
) -> None:
    drive, front = await two_runs(host, ollama)
    listed = await call(hass, config_entry, "list_workflows", {}, dee)
    (row,) = listed.data["workflows"]
    assert (row["workflow_id"], row["latest_run"]["run_id"]) == ("any", drive)
    every = await call(hass, config_entry, "list_workflows", {}, fay)
    rows = {r["workflow_id"]: r for r in every.data["workflows"]}
    assert set(rows) == {"any", "peek", "door", "yard"}
    assert rows["any"]["latest_run"]["run_id"] == front

    latest = await call(hass, config_entry, "run_trace", {"workflow": "any"}, dee)
    assert latest.data["run"]["run_id"] == drive
    assert FRONT_REASON not in str(latest.data)
    door = await call(hass, config_entry, "run_trace", {"workflow": "peek"}, dee)
    assert door.error
    assert "peek" not in door.data["error"].partition(";")[2]
    assert (await call(hass, config_entry, "run_trace", {"workflow": "any"}, fay)).data["run"][
        "run_id"
    ] == front


async def test_site_lookup_keeps_plates_and_faces_for_admins(
    hass: HomeAssistant,
    host: WorkflowHost,
    config_entry: MockConfigEntry,
    hass_admin_user: MockUser,
) -> None:
    nobody = person(hass, config_entry, "Nia", ())  # may see no camera at all
    lists = await call(hass, config_entry, "site_lookup", {}, nobody)
    assert [entry["name"] for entry in lists.data["lists"]] == ["couriers"]
    assert lists.data["camera_roles"] == []
    assert "AB123CD" not in str(lists.data)
    hidden = await call(hass, config_entry, "site_lookup", {"list": "household_plates"}, nobody)
    unknown = await call(hass, config_entry, "site_lookup", {"list": "pets"}, nobody)
    assert hidden.error
    assert same_but_names(hidden.data["error"], unknown.data["error"], "household_plates", "pets")

    admin = await call(hass, config_entry, "site_lookup", {}, hass_admin_user)
    assert [entry["name"] for entry in admin.data["lists"]] == ["couriers", "household_plates"]
    plates = await call(
        hass, config_entry, "site_lookup", {"list": "household_plates"}, hass_admin_user
    )
    assert plates.data["lists"][0]["items"] == ["AB123CD"]


# ── history search: a decision of a run that looked at a hidden camera ──────────────────


async def test_history_search_leaves_out_decisions_of_runs_that_touched_a_hidden_camera(
    hass: HomeAssistant, host: WorkflowHost, ollama: FakeOllama, dee: MockUser, fay: MockUser
) -> None:
    """The alert came from the driveway, but the Look was on the front door."""
    run_id = await start(host, ollama, "yard", camera="driveway", camera_id="2")
    query = {"query": "yellow coat"}
    dees = await act(hass, "search_history", query, dee)
    assert run_id not in str(dees)
    assert FRONT_REASON not in str(dees)
    fays = await act(hass, "search_history", query, fay)
    assert run_id in [r.get("run_id") for r in fays["results"]]
