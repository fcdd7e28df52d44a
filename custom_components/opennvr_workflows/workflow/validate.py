"""The one semantic validator of workflow.v1: every rule the JSON Schema cannot say.

It walks the typed model path by path, carrying what holds on the path so far (a
:class:`_Scope`): the placeholders defined, whether an If or a person's answer stands before,
and whether an AI decision chose the path with no person's answer since. From that it enforces:

* **The safety rule.** An action that moves things (``site_mode``, any ``app_action``, a
  ``home_assistant`` action outside the read/notify allow-list) may only stand after an If or a
  person's answer on its own path; and once an AI step has chosen the path, only a person's
  answer clears it again. An If after an AI decision does not: the AI already chose the branch
  the If sits on, so a wrong decision would still move things, and the RFC's promise is that "a
  wrong decision costs a wrong alert, never an open gate". A reply that is also the question's
  ``default``, and the ``no_answer`` path, are reached without anyone answering, so they clear
  nothing either.
* **The severity cap.** On a path an AI decided, an alert or a message is at most ``medium``
  (the engine lifts it once the step has earned it); ``critical`` needs an If or a person.
* AI steps: known read and ask tools only, at most five, no repeats; a path for every option
  and ``unsure``; rules that name declared fields, their values and declared outcomes; inputs
  that fit the mode; no placeholders in instructions.
* Ask a person: a path per reply and for ``no_answer`` (or a default reply).
* Flow: nothing after a branching step in the same list; caps on steps and nesting.
* Placeholders: each ``{name}`` is defined by the trigger or an earlier step on its path.
* Cameras: steps that need the current camera have one on their path.
* Skills: what the workflow uses is listed in ``needs``, and the site has it.

Problems carry JSON paths of the file's canonical form, which the caller turns into lines.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace

from .durations import format_duration
from .model import (
    ActionStep,
    AIStep,
    AlertAction,
    AlertTrigger,
    AppAction,
    AskPersonStep,
    CallStep,
    CameraCondition,
    CameraOfflineTrigger,
    Condition,
    EventTrigger,
    ForEachCameras,
    ForEachEvents,
    ForEachStep,
    HomeAssistantAction,
    IfStep,
    InvestigateSpec,
    JsonValue,
    ListCondition,
    LogAction,
    LookSpec,
    MessageTrigger,
    NotifyAction,
    PersonInZoneTrigger,
    PtzPresetAction,
    ReplyAction,
    SaveClipAction,
    ScheduleTrigger,
    SiteModeAction,
    Step,
    ValueCondition,
    WaitAction,
    WebhookAction,
    Workflow,
)
from .paths import PathPart, format_path
from .problems import Problem, ProblemSeverity
from .vocabulary import (
    ACTUATOR_TOOL_NAMES,
    AI_STEP_KEYS,
    AI_TOOL_NAMES,
    CONTRACTED_EVENTS,
    DURATION_RANGES,
    MAX_NESTING,
    MAX_STEPS,
    MAX_TOOLS,
    RESERVED_FIELD_NAMES,
    TOOL_SKILLS,
    is_actuator,
    trigger_placeholders,
)
from .yaml_loader import Mark

__all__ = ["Locator", "action_key", "check_workflow", "placeholders_in"]

#: Turns a path into a position: ``(parts, key=...) -> Mark``.
type Locator = Callable[..., Mark]

_TOKEN = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}|\{|\}")

_AI_NAMES = frozenset({"decision", "reason", "confidence"})
_ANSWER_NAMES = frozenset({"answer", "answered_by"})


def _no_location(parts: tuple[PathPart, ...], *, key: bool = False) -> Mark:
    return Mark(0, 0)


def placeholders_in(text: str) -> tuple[tuple[str, ...], bool]:
    """The placeholder names in ``text``, and whether its braces are all well formed.

    ``{{`` and ``}}`` stand for literal braces.
    """
    names: list[str] = []
    ok = True
    for match in _TOKEN.finditer(text):
        token = match.group(0)
        if match.group(1):
            names.append(match.group(1))
        elif token in ("{", "}"):
            ok = False
    return tuple(names), ok


@dataclass(frozen=True, slots=True)
class _Scope:
    """What holds on the path being walked.

    ``gated``: an If or a person's answer stands before, on this path (the workflow's own
    ``if`` counts). ``ai``: the JSON path of the AI step whose decision chose this path, when
    no person has answered since. ``names``: the placeholders defined. ``depth``: nesting.
    """

    names: frozenset[str]
    gated: bool = False
    ai: str | None = None
    depth: int = 0

    @property
    def camera(self) -> bool:
        return "camera" in self.names


class _Checker:
    """One validation: collects problems while walking a workflow."""

    def __init__(self, workflow: Workflow, locate: Locator, skills: frozenset[str] | None):
        self.workflow = workflow
        self.locate = locate
        self.skills = skills
        self.problems: list[Problem] = []
        self.steps = 0
        self.used_skills: dict[str, tuple[PathPart, ...]] = {}

    # -- reporting ---------------------------------------------------------------------------

    def report(
        self,
        code: str,
        message: str,
        parts: tuple[PathPart, ...],
        *,
        key: bool = False,
        severity: ProblemSeverity = "error",
    ) -> None:
        mark = self.locate(parts, key=key)
        self.problems.append(
            Problem(code, message, format_path(parts), mark.line, mark.column, severity)
        )

    def need(self, skill: str, parts: tuple[PathPart, ...]) -> None:
        self.used_skills.setdefault(skill, parts)

    def duration(self, seconds: float, what: str, label: str, parts: tuple[PathPart, ...]) -> None:
        low, high = DURATION_RANGES[what]
        if not low <= seconds <= high:
            self.report(
                "WF-LIMIT-RANGE",
                f"{label} is {_fmt(seconds)}; use a duration from {_fmt(low)} to {_fmt(high)}",
                parts,
            )

    def text(self, text: str | None, scope: _Scope, parts: tuple[PathPart, ...]) -> None:
        """Check the placeholders of one string against the names defined on its path."""
        if text is None:
            return
        names, ok = placeholders_in(text)
        if not ok:
            self.report(
                "WF-PLACEHOLDER-SYNTAX",
                "a brace that opens or closes no placeholder; write {name} for a value, and "
                "{{ or }} for a literal brace",
                parts,
            )
        for name in dict.fromkeys(names):
            if name not in scope.names:
                self.report("WF-PLACEHOLDER-UNDEFINED", _undefined(name, scope), parts)

    def json_texts(self, value: JsonValue, scope: _Scope, parts: tuple[PathPart, ...]) -> None:
        if isinstance(value, str):
            self.text(value, scope, parts)
        elif isinstance(value, tuple):
            for i, item in enumerate(value):
                self.json_texts(item, scope, (*parts, i))
        elif isinstance(value, Mapping):
            for key, item in value.items():
                self.json_texts(item, scope, (*parts, key))

    # -- the workflow --------------------------------------------------------------------------

    def run(self) -> list[Problem]:
        wf = self.workflow
        base = _Scope(names=trigger_placeholders(wf.when))
        self.trigger()
        self.duration(wf.limits.cooldown_s, "cooldown", "the cooldown", ("limits", "cooldown"))
        if wf.state == "on":
            self.report(
                "WF-STATE-ON",
                "this file turns itself on when imported; shared workflows should say "
                "`state: test`, so they run in Test (actions recorded, not performed) first",
                ("state",),
                severity="warning",
            )
        for i, condition in enumerate(wf.conditions):
            self.condition(condition, base, ("if", i))
        scope = replace(base, gated=bool(wf.conditions))
        self.step_list(wf.then, scope, ("then",))
        self.step_list(wf.always, scope, ("always",))
        if self.steps > MAX_STEPS:
            self.report(
                "WF-TOO-MANY-STEPS",
                f"the workflow has {self.steps} steps; at most {MAX_STEPS} are allowed (three to "
                "seven read best: split it into several workflows)",
                (),
            )
        self.check_needs()
        return self.problems

    def trigger(self) -> None:
        trigger = self.workflow.when
        match trigger:
            case PersonInZoneTrigger():
                self.report(
                    "WF-TRIGGER-UNSUPPORTED",
                    "detect.person_in_zone is not supported by this integration yet; use the "
                    "intrusion or loitering app's alert instead, e.g. "
                    "`when: {alert: {app: intrusion, cameras: [...]}}`",
                    ("when", "detect.person_in_zone"),
                    key=True,
                )
            case EventTrigger(event=event) if event not in CONTRACTED_EVENTS:
                known = ", ".join(CONTRACTED_EVENTS)
                self.report(
                    "WF-EVENT-UNKNOWN",
                    f"{event} is not one of OpenNVR's contracted events ({known}); it fires only "
                    "if an app publishes it, and only the common placeholders are defined",
                    ("when", "event", "type"),
                    severity="warning",
                )
            case CameraOfflineTrigger(for_s=for_s):
                self.duration(
                    for_s, "camera_offline", "the offline time", ("when", "camera_offline", "for")
                )
            case ScheduleTrigger(at=at, every_s=every_s):
                if bool(at) == (every_s is not None):
                    self.report(
                        "WF-SCHEDULE-KIND",
                        "a schedule needs exactly one of `at` (times of day) and `every` "
                        "(a duration)",
                        ("when", "schedule"),
                    )
                if every_s is not None:
                    self.duration(
                        every_s, "schedule_every", "the interval", ("when", "schedule", "every")
                    )
            case AlertTrigger(app=app) if app is not None:
                self.need(app, ("when", "alert", "app"))
            case _:
                pass

    def condition(self, condition: Condition, scope: _Scope, parts: tuple[PathPart, ...]) -> None:
        match condition:
            case CameraCondition() if not scope.camera:
                self.report(
                    "WF-NO-CURRENT-CAMERA",
                    "a camera condition needs a current camera, and this trigger has none; use "
                    "it with an alert, event or camera_offline trigger, or inside "
                    "for_each cameras",
                    (*parts, "camera"),
                )
            case ValueCondition(name=name) if name not in scope.names:
                self.report(
                    "WF-PLACEHOLDER-UNDEFINED", _undefined(name, scope), (*parts, "value", "of")
                )
            case ListCondition(name=name) if name not in scope.names:
                self.report(
                    "WF-PLACEHOLDER-UNDEFINED", _undefined(name, scope), (*parts, "list", "value")
                )
            case _:
                pass

    # -- steps ---------------------------------------------------------------------------------

    def step_list(
        self, steps: tuple[Step, ...], scope: _Scope, parts: tuple[PathPart, ...]
    ) -> None:
        for i, step in enumerate(steps):
            here = (*parts, i)
            self.steps += 1
            if scope.depth > MAX_NESTING:
                self.report(
                    "WF-TOO-DEEP",
                    f"paths nest more than {MAX_NESTING} deep here; split the workflow, or "
                    "move shared steps into `always`",
                    here,
                )
                return
            if _branches(step) and i + 1 < len(steps):
                self.report(
                    "WF-STEP-AFTER-BRANCH",
                    f"this step follows a {_kind(step)} step in the same list, but paths never "
                    "join again: move it into each outcome's path that should run it, or into "
                    "`always`",
                    (*parts, i + 1),
                )
            scope = self.step(step, scope, here)

    def step(self, step: Step, scope: _Scope, parts: tuple[PathPart, ...]) -> _Scope:
        """Check one step; return the scope for the steps after it in the same list."""
        match step:
            case AIStep():
                self.ai(step, scope, parts)
            case IfStep(conditions=conditions, paths=paths):
                for i, condition in enumerate(conditions):
                    self.condition(condition, scope, (*parts, "if", i))
                inner = replace(scope, gated=True, depth=scope.depth + 1)
                self.step_list(paths.get("true", ()), inner, (*parts, "then"))
                self.step_list(paths.get("false", ()), inner, (*parts, "else"))
            case ForEachStep():
                return self.for_each(step, scope, parts)
            case AskPersonStep():
                self.ask_person(step, scope, parts)
            case CallStep():
                self.call(step, scope, parts)
            case ActionStep():
                self.action(step, scope, parts)
        return scope

    def ai(self, step: AIStep, scope: _Scope, parts: tuple[PathPart, ...]) -> None:
        body = (*parts, "ai")
        spec = step.spec
        if isinstance(spec, LookSpec):
            self.look(spec, scope, body)
        else:
            self.investigate(spec, scope, body)
        for i, option in enumerate(step.decision):
            if option == "unsure":
                self.report(
                    "WF-AI-UNSURE-LISTED",
                    "`unsure` is always an outcome of an AI step; remove it from `decision` and "
                    "give it its path with the `unsure:` key",
                    (*body, "decision", i),
                )
            elif option in AI_STEP_KEYS:
                self.report(
                    "WF-AI-OPTION-RESERVED",
                    f"the option {option!r} is also a setting of the AI step, so it cannot have "
                    "a path; rename the option",
                    (*body, "decision", i),
                )
        for name in step.fields:
            if name in RESERVED_FIELD_NAMES:
                self.report(
                    "WF-AI-FIELD-RESERVED",
                    f"the field {name!r} would hide the {{{name}}} every AI step or workflow "
                    "defines; rename the field",
                    (*body, "fields", name),
                    key=True,
                )
        if step.reason_as is not None and step.reason_as in RESERVED_FIELD_NAMES | set(step.fields):
            self.report(
                "WF-AI-FIELD-RESERVED",
                f"reason_as {step.reason_as!r} would hide another value of the same name; "
                "choose another name",
                (*body, "reason_as"),
            )
        self.rules(step, body)
        outcomes = step.outcomes
        for outcome in outcomes:
            if outcome not in step.paths and outcome not in AI_STEP_KEYS:
                self.report(
                    "WF-AI-PATH-MISSING",
                    f"the outcome {outcome!r} has no path; add `{outcome}: [...]` to the AI step "
                    "(`[]` to do nothing), so every decision has a visible route",
                    body,
                )
        for key in step.paths:
            if key not in outcomes:
                options = ", ".join(outcomes)
                self.report(
                    "WF-AI-PATH-UNKNOWN",
                    f"{key!r} is neither a setting of the AI step nor one of its outcomes "
                    f"({options}); fix the spelling, or add it to `decision`",
                    (*body, key),
                    key=True,
                )
        for outcome, path in step.paths.items():
            names = scope.names | _AI_NAMES
            if step.reason_as is not None:
                names |= {step.reason_as}
            if outcome != "unsure":
                names |= frozenset(step.fields)
            inner = replace(scope, names=names, ai=format_path(body), depth=scope.depth + 1)
            self.step_list(path, inner, (*body, outcome))

    def look(self, spec: LookSpec, scope: _Scope, body: tuple[PathPart, ...]) -> None:
        self.text(spec.prompt, scope, (*body, "prompt"))
        if spec.input in ("picture", "frames"):
            self.need("vision_model", (*body, "input"))
            if spec.camera is None and not scope.camera:
                self.report(
                    "WF-NO-CURRENT-CAMERA",
                    f"a Look at a {spec.input} needs a camera, and there is no current camera on "
                    "this path; add `camera: <role>`",
                    body,
                )
        else:
            self.need("language_model", (*body, "input"))
        if spec.input == "text" and spec.text is None:
            self.report(
                "WF-AI-INPUT",
                'a Look with `input: text` needs `text:`, e.g. `text: "{message}"`',
                body,
            )
        if spec.input != "text" and spec.text is not None:
            self.report(
                "WF-AI-INPUT",
                f"`text` is only read with `input: text`; this step looks at a {spec.input}",
                (*body, "text"),
                key=True,
            )
        if spec.input != "frames" and spec.frames is not None:
            self.report(
                "WF-AI-INPUT",
                f"`frames` is only read with `input: frames`; this step looks at {spec.input}",
                (*body, "frames"),
                key=True,
            )
        if spec.input == "text" and spec.camera is not None:
            self.report(
                "WF-AI-INPUT",
                "`camera` is only read when the input is a picture or frames",
                (*body, "camera"),
                key=True,
            )
        self.text(spec.text, scope, (*body, "text"))

    def investigate(self, spec: InvestigateSpec, scope: _Scope, body: tuple[PathPart, ...]) -> None:
        self.need("language_model", (*body, "mode"))
        self.text(spec.goal, scope, (*body, "goal"))
        if spec.instructions is not None and placeholders_in(spec.instructions)[0]:
            self.report(
                "WF-AI-PLACEHOLDER-IN-INSTRUCTIONS",
                "instructions never receive placeholders (values such as {plate} could carry "
                "text that tries to instruct the model); mention the value in the goal, where it "
                "is passed as data",
                (*body, "instructions"),
            )
        seen: set[str] = set()
        for i, tool in enumerate(spec.tools):
            where = (*body, "tools", i)
            if tool in seen:
                self.report("WF-AI-TOOLS-DUPLICATE", f"{tool} is listed twice; list it once", where)
            seen.add(tool)
            if tool in ACTUATOR_TOOL_NAMES:
                self.report(
                    "WF-AI-TOOL-ACTUATOR",
                    f"{tool} moves things, and an AI step only reads and asks; put the action "
                    "on a path after an ask_person instead",
                    where,
                )
            elif tool not in AI_TOOL_NAMES:
                close = difflib.get_close_matches(tool, sorted(AI_TOOL_NAMES), n=1)
                hint = f" (did you mean {close[0]}?)" if close else ""
                self.report(
                    "WF-AI-TOOL-UNKNOWN",
                    f"{tool} is not a read or ask tool{hint}; the tools are: "
                    + ", ".join(sorted(AI_TOOL_NAMES)),
                    where,
                )
            elif tool in TOOL_SKILLS:
                self.need(TOOL_SKILLS[tool], where)
        if len(spec.tools) > MAX_TOOLS:
            self.report(
                "WF-AI-TOOLS-TOO-MANY",
                f"an AI step may list at most {MAX_TOOLS} tools (it lists {len(spec.tools)}); "
                "fewer tools make small models choose better",
                (*body, "tools"),
            )

    def rules(self, step: AIStep, body: tuple[PathPart, ...]) -> None:
        catch_all: int | None = None
        for i, rule in enumerate(step.rules):
            here = (*body, "rules", i)
            if catch_all is not None:
                self.report(
                    "WF-AI-RULE-UNREACHABLE",
                    f"rule {i + 1} can never match: rule {catch_all + 1} has no `when` and "
                    "matches everything; move the catch-all last",
                    here,
                    severity="warning",
                )
            if not rule.when and catch_all is None:
                catch_all = i
            for name, values in rule.when.items():
                allowed = step.fields.get(name)
                if allowed is None:
                    declared = ", ".join(step.fields) or "none"
                    self.report(
                        "WF-AI-RULE-FIELD-UNKNOWN",
                        f"the rule reads the field {name!r}, which the step does not declare "
                        f"(declared fields: {declared}); add it to `fields`",
                        (*here, "when", name),
                        key=True,
                    )
                    continue
                for value in values:
                    if value not in allowed:
                        self.report(
                            "WF-AI-RULE-VALUE-UNKNOWN",
                            f"the field {name!r} cannot be {value!r}; its values are: "
                            + ", ".join(allowed),
                            (*here, "when", name),
                        )
            if rule.then not in step.outcomes:
                self.report(
                    "WF-AI-RULE-OUTCOME-UNKNOWN",
                    f"the rule decides {rule.then!r}, which is not an outcome of the step; use "
                    "one of: " + ", ".join(step.outcomes),
                    (*here, "then"),
                )

    def for_each(self, step: ForEachStep, scope: _Scope, parts: tuple[PathPart, ...]) -> _Scope:
        body = (*parts, "for_each")
        names = set(scope.names) | {step.as_name}
        items = step.items
        if isinstance(items, ForEachCameras):
            names.add("camera")
        elif isinstance(items, ForEachEvents):
            names |= {"camera", "event_type", "event_id"}
            self.duration(
                items.within_s, "events_within", "the window", (*body, "events", "within")
            )
        inner = replace(scope, names=frozenset(names), depth=scope.depth + 1)
        self.step_list(step.steps, inner, (*parts, "do"))
        if step.collect is None:
            return scope
        if not any(isinstance(s, AIStep) for s in _all_steps(step.steps)):
            self.report(
                "WF-FOREACH-COLLECT-NO-AI",
                f"`collect` gathers the reason of an AI step per item, and no AI step runs "
                f"inside this for_each; add one, or remove `collect: {step.collect}`",
                (*body, "collect"),
            )
        return replace(scope, names=scope.names | {step.collect})

    def ask_person(self, step: AskPersonStep, scope: _Scope, parts: tuple[PathPart, ...]) -> None:
        body = (*parts, "ask_person")
        self.text(step.message, scope, (*body, "message"))
        self.duration(step.timeout_s, "ask_timeout", "the timeout", (*body, "timeout"))
        seen: dict[str, str] = {}
        for i, reply in enumerate(step.replies):
            folded = reply.casefold()
            if folded in seen or folded in ("no_answer", "ask_person"):
                clash = seen.get(folded, reply)
                self.report(
                    "WF-ASK-REPLY-DUPLICATE",
                    f"the reply {reply!r} reads the same as {clash!r}; replies must be told "
                    "apart at a glance, and `no_answer` is the timeout's path",
                    (*body, "replies", i),
                )
            seen[folded] = reply
        if step.default is not None and step.default not in step.replies:
            self.report(
                "WF-ASK-DEFAULT-UNKNOWN",
                f"the default {step.default!r} is not one of the replies ("
                + ", ".join(step.replies)
                + ")",
                (*body, "default"),
            )
        if step.default is not None and "no_answer" in step.paths:
            self.report(
                "WF-ASK-DEFAULT-AND-NO-ANSWER",
                f"with a default reply ({step.default}), no answer takes that reply's path; "
                "remove `no_answer`, or remove the default",
                (*parts, "no_answer"),
                key=True,
            )
        outcomes = step.outcomes
        for outcome in outcomes:
            if outcome not in step.paths:
                fix = (
                    "add `no_answer: [...]`, or a `default:` reply"
                    if outcome == "no_answer"
                    else f"add `{outcome}: [...]` beside `ask_person:`"
                )
                self.report(
                    "WF-ASK-PATH-MISSING",
                    f"{outcome!r} has no path; {fix} (`[]` to do nothing)",
                    parts,
                )
        for key in step.paths:
            if key not in outcomes and key != "no_answer":
                self.report(
                    "WF-ASK-PATH-UNKNOWN",
                    f"{key!r} is not a reply of this question ("
                    + ", ".join(step.replies)
                    + "); fix the spelling, or add it to `replies`",
                    (*parts, key),
                    key=True,
                )
        for outcome, path in step.paths.items():
            answered = outcome in step.replies and outcome != step.default
            if answered:
                inner = replace(
                    scope,
                    names=scope.names | _ANSWER_NAMES,
                    gated=True,
                    ai=None,
                    depth=scope.depth + 1,
                )
            else:
                inner = replace(scope, depth=scope.depth + 1)
            self.step_list(path, inner, (*parts, outcome))

    def call(self, step: CallStep, scope: _Scope, parts: tuple[PathPart, ...]) -> None:
        self.report(
            "WF-CALL-NOT-AVAILABLE",
            "the Call step (a voice agent phoning someone) is not available yet; use "
            "ask_person, which asks on the phone with reply buttons",
            (*parts, "call"),
            key=True,
        )
        for outcome, path in step.paths.items():
            answered = outcome != "no_answer"
            inner = replace(
                scope,
                gated=scope.gated or answered,
                ai=None if answered else scope.ai,
                depth=scope.depth + 1,
            )
            self.step_list(path, inner, (*parts, outcome))

    def action(self, step: ActionStep, scope: _Scope, parts: tuple[PathPart, ...]) -> None:
        action = step.action
        kind = _ACTION_KEYS[type(action)]
        body = (*parts, kind)
        if is_actuator(step):
            self.safety(step, scope, parts, kind)
        match action:
            case AlertAction():
                self.severity(action.severity, scope, (*body, "severity"), "alert")
                self.text(action.title, scope, (*body, "title"))
                self.text(action.message, scope, (*body, "message"))
                self.attachments(action.attach, scope, (*body, "attach"))
            case NotifyAction():
                self.severity(action.severity, scope, (*body, "severity"), "message")
                self.text(action.title, scope, (*body, "title"))
                self.text(action.message, scope, (*body, "message"))
                self.attachments(action.attach, scope, (*body, "attach"))
            case LogAction() | ReplyAction():
                self.text(action.message, scope, body)
                if isinstance(action, ReplyAction) and not isinstance(
                    self.workflow.when, MessageTrigger
                ):
                    self.report(
                        "WF-REPLY-NOT-MESSAGE",
                        "`reply` answers the message that started the run, and this workflow is "
                        "not started by a message; use notify instead",
                        body,
                        key=True,
                    )
            case SaveClipAction():
                if action.camera is None and not scope.camera:
                    self.report(
                        "WF-NO-CURRENT-CAMERA",
                        "save_clip needs a camera, and there is no current camera on this path; "
                        "add `camera: <role>`",
                        body,
                    )
                self.duration(action.before_s, "clip_margin", "`before`", (*body, "before"))
                self.duration(action.after_s, "clip_margin", "`after`", (*body, "after"))
            case WebhookAction():
                self.json_texts(action.data, scope, (*body, "data"))
            case HomeAssistantAction():
                self.json_texts(action.data, scope, (*body, "data"))
                self.json_texts(action.target, scope, (*body, "target"))
                if action.target or "entity_id" in action.data:
                    self.report(
                        "WF-PORTABILITY-HA-TARGET",
                        "this action names entities of one home; whoever imports the file must "
                        "change them to their own",
                        body,
                        severity="warning",
                    )
            case AppAction():
                self.need(action.app, (*body, "app"))
                self.json_texts(action.data, scope, (*body, "data"))
            case WaitAction():
                self.duration(action.seconds, "wait", "the wait", body)
            case _:
                pass

    def safety(
        self, step: ActionStep, scope: _Scope, parts: tuple[PathPart, ...], kind: str
    ) -> None:
        what = _describe_actuator(step)
        if scope.ai is not None:
            self.report(
                "WF-SAFETY-ACTUATOR-AFTER-AI",
                f"{what} moves things, and this path was chosen by the AI step at {scope.ai} "
                "with no person's answer since; AI informs, people and plain rules move things. "
                "Put an ask_person before it and place it on a reply path (not the default "
                "reply, not no_answer)",
                (*parts, kind),
                key=True,
            )
        elif not scope.gated:
            self.report(
                "WF-SAFETY-ACTUATOR-UNGATED",
                f"{what} moves things, and nothing stands before it on this path; place it after "
                "an `if` (a plain rule) or on a reply path of an ask_person (not the default "
                "reply, not no_answer)",
                (*parts, kind),
                key=True,
            )

    def severity(
        self, severity: str, scope: _Scope, parts: tuple[PathPart, ...], what: str
    ) -> None:
        if scope.ai is not None and severity in ("high", "critical"):
            self.report(
                "WF-SEVERITY-AI-CAP",
                f"this {what} is on a path the AI step at {scope.ai} chose, so its severity is "
                f"at most medium (the engine raises it once the step has earned trust); set "
                "`severity: medium`, or put an ask_person before it",
                parts,
            )
        elif severity == "critical" and not scope.gated:
            self.report(
                "WF-SEVERITY-CRITICAL-UNGATED",
                f"a critical {what} wakes people; it needs a plain rule (`if`) or a person's "
                "answer before it on its path",
                parts,
            )

    def attachments(
        self, attach: Iterable[str], scope: _Scope, parts: tuple[PathPart, ...]
    ) -> None:
        if attach and not scope.camera:
            self.report(
                "WF-NO-CURRENT-CAMERA",
                "attachments come from the current camera, and there is none on this path; "
                "remove `attach`",
                parts,
            )

    def check_needs(self) -> None:
        declared = set(self.workflow.needs)
        for skill, where in self.used_skills.items():
            if skill not in declared:
                self.report(
                    "WF-NEEDS-MISSING",
                    f"the step at {format_path(where)} uses {skill!r}; add it to `needs`, so "
                    "the site can be checked before the workflow is imported",
                    ("needs",) if self.workflow.needs else (),
                )
        if self.skills is None:
            return
        for i, skill in enumerate(self.workflow.needs):
            if skill not in self.skills:
                self.report(
                    "WF-SKILL-MISSING",
                    f"this site does not have the skill {skill!r} the workflow needs; install or "
                    "configure it first",
                    ("needs", i),
                )


_ACTION_KEYS: dict[type, str] = {
    AlertAction: "alert",
    NotifyAction: "notify",
    LogAction: "log",
    SaveClipAction: "save_clip",
    PtzPresetAction: "ptz_preset",
    WebhookAction: "webhook",
    HomeAssistantAction: "home_assistant",
    SiteModeAction: "site_mode",
    AppAction: "app_action",
    WaitAction: "wait",
    ReplyAction: "reply",
}


def action_key(step: ActionStep) -> str:
    """The YAML key of an action step (``alert``, ``home_assistant``, ...)."""
    return _ACTION_KEYS[type(step.action)]


def _describe_actuator(step: ActionStep) -> str:
    action = step.action
    if isinstance(action, SiteModeAction):
        return f"site_mode {action.mode}"
    if isinstance(action, AppAction):
        return f"the app action {action.app}.{action.action}"
    if isinstance(action, HomeAssistantAction):
        return f"the Home Assistant action {action.action} (outside the read/notify allow-list)"
    return "this action"


def _branches(step: Step) -> bool:
    return isinstance(step, AIStep | IfStep | AskPersonStep | CallStep)


def _kind(step: Step) -> str:
    return {AIStep: "AI", IfStep: "if", AskPersonStep: "ask_person", CallStep: "call"}.get(
        type(step), "branching"
    )


def _all_steps(steps: Iterable[Step]) -> Iterator[Step]:
    for step in steps:
        yield step
        match step:
            case (
                AIStep(paths=paths)
                | IfStep(paths=paths)
                | AskPersonStep(paths=paths)
                | CallStep(paths=paths)
            ):
                for path in paths.values():
                    yield from _all_steps(path)
            case ForEachStep(steps=inner):
                yield from _all_steps(inner)
            case _:
                pass


def _undefined(name: str, scope: _Scope) -> str:
    defined = sorted(scope.names)
    close = difflib.get_close_matches(name, defined, n=1)
    hint = f"did you mean {{{close[0]}}}? " if close else ""
    return (
        f"{{{name}}} is not defined here; {hint}the trigger and the steps before this one on its "
        "path define: " + ", ".join(f"{{{n}}}" for n in defined)
    )


def _fmt(seconds: float) -> str:
    return format_duration(seconds) if seconds == int(seconds) and seconds >= 0 else f"{seconds}s"


def check_workflow(
    workflow: Workflow,
    *,
    locate: Locator = _no_location,
    skills: frozenset[str] | None = None,
) -> list[Problem]:
    """Every semantic problem of ``workflow``; ``locate`` turns JSON paths into positions."""
    return _Checker(workflow, locate, skills).run()
