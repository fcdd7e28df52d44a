"""What a reading door may show its caller: which cameras a run touched, which cameras a
workflow names, which of a site's cameras someone may see, which site lists are personal
data, and whether a picture request came through a signed link.

The decision itself is always the caller's (:meth:`.permissions.Caller.may_see`, one camera
entity at a time); this module only says which cameras to ask about, so the actions, the
panel, its live feed, Assist and voice all ask about the same ones.

* **A run** is shown only to someone who may see every camera it touched: its trigger's,
  each camera an AI step looked at, each camera a tool call or an action named, each
  question's. A tool call that named no camera read across the site (recent events of any
  camera, an event by its id), and a camera name this site no longer knows could be any
  camera: either counts as every camera of the site. A hidden run answers like one that
  does not exist.
* **A workflow** (its list row, its versions, its file) is shown only to someone who may
  see every camera it names: the roles of its trigger, its conditions and its steps. A
  file that does not load names cameras nobody can tell, so it counts as naming all.
* **Personal data lists** (plates, faces) are an administrator's: a list is personal when
  its name says plates or faces, or a workflow compares a plate or a face against it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from aiohttp import web
from homeassistant.components.http import (
    KEY_AUTHENTICATED,
    KEY_HASS,
    KEY_HASS_REFRESH_TOKEN_ID,
)
from homeassistant.components.http.auth import SIGN_QUERY_PARAM, STORAGE_KEY
from homeassistant.core import HomeAssistant, ServiceCall

from ..engine import UnknownRunError
from ..nvr.normalize import MalformedPayload, camera_id_text
from ..workflow import Workflow, walk_steps
from ..workflow.model import (
    ActionStep,
    AIStep,
    CameraCondition,
    Condition,
    ForEachCameras,
    ForEachEvents,
    ForEachStep,
    IfStep,
    ListCondition,
    LookSpec,
    PtzPresetAction,
    SaveClipAction,
)
from .errors import invalid, listed
from .folder.files import workflow_id_for
from .permissions import Caller, NotAllowed, async_caller

if TYPE_CHECKING:
    from .workflows import WorkflowFile, WorkflowHost

#: The name the look and investigate actions give a camera that plays no role.
_UNROLED: Final = re.compile(r"camera[ _](\d+)")
#: Tool arguments that name cameras.
_CAMERA_ARGS: Final = ("camera", "camera_id", "camera_ids")
#: Camera arguments that mean every camera.
_EVERY: Final = frozenset({"all", "__any__"})
#: Tools that read no camera; any other tool that named none read across the site.
_NO_CAMERA_TOOLS: Final = frozenset({"site_lookup", "ask_person"})
#: The picture rows of a Look: with no camera named, no picture was taken.
_PICTURE_ROWS: Final = frozenset({"picture", "frames"})
#: What a personal data list's name, or the value compared against it, says.
_PERSONAL: Final = re.compile(r"plate|face", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Touched:
    """The cameras (ids as text) something touched; ``everywhere``: every camera too."""

    cameras: frozenset[str] = frozenset()
    everywhere: bool = False


class _Collect:
    """Camera names gathered into a :class:`Touched`."""

    def __init__(self, host: WorkflowHost) -> None:
        self._host = host
        self.cameras: set[str] = set()
        self.everywhere = False

    def add(self, name: Any) -> None:
        """A camera as a run or a workflow names it (nothing: None or empty)."""
        if name is None or name == "":
            return
        if str(name) in _EVERY:
            self.everywhere = True
            return
        camera_id = camera_id_of(self._host, name)
        if camera_id is None:
            self.everywhere = True
        else:
            self.cameras.add(camera_id)

    def touched(self) -> Touched:
        return Touched(frozenset(self.cameras), self.everywhere)


def camera_id_of(host: WorkflowHost, name: Any) -> str | None:
    """The camera id a name stands for on this site: a role, a camera id (``3``, ``cam3``),
    or the name the actions give a camera with no role (``camera_3``); None when unknown."""
    text = str(name).strip()
    roles = host.settings.roles
    if text in roles:
        return str(roles[text])
    if match := _UNROLED.fullmatch(text):
        return match.group(1)
    try:
        camera_id = camera_id_text(text)
    except MalformedPayload:
        return None
    return camera_id if camera_id is not None and camera_id.isdigit() else None


def camera_touched(host: WorkflowHost, name: Any) -> Touched:
    """One camera as something names it (a picture's camera): nothing for None, every
    camera for a name this site does not know."""
    found = _Collect(host)
    found.add(name)
    return found.touched()


def site_camera_ids(host: WorkflowHost) -> frozenset[str]:
    """Every camera of the host's site: those OpenNVR lists, and those roles map."""
    listed_ids = host.site_cameras()
    return frozenset({str(c) for c in listed_ids} | {str(c) for c in host.settings.roles.values()})


def may_see(caller: Caller, host: WorkflowHost, touched: Touched) -> bool:
    """Whether ``caller`` may see every camera of ``touched``."""
    if caller.is_admin:
        return True
    ids = touched.cameras | (site_camera_ids(host) if touched.everywhere else frozenset())
    return caller.may_see_all(host.camera_entity(camera_id) for camera_id in ids)


def visible_camera_ids(caller: Caller, host: WorkflowHost) -> frozenset[int]:
    """The site's cameras ``caller`` may see."""
    return frozenset(
        int(camera_id)
        for camera_id in site_camera_ids(host)
        if caller.may_see(host.camera_entity(camera_id))
    )


# ── runs ────────────────────────────────────────────────────────────────────────────────


def run_touched(host: WorkflowHost, detail: Mapping[str, Any]) -> Touched:
    """Every camera a stored run (``Engine.run_detail``) touched (see the module)."""
    found = _Collect(host)
    trigger = _data(detail.get("trigger"))
    if trigger.get("camera_id") is not None:
        found.add(trigger["camera_id"])
    else:
        found.add(trigger.get("camera_role"))
    for step in detail.get("steps") or ():
        found.add(_data(step.get("inputs")).get("camera"))
    for call in detail.get("tool_calls") or ():
        if call.get("kind") != "tool":
            continue
        args = _data(call.get("args_asked"))
        named = [v for key in _CAMERA_ARGS for v in _values(args.get(key))]
        for name in named:
            found.add(name)
        if not named and call.get("name") not in _NO_CAMERA_TOOLS | _PICTURE_ROWS:
            found.everywhere = True
    for approval in detail.get("approvals") or ():
        found.add(approval.get("camera_id"))
    return found.touched()


def may_see_run(caller: Caller, host: WorkflowHost, detail: Mapping[str, Any]) -> bool:
    """Whether ``caller`` may see every camera the run touched."""
    return caller.is_admin or may_see(caller, host, run_touched(host, detail))


async def visible_run(caller: Caller, host: WorkflowHost, run_id: str) -> dict[str, Any] | None:
    """The stored run ``run_id`` when ``caller`` may see it; None when it is hidden or
    does not exist (the two answer alike)."""
    try:
        detail = await host.engine.run_detail(run_id)
    except UnknownRunError:
        return None
    return detail if may_see_run(caller, host, detail) else None


# ── workflows ───────────────────────────────────────────────────────────────────────────


def workflow_touched(host: WorkflowHost, workflow: Workflow | None) -> Touched:
    """Every camera ``workflow`` names (see the module); None: a file that does not load."""
    if workflow is None:
        return Touched(everywhere=True)
    found = _Collect(host)
    for name in getattr(workflow.when, "cameras", ()) or ():
        found.add(name)
    for condition in _conditions(workflow):
        if isinstance(condition, CameraCondition):
            for role in condition.roles:
                found.add(role)
    for _, step in walk_steps(workflow):
        for name in _step_cameras(step):
            found.add(name)
    return found.touched()


def may_see_workflow(caller: Caller, host: WorkflowHost, workflow: Workflow | None) -> bool:
    """Whether ``caller`` may see every camera ``workflow`` names."""
    return caller.is_admin or may_see(caller, host, workflow_touched(host, workflow))


def visible_workflows(caller: Caller, host: WorkflowHost) -> dict[str, WorkflowFile]:
    """The host's workflow files ``caller`` may see, by id."""
    return {
        workflow_id: loaded
        for workflow_id, loaded in host.files.items()
        if may_see_workflow(caller, host, loaded.workflow)
    }


def visible_workflow(caller: Caller, host: WorkflowHost, name: str) -> WorkflowFile:
    """The file of the workflow ``name`` (its id or file name), when ``caller`` may see
    it; a hidden one is refused exactly like one that does not exist."""
    visible = visible_workflows(caller, host)
    loaded = visible.get(name) or visible.get(workflow_id_for(name))
    if loaded is None:
        raise invalid("unknown_workflow", workflow=name, workflows=listed(visible))
    return loaded


def _conditions(workflow: Workflow) -> Iterator[Condition]:
    yield from workflow.conditions
    for _, step in walk_steps(workflow):
        if isinstance(step, IfStep):
            yield from step.conditions


def _step_cameras(step: object) -> Iterable[str | None]:
    match step:
        case AIStep(spec=LookSpec(camera=camera)):
            return (camera,)
        case ForEachStep(items=ForEachCameras(cameras=cameras) | ForEachEvents(cameras=cameras)):
            return cameras
        case ActionStep(action=SaveClipAction(camera=camera) | PtzPresetAction(camera=camera)):
            return (camera,)
    return ()


# ── personal data lists ─────────────────────────────────────────────────────────────────


def personal_lists(host: WorkflowHost) -> frozenset[str]:
    """The site lists that hold personal data (see the module)."""
    names = {name for name in host.settings.site.lists if _PERSONAL.search(name)}
    for loaded in host.files.values():
        if loaded.workflow is None:
            continue
        for condition in _conditions(loaded.workflow):
            if isinstance(condition, ListCondition) and _PERSONAL.search(condition.name):
                names.add(condition.list_name)
    return frozenset(names)


def visible_lists(caller: Caller, host: WorkflowHost) -> dict[str, tuple[str, ...]]:
    """The site lists ``caller`` may read: all for an administrator, else those that hold
    no personal data."""
    lists = host.settings.site.lists
    if caller.is_admin:
        return dict(lists)
    hidden = personal_lists(host)
    return {name: tuple(items) for name, items in lists.items() if name not in hidden}


# ── who is asking ───────────────────────────────────────────────────────────────────────


async def action_caller(hass: HomeAssistant, call: ServiceCall) -> Caller:
    """The caller of an action (its door let them through: a user who is gone since is
    refused as the door would)."""
    caller = await async_caller(hass, call.context)
    if caller is None:
        raise NotAllowed(f"action:{call.service}", call.context.user_id)
    return caller


def signed_request(request: web.Request) -> bool:
    """Whether Home Assistant let ``request`` in by a path signed with ``async_sign_path``
    for its content user (every link this integration makes), not by a person's token: the
    picture views serve nothing else, since only a link is checked, when made, against
    the cameras its reader may see."""
    hass: HomeAssistant = request.app[KEY_HASS]
    return (
        bool(request.get(KEY_AUTHENTICATED))
        and SIGN_QUERY_PARAM in request.query
        and request.get(KEY_HASS_REFRESH_TOKEN_ID) is not None
        and request.get(KEY_HASS_REFRESH_TOKEN_ID) == hass.data.get(STORAGE_KEY)
    )


def _data(raw: Any) -> Mapping[str, Any]:
    """A stored JSON column (or its value) as a mapping; anything else as empty."""
    value = raw
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except ValueError:
            return {}
    return value if isinstance(value, Mapping) else {}


def _values(value: Any) -> list[Any]:
    if isinstance(value, list | tuple):
        return [v for v in value if v is not None and v != ""]
    return [] if value is None or value == "" else [value]
