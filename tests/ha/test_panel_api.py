"""The Workflows panel's websocket commands, in a real Home Assistant with the simulator and
the Ollama fake: what the list, the timeline, a run's page, the editor, the versions and
the tries show, who may change what, and the live feed."""

from __future__ import annotations

from http import HTTPStatus
from pathlib import Path
from typing import Any

import pytest
from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    MockUser,
    async_mock_service,
)
from pytest_homeassistant_custom_component.typing import (
    ClientSessionGenerator,
    MockHAClientWebSocket,
    WebSocketGenerator,
)

from custom_components.opennvr_workflows.const import DOMAIN, WORKFLOW_FOLDER
from custom_components.opennvr_workflows.host.folder.files import TEMPLATES_MARKER
from custom_components.opennvr_workflows.host.workflows import WorkflowHost
from custom_components.opennvr_workflows.panel.todos import todos
from custom_components.opennvr_workflows.workflow import Problem, template_text
from tests.fakes.ollama_server import FakeOllama, FromSchema
from tests.fakes.opennvr_sim import OpenNVRSimulator
from tests.nvr.conftest import until

from .conftest import PHONE, ai_options
from .workflow_files import DOOR_LOOK, write_workflow

VISITOR = FromSchema(
    {"decision": "visitor", "reason": "a courier with a parcel", "confidence": 0.9}
)
NOBODY = FromSchema({"decision": "nobody", "reason": "an empty porch", "confidence": 0.8})


@pytest.fixture
def entry_options(ollama: FakeOllama) -> dict[str, Any]:
    return ai_options(ollama)


async def set_up(hass: HomeAssistant, entry: MockConfigEntry, **files: str) -> WorkflowHost:
    """The entry with exactly these workflow files (no templates copied)."""
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


class Client:
    """One websocket connection: ``await ws("workflows/list")`` -> the result, or the error."""

    def __init__(self, socket: MockHAClientWebSocket) -> None:
        self.socket = socket
        self.next_id = 1
        #: Messages read while waiting for a result (a subscription's events), in order.
        self.held: list[dict[str, Any]] = []

    async def send(self, command: str, **data: Any) -> int:
        self.next_id += 1
        await self.socket.send_json({"id": self.next_id, "type": f"{DOMAIN}/{command}", **data})
        return self.next_id

    async def __call__(self, command: str, **data: Any) -> dict[str, Any]:
        msg_id = await self.send(command, **data)
        while True:
            reply = await self.socket.receive_json()
            if reply["id"] == msg_id and reply["type"] == "result":
                return reply
            self.held.append(reply)

    async def receive(self) -> dict[str, Any]:
        """The next message not yet seen (those held while waiting for a result first)."""
        if self.held:
            return self.held.pop(0)
        message: dict[str, Any] = await self.socket.receive_json()
        return message

    async def ok(self, command: str, **data: Any) -> Any:
        reply = await self(command, **data)
        assert reply["success"], reply
        return reply["result"]

    async def refused(self, command: str, **data: Any) -> dict[str, Any]:
        reply = await self(command, **data)
        assert not reply["success"], reply
        error: dict[str, Any] = reply["error"]
        return error


async def test_the_list_a_live_run_its_page_and_a_mark(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    sim: OpenNVRSimulator,
    ollama: FakeOllama,
    hass_ws_client: WebSocketGenerator,
    hass_client_no_auth: ClientSessionGenerator,
) -> None:
    async_mock_service(hass, "notify", PHONE)
    host = await set_up(
        hass, config_entry, door=DOOR_LOOK.format(state="test"), broken="name: Broken\n"
    )
    ws = Client(await hass_ws_client(hass))
    listed = await ws.ok("workflows/list")
    assert listed["is_admin"] is True
    rows = {r["workflow_id"]: r for r in listed["workflows"]}
    assert rows["door"]["state"] == "test"
    assert rows["door"]["name"] == "Visitor at the front door"
    assert rows["door"]["last_run"] is None
    assert rows["door"]["accuracy"] is None
    assert rows["broken"]["state"] == "invalid"
    assert rows["broken"]["problems"][0]["line"] >= 1
    # A file the validator refused is listed by its file name, not its id.
    # Listed under the name the file gives itself, though the site cannot load it.
    assert (rows["broken"]["name"], rows["broken"]["file"]) == ("Broken", "broken.yaml")
    assert [t["kind"] for t in rows["broken"]["todos"]] == ["fix_file"]

    live = await ws.send("workflows/subscribe")
    assert (await ws.socket.receive_json())["success"] is True
    ollama.script(*[VISITOR] * 4)
    await until(lambda: config_entry.runtime_data.hub.connected("websocket"), "connected")
    await sim.emit_alert(1, "person")
    started = await ws.socket.receive_json()
    while started["event"]["kind"] == "workflows":  # the host's "something changed"
        started = await ws.socket.receive_json()
    assert started["id"] == live
    assert started["event"]["kind"] == "run_started"
    assert started["event"]["workflow_id"] == "door"
    run_id = started["event"]["run_id"]
    await host.engine.idle()

    listed = await ws.ok("workflows/list")
    door = next(r for r in listed["workflows"] if r["workflow_id"] == "door")
    assert door["last_run"] == {
        "run_id": run_id,
        "status": "done",
        "outcome": "done",
        "decision": "visitor",
        "test": True,
        "started_at": door["last_run"]["started_at"],
    }

    page = await ws.ok("workflows/run", run_id=run_id)
    assert page["mark"] is None
    # An alert started it: nobody started it by name.
    assert page["started_by"] is None
    ai = page["steps"][0]
    assert (ai["kind"], ai["outcome"], ai["reason"]) == ("ai", "visitor", "a courier with a parcel")
    assert ai["model"] == "qwen2.5vl:3b"
    assert ai["confidence"] is not None
    assert "confidence_source" in ai
    assert page["steps"][1]["status"] == "would_have"
    assert page["steps"][1]["path"] == "then.0.visitor.0"
    llm = [c for c in page["tool_calls"] if c["kind"] == "llm"]
    assert llm
    assert llm[0]["tokens_in"] is not None
    # The frame the model looked at, through a signed link that needs no login.
    (frame,) = [e for e in page["evidence"] if e["kind"] == "frame"]
    client = await hass_client_no_auth()
    picture = await client.get(frame["url"])
    assert picture.status == HTTPStatus.OK
    assert (await picture.read()) == host.evidence["door"].image
    unsigned = await client.get(frame["url"].split("?")[0])
    assert unsigned.status == HTTPStatus.UNAUTHORIZED

    marked = await ws.ok("workflows/mark", run_id=run_id, right=False)
    assert marked["right"] is False
    door = next(
        r for r in (await ws.ok("workflows/list"))["workflows"] if r["workflow_id"] == "door"
    )
    assert (door["accuracy"]["right"], door["accuracy"]["total"]) == (0, 1)
    # The run page opened again shows the mark, who gave it and when; a new mark replaces it.
    mark = (await ws.ok("workflows/run", run_id=run_id))["mark"]
    assert (mark["right"], mark["by"]) == (False, "Mock User")
    assert mark["at"] >= page["started_at"]
    await ws.ok("workflows/mark", run_id=run_id, right=True)
    assert (await ws.ok("workflows/run", run_id=run_id))["mark"]["right"] is True

    unknown = await ws.refused("workflows/run", run_id="nope")
    assert unknown["translation_key"] == "unknown_run"


async def test_the_timeline_pages_and_filters(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    sim: OpenNVRSimulator,
    ollama: FakeOllama,
    hass_ws_client: WebSocketGenerator,
) -> None:
    async_mock_service(hass, "notify", PHONE)
    host = await set_up(hass, config_entry, door=DOOR_LOOK.format(state="test"))
    ws = Client(await hass_ws_client(hass))
    ollama.script(VISITOR, NOBODY, VISITOR)
    for _ in range(3):
        host.engine.start_now("door", {"camera": "front_door", "camera_id": "1"})
        await host.engine.idle()

    first = await ws.ok("workflows/runs", workflow="door", limit=2)
    assert len(first["runs"]) == 2
    assert first["more"] is True
    assert first["decisions"] == ["visitor", "nobody", "unsure"]
    rest = await ws.ok("workflows/runs", workflow="door", limit=2, offset=2)
    assert len(rest["runs"]) == 1
    assert rest["more"] is False
    seen = [r["run_id"] for r in first["runs"] + rest["runs"]]
    assert len(set(seen)) == 3
    starts = [r["started_at"] for r in first["runs"] + rest["runs"]]
    assert starts == sorted(starts, reverse=True)
    visitors = await ws.ok("workflows/runs", workflow="door", decision="visitor")
    assert [r["decision"] for r in visitors["runs"]] == ["visitor", "visitor"]
    assert [r["steps"] for r in visitors["runs"]] == [2, 2]
    later = await ws.ok("workflows/runs", workflow="door", decision="visitor", offset=1)
    assert [r["run_id"] for r in later["runs"]] == [visitors["runs"][1]["run_id"]]
    assert all(r["test"] for r in visitors["runs"])
    assert (await ws.ok("workflows/runs", workflow="door", mode="on"))["runs"] == []
    assert len((await ws.ok("workflows/runs", workflow="door", mode="test"))["runs"]) == 3
    missing = await ws.refused("workflows/runs", workflow="nope")
    assert missing["translation_key"] == "unknown_workflow"


PRESS = """\
contract: workflow.v1
name: Press
state: on
when:
  button: {}
then:
  - log: pressed
"""


async def next_event(ws: Client, live: int, kind: str) -> dict[str, Any]:
    """The next event of the subscription ``live`` of this kind (others are skipped)."""
    while True:
        message = await ws.receive()
        if message.get("id") == live and message.get("type") == "event":
            event: dict[str, Any] = message["event"]
            if event["kind"] == kind:
                return event


async def test_the_feed_follows_entries_loaded_after_it_started(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    hass_ws_client: WebSocketGenerator,
) -> None:
    """A reload (an options change does one) makes a new host: the panel that subscribed
    before still hears its runs, and hears the entry going and coming back."""
    first = await set_up(hass, config_entry, press=PRESS)
    ws = Client(await hass_ws_client(hass))
    live = await ws.send("workflows/subscribe")
    assert (await ws.socket.receive_json())["success"] is True

    assert await hass.config_entries.async_unload(config_entry.entry_id)
    gone = await next_event(ws, live, "workflows")
    assert gone["entry_id"] == config_entry.entry_id
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    back = await next_event(ws, live, "workflows")
    assert back["entry_id"] == config_entry.entry_id
    second = config_entry.runtime_data.workflows
    assert second is not None
    assert second is not first

    (run_id,) = second.engine.run_now("press")
    started = await next_event(ws, live, "run_started")
    assert (started["run_id"], started["workflow_id"]) == (run_id, "press")
    await second.engine.idle()
    ended = await next_event(ws, live, "run_ended")
    assert ended["run_id"] == run_id


ASK = """\
contract: workflow.v1
name: Ask
state: on
when:
  button: {}
then:
  - ask_person:
      who: role:owner
      message: Open the gate?
      replies: [Open, Keep closed]
      timeout: 1h
    Open: [ log: "opened for {answered_by}" ]
    Keep closed: [ log: kept closed ]
"""


async def test_the_feed_says_when_a_question_is_ready_and_when_it_closed(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    hass_ws_client: WebSocketGenerator,
    hass_admin_user: MockUser,
) -> None:
    """The engine opens a question before the host has delivered it; the ``approvals``
    event comes once the question can be listed and answered, and again once it closed."""
    host = await set_up(hass, config_entry, ask=ASK)
    ws = Client(await hass_ws_client(hass))
    live = await ws.send("workflows/subscribe")
    assert (await ws.socket.receive_json())["success"] is True
    (run_id,) = host.engine.run_now("ask", hass_admin_user.id)
    ready = await next_event(ws, live, "approvals")
    assert ready["entry_id"] == config_entry.entry_id
    (question,) = (await ws.ok("approvals/list"))["approvals"]
    assert (question["run_id"], question["message"]) == (run_id, "Open the gate?")
    assert question["may_answer"] is True
    answered = await ws.ok("approvals/answer", approval_id=question["approval_id"], reply="Open")
    assert answered["reply"] == "Open"
    await next_event(ws, live, "approvals")
    assert (await ws.ok("approvals/list"))["approvals"] == []
    await host.engine.idle()
    page = await ws.ok("workflows/run", run_id=run_id)
    assert page["status"] == "done"
    # The run page says who pressed the button, by name (the run stores their id).
    assert page["started_by"] == {"how": "button", "user": "Mock User"}
    assert [(s["path"], s["outcome"]) for s in page["steps"]] == [
        ("then.0", "Open"),
        ("then.0.Open.0", "done"),
    ]


BROKEN_EDIT = DOOR_LOOK.format(state="test").replace(
    "decision: [visitor, nobody]", "decision: visitor"
)


async def test_the_editor_validates_saves_in_test_and_rolls_back(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    hass_ws_client: WebSocketGenerator,
) -> None:
    host = await set_up(hass, config_entry, door=DOOR_LOOK.format(state="on"))
    ws = Client(await hass_ws_client(hass))
    source = await ws.ok("workflows/source", workflow="door")
    assert source["yaml"] == DOOR_LOOK.format(state="on")

    checked = await ws.ok("workflows/validate", yaml=BROKEN_EDIT)
    assert checked["valid"] is False
    problem = checked["problems"][0]
    line = BROKEN_EDIT.splitlines().index("      decision: visitor") + 1
    assert problem["line"] == line
    assert problem["column"] >= 1
    assert problem["message"]
    assert (await ws.ok("workflows/validate", yaml=DOOR_LOOK.format(state="test")))["valid"]

    refused = await ws.refused("workflows/save", yaml=BROKEN_EDIT, file_name="door", overwrite=True)
    assert refused["translation_key"] == "workflow_invalid"
    assert Path(host.files["door"].path).read_text() == DOOR_LOOK.format(state="on")

    before = host.engine.workflow_status("door").version
    edited = DOOR_LOOK.format(state="on").replace("Is somebody", "Is anybody")
    saved = await ws.ok("workflows/save", yaml=edited, file_name="door", overwrite=True)
    assert (saved["written"], saved["state"], saved["replaced"]) == (True, "test", True)
    assert host.engine.workflow_status("door").state == "test"
    assert "Is anybody" in host.files["door"].path.read_text()

    versions = (await ws.ok("workflows/versions", workflow="door"))["versions"]
    assert len(versions) == 2
    current = [v for v in versions if v["current"]]
    assert len(current) == 1
    assert "Is anybody" in current[0]["yaml"]
    old = next(v for v in versions if v["version"] == before)
    assert "Is somebody" in old["yaml"]

    rolled = await ws.ok("workflows/rollback", workflow="door", version=before)
    assert rolled["state"] == "test"
    assert "Is somebody" in host.files["door"].path.read_text()
    bad = await ws.refused("workflows/rollback", workflow="door", version="nope")
    assert bad["translation_key"] == "unknown_version"

    new = await ws.ok("workflows/save", yaml=DOOR_LOOK.format(state="on"), file_name="porch")
    assert (new["workflow_id"], new["state"]) == ("porch", "test")
    exists = await ws.refused(
        "workflows/save", yaml=DOOR_LOOK.format(state="on"), file_name="porch"
    )
    assert exists["translation_key"] == "file_exists"

    off = await ws.ok("workflows/set_state", workflow="porch", state="off")
    assert off == {"workflow_id": "porch", "state": "off"}
    assert host.engine.workflow_status("porch").state == "off"


async def test_templates_say_what_they_need(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    hass_ws_client: WebSocketGenerator,
) -> None:
    await set_up(hass, config_entry)
    ws = Client(await hass_ws_client(hass))
    templates = {t["template"]: t for t in (await ws.ok("workflows/templates"))["templates"]}
    gate = templates["gate_concierge"]
    assert gate["ready"] is False
    assert any("gate" in p["message"] for p in gate["missing"])
    assert gate["needs"]
    assert "contract: workflow.v1" in gate["yaml"]
    assert templates["parcel_at_door"]["ready"] is True
    assert templates["parcel_at_door"]["missing"] == []

    saved = await ws.ok("workflows/save", template="parcel_at_door")
    assert saved["state"] == "test"
    assert saved["written"] is True


async def test_try_on_recent_events_shows_each_decision(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    sim: OpenNVRSimulator,
    ollama: FakeOllama,
    hass_ws_client: WebSocketGenerator,
) -> None:
    host = await set_up(hass, config_entry, door=DOOR_LOOK.format(state="off"))
    sim.add_event(1, "person")
    sim.add_event(1, "person")
    ollama.script(VISITOR, NOBODY, VISITOR, NOBODY)
    ws = Client(await hass_ws_client(hass))
    tried = await ws.ok("workflows/try", workflow="door", count=2)
    assert sorted(e["decision"] for e in tried["events"]) == ["nobody", "visitor"]
    assert all(e["trace"][0]["kind"] == "ai" for e in tried["events"])
    # Tries are not runs of the workflow: the timeline stays empty.
    assert (await ws.ok("workflows/runs", workflow="door"))["runs"] == []
    assert host.engine.workflow_status("door").state == "off"


async def test_users_read_and_only_admins_change(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    hass_ws_client: WebSocketGenerator,
    hass_read_only_access_token: str,
) -> None:
    host = await set_up(hass, config_entry, door=DOOR_LOOK.format(state="test"))
    ws = Client(await hass_ws_client(hass, access_token=hass_read_only_access_token))
    listed = await ws.ok("workflows/list")
    assert listed["is_admin"] is False
    assert [r["workflow_id"] for r in listed["workflows"]] == ["door"]
    assert (await ws.ok("workflows/validate", yaml=BROKEN_EDIT))["valid"] is False
    for command, data in (
        ("workflows/save", {"yaml": DOOR_LOOK.format(state="test"), "file_name": "x"}),
        ("workflows/set_state", {"workflow": "door", "state": "off"}),
        ("workflows/rollback", {"workflow": "door", "version": "v"}),
        ("workflows/try", {"workflow": "door"}),
    ):
        assert (await ws.refused(command, **data))["code"] == "unauthorized", command
    host.engine.start_now("door", {"camera": "front_door", "camera_id": "1"})
    await host.engine.idle()
    (run,) = (await ws.ok("workflows/runs", workflow="door"))["runs"]
    mark = await ws.refused("workflows/mark", run_id=run["run_id"], right=True)
    assert mark["code"] == "unauthorized"
    assert host.engine.workflow_status("door").state == "test"
    assert not (Path(hass.config.path(WORKFLOW_FOLDER)) / "x.yaml").exists()


async def test_a_workflow_that_does_not_run_reads_as_to_dos(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    hass_ws_client: WebSocketGenerator,
) -> None:
    """A file this site cannot run yet is listed under the title its author gave it, with
    one to-do per thing to do (a role to map, a site list to add), each with the validator's
    words; a file that is wrong itself asks to fix the file; one that runs has none."""
    await set_up(
        hass,
        config_entry,
        gate_concierge=template_text("gate_concierge"),
        door=DOOR_LOOK.format(state="test"),
        broken="contract: workflow.v1\nname: Half written\nwhen: [\n",
    )
    ws = Client(await hass_ws_client(hass))
    rows = {r["workflow_id"]: r for r in (await ws.ok("workflows/list"))["workflows"]}

    gate = rows["gate_concierge"]
    assert gate["state"] == "invalid"
    assert gate["name"] == "Gate concierge"
    todos = {(t["kind"], t["subject"]): t for t in gate["todos"]}
    assert ("camera_role", "gate") in todos
    assert ("site_list", "household_plates") in todos
    role = todos["camera_role", "gate"]
    assert role["where"] == "options"
    assert role["details"][0]["line"] > 0
    assert "'gate'" in role["details"][0]["message"]
    # The options' to-dos come before the file's.
    kinds = [t["kind"] for t in gate["todos"]]
    assert kinds.index("camera_role") < kinds.index("site_list")

    broken = rows["broken"]
    # Text that is not YAML names nothing: its file's name stands for it.
    assert broken["name"] == "broken.yaml"
    assert [(t["kind"], t["where"]) for t in broken["todos"]] == [("fix_file", "file")]
    assert broken["todos"][0]["details"]

    assert rows["door"]["state"] == "test"
    assert rows["door"]["todos"] == []


def test_each_site_problem_becomes_its_to_do() -> None:
    found = todos(
        [
            Problem(
                "WF-SKILL-MISSING",
                "this site does not have the skill 'vision_model' the workflow needs",
                line=3,
            ),
            Problem(
                "WF-SKILL-MISSING",
                "an Investigate step needs the skill 'investigate_model': a model that passed "
                "the evaluation (the look cases' 95 % Wilson lower bound at 0.80 or above)",
                line=9,
            ),
            Problem("WF-SKILL-MISSING", "this site does not have the skill 'intrusion'", line=4),
            Problem("WF-TOOL-NOT-HERE", "describe_window is a tool of the contract", line=12),
            Problem("WF-CAMERA-ROLE-UNMAPPED", "the camera role 'front_door' is not", line=5),
            Problem("WF-CAMERA-ROLE-UNMAPPED", "the camera role 'front_door' is not", line=7),
            Problem("WF-PLACEHOLDER-UNDEFINED", "{nobody} is not defined", line=8),
            Problem("WF-NEEDS-MISSING", "`needs` does not list", severity="warning"),
        ],
        reason=None,
    )
    assert [(t["kind"], t["subject"], t["where"]) for t in found] == [
        ("camera_role", "front_door", "options"),
        ("vision_model", None, "options"),
        ("investigate_model", None, "options"),
        ("app", "intrusion", "options"),
        ("tool", "describe_window", "file"),
        ("fix_file", None, "file"),
    ]
    # One to-do for a role named twice, with both places.
    assert [d["line"] for d in found[0]["details"]] == [5, 7]
    stopped = todos([], reason="3 runs failed in a row")
    assert stopped == [
        {
            "kind": "attention",
            "subject": None,
            "where": "file",
            "details": [{"line": 0, "message": "3 runs failed in a row"}],
        }
    ]


async def test_the_gallery_knows_what_is_installed_and_names_a_copy(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    hass_ws_client: WebSocketGenerator,
) -> None:
    await set_up(hass, config_entry)
    ws = Client(await hass_ws_client(hass))
    before = {t["template"]: t for t in (await ws.ok("workflows/templates"))["templates"]}
    assert before["parcel_at_door"]["installed"] is False
    assert before["parcel_at_door"]["copy_name"] == "parcel_at_door_copy"

    await ws.ok("workflows/save", template="parcel_at_door")
    after = {t["template"]: t for t in (await ws.ok("workflows/templates"))["templates"]}
    assert after["parcel_at_door"]["installed"] is True
    assert after["gate_concierge"]["installed"] is False
    # The copy's name is free: saving under it is not refused.
    copy = await ws.ok(
        "workflows/save", template="parcel_at_door", file_name=after["parcel_at_door"]["copy_name"]
    )
    assert copy["workflow_id"] == "parcel_at_door_copy"
    again = {t["template"]: t for t in (await ws.ok("workflows/templates"))["templates"]}
    assert again["parcel_at_door"]["copy_name"] == "parcel_at_door_copy_2"
    # Replacing the installed one is an overwrite the gallery asks for.
    replaced = await ws.ok(
        "workflows/save", template="parcel_at_door", file_name="parcel_at_door", overwrite=True
    )
    assert replaced["replaced"] is True
