"""Who may do what: every door the integration registers, run as every role.

The doors are discovered from the running Home Assistant, never listed here: the domain's
actions, the websocket commands with its prefix, its HTTP views, its Assist tools, its
intents, its entities that change something or answer (an AI Task), and its media
source's calls (the Media panel). Each must have a rule in the permission
table (:data:`~custom_components.opennvr_workflows.host.permissions.DOORS`) and a row in
the README's matrix that says the same; a new door without both fails here. Then every
door is tried as each role (an admin, a household user, a read-only user, a user who may
see only the driveway, an approver, nobody logged in) and the outcome must be the
matrix's: the door refuses exactly the roles its row says no to.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncGenerator, Awaitable, Callable
from http import HTTPStatus
from pathlib import Path
from typing import Any, Final

import pytest
from homeassistant.auth.const import GROUP_ID_USER
from homeassistant.auth.models import User
from homeassistant.components import media_source, websocket_api
from homeassistant.components.media_source.const import DATA_MEDIA_SOURCE_PLATFORMS
from homeassistant.const import Platform
from homeassistant.core import Context, HomeAssistant
from homeassistant.exceptions import HomeAssistantError, Unauthorized
from homeassistant.helpers import entity_registry as er
from homeassistant.helpers import intent, llm
from homeassistant.helpers.entity_component import DATA_INSTANCES
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import MockConfigEntry, MockUser
from pytest_homeassistant_custom_component.typing import (
    ClientSessionGenerator,
    WebSocketGenerator,
)

from custom_components.opennvr_workflows.assist.api import api_id
from custom_components.opennvr_workflows.const import CONF_APPROVERS, DOMAIN
from custom_components.opennvr_workflows.host.approvals.links import sign
from custom_components.opennvr_workflows.host.ids import camera_unique_id
from custom_components.opennvr_workflows.host.permissions import CELLS, DOORS, ROLES
from custom_components.opennvr_workflows.host.workflows import WorkflowHost
from tests.fakes.ollama_server import FakeOllama
from tests.fakes.opennvr_sim import OpenNVRSimulator

from .approval_support import access_token
from .assist_support import context_of
from .conftest import ai_options
from .test_services import set_up

README: Final = Path(__file__).parents[2] / "README.md"

#: Entity methods that change something: an entity whose class has one is a door.
CHANGING: Final = frozenset(
    {
        "async_select_option",
        "async_press",
        "async_turn_on",
        "async_turn_off",
        "async_toggle",
        "async_set_value",
        "async_set_native_value",
        "async_install",
        "async_lock",
        "async_unlock",
        "async_open",
    }
)

#: Entity methods that answer a person (an AI Task): such an entity is a door too, a
#: reading one; it changes nothing, so it is not in :data:`CHANGING`.
ANSWERING: Final = frozenset({"_async_generate_data", "_async_generate_image"})

#: Media source methods, each a door of the Media panel (``media:<operation>``).
MEDIA: Final = {
    "async_browse_media": "media:browse",
    "async_resolve_media": "media:resolve",
    "async_search_media": "media:search",
}

PORCH: Final = """\
contract: workflow.v1
name: Porch check
state: on
limits: { cooldown: 0s, per_hour: 100 }
when:
  button: {}
then:
  - log: "checked by {user}"
"""

CHAT: Final = """\
contract: workflow.v1
name: Chat
state: on
when:
  message: { contains: [hello] }
then:
  - log: "said {message}"
"""

ASK: Final = """\
contract: workflow.v1
name: Ask first
state: on
limits: { cooldown: 0s, per_hour: 100 }
when:
  button: {}
then:
  - ask_person:
      who: role:owner
      message: Open the gate?
      replies: [Open, Keep closed]
      timeout: 1h
      default: Keep closed
    Open: [ log: opened ]
    Keep closed: [ log: kept closed ]
"""

#: What a probe saw: passed the door, or was refused (by the door, or by the desk for a
#: question the person is not asked).
ALLOWED: Final = "allowed"
DENIED: Final = "denied"


# ── the README's matrix ─────────────────────────────────────────────────────────────────


def readme_matrix() -> dict[str, tuple[str, ...]]:
    """The rows of the README's "Who may do what" table: door -> a cell per role."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## Who may do what", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, tuple[str, ...]] = {}
    for line in section.splitlines():
        match = re.fullmatch(r"\| `([^`]+)` \|(.*)\|", line.strip())
        if match:
            rows[match[1]] = tuple(cell.strip() for cell in match[2].split("|"))
    return rows


def expected(door: str, role: str) -> str:
    """What the matrix says ``role`` gets at ``door``: allowed or denied."""
    cell = CELLS[DOORS[door]][role]
    if cell in ("yes", "their cameras"):
        return ALLOWED
    if cell == "if asked":
        return ALLOWED if role == "approver" else DENIED
    return DENIED  # "no", and "signed link" tried with a login alone


def test_the_readme_matrix_is_the_permission_table() -> None:
    rows = readme_matrix()
    assert set(rows) == set(DOORS), "README rows and the permission table differ"
    for door, cells in rows.items():
        assert cells == tuple(CELLS[DOORS[door]][role] for role in ROLES), door


# ── discovering the doors ───────────────────────────────────────────────────────────────


async def discovered(hass: HomeAssistant, entry: MockConfigEntry, admin: User) -> set[str]:
    """Every door Home Assistant holds for the integration now."""
    doors = {f"action:{name}" for name in hass.services.async_services_for_domain(DOMAIN)}
    commands: dict[str, Any] = hass.data[websocket_api.DOMAIN]
    doors |= {f"ws:{name}" for name in commands if name.startswith(f"{DOMAIN}/")}
    for resource in hass.http.app.router.resources():
        path = resource.canonical
        if path.startswith(f"/api/{DOMAIN}/"):
            doors.add(f"http:{path}")
    api = await llm.async_get_api(hass, api_id(entry), context_of(admin))
    doors |= {
        f"tool:{tool.name.removeprefix(f'{DOMAIN}__')}"
        for tool in api.tools
        if tool.name.startswith(f"{DOMAIN}__")
    }
    doors |= {
        f"intent:{handler.intent_type}"
        for handler in intent.async_get(hass)
        if type(handler).__module__.startswith("custom_components.opennvr_workflows")
    }
    components = hass.data[DATA_INSTANCES]
    for reg in er.async_entries_for_config_entry(er.async_get(hass), entry.entry_id):
        if reg.disabled_by is not None:
            continue  # not running: its class is another entity's (the same kinds run)
        entity = components[reg.domain].get_entity(reg.entity_id)
        assert entity is not None, reg.entity_id
        if _defines(entity, CHANGING | ANSWERING):
            doors.add(f"entity:{reg.domain}.{entity.translation_key}")
    if media_source.DOMAIN in hass.config.components:
        source = await hass.data[DATA_MEDIA_SOURCE_PLATFORMS].async_get_platform(DOMAIN)
        if source is not None:
            doors |= {door for method, door in MEDIA.items() if _defines(source, {method})}
    return doors


def _defines(thing: Any, methods: frozenset[str] | set[str]) -> bool:
    """Whether the object's own class (not only Home Assistant's base) defines one of
    ``methods``: an entity that changes something or answers, a media source's call."""
    for cls in type(thing).__mro__:
        if not cls.__module__.startswith("custom_components.opennvr_workflows"):
            continue
        if methods & set(vars(cls)):
            return True
    return False


# ── the household ───────────────────────────────────────────────────────────────────────


class House:
    """The site, its workflows and one user per role, with ways to try each door."""

    def __init__(
        self,
        hass: HomeAssistant,
        entry: MockConfigEntry,
        host: WorkflowHost,
        users: dict[str, User],
        ws: WebSocketGenerator,
        client: ClientSessionGenerator,
    ) -> None:
        self.hass = hass
        self.entry = entry
        self.host = host
        self.users = users
        self._ws = ws
        self._client = client
        self._sockets: dict[str, Any] = {}
        self._msg = 0

    async def close(self) -> None:
        for socket in self._sockets.values():
            await socket.close()

    # questions

    async def question(self) -> str:
        """An open question, asked of the approver only (a new one once answered)."""
        for ticket in self.host.desk.pending():
            return ticket.approval_id
        await self.host.engine.idle()  # the answered run has ended
        started = self.host.engine.start_now("ask", {})
        assert started.run_ids, started.reason
        assert not started.joined
        await until_asked(self)
        (ticket,) = self.host.desk.pending()
        return ticket.approval_id

    def still_open(self, approval_id: str) -> bool:
        return any(t.approval_id == approval_id for t in self.host.desk.pending())

    # the ways in

    async def action(self, role: str, name: str, data: dict[str, Any]) -> str:
        if role == "no_login":
            return await self.rest(f"/api/services/{DOMAIN}/{name}", data)
        try:
            await self.hass.services.async_call(
                DOMAIN,
                name,
                data,
                blocking=True,
                return_response=True,
                context=Context(user_id=self.users[role].id),
            )
        except Unauthorized:
            return DENIED
        except HomeAssistantError as err:
            if name == "answer_approval" and (err.translation_key or "").startswith(
                "approval_refused_"
            ):
                return DENIED
        return ALLOWED

    async def rest(self, path: str, data: dict[str, Any]) -> str:
        client = await self._client()
        response = await client.post(path, json=data)
        return DENIED if response.status in (HTTPStatus.UNAUTHORIZED, 403) else ALLOWED

    async def command(self, role: str, type_: str, data: dict[str, Any]) -> dict[str, Any]:
        socket = self._sockets.get(role)
        if socket is None:
            token = await access_token(self.hass, self.users[role])
            socket = self._sockets[role] = await self._ws(self.hass, access_token=token)
        self._msg += 1
        await socket.send_json({"id": self._msg, "type": type_, **data})
        while True:
            message: dict[str, Any] = await socket.receive_json()
            if message.get("id") == self._msg and message.get("type") == "result":
                return message

    async def ws(self, role: str, type_: str, data: dict[str, Any]) -> str:
        if role == "no_login":
            client = await self._client()
            async with client.ws_connect("/api/websocket") as socket:
                await socket.receive_json()  # auth_required
                await socket.send_json({"type": "auth", "access_token": "nobody"})
                said = await socket.receive_json()
            return DENIED if said["type"] == "auth_invalid" else ALLOWED
        answer = await self.command(role, type_, data)
        if not answer["success"] and answer["error"]["code"] == websocket_api.ERR_UNAUTHORIZED:
            return DENIED
        if type_ == f"{DOMAIN}/approvals/answer" and not answer["success"]:
            return DENIED  # refused by the desk: not asked
        if type_ == f"{DOMAIN}/approvals/list":
            rows = answer["result"]["approvals"]
            return ALLOWED if any(r["may_answer"] for r in rows) else DENIED
        if type_ == f"{DOMAIN}/workflows/subscribe" and answer["success"]:
            await self.command(role, "unsubscribe_events", {"subscription": self._msg})
        return ALLOWED

    async def http(self, role: str, path: str, method: str) -> str:
        """A request with the role's own login only (no signature, no proof)."""
        client = await self._client()
        headers = {}
        if role != "no_login":
            headers["Authorization"] = f"Bearer {await access_token(self.hass, self.users[role])}"
        response = await client.request(method, path, headers=headers)
        # Refused at the door, before anything is looked up: 401 or 403 (a 404 means
        # the login alone got as far as the lookup).
        return (
            DENIED
            if response.status in (HTTPStatus.UNAUTHORIZED, HTTPStatus.FORBIDDEN)
            else ALLOWED
        )

    async def tool(self, role: str, name: str, args: dict[str, Any]) -> str:
        if role == "no_login":
            return await self.rest("/api/conversation/process", {"text": "hello"})
        api = await llm.async_get_api(self.hass, api_id(self.entry), context_of(self.users[role]))
        tool = next(t for t in api.tools if t.name == f"{DOMAIN}__{name}")
        result = await tool.async_call(
            self.hass, llm.ToolInput(tool_name=tool.name, tool_args=args), api.llm_context
        )
        data = result.data if isinstance(result, llm.ToolResult) else result
        assert isinstance(data, dict)
        if data.get("error") == "not allowed for this person":
            return DENIED
        if name == "pending_approvals":
            rows = data.get("approvals") or data.get("questions") or []
            return ALLOWED if any(r.get("may_answer") for r in rows) else DENIED
        return ALLOWED

    async def said(self, role: str, intent_type: str, slots: dict[str, str]) -> str:
        if role == "no_login":
            return await self.rest("/api/conversation/process", {"text": "hello"})
        response = await intent.async_handle(
            self.hass,
            "test",
            intent_type,
            {name: {"value": value} for name, value in slots.items()},
            context=Context(user_id=self.users[role].id),
        )
        speech = response.speech.get("plain", {}).get("speech", "")
        if response.response_type is intent.IntentResponseType.ERROR:
            if speech in (
                "Sorry, your user may not do that.",
                "Only an administrator, signed in, may switch workflows by voice.",
            ):
                return DENIED
            if intent_type in ("OpenNVRApprove", "OpenNVRDeny", "OpenNVRAnswer"):
                return DENIED  # no question for this person
        return ALLOWED

    async def ai_task(self, role: str, entity_id: str, camera: str) -> str:
        """``ai_task.generate_data`` about ``camera`` (a response-only action)."""
        data = {
            "task_name": "probe",
            "entity_id": entity_id,
            "instructions": "Anyone there?",
            "attachments": [
                {"media_content_id": f"media-source://camera/{camera}", "media_content_type": ""}
            ],
        }
        if role == "no_login":
            return await self.rest("/api/services/ai_task/generate_data?return_response", data)
        try:
            await self.hass.services.async_call(
                "ai_task",
                "generate_data",
                data,
                blocking=True,
                return_response=True,
                context=Context(user_id=self.users[role].id),
            )
        except Unauthorized:
            return DENIED
        except HomeAssistantError:
            pass  # past the door: a camera they may not see, like an unknown one
        return ALLOWED

    async def entity(
        self, role: str, domain: str, service: str, entity_id: str, **data: Any
    ) -> str:
        if role == "no_login":
            return await self.rest(f"/api/services/{domain}/{service}", {"entity_id": entity_id})
        try:
            await self.hass.services.async_call(
                domain,
                service,
                {"entity_id": entity_id, **data},
                blocking=True,
                context=Context(user_id=self.users[role].id),
            )
        except Unauthorized:
            return DENIED
        except HomeAssistantError:
            pass  # past the door: the entity itself refused (a limit, OpenNVR)
        return ALLOWED


async def until_asked(house: House) -> None:
    for _ in range(200):
        await house.hass.async_block_till_done()
        if house.host.desk.pending():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the question was never asked")


def entity_of(hass: HomeAssistant, platform: str, unique_suffix: str) -> str:
    for reg in er.async_get(hass).entities.values():
        if (
            reg.platform == DOMAIN
            and reg.domain == platform
            and reg.unique_id.endswith(unique_suffix)
        ):
            return reg.entity_id
    raise AssertionError(f"no {platform} entity ending {unique_suffix}")


Probe = Callable[[House, str], Awaitable[str]]


def probes(house: House) -> dict[str, Probe]:
    """How each door is tried as a role (data that passes the door's schema)."""
    hass = house.hass
    run_now = entity_of(hass, "button", "porch_run_now")
    porch_state = entity_of(hass, "select", "porch_state")
    site_mode = entity_of(hass, "select", "site_mode")
    pause = entity_of(hass, "switch", "pause_workflows")
    vision_model = entity_of(hass, "select", "vision_model_select")
    look_task = entity_of(hass, "ai_task", "vision_model_ai_task")
    front_door = er.async_get(hass).async_get_entity_id(
        Platform.CAMERA, DOMAIN, camera_unique_id(str(house.entry.unique_id), 1)
    )
    assert front_door is not None

    def action(name: str, data: dict[str, Any]) -> Probe:
        return lambda h, role: h.action(role, name, data)

    def command(name: str, data: dict[str, Any]) -> Probe:
        return lambda h, role: h.ws(role, f"{DOMAIN}/{name}", data)

    def command_any(type_: str, data: dict[str, Any]) -> Probe:
        """A websocket command of another domain (the Media panel's)."""
        return lambda h, role: h.ws(role, type_, data)

    def said(intent_type: str, **slots: str) -> Probe:
        return lambda h, role: h.said(role, intent_type, slots)

    def tool(name: str, **args: Any) -> Probe:
        return lambda h, role: h.tool(role, name, args)

    async def answer_action(h: House, role: str) -> str:
        approval_id = await h.question()
        return await h.action(
            role, "answer_approval", {"approval_id": approval_id, "reply": "Open"}
        )

    async def answer_ws(h: House, role: str) -> str:
        approval_id = await h.question()
        return await h.ws(
            role, f"{DOMAIN}/approvals/answer", {"approval_id": approval_id, "reply": "Open"}
        )

    def answer_intent(intent_type: str, **slots: str) -> Probe:
        async def probe(h: House, role: str) -> str:
            await h.question()
            return await h.said(role, intent_type, slots)

        return probe

    async def listed(h: House, role: str) -> str:
        await h.question()
        return await h.ws(role, f"{DOMAIN}/approvals/list", {})

    async def pending_tool(h: House, role: str) -> str:
        await h.question()
        return await h.tool(role, "pending_approvals", {})

    async def confirm(h: House, role: str) -> str:
        """A page button's POST with the approver's real token and no proof."""
        approval_id = await h.question()
        ticket = h.host.desk.tickets.by_id[approval_id]
        token = h.host.desk.tickets.tokens_of(ticket)[h.users["approver"].id]["Open"]
        return await h.http(role, f"/api/{DOMAIN}/answer/{token}/confirm", "POST")

    def http(path: str, method: str = "GET") -> Probe:
        return lambda h, role: h.http(role, path, method)

    site = house.entry.entry_id
    return {
        "action:look": action(
            "look", {"camera": "front_door", "prompt": "Anyone?", "decision": ["yes", "no"]}
        ),
        "action:investigate": action(
            "investigate", {"goal": "Anyone?", "tools": ["recent_events"], "decision": ["a", "b"]}
        ),
        "action:search_history": action("search_history", {"query": "parcel"}),
        "action:get_runs": action("get_runs", {"workflow": "porch"}),
        "action:export_workflow": action("export_workflow", {"workflow": "porch"}),
        "action:validate_workflow": action("validate_workflow", {"yaml": PORCH}),
        "action:run_workflow": action("run_workflow", {"workflow": "porch"}),
        "action:mark_run": action("mark_run", {"run_id": "nope", "right": True}),
        "action:answer_approval": answer_action,
        "action:import_workflow": action(
            "import_workflow", {"yaml": PORCH, "file_name": "porch2", "dry_run": True}
        ),
        "action:set_workflow_state": action(
            "set_workflow_state", {"workflow": "porch", "state": "on"}
        ),
        "action:rollback_workflow": action(
            "rollback_workflow", {"workflow": "porch", "version": "nope"}
        ),
        "action:try_workflow": action("try_workflow", {"workflow": "nope"}),
        "action:reload": action("reload", {}),
        "action:describe_workflow": action("describe_workflow", {"sentence": "x" * 3}),
        "action:list_cases": action("list_cases", {}),
        "action:export_cases": action("export_cases", {}),
        "action:delete_case": action("delete_case", {"case_id": "nope"}),
        "action:measure_model": action("measure_model", {"model": "not-installed"}),
        f"ws:{DOMAIN}/workflows/list": command("workflows/list", {}),
        f"ws:{DOMAIN}/workflows/runs": command("workflows/runs", {"workflow": "porch"}),
        f"ws:{DOMAIN}/workflows/run": command("workflows/run", {"run_id": "nope"}),
        f"ws:{DOMAIN}/workflows/versions": command("workflows/versions", {"workflow": "porch"}),
        f"ws:{DOMAIN}/workflows/source": command("workflows/source", {"workflow": "porch"}),
        f"ws:{DOMAIN}/workflows/validate": command("workflows/validate", {"yaml": PORCH}),
        f"ws:{DOMAIN}/workflows/templates": command("workflows/templates", {}),
        f"ws:{DOMAIN}/workflows/subscribe": command("workflows/subscribe", {}),
        f"ws:{DOMAIN}/workflows/mark": command("workflows/mark", {"run_id": "x", "right": True}),
        f"ws:{DOMAIN}/workflows/save": command(
            "workflows/save", {"yaml": "contract: nope", "file_name": "x"}
        ),
        f"ws:{DOMAIN}/workflows/set_state": command(
            "workflows/set_state", {"workflow": "nope", "state": "on"}
        ),
        f"ws:{DOMAIN}/workflows/rollback": command(
            "workflows/rollback", {"workflow": "nope", "version": "v"}
        ),
        f"ws:{DOMAIN}/workflows/try": command("workflows/try", {"workflow": "nope"}),
        f"ws:{DOMAIN}/approvals/list": listed,
        f"ws:{DOMAIN}/approvals/answer": answer_ws,
        f"http:/api/{DOMAIN}/answer/{{token}}": http(f"/api/{DOMAIN}/answer/abc"),
        f"http:/api/{DOMAIN}/answer/{{token}}/confirm": confirm,
        f"http:/api/{DOMAIN}/picture/{{entry_id}}/{{name}}": http(
            f"/api/{DOMAIN}/picture/{site}/a.jpg"
        ),
        f"http:/api/{DOMAIN}/evidence/{{entry_id}}/{{run_id}}": http(
            f"/api/{DOMAIN}/evidence/{site}/abc"
        ),
        f"http:/api/{DOMAIN}/thumbnail/{{entry_id}}/{{run_id}}": http(
            f"/api/{DOMAIN}/thumbnail/{site}/abc"
        ),
        f"http:/api/{DOMAIN}/case_picture/{{entry_id}}/{{kind}}/{{name}}": http(
            f"/api/{DOMAIN}/case_picture/{site}/shipped/door_parcel_1.jpg"
        ),
        "tool:describe_camera": tool("describe_camera", camera="Front Door"),
        "tool:recent_events": tool("recent_events"),
        "tool:search_history": tool("search_history", query="parcel"),
        "tool:camera_health": tool("camera_health"),
        "tool:site_lookup": tool("site_lookup"),
        "tool:list_workflows": tool("list_workflows"),
        "tool:run_trace": tool("run_trace", workflow="porch"),
        "tool:pending_approvals": pending_tool,
        "intent:OpenNVRLook": said("OpenNVRLook", camera="nowhere"),
        "intent:OpenNVRAlerts": said("OpenNVRAlerts"),
        "intent:OpenNVRApprove": answer_intent("OpenNVRApprove"),
        "intent:OpenNVRDeny": answer_intent("OpenNVRDeny"),
        "intent:OpenNVRAnswer": answer_intent("OpenNVRAnswer", reply="Open"),
        "intent:OpenNVRMessage": said("OpenNVRMessage", message="hello there"),
        "intent:OpenNVRSetWorkflow": said("OpenNVRSetWorkflow", workflow="nope", state="on"),
        "entity:select.workflow_state": lambda h, role: h.entity(
            role, "select", "select_option", porch_state, option="on"
        ),
        "entity:select.site_mode": lambda h, role: h.entity(
            role, "select", "select_option", site_mode, option="armed_home"
        ),
        "entity:button.workflow_run_now": lambda h, role: h.entity(
            role, "button", "press", run_now
        ),
        # Turning off a switch that is off passes (or not) the same door as turning it
        # on, and leaves every workflow running for the other probes.
        "entity:switch.pause_workflows": lambda h, role: h.entity(
            role, "switch", "turn_off", pause
        ),
        # Choosing the model in use again passes (or not) the same door, changing nothing.
        "entity:select.vision_model": lambda h, role: h.entity(
            role, "select", "select_option", vision_model, option="qwen2.5vl:3b"
        ),
        "entity:ai_task.look": lambda h, role: h.ai_task(role, look_task, front_door),
        "media:browse": command_any(
            "media_source/browse_media", {"media_content_id": f"media-source://{DOMAIN}"}
        ),
        "media:resolve": command_any(
            "media_source/resolve_media",
            {"media_content_id": f"media-source://{DOMAIN}/{site}/porch/2026-01-01/nope"},
        ),
    }


@pytest.fixture
def entry_options(ollama: FakeOllama) -> dict[str, Any]:
    return {**ai_options(ollama), "camera_roles": {"front_door": "1", "driveway": "2"}}


@pytest.fixture
async def house(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    sim: OpenNVRSimulator,
    hass_admin_user: User,
    hass_read_only_user: User,
    hass_ws_client: WebSocketGenerator,
    hass_client_no_auth: ClientSessionGenerator,
) -> AsyncGenerator[House]:
    assert await async_setup_component(hass, "homeassistant", {})
    assert await async_setup_component(hass, "conversation", {})
    household = await hass.auth.async_create_user("Household", group_ids=[GROUP_ID_USER])
    approver = await hass.auth.async_create_user("Approver", group_ids=[GROUP_ID_USER])
    hass.config_entries.async_update_entry(
        config_entry,
        options={**config_entry.options, CONF_APPROVERS: {"roles": {"owner": [approver.id]}}},
    )
    host = await set_up(hass, config_entry, porch=PORCH, chat=CHAT, ask=ASK)
    driveway = er.async_get(hass).async_get_entity_id(
        Platform.CAMERA, DOMAIN, camera_unique_id(sim.config.site_id, 2)
    )
    assert driveway is not None
    some = MockUser(name="Driveway only").add_to_hass(hass)
    some.mock_policy({"entities": {"entity_ids": {driveway: True}}})
    users = {
        "admin": hass_admin_user,
        "household": household,
        "read_only": hass_read_only_user,
        "some_cameras": some,
        "approver": approver,
    }
    house = House(hass, config_entry, host, users, hass_ws_client, hass_client_no_auth)
    yield house
    await house.close()


# The websocket server keeps a heartbeat timer for the connection it refused (no login)
# until aiohttp's server closes at the end of the test.
@pytest.mark.parametrize("expected_lingering_timers", [True])
async def test_every_door_is_in_the_table_and_each_role_gets_what_the_matrix_says(
    hass: HomeAssistant, house: House, hass_admin_user: User
) -> None:
    doors = await discovered(hass, house.entry, hass_admin_user)
    assert doors - set(DOORS) == set(), "doors without a rule (add them to DOORS and README)"
    assert set(DOORS) - doors == set(), "rules for doors that do not exist"
    tries = probes(house)
    assert set(tries) == doors, "a door without a probe in this test"
    wrong = []
    for door in sorted(doors):
        for role in ROLES:
            got = await tries[door](house, role)
            await hass.async_block_till_done()
            if got != expected(door, role):
                wrong.append(f"{door} as {role}: {got}, the matrix says {expected(door, role)}")
    assert wrong == [], "\n".join(wrong)


async def test_a_signed_link_opens_what_a_login_alone_does_not(
    hass: HomeAssistant, house: House, hass_client_no_auth: ClientSessionGenerator
) -> None:
    """The other half of "signed link": the same view served on a signature, no login."""
    client = await hass_client_no_auth()
    approval_id = await house.question()
    ticket = house.host.desk.tickets.by_id[approval_id]
    token = house.host.desk.tickets.tokens_of(ticket)[house.users["approver"].id]["Open"]
    path = sign(hass, f"/api/{DOMAIN}/answer/{token}", 600)
    page = await client.get(path)
    assert page.status == HTTPStatus.OK
    assert "Open the gate?" in await page.text()
    assert (await client.get(f"/api/{DOMAIN}/answer/{token}")).status == HTTPStatus.UNAUTHORIZED
