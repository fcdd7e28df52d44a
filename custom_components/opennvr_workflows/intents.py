"""Intents for Home Assistant's built-in conversation agent (Assist without a model).

The sentences that lead here are shipped in ``sentences/en/opennvr_workflows.yaml`` and
installed by the options page "Voice sentences" (:mod:`.host.sentences`). Each handler
reuses what the actions and the phones already do, so voice follows the same rules:

* ``OpenNVRLook`` ("what's at the front door"): the ``look`` action on the camera that
  plays the spoken role, asked the question as it was said; the answer is the reason the
  model gave (what it saw). The action's own checks apply (AI on, a model chosen, a camera
  the speaker may see): a role whose camera the speaker may not see is answered, and the
  roles are listed, as if it did not exist.
* ``OpenNVRAlerts`` ("any alerts"): the site's unacknowledged alerts, newest first; a
  person who may not see a camera hears nothing of its alerts.
* ``OpenNVRApprove`` / ``OpenNVRDeny`` / ``OpenNVRAnswer``: answer the newest open question
  asked of the speaker (the latest deadline first, as the approvals list orders them)
  through the approvals desk, as a phone tap does: only an addressee who may see the
  camera is taken, the first answer wins, and every answer or refusal is logged with
  ``via`` voice. Which reply: *approve* is the question's first reply (questions put the
  reply that lets something happen first: ``[Open, Keep closed]``); *deny* is a reply
  that moves nothing (the engine says, per reply, what it does): the default when that
  moves nothing, else the last such reply other than the first. When every reply moves
  something, deny is refused with the reason, and the person says the reply they mean; a
  question with one reply that moves nothing has nothing to deny. *answer keep closed*
  names the reply as the question spells it (any case). When nothing is asked of the
  speaker but a question is open, the answer goes to the newest open question so the desk
  refuses it with its reason (not an addressee, no signed-in person), logged on that
  question as any refused tap is.
* ``OpenNVRSetWorkflow`` ("set the gate workflow to test"): the ``set_workflow_state``
  action (its rule for what needs an admin, its logbook line); by voice only a signed-in
  admin may switch workflows at all, since a voice satellite speaks with no user.
* ``OpenNVRMessage`` ("ask the cameras ..."): a message to the workflows whose trigger is
  a message; Assist says their replies (:mod:`.host.runs.messages`, at most
  :data:`~.host.runs.messages.REPLY_WAIT_S` of waiting, then "still working").

These intents are not offered to model-based agents: Home Assistant no longer exposes
custom intents to them by itself (they have the integration's own tools instead).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import probatio as vol
from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import Context, HomeAssistant, callback
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import intent
from homeassistant.util import dt as dt_util
from pyopennvr import OpenNVRError

from .const import DOMAIN
from .coordinator import OpenNVRConfigEntry
from .host.action_support import user_name
from .host.errors import listed
from .host.history.alerts import count_unacked_alerts
from .host.permissions import DOORS, NotAllowed, Rule, allow, async_allow, async_caller
from .host.read_scope import camera_touched, may_see, visible_camera_ids
from .host.runs.messages import MessageOutcome, ask_workflows, message_workflows
from .host.texts import Texts
from .host.workflows import WorkflowHost

INTENT_LOOK: Final = "OpenNVRLook"
INTENT_ALERTS: Final = "OpenNVRAlerts"
INTENT_APPROVE: Final = "OpenNVRApprove"
INTENT_DENY: Final = "OpenNVRDeny"
INTENT_ANSWER: Final = "OpenNVRAnswer"
INTENT_SET_WORKFLOW: Final = "OpenNVRSetWorkflow"
INTENT_MESSAGE: Final = "OpenNVRMessage"
#: The outcomes a spoken Look decides between; the answer itself is the model's reason.
LOOK_DECISION: Final = ("something", "nothing")
#: How many alerts are named (the count is OpenNVR's total: :mod:`.host.history.alerts`).
ALERTS_NAMED: Final = 3
STATES: Final = ("off", "test", "on")


class Refused(Exception):
    """What Assist says instead of doing what was asked."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


@callback
def async_setup_intents(hass: HomeAssistant) -> None:
    """Register the handlers (once, for every entry: each finds the entries it needs)."""
    for handler in (
        LookIntent(),
        AlertsIntent(),
        AnswerIntent(INTENT_APPROVE),
        AnswerIntent(INTENT_DENY),
        AnswerIntent(INTENT_ANSWER),
        SetWorkflowIntent(),
        MessageIntent(),
    ):
        intent.async_register(hass, handler)


def loaded_entries(hass: HomeAssistant) -> list[tuple[OpenNVRConfigEntry, WorkflowHost]]:
    """The loaded entries with their workflow hosts."""
    out: list[tuple[OpenNVRConfigEntry, WorkflowHost]] = []
    entry: OpenNVRConfigEntry
    for entry in hass.config_entries.async_entries(DOMAIN):
        if entry.state is ConfigEntryState.LOADED and entry.runtime_data.workflows is not None:
            out.append((entry, entry.runtime_data.workflows))
    return out


def spoken_name(text: str) -> str:
    """A name as said and as written compared alike: ``Front-door`` and ``the front_door
    camera`` are ``front door``."""
    words = re.sub(r"[\s_\-]+", " ", text.casefold()).strip(" .?!")
    words = words.removeprefix("the ")
    return words.removesuffix(" camera").removesuffix(" workflow").strip()


@dataclass(frozen=True, slots=True)
class Request:
    """One spoken request, checked: the intent, its slots, the loaded sites, the texts."""

    intent_obj: intent.Intent
    slots: dict[str, Any]
    entries: list[tuple[OpenNVRConfigEntry, WorkflowHost]]
    texts: Texts

    def slot(self, name: str) -> str:
        """The value said for the slot ``name``, without surrounding blanks."""
        return str(self.slots[name]["value"]).strip()


class OpenNVRIntent(intent.IntentHandler):
    """A handler that speaks a sentence, or a refusal as the response's error."""

    #: What Assist says when the speaker may not use this intent (a text's key).
    refusal = "voice_not_allowed"

    async def async_handle(self, intent_obj: intent.Intent) -> intent.IntentResponse:
        texts = Texts(intent_obj.hass)
        await texts.async_load()
        slots = self.async_validate_slots(intent_obj.slots)
        response = intent_obj.create_response()
        try:
            await self._allow(intent_obj, texts)
            entries = loaded_entries(intent_obj.hass)
            if not entries:
                raise Refused(texts("voice_no_site", {}))
            speech = await self.speak(Request(intent_obj, slots, entries, texts))
        except Refused as refused:
            response.async_set_error(intent.IntentResponseErrorCode.FAILED_TO_HANDLE, refused.text)
            return response
        response.async_set_speech(speech)
        return response

    async def speak(self, request: Request) -> str:
        """What Assist says; raises :class:`Refused` for what it says instead."""
        raise NotImplementedError

    async def _allow(self, intent_obj: intent.Intent, texts: Texts) -> None:
        """The intent's door (:mod:`.host.permissions`). A door that starts workflows
        decides per workflow, on each workflow's own entity (:class:`MessageIntent`)."""
        door = intent_door(self.intent_type or "")
        rule = DOORS.get(door)
        if rule is Rule.OPERATE:
            return
        if intent_obj.context.user_id is None and rule is Rule.ADMIN:
            # A turn with no user is a voice satellite: whoever is in the room, never an
            # administrator (an automation changes workflows through the actions).
            raise Refused(texts(self.refusal, {}))
        try:
            await async_allow(intent_obj.hass, door, intent_obj.context)
        except NotAllowed as err:
            raise Refused(texts(self.refusal, {})) from err


def intent_door(intent_type: str) -> str:
    """The door of an intent: ``intent:<its type>``."""
    return f"intent:{intent_type}"


# ── what is at a camera ─────────────────────────────────────────────────────────────────


class LookIntent(OpenNVRIntent):
    intent_type = INTENT_LOOK
    description = "Looks at an OpenNVR camera, by its role, and says what it shows"

    @property
    def slot_schema(self) -> dict[Any, Any]:
        return {vol.Required("camera"): intent.non_empty_string}

    async def speak(self, request: Request) -> str:
        intent_obj, entries, texts = request.intent_obj, request.entries, request.texts
        said = request.slot("camera")
        wanted = spoken_name(said)
        caller = await async_caller(intent_obj.hass, intent_obj.context)
        seen: list[tuple[WorkflowHost, str]] = []
        for _, host in entries:
            visible = visible_camera_ids(caller, host) if caller is not None else frozenset()
            seen.extend((host, r) for r, cid in host.settings.roles.items() if cid in visible)
        found = [(host, role) for host, role in seen if spoken_name(role) == wanted]
        if not found:
            roles = listed(spoken_name(role) for _, role in seen)
            raise Refused(texts("voice_unknown_camera", {"camera": said, "roles": roles}))
        host, role = found[0]
        question = (intent_obj.text_input or "").strip() or f"What is at the {wanted}?"
        prompt = (
            f'A person asks: "{question}". Answer from the picture in the reason, in one or '
            "two short sentences a voice assistant can say."
        )
        try:
            result = await intent_obj.hass.services.async_call(
                DOMAIN,
                "look",
                {
                    "config_entry_id": host.entry_id,
                    "camera": role,
                    "prompt": prompt,
                    "decision": list(LOOK_DECISION),
                },
                blocking=True,
                context=intent_obj.context,
                return_response=True,
            )
        except HomeAssistantError as err:
            raise Refused(
                texts("voice_look_failed", {"camera": wanted, "error": str(err)})
            ) from err
        answer = dict(result or {})
        if answer.get("decision") == "unsure":
            # The model's words when it gave some, else why the step could not decide.
            why = answer.get("reason") or answer.get("unsure_reason") or ""
            return texts("voice_look_unsure", {"camera": wanted, "why": why})
        return texts("voice_look", {"camera": wanted, "answer": answer.get("reason") or ""})


# ── alerts ──────────────────────────────────────────────────────────────────────────────


class AlertsIntent(OpenNVRIntent):
    intent_type = INTENT_ALERTS
    description = "Says the OpenNVR site's unacknowledged alerts, newest first"

    async def speak(self, request: Request) -> str:
        intent_obj, texts = request.intent_obj, request.texts
        hass = intent_obj.hass
        rows: list[dict[str, Any]] = []
        count, exact = 0, True
        caller = await async_caller(hass, intent_obj.context)
        for entry, _ in request.entries:
            sees = await _camera_filter(hass, entry, intent_obj.context)
            try:
                found = await count_unacked_alerts(
                    entry.runtime_data.client,
                    _of_row(sees),
                    sees_everything=caller is not None and caller.is_admin,
                )
            except OpenNVRError as err:
                raise Refused(texts("voice_alerts_failed", {"error": str(err)})) from err
            rows.extend(found.newest)
            count += found.count
            exact = exact and found.exact
        if not count:
            return texts("voice_alerts_none", {})
        rows.sort(key=lambda a: str(a.get("fired_at") or ""), reverse=True)
        latest = "; ".join(
            f"{a.get('title') or a.get('alert_id')} {_when(a.get('fired_at'))}".strip()
            for a in rows[:ALERTS_NAMED]
        )
        if not exact:
            return texts("voice_alerts_at_least", {"count": count, "latest": latest})
        return texts("voice_alerts", {"count": count, "latest": latest})


async def _camera_filter(
    hass: HomeAssistant, entry: OpenNVRConfigEntry, context: Context
) -> Callable[[Any], bool]:
    """Whether the speaker may see the camera an alert names (``cam3``): the
    integration's one rule (:meth:`.host.permissions.Caller.may_see`). An alert with no
    camera is the site's and is said to everyone."""
    caller = await async_caller(hass, context)
    host = entry.runtime_data.workflows

    def sees(camera: Any) -> bool:
        if not camera:
            return True
        if caller is None or host is None:
            return False
        return may_see(caller, host, camera_touched(host, camera))

    return sees


def _of_row(sees: Callable[[Any], bool]) -> Callable[[dict[str, Any]], bool]:
    """The camera filter applied to an inbox row (by the camera it names)."""
    return lambda row: sees(row.get("camera_id"))


def _when(fired_at: Any) -> str:
    """``at 14:02`` in Home Assistant's time zone, or nothing for a time not readable."""
    parsed = dt_util.parse_datetime(str(fired_at or ""))
    if parsed is None:
        return ""
    return f"at {dt_util.as_local(parsed):%H:%M}"


# ── answering a question ────────────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class Question:
    """An open question and the desk that holds it."""

    host: WorkflowHost
    approval_id: str
    workflow: str
    replies: tuple[str, ...]
    default: str | None
    expires_at: float
    #: the replies whose path moves something (never what "deny" picks)
    moving: tuple[str, ...] = ()


def reply_for(
    intent_type: str,
    replies: Sequence[str],
    default: str | None,
    said: str,
    moving: Sequence[str] = (),
) -> str | None:
    """The reply a spoken answer stands for (see the module docstring), or None.

    ``moving``: the replies whose path moves something. "Deny" picks only among the
    others: the default when it is one of them, else the last one that is not the first
    reply (approve's); the first reply itself only when it is the one reply that moves
    nothing. None when every reply moves something (see :func:`deny_impossible`).
    """
    if not replies:
        return None
    if intent_type == INTENT_APPROVE:
        return replies[0]
    if intent_type == INTENT_DENY:
        quiet = [r for r in replies if r not in moving]
        pool = [r for r in quiet if r != replies[0]] or (quiet if moving else [])
        if not pool:
            return None
        return default if default in pool else pool[-1]
    wanted = spoken_name(said)
    return next((r for r in replies if spoken_name(r) == wanted), None)


def deny_impossible(replies: Sequence[str], moving: Sequence[str]) -> bool:
    """Whether every reply moves something, so no reply can stand for "deny"."""
    return bool(replies) and all(r in moving for r in replies)


async def question_for(
    entries: list[tuple[OpenNVRConfigEntry, WorkflowHost]], user_id: str | None
) -> Question | None:
    """The newest open question asked of ``user_id``; else the newest open question at
    all (for the desk to refuse); None when nothing is open."""
    asked: list[Question] = []
    if user_id is not None:
        for _, host in entries:
            for row in await host.desk.pending_for(user_id, False):
                asked.append(
                    Question(
                        host,
                        str(row["approval_id"]),
                        str(row["workflow_name"]),
                        tuple(row["replies"]),
                        row["default"],
                        float(row["expires_at"]),
                        tuple(row.get("moving_replies") or ()),
                    )
                )
    if not asked:
        asked = [
            Question(
                host,
                t.approval_id,
                t.workflow_name,
                tuple(t.replies),
                t.default,
                t.expires_at,
                tuple(t.moving_replies),
            )
            for _, host in entries
            for t in host.desk.pending()
        ]
    return max(asked, key=lambda q: q.expires_at, default=None)


class AnswerIntent(OpenNVRIntent):
    description = "Answers the newest OpenNVR workflow question asked of the speaker"

    def __init__(self, intent_type: str) -> None:
        self.intent_type = intent_type

    @property
    def slot_schema(self) -> dict[Any, Any] | None:
        if self.intent_type == INTENT_ANSWER:
            return {vol.Required("reply"): intent.non_empty_string}
        return None

    async def speak(self, request: Request) -> str:
        texts = request.texts
        user_id = request.intent_obj.context.user_id
        question = await question_for(request.entries, user_id)
        if question is None:
            raise Refused(texts("voice_nothing_asked", {}))
        said = request.slot("reply") if self.intent_type == INTENT_ANSWER else ""
        if self.intent_type == INTENT_DENY and deny_impossible(question.replies, question.moving):
            replies = ", ".join(question.replies)
            raise Refused(texts("voice_deny_moves", {"replies": replies}))
        reply = reply_for(
            self.intent_type, question.replies, question.default, said, question.moving
        )
        if reply is None:
            replies = ", ".join(question.replies)
            raise Refused(texts("voice_reply_unknown", {"reply": said, "replies": replies}))
        outcome = await question.host.desk.answer(question.approval_id, reply, user_id, "voice")
        if not outcome.ok:
            raise Refused(outcome.text)
        return texts("voice_answered", {"reply": reply, "workflow": question.workflow})


# ── switching a workflow ────────────────────────────────────────────────────────────────


class SetWorkflowIntent(OpenNVRIntent):
    intent_type = INTENT_SET_WORKFLOW
    description = "Switches an OpenNVR workflow Off, to Test or On (admins only)"
    refusal = "voice_switch_needs_admin"

    @property
    def slot_schema(self) -> dict[Any, Any]:
        return {
            vol.Required("workflow"): intent.non_empty_string,
            vol.Required("state"): vol.In(STATES),
        }

    async def speak(self, request: Request) -> str:
        entries, texts = request.entries, request.texts
        hass, context = request.intent_obj.hass, request.intent_obj.context
        said, state = request.slot("workflow"), request.slot("state")
        wanted = spoken_name(said)
        found = [
            (host, workflow_id, loaded.workflow.name if loaded.workflow else workflow_id)
            for _, host in entries
            for workflow_id, loaded in host.files.items()
            if wanted
            in {
                spoken_name(workflow_id),
                spoken_name(loaded.workflow.name if loaded.workflow else ""),
            }
        ]
        if not found:
            names = listed(
                loaded.workflow.name if loaded.workflow else workflow_id
                for _, host in entries
                for workflow_id, loaded in host.files.items()
            )
            raise Refused(texts("voice_unknown_workflow", {"workflow": said, "workflows": names}))
        host, workflow_id, name = found[0]
        try:
            await hass.services.async_call(
                DOMAIN,
                "set_workflow_state",
                {"config_entry_id": host.entry_id, "workflow": workflow_id, "state": state},
                blocking=True,
                context=context,
                return_response=True,
            )
        except HomeAssistantError as err:
            raise Refused(str(err)) from err
        now = host.engine.workflow_status(workflow_id).state
        return texts("voice_switched", {"workflow": name, "state": now})


# ── a message to the workflows ──────────────────────────────────────────────────────────


class MessageIntent(OpenNVRIntent):
    intent_type = INTENT_MESSAGE
    description = "Sends a message to the OpenNVR workflows that take messages"

    @property
    def slot_schema(self) -> dict[Any, Any]:
        return {vol.Required("message"): intent.non_empty_string}

    async def speak(self, request: Request) -> str:
        hass = request.intent_obj.hass
        message = request.slot("message")
        context = request.intent_obj.context
        user = await user_name(hass, context)
        hosts = [host for _, host in request.entries if message_workflows(host)]
        if not hosts:
            raise Refused(request.texts("voice_message_none", {}))
        caller = await async_caller(hass, context)
        door = intent_door(self.intent_type)

        def may_start(host: WorkflowHost) -> Callable[[str], bool]:
            def check(workflow_id: str) -> bool:
                try:
                    allow(
                        door, caller, context.user_id, entity_id=host.workflow_entity(workflow_id)
                    )
                except NotAllowed:
                    return False
                return True

            return check

        if not any(may_start(h)(w) for h in hosts for w, _ in message_workflows(h)):
            raise Refused(request.texts("voice_not_allowed", {}))
        outcomes = await asyncio.gather(
            *(
                ask_workflows(hass, host, message, user, may_start=may_start(host), context=context)
                for host in hosts
            )
        )
        return message_speech(outcomes, request.texts)


def message_speech(outcomes: Sequence[MessageOutcome], texts: Texts) -> str:
    """What Assist says of a message's runs: their replies, then what is still going."""
    parts: list[str] = []
    for outcome in outcomes:
        for reply in outcome.replies:
            if reply.test:
                parts.append(
                    texts(
                        "voice_message_test", {"workflow": reply.workflow, "message": reply.message}
                    )
                )
            else:
                parts.append(reply.message)
    asking = [name for o in outcomes for name in o.asking]
    working = [name for o in outcomes for name in o.working]
    if asking:
        parts.append(texts("voice_message_asking", {"workflows": ", ".join(asking)}))
    if working:
        parts.append(texts("voice_message_working", {"workflows": ", ".join(working)}))
    if parts:
        return " ".join(p for p in parts if p)
    started = [name for o in outcomes for name in o.started]
    if started:
        return texts("voice_message_no_reply", {"workflows": ", ".join(started)})
    reasons = [f"{name}: {why}" for o in outcomes for name, why in o.not_started.items()]
    if reasons:
        return texts("voice_message_not_started", {"reasons": "; ".join(reasons)})
    return texts("voice_message_no_match", {})
