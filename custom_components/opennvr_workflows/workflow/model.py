"""The typed, frozen model of a workflow.v1 file: what the engine runs and the dumper writes.

A workflow is one trigger (``when``), optional plain conditions (``if``), a list of steps
(``then``) and an ``always`` list that runs after whichever path ran. Steps that branch (AI, If,
Ask a person, Call) split the flow into one path per outcome; a path is a tuple of steps and
paths never join again, so a branching step is always the last step of its list.

Conventions held by every class here, so the engine never has to normalise again:

* Durations are ``float`` seconds (whole numbers), in fields whose names end in ``_s``.
* Clock times are :class:`datetime.time` (minute precision).
* Cameras are *roles* (``"front_door"``, ``"yard"``), never OpenNVR camera ids: a workflow
  built for one home maps onto another.
* People are *roles* too (``"owner"``, ``"household"``); the site maps a role to its people.
* Free-form data for webhooks, app actions and Home Assistant actions is a read-only mapping of
  JSON values (lists become tuples).
* Outcome paths are a read-only mapping from the outcome key to its tuple of steps: a decision
  option or ``"unsure"`` for AI, ``"true"``/``"false"`` for If, each reply or ``"no_answer"``
  for Ask a person, each outcome or ``"no_answer"`` for Call.

Objects of this module are built by :func:`.parse.parse_workflow` from a file that passed the
JSON Schema, or directly by a builder; either way :func:`.validate.validate_workflow` decides
whether the workflow is acceptable. The model can represent some workflows the validator
refuses (an actuator after an AI decision, say), so that a builder can show the problem.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

__all__ = [
    "CONTRACT",
    "AIStep",
    "ActionStep",
    "AlertAction",
    "AlertTrigger",
    "AppAction",
    "AskPersonStep",
    "Attachment",
    "ButtonTrigger",
    "CallStep",
    "CameraCondition",
    "CameraOfflineTrigger",
    "Condition",
    "EventTrigger",
    "ForEachCameras",
    "ForEachEvents",
    "ForEachList",
    "ForEachStep",
    "HomeAssistantAction",
    "IfStep",
    "InvestigateSpec",
    "JsonValue",
    "ListCondition",
    "LogAction",
    "LookInput",
    "LookSpec",
    "MessageTrigger",
    "NotifyAction",
    "OneAtATime",
    "PersonInZoneTrigger",
    "PtzPresetAction",
    "ReplyAction",
    "Rule",
    "SaveClipAction",
    "ScheduleTrigger",
    "Severity",
    "SiteMode",
    "SiteModeAction",
    "SiteModeCondition",
    "State",
    "Step",
    "TimeCondition",
    "Trigger",
    "ValueCondition",
    "WaitAction",
    "WebhookAction",
    "Weekday",
    "Workflow",
    "WorkflowLimits",
    "frozen_json",
]

#: The contract this model describes; the value of a file's ``contract`` key.
CONTRACT = "workflow.v1"

type State = Literal["off", "test", "on"]
type Severity = Literal["low", "medium", "high", "critical"]
type SiteMode = Literal["disarmed", "armed_home", "armed_away"]
type OneAtATime = Literal["camera", "track", "plate"]
type Weekday = Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
type Attachment = Literal["snapshot", "frames", "clip"]
type LookInput = Literal["picture", "frames", "text"]
type JsonValue = str | int | float | bool | None | tuple[JsonValue, ...] | Mapping[str, JsonValue]

_EMPTY: Mapping[str, JsonValue] = MappingProxyType({})


def frozen_json(value: object) -> JsonValue:
    """A read-only copy of a JSON value: dicts become read-only mappings, lists tuples."""
    if isinstance(value, Mapping):
        return MappingProxyType({str(k): frozen_json(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(frozen_json(v) for v in value)
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise TypeError(f"not a JSON value: {value!r}")


def _empty_paths() -> Mapping[str, tuple[Step, ...]]:
    return MappingProxyType({})


# --------------------------------------------------------------------------------------------
# Limits
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WorkflowLimits:
    """How often the workflow may run; defaults are the RFC's.

    ``cooldown_s``: after a run starts, further triggers for the same key are dropped for this
    long. ``one_at_a_time``: the key runs are serialised on (the trigger's camera, its track, or
    its plate); a repeat trigger while a run waits joins it as "seen again". ``per_hour``: runs
    started per hour. ``ai_per_hour``: AI steps run per hour, across all runs of the workflow.
    """

    cooldown_s: float = 60.0
    one_at_a_time: OneAtATime = "camera"
    per_hour: int = 30
    ai_per_hour: int = 60


# --------------------------------------------------------------------------------------------
# Triggers (``when``)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AlertTrigger:
    """An app's alert (intrusion, loitering, ...), optionally narrowed.

    ``app`` is the alert source's name (``source.name``); ``alert_type`` its type; ``cameras``
    the roles it must come from (empty: any camera); ``min_severity`` the lowest severity that
    fires. Defines ``{camera}``, ``{title}``, ``{severity}``, ``{alert_type}``, ``{app}``,
    ``{alert_id}``, ``{description}`` and ``{track}``.
    """

    app: str | None = None
    alert_type: str | None = None
    cameras: tuple[str, ...] = ()
    min_severity: Severity | None = None


@dataclass(frozen=True, slots=True)
class EventTrigger:
    """A contracted OpenNVR event, such as a plate read or an access decision.

    ``event`` is the contract name without the camera, e.g. ``"plate.recognized.v1"``.
    ``match`` narrows on payload fields: each key must take one of the listed values.
    """

    event: str
    cameras: tuple[str, ...] = ()
    match: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True, slots=True)
class CameraOfflineTrigger:
    """A camera has been offline for ``for_s`` seconds (``cameras`` empty: any camera)."""

    for_s: float
    cameras: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ScheduleTrigger:
    """A schedule: at fixed local times (``at``) or every ``every_s`` seconds, on ``days``.

    Exactly one of ``at`` (non-empty) and ``every_s`` is set. Empty ``days`` means every day.
    """

    at: tuple[dt.time, ...] = ()
    every_s: float | None = None
    days: tuple[Weekday, ...] = ()


@dataclass(frozen=True, slots=True)
class ButtonTrigger:
    """A person presses the workflow's "Run now" button; ``label`` is the button's text."""

    label: str | None = None


@dataclass(frozen=True, slots=True)
class MessageTrigger:
    """A message to the assistant; ``contains`` narrows on words (any of them, any case).

    Defines ``{message}`` and ``{user}``; the ``reply`` action answers in the conversation.
    """

    contains: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PersonInZoneTrigger:
    """A person in a zone for ``min_s`` seconds (the RFC's ``detect.person_in_zone``).

    Fires when a tracked person has stayed in the zone (``zone`` None: anywhere in the
    picture) of one of ``cameras`` for ``min_s`` seconds, read from the detector's tracks and
    the site's zones; it needs the ``detector`` skill. Defines ``{camera}``, ``{zone}``,
    ``{track}`` and ``{seconds}`` (how long the person had stayed when it fired).
    """

    cameras: tuple[str, ...]
    min_s: float
    zone: str | None = None


type Trigger = (
    AlertTrigger
    | EventTrigger
    | CameraOfflineTrigger
    | ScheduleTrigger
    | ButtonTrigger
    | MessageTrigger
    | PersonInZoneTrigger
)


# --------------------------------------------------------------------------------------------
# Conditions (the workflow's ``if`` and the If step)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TimeCondition:
    """Local time is in ``[start, end)``; a window with ``end <= start`` wraps midnight.

    Empty ``days`` means every day; otherwise the day the window *starts* must be listed.
    """

    start: dt.time
    end: dt.time
    days: tuple[Weekday, ...] = ()


@dataclass(frozen=True, slots=True)
class SiteModeCondition:
    """The site's mode (OpenNVR's alarm state) is one of ``modes``."""

    modes: tuple[SiteMode, ...]


@dataclass(frozen=True, slots=True)
class CameraCondition:
    """The current camera (the trigger's, or the for-each item) has one of these roles."""

    roles: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ValueCondition:
    """A value from the trigger or an earlier step passes every test given.

    ``name`` is the placeholder's name without braces (``"who"`` for ``{who}``). ``is_in`` /
    ``is_not_in`` compare as text; ``above`` / ``below`` compare as numbers (a value that is not
    a number fails them).
    """

    name: str
    is_in: tuple[str, ...] = ()
    is_not_in: tuple[str, ...] = ()
    above: float | None = None
    below: float | None = None


@dataclass(frozen=True, slots=True)
class ListCondition:
    """A value is (or, with ``negate``, is not) on one of the site's lists (Site rules)."""

    name: str
    list_name: str
    negate: bool = False


type Condition = (
    TimeCondition | SiteModeCondition | CameraCondition | ValueCondition | ListCondition
)


# --------------------------------------------------------------------------------------------
# The AI step
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Rule:
    """One row of an AI step's rule table: if every field in ``when`` has one of its values,
    the decision is ``then``. The first matching row wins; no match is ``unsure``. An empty
    ``when`` matches always (a catch-all, last)."""

    when: Mapping[str, tuple[str, ...]]
    then: str


@dataclass(frozen=True, slots=True)
class LookSpec:
    """Look: answer ``prompt`` from one input, in one model call.

    ``input``: ``"picture"`` (the camera's picture now), ``"frames"`` (``frames`` pictures over
    a few seconds, for movement) or ``"text"`` (``text``, e.g. ``"{message}"``). ``camera`` is a
    role when the picture is not the current camera's.
    """

    prompt: str
    input: LookInput = "picture"
    frames: int | None = None
    text: str | None = None
    camera: str | None = None


@dataclass(frozen=True, slots=True)
class InvestigateSpec:
    """Investigate: work toward ``goal`` with read and ask ``tools``, within the step's limits.

    ``instructions`` are for this step only (site rules are added at run time) and never
    receive placeholders. ``memory``: ``"run"`` (default) or ``"camera"`` (this camera's recent
    decisions, read-only). ``tool_calls`` caps the tool phase (None: the hardware class's).
    """

    goal: str
    tools: tuple[str, ...]
    instructions: str | None = None
    memory: Literal["run", "camera"] = "run"
    tool_calls: int | None = None


@dataclass(frozen=True, slots=True)
class AIStep:
    """The judgement: returns one of ``decision`` or ``"unsure"``, plus fields and a reason.

    ``fields`` maps a field name to the values it may take (later steps read ``{name}``).
    ``rules``, when present, give the decision from the fields (the model never picks it).
    ``sure`` is the confidence floor (None: the site's). ``seconds`` caps the step (None: the
    hardware class's). ``paths`` has one entry per option plus ``"unsure"``; after it runs,
    ``{decision}``, ``{reason}`` and ``{confidence}`` are defined, and each field except on the
    ``unsure`` path, where the model reported none. With ``reason_as``, ``{<reason_as>}`` also
    holds the reason, so a later AI step's ``{reason}`` does not hide it.
    """

    spec: LookSpec | InvestigateSpec
    decision: tuple[str, ...]
    paths: Mapping[str, tuple[Step, ...]] = field(default_factory=_empty_paths)
    fields: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))
    rules: tuple[Rule, ...] = ()
    sure: float | None = None
    seconds: float | None = None
    reason_as: str | None = None

    @property
    def mode(self) -> Literal["look", "investigate"]:
        """``"look"`` or ``"investigate"``, from the kind of ``spec``."""
        return "look" if isinstance(self.spec, LookSpec) else "investigate"

    @property
    def outcomes(self) -> tuple[str, ...]:
        """Every outcome the step can take: the options, then ``"unsure"``."""
        return (*self.decision, "unsure")


# --------------------------------------------------------------------------------------------
# Flow steps
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class IfStep:
    """A plain rule: every condition holds (``"true"``) or not (``"false"``).

    ``paths`` always has both keys; a path may be empty.
    """

    conditions: tuple[Condition, ...]
    paths: Mapping[str, tuple[Step, ...]] = field(default_factory=_empty_paths)

    @property
    def outcomes(self) -> tuple[str, ...]:
        """``("true", "false")``."""
        return ("true", "false")


@dataclass(frozen=True, slots=True)
class ForEachCameras:
    """Iterate over these camera roles; the item is the current camera (``{camera}``)."""

    cameras: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ForEachList:
    """Iterate over the entries of a site list (Site rules), e.g. expected plates."""

    list_name: str


@dataclass(frozen=True, slots=True)
class ForEachEvents:
    """Iterate over stored events of the last ``within_s`` seconds on these cameras (empty:
    all); each item defines ``{event}``, ``{camera}`` and ``{event_type}``."""

    within_s: float
    cameras: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ForEachStep:
    """Run ``steps`` once per item, at most ``max_items`` times; then the flow continues.

    The item is ``{<as_name>}`` inside ``steps`` (default ``camera`` / ``item`` / ``event``).
    With ``collect``, ``{<collect>}`` after the loop holds one line per item: the item and the
    reason of the last AI step that ran for it.
    """

    items: ForEachCameras | ForEachList | ForEachEvents
    steps: tuple[Step, ...]
    as_name: str
    max_items: int = 20
    collect: str | None = None


@dataclass(frozen=True, slots=True)
class AskPersonStep:
    """A question with reply buttons to people with one of ``roles``; the run waits.

    ``paths`` has one entry per reply, and ``"no_answer"`` unless ``default`` names the reply
    taken when nobody answers within ``timeout_s``. Defines ``{answer}`` and ``{answered_by}``
    on the reply paths.
    """

    roles: tuple[str, ...]
    message: str
    replies: tuple[str, ...]
    timeout_s: float = 300.0
    default: str | None = None
    paths: Mapping[str, tuple[Step, ...]] = field(default_factory=_empty_paths)

    @property
    def outcomes(self) -> tuple[str, ...]:
        """The replies, then ``"no_answer"`` when there is no default."""
        return self.replies if self.default is not None else (*self.replies, "no_answer")


@dataclass(frozen=True, slots=True)
class CallStep:
    """A voice agent phones people with one of ``roles`` (phase 3 of the RFC).

    In the contract so the vocabulary is stable, but not available: the validator refuses it.
    ``paths`` has one entry per outcome and ``"no_answer"``.
    """

    roles: tuple[str, ...]
    goal: str
    outcome_names: tuple[str, ...]
    script: str | None = None
    paths: Mapping[str, tuple[Step, ...]] = field(default_factory=_empty_paths)

    @property
    def outcomes(self) -> tuple[str, ...]:
        """The call's outcomes, then ``"no_answer"``."""
        return (*self.outcome_names, "no_answer")


# --------------------------------------------------------------------------------------------
# Actions
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AlertAction:
    """An alert in the inbox (and OpenNVR's alarm actions above their threshold)."""

    severity: Severity
    title: str
    message: str | None = None
    attach: tuple[Attachment, ...] = ()


@dataclass(frozen=True, slots=True)
class NotifyAction:
    """A message to people with one of ``roles`` (their phones, through Home Assistant)."""

    roles: tuple[str, ...]
    message: str
    title: str | None = None
    severity: Severity = "low"
    attach: tuple[Attachment, ...] = ()


@dataclass(frozen=True, slots=True)
class LogAction:
    """A line in the run's log and Home Assistant's logbook."""

    message: str


@dataclass(frozen=True, slots=True)
class SaveClipAction:
    """Protect footage of the camera (None: the current one) around now."""

    camera: str | None = None
    before_s: float = 10.0
    after_s: float = 20.0


@dataclass(frozen=True, slots=True)
class PtzPresetAction:
    """Point a PTZ camera at a named preset."""

    camera: str
    preset: str


@dataclass(frozen=True, slots=True)
class WebhookAction:
    """POST ``data`` (JSON, placeholders expanded) to ``to``: the name of a destination an
    admin approved in the site's settings, never a URL written into the file."""

    to: str
    data: Mapping[str, JsonValue] = field(default_factory=lambda: _EMPTY)


@dataclass(frozen=True, slots=True)
class HomeAssistantAction:
    """A Home Assistant action (``domain.service``) with its data and target.

    Outside the read/notify allow-list (see :mod:`.vocabulary`) it moves things.
    """

    action: str
    data: Mapping[str, JsonValue] = field(default_factory=lambda: _EMPTY)
    target: Mapping[str, JsonValue] = field(default_factory=lambda: _EMPTY)


@dataclass(frozen=True, slots=True)
class SiteModeAction:
    """Set the site's mode (arm or disarm). Always moves things."""

    mode: SiteMode


@dataclass(frozen=True, slots=True)
class AppAction:
    """An app's action, such as the gate controller's ``open``. Always treated as moving
    things: whether the app declared it ``confirm`` cannot be known from the file."""

    app: str
    action: str
    data: Mapping[str, JsonValue] = field(default_factory=lambda: _EMPTY)


@dataclass(frozen=True, slots=True)
class WaitAction:
    """Pause the run for ``seconds`` (durable: survives a restart)."""

    seconds: float


@dataclass(frozen=True, slots=True)
class ReplyAction:
    """Answer the message that triggered the run (message triggers only)."""

    message: str


type Action = (
    AlertAction
    | NotifyAction
    | LogAction
    | SaveClipAction
    | PtzPresetAction
    | WebhookAction
    | HomeAssistantAction
    | SiteModeAction
    | AppAction
    | WaitAction
    | ReplyAction
)


@dataclass(frozen=True, slots=True)
class ActionStep:
    """A step that does one thing and has one outcome, ``done``."""

    action: Action


type Step = AIStep | IfStep | ForEachStep | AskPersonStep | CallStep | ActionStep


# --------------------------------------------------------------------------------------------
# The workflow
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Workflow:
    """One workflow.v1 file.

    ``needs`` are the skills the workflow requires of the site (checked at import).
    ``conditions`` gate the whole run: when one fails, the run ends before ``then``.
    ``always`` runs after whichever path of ``then`` ran (not when the conditions failed),
    with its own scope: the trigger's values, never what a path of ``then`` defined.
    """

    name: str
    when: Trigger
    then: tuple[Step, ...]
    description: str | None = None
    state: State = "test"
    needs: tuple[str, ...] = ()
    limits: WorkflowLimits = field(default_factory=WorkflowLimits)
    conditions: tuple[Condition, ...] = ()
    always: tuple[Step, ...] = ()
