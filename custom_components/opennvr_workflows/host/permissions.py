"""Who may do what: the one place every door of the integration asks.

A *door* is anything a person, a phone or a link can reach: an action, a websocket
command, an HTTP view, an Assist tool, a voice intent, an entity that changes something.
Each has one :class:`Rule` in :data:`DOORS`; the README's matrix ("Who may do what") is
that table in words, and a test discovers every door Home Assistant holds for this
integration, fails on one this table does not list, and runs each as every role.

The rules, as a careful homeowner would set them:

* changing workflows and their state, and pausing them all, is for admins
  (:attr:`Rule.ADMIN`);
* starting a workflow (its Run now button, ``run_workflow``, a spoken message) is for
  admins and the people Home Assistant lets control that workflow's entities
  (:attr:`Rule.OPERATE`): a household user may, a read-only user may not;
* reading (runs, events, pictures, plates) is for every person logged in, each seeing only
  what touches the cameras whose camera entity they may read (:attr:`Rule.READ`; the
  filter is :meth:`Caller.may_see`, applied by the door to what it returns);
* marking a run right or wrong, and deleting the case a mark kept, is for admins and
  approvers (:attr:`Rule.MARK`);
* answering is for the people a question is addressed to (:attr:`Rule.ASKED`; the
  approvals desk decides which question is whose);
* pictures and the answer page are served only through links signed for someone who may
  see them (:attr:`Rule.SIGNED_LINK`);
* an answer page's button answers for the person asked, logged in as themselves, or with
  the proof only the link their phone received carries (:attr:`Rule.ANSWER_LINK`).

Home Assistant itself (an automation or a script: a context with no user) is allowed
what an admin is, except answering a question, which needs a person. A door this table
does not name is refused: a new door cannot forget to decide.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from homeassistant.auth.models import User
from homeassistant.auth.permissions.const import POLICY_CONTROL, POLICY_READ
from homeassistant.core import Context, HomeAssistant
from homeassistant.exceptions import HomeAssistantError, Unauthorized
from homeassistant.helpers.entity import Entity

from ..const import DOMAIN
from ..workflow import Workflow, walk_steps
from ..workflow.model import ActionStep, AIStep, EventTrigger, InvestigateSpec
from ..workflow.vocabulary import is_actuator

_LOGGER = logging.getLogger(__name__)

#: Tools and events that read who someone is (faces) or which car it is (plates).
PERSONAL_DATA_TOOLS = frozenset({"recognize_faces", "recent_plates"})
PERSONAL_DATA_EVENTS = frozenset({"plate.recognized.v1", "access.decided.v1"})
PERSONAL_DATA_SKILLS = frozenset({"face_recognition", "plate_recognition"})


class Rule(StrEnum):
    """Who passes a door (see the module docstring)."""

    READ = "read"
    OPERATE = "operate"
    ADMIN = "admin"
    MARK = "mark"
    ASKED = "asked"
    SIGNED_LINK = "signed_link"
    ANSWER_LINK = "answer_link"


#: The roles of the README's matrix, in its column order.
ROLES: Final = ("admin", "household", "read_only", "some_cameras", "approver", "no_login")

#: What each rule gives each role, as the README's matrix writes it.
CELLS: Final[Mapping[Rule, Mapping[str, str]]] = {
    Rule.READ: {
        "admin": "yes",
        "household": "yes",
        "read_only": "yes",
        "some_cameras": "their cameras",
        "approver": "yes",
        "no_login": "no",
    },
    Rule.OPERATE: {
        "admin": "yes",
        "household": "yes",
        "read_only": "no",
        "some_cameras": "no",
        "approver": "yes",
        "no_login": "no",
    },
    Rule.ADMIN: {
        "admin": "yes",
        "household": "no",
        "read_only": "no",
        "some_cameras": "no",
        "approver": "no",
        "no_login": "no",
    },
    Rule.MARK: {
        "admin": "yes",
        "household": "no",
        "read_only": "no",
        "some_cameras": "no",
        "approver": "yes",
        "no_login": "no",
    },
    Rule.ASKED: {
        "admin": "if asked",
        "household": "if asked",
        "read_only": "if asked",
        "some_cameras": "if asked",
        "approver": "if asked",
        "no_login": "no",
    },
    Rule.ANSWER_LINK: {
        "admin": "if asked",
        "household": "if asked",
        "read_only": "if asked",
        "some_cameras": "if asked",
        "approver": "if asked",
        "no_login": "signed link",
    },
    Rule.SIGNED_LINK: {
        "admin": "signed link",
        "household": "signed link",
        "read_only": "signed link",
        "some_cameras": "signed link",
        "approver": "signed link",
        "no_login": "signed link",
    },
}

_W: Final = f"{DOMAIN}/workflows/"
_A: Final = f"{DOMAIN}/approvals/"

#: Every door and its rule. Keys: ``action:<name>``, ``ws:<type>``, ``http:<url>``,
#: ``tool:<short name>``, ``intent:<type>``, ``entity:<domain>.<translation key>``,
#: ``media:<browse or resolve>`` (the Media panel's evidence pictures).
DOORS: Final[Mapping[str, Rule]] = {
    # Actions
    "action:look": Rule.READ,
    "action:investigate": Rule.READ,
    "action:search_history": Rule.READ,
    "action:get_runs": Rule.READ,
    "action:export_workflow": Rule.READ,
    "action:validate_workflow": Rule.READ,
    "action:run_workflow": Rule.OPERATE,
    "action:mark_run": Rule.MARK,
    "action:answer_approval": Rule.ASKED,
    "action:import_workflow": Rule.ADMIN,
    "action:set_workflow_state": Rule.ADMIN,
    "action:rollback_workflow": Rule.ADMIN,
    "action:try_workflow": Rule.ADMIN,
    "action:reload": Rule.ADMIN,
    "action:describe_workflow": Rule.ADMIN,
    # The home's own cases and measuring the model (host/cases/actions.py)
    "action:list_cases": Rule.READ,
    "action:export_cases": Rule.READ,
    "action:delete_case": Rule.MARK,
    "action:measure_model": Rule.ADMIN,
    # Websocket commands (the Workflows panel and the dashboard card)
    f"ws:{_W}list": Rule.READ,
    f"ws:{_W}runs": Rule.READ,
    f"ws:{_W}run": Rule.READ,
    f"ws:{_W}versions": Rule.READ,
    f"ws:{_W}source": Rule.READ,
    f"ws:{_W}validate": Rule.READ,
    f"ws:{_W}templates": Rule.READ,
    f"ws:{_W}subscribe": Rule.READ,
    f"ws:{_W}mark": Rule.MARK,
    f"ws:{_W}save": Rule.ADMIN,
    f"ws:{_W}set_state": Rule.ADMIN,
    f"ws:{_W}rollback": Rule.ADMIN,
    f"ws:{_W}try": Rule.ADMIN,
    f"ws:{_A}list": Rule.ASKED,
    f"ws:{_A}answer": Rule.ASKED,
    # HTTP views
    f"http:/api/{DOMAIN}/answer/{{token}}": Rule.SIGNED_LINK,
    f"http:/api/{DOMAIN}/answer/{{token}}/confirm": Rule.ANSWER_LINK,
    f"http:/api/{DOMAIN}/picture/{{entry_id}}/{{name}}": Rule.SIGNED_LINK,
    f"http:/api/{DOMAIN}/evidence/{{entry_id}}/{{run_id}}": Rule.SIGNED_LINK,
    f"http:/api/{DOMAIN}/thumbnail/{{entry_id}}/{{run_id}}": Rule.READ,
    f"http:/api/{DOMAIN}/case_picture/{{entry_id}}/{{kind}}/{{name}}": Rule.SIGNED_LINK,
    # Assist tools (the integration's own API and the built-in Assist API)
    "tool:describe_camera": Rule.READ,
    "tool:recent_events": Rule.READ,
    "tool:search_history": Rule.READ,
    "tool:camera_health": Rule.READ,
    "tool:site_lookup": Rule.READ,
    "tool:list_workflows": Rule.READ,
    "tool:run_trace": Rule.READ,
    "tool:pending_approvals": Rule.ASKED,
    # Voice intents
    "intent:OpenNVRLook": Rule.READ,
    "intent:OpenNVRAlerts": Rule.READ,
    "intent:OpenNVRApprove": Rule.ASKED,
    "intent:OpenNVRDeny": Rule.ASKED,
    "intent:OpenNVRAnswer": Rule.ASKED,
    "intent:OpenNVRMessage": Rule.OPERATE,
    "intent:OpenNVRSetWorkflow": Rule.ADMIN,
    # Entities that change something
    "entity:select.workflow_state": Rule.ADMIN,
    "entity:select.site_mode": Rule.OPERATE,
    "entity:button.workflow_run_now": Rule.OPERATE,
    "entity:select.vision_model": Rule.ADMIN,
    # Entities that answer: the AI Task looks at a camera (it moves nothing; each person
    # is answered about the cameras they may see)
    "entity:ai_task.look": Rule.READ,
    # The Media panel: the pictures AI steps looked at, by workflow and day
    "media:browse": Rule.READ,
    "media:resolve": Rule.READ,
    "entity:switch.pause_workflows": Rule.ADMIN,
}


class NotAllowed(Unauthorized):
    """A door refused its caller: Home Assistant's own ``Unauthorized`` (a websocket
    answers ``unauthorized``, the REST API 401), with a translated sentence."""

    def __init__(self, door: str, user_id: str | None, *, entity_id: str | None = None) -> None:
        super().__init__(user_id=user_id, entity_id=entity_id, permission=door)
        self.door = door
        # The translated sentence (Unauthorized itself takes no translation).
        HomeAssistantError.__init__(
            self,
            translation_domain=DOMAIN,
            translation_key="not_allowed",
            translation_placeholders={"door": door.partition(":")[2] or door},
        )


@dataclass(frozen=True, slots=True)
class Caller:
    """Who came through a door: a person (``user``), or Home Assistant itself (None)."""

    user: User | None

    @property
    def user_id(self) -> str | None:
        return self.user.id if self.user is not None else None

    @property
    def is_admin(self) -> bool:
        """An admin, or Home Assistant itself (automations and scripts)."""
        return self.user is None or self.user.is_admin

    def may_see(self, camera_entity_id: str | None) -> bool:
        """Whether this caller may see what a camera shows (its entity readable). A camera
        with no entity is hidden from everyone but admins."""
        if self.is_admin:
            return True
        if camera_entity_id is None or self.user is None:
            return False
        return self.user.permissions.check_entity(camera_entity_id, POLICY_READ)

    def may_see_all(self, camera_entity_ids: Iterable[str | None]) -> bool:
        """Whether this caller may see every one of these cameras."""
        return all(self.may_see(entity_id) for entity_id in camera_entity_ids)

    def may_control(self, entity_id: str | None) -> bool:
        """Whether Home Assistant lets this caller control ``entity_id``."""
        if self.is_admin:
            return True
        if entity_id is None or self.user is None:
            return False
        return self.user.permissions.check_entity(entity_id, POLICY_CONTROL)


#: A camera id of a site -> its camera entity (None: the camera has no entity).
CameraEntity = Callable[[str | None], str | None]


def entity_door(entity: Entity) -> str:
    """The door of an entity that changes something: ``entity:<domain>.<translation key>``."""
    return f"entity:{entity.entity_id.partition('.')[0]}.{entity.translation_key}"


async def async_allow_entity(entity: Entity) -> Caller:
    """Let the caller of the entity's current service call through its door (the context
    Home Assistant set for the call; :func:`async_allow`)."""
    return await async_allow(
        entity.hass, entity_door(entity), entity._context, entity_id=entity.entity_id
    )


async def async_caller(hass: HomeAssistant, context: Context | None) -> Caller | None:
    """The caller of ``context``: None when it names a user who does not exist or is
    deactivated (refused everywhere)."""
    user_id = context.user_id if context is not None else None
    if user_id is None:
        return Caller(None)
    user = await hass.auth.async_get_user(user_id)
    if user is None or not user.is_active:
        return None
    return Caller(user)


async def is_admin(hass: HomeAssistant, context: Context | None) -> bool:
    """Whether the context's caller is an admin (or Home Assistant itself)."""
    caller = await async_caller(hass, context)
    return caller is not None and caller.is_admin


async def async_allow(
    hass: HomeAssistant,
    door: str,
    context: Context | None,
    *,
    entity_id: str | None = None,
    approvers: Iterable[str] = (),
) -> Caller:
    """Let ``context``'s caller through ``door``, or raise :class:`NotAllowed` (see
    :func:`allow`)."""
    caller = await async_caller(hass, context)
    user_id = context.user_id if context is not None else None
    return allow(door, caller, user_id, entity_id=entity_id, approvers=approvers)


def allow(
    door: str,
    caller: Caller | None,
    user_id: str | None = None,
    *,
    entity_id: str | None = None,
    approvers: Iterable[str] = (),
) -> Caller:
    """Let ``caller`` through ``door``, or raise :class:`NotAllowed` (logged, at info).

    ``caller`` None is a user who does not exist or is deactivated (``user_id``), refused
    everywhere. ``entity_id`` is the entity an :attr:`Rule.OPERATE` door acts on (the
    workflow's State select, the site mode select, the Run now button); ``approvers`` the
    user ids a :attr:`Rule.MARK` door accepts besides admins. What a :attr:`Rule.READ`
    door shows is then filtered with :meth:`Caller.may_see`."""
    if caller is not None and permits(door, caller, entity_id=entity_id, approvers=approvers):
        return caller
    who = caller.user.name if caller is not None and caller.user is not None else user_id
    _LOGGER.info("Refused %s to %s", door, who or "an unknown user")
    raise NotAllowed(door, caller.user_id if caller is not None else user_id, entity_id=entity_id)


def permits(
    door: str, caller: Caller | None, *, entity_id: str | None = None, approvers: Iterable[str] = ()
) -> bool:
    """Whether ``caller`` may pass ``door`` (see :func:`allow`, which refuses with the
    reason; a page uses this to decide which controls to offer)."""
    rule = DOORS.get(door)
    if rule is None:
        _LOGGER.error("Refused %s: this door has no rule in the permission table", door)
        return False
    if caller is None:
        return False
    if caller.is_admin or rule in (Rule.READ, Rule.ASKED, Rule.SIGNED_LINK, Rule.ANSWER_LINK):
        return True
    if rule is Rule.OPERATE:
        return caller.may_control(entity_id)
    if rule is Rule.MARK:
        return caller.user_id in set(approvers)
    return False


# ── what a workflow reads and moves ─────────────────────────────────────────────────────


def reads_personal_data(workflow: Workflow) -> bool:
    """Whether the workflow reads who someone is (faces) or which car it is (plates)."""
    if PERSONAL_DATA_SKILLS & set(workflow.needs):
        return True
    if isinstance(workflow.when, EventTrigger) and workflow.when.event in PERSONAL_DATA_EVENTS:
        return True
    return any(
        isinstance(step, AIStep)
        and isinstance(step.spec, InvestigateSpec)
        and bool(PERSONAL_DATA_TOOLS & set(step.spec.tools))
        for _, step in walk_steps(workflow)
    )


def moving_steps(
    workflow: Workflow, judge: Callable[[ActionStep], str | None] | None = None
) -> list[str]:
    """Why the workflow moves things, one reason per step that does: the contract's
    actuators, and every step this host's own judgement (``judge``: the same one that
    runs before each call, :mod:`.effects.judge`) finds moving things here (a webhook
    an admin marked, a notify service behind a speaker, a phone command)."""
    reasons: list[str] = []
    for path, step in walk_steps(workflow):
        if not isinstance(step, ActionStep):
            continue
        why = judge(step) if judge is not None else None
        if why is None and is_actuator(step):
            why = f"{type(step.action).__name__} is an actuator"
        if why is not None:
            reasons.append(f"{path}: {why}")
    return reasons


def needs_admin_to_turn_on(
    workflow: Workflow, judge: Callable[[ActionStep], str | None] | None = None
) -> bool:
    """Whether the workflow moves things or reads faces or plates (shown in the import
    preview and the panel; every state change is an admin's, :data:`DOORS`)."""
    return reads_personal_data(workflow) or bool(moving_steps(workflow, judge))
