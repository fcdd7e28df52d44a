"""The safety rule against a reference: generated workflows, AI steps and actuators anywhere.

The generator places AI steps, ifs, questions, for_each loops, actions that move things and
alerts of every severity in random places (in ``then`` and in ``always``), with placeholders
drawn from whatever is defined on the path, some of them behind escaped braces. The reference
below is written apart from the validator, over a path's *history* (the list of what happened
before a step) rather than over the validator's running scope, with its own reading of
braces, and says when an actuator is refused:

* nothing gates it: no plain `if` (one that reads no AI output) and no person's reply before;
* an AI step, an `if` that reads AI output, or a for_each over events (the events decide
  whether its steps run) stands before it with no person's reply after;
* a value it carries is AI output that no person's reply after its last definition approved by
  showing it in the question's message;

and when an alert's severity is refused: ``high`` or ``critical`` on a path such a decision
chose, ``critical`` on a path nothing gates.

A value is AI output when its last definition on the path was an AI step, a for_each's
``collect``, a for_each over events, or an alert trigger that may match workflow-raised alerts.
``always`` starts from the trigger's history alone (its own scope). ``{{`` and ``}}`` are
literal braces: ``{{x}}`` reads nothing, ``{{{x}}}`` reads ``x``. The test compares the sets
of refused actuators and severities, not messages.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from types import MappingProxyType

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from custom_components.opennvr_workflows.workflow import model as m
from custom_components.opennvr_workflows.workflow import validate_workflow
from custom_components.opennvr_workflows.workflow.paths import PathPart, format_path
from custom_components.opennvr_workflows.workflow.vocabulary import MAX_STEPS, is_actuator
from custom_components.opennvr_workflows.workflow.walk import walk_steps

SAFETY = {
    "WF-SAFETY-ACTUATOR-UNGATED",
    "WF-SAFETY-ACTUATOR-AFTER-AI",
    "WF-SAFETY-ACTUATOR-AFTER-AI-IF",
    "WF-SAFETY-ACTUATOR-AI-VALUE",
}
SEVERITY = {"WF-SEVERITY-AI-CAP", "WF-SEVERITY-CRITICAL-UNGATED"}
#: The shape errors: a generated model must never hit one, or the semantic checks never run.
STRUCTURAL = {
    "WF-UNKNOWN-KEY",
    "WF-MISSING-KEY",
    "WF-TYPE",
    "WF-VALUE",
    "WF-FORMAT",
    "WF-RANGE",
    "WF-COUNT",
    "WF-DUPLICATE-ITEM",
    "WF-STEP-KIND",
    "WF-CONDITION-KIND",
    "WF-TRIGGER-KIND",
}
FIELDS = ["kind", "gate", "note", "plate", "who"]
COMMON = {"workflow", "time", "date"}

# ----------------------------------------------------------------------------------------------
# The generator
# ----------------------------------------------------------------------------------------------


#: How a name is written into a text: filled, as literal braces (reads nothing), or filled
#: inside literal braces.
_WRITTEN = ("{%s}", "{{%s}}", "{{{%s}}}")


def _text(draw: st.DrawFn, names: frozenset[str], prefix: str) -> str:
    shown = draw(st.lists(st.sampled_from(sorted(names)), max_size=3, unique=True))
    forms = [draw(st.sampled_from(_WRITTEN)) for _ in shown]
    return " ".join([prefix, *(form % n for form, n in zip(forms, shown, strict=True))])


@st.composite
def _action(draw: st.DrawFn, names: frozenset[str]) -> m.ActionStep:
    kind = draw(st.sampled_from(["log", "app", "ha", "site_mode", "ha_data", "alert"]))
    text = _text(draw, names, "v")
    match kind:
        case "log":
            return m.ActionStep(m.LogAction(text))
        case "alert":
            level = draw(st.sampled_from(["low", "medium", "high", "critical"]))
            return m.ActionStep(m.AlertAction(severity=level, title=text))
        case "app":
            data = MappingProxyType({"k": text, "more": (text, "x")})
            return m.ActionStep(m.AppAction(app="gate_controller", action="open", data=data))
        case "ha":
            target = MappingProxyType({"entity_id": "lock." + text.replace(" ", "_")})
            return m.ActionStep(m.HomeAssistantAction(action="lock.unlock", target=target))
        case "ha_data":
            data = MappingProxyType({"message": text})
            return m.ActionStep(m.HomeAssistantAction(action="tts.speak", data=data))
        case _:
            return m.ActionStep(m.SiteModeAction("armed_away"))


@st.composite
def _condition(draw: st.DrawFn, names: frozenset[str]) -> m.Condition:
    kind = draw(st.sampled_from(["time", "value", "list", "camera"]))
    if kind == "camera" and "camera" in names:
        return m.CameraCondition(("gate",))
    if kind in ("value", "list"):
        name = draw(st.sampled_from(sorted(names)))
        if kind == "list":
            return m.ListCondition(name, "plates", negate=draw(st.booleans()))
        return m.ValueCondition(name, is_in=("x",))
    return m.TimeCondition(dt.time(22, 0), dt.time(6, 0))


@st.composite
def _steps(
    draw: st.DrawFn, names: frozenset[str], depth: int, min_size: int = 0
) -> tuple[m.Step, ...]:
    out: list[m.Step] = list(draw(st.lists(_action(names), min_size=min_size, max_size=1)))
    if depth < 3 and draw(st.integers(0, 3)) == 0:
        events = draw(st.booleans())
        inner = names | {"camera", "item" if not events else "event"}
        if events:
            inner |= {"event_type", "event_id"}
        collect = draw(st.none() | st.just("notes"))
        out.append(
            m.ForEachStep(
                items=m.ForEachEvents(3600.0) if events else m.ForEachCameras(("gate",)),
                steps=draw(_steps(inner, depth + 1, min_size=1)),
                as_name="event" if events else "item",
                collect=collect,
            )
        )
        if collect:
            names = names | {collect}
        out.extend(draw(st.lists(_action(names), max_size=1)))
    if depth < 3 and draw(st.booleans()):
        out.append(draw(_branch(names, depth + 1)))
    return tuple(out)


@st.composite
def _branch(draw: st.DrawFn, names: frozenset[str], depth: int) -> m.Step:
    kind = draw(st.sampled_from(["ai", "if", "ask"]))
    if kind == "if":
        conditions = tuple(draw(st.lists(_condition(names), min_size=1, max_size=2)))
        return m.IfStep(
            conditions,
            MappingProxyType(
                {"true": draw(_steps(names, depth)), "false": draw(_steps(names, depth))}
            ),
        )
    if kind == "ask":
        default = draw(st.none() | st.sampled_from(["Yes", "No"]))
        answered = names | {"answer", "answered_by"}
        paths = {
            reply: draw(_steps(answered if reply != default else names, depth))
            for reply in ("Yes", "No")
        }
        if default is None:
            paths["no_answer"] = draw(_steps(names, depth))
        return m.AskPersonStep(
            roles=("owner",),
            message=_text(draw, names, "Go on?"),
            replies=("Yes", "No"),
            timeout_s=60.0,
            default=default,
            paths=MappingProxyType(paths),
        )
    fields = draw(st.lists(st.sampled_from(FIELDS), max_size=2, unique=True))
    reason_as = draw(st.none() | st.just("why"))
    made = {"decision", "reason", "confidence"} | ({reason_as} if reason_as else set())
    paths = {}
    for outcome in ("a", "b", "unsure"):
        defined = names | made | (set(fields) if outcome != "unsure" else set())
        paths[outcome] = draw(_steps(frozenset(defined), depth))
    return m.AIStep(
        spec=m.LookSpec(prompt="p", input="text", text=_text(draw, names, "t")),
        decision=("a", "b"),
        paths=MappingProxyType(paths),
        fields=MappingProxyType(dict.fromkeys(fields, ("x", "y"))),
        reason_as=reason_as,
    )


TRIGGERS = {
    "button": m.ButtonTrigger(),
    "plate": m.EventTrigger("plate.recognized.v1"),
    "alert": m.AlertTrigger(),
    "intrusion": m.AlertTrigger(app="intrusion"),
}
TRIGGER_NAMES = {
    "button": {"user"},
    "plate": {"camera", "event_type", "event_id", "track", "plate", "confidence", "vehicle_label"},
    "alert": {
        "camera",
        "title",
        "severity",
        "alert_type",
        "app",
        "alert_id",
        "description",
        "track",
    },
    "intrusion": {
        "camera",
        "title",
        "severity",
        "alert_type",
        "app",
        "alert_id",
        "description",
        "track",
    },
}


@st.composite
def workflows(draw: st.DrawFn) -> m.Workflow:
    key = draw(st.sampled_from(sorted(TRIGGERS)))
    names = frozenset(COMMON | TRIGGER_NAMES[key])
    return m.Workflow(
        name="Property",
        when=TRIGGERS[key],
        conditions=tuple(draw(st.lists(_condition(names), max_size=1))),
        then=draw(_steps(names, 0, min_size=1)),
        always=draw(_steps(names, 1)),
    )


# ----------------------------------------------------------------------------------------------
# The reference
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Define:
    names: frozenset[str]
    ai: bool


@dataclass(frozen=True)
class Chosen:
    """An AI step chose this path."""


@dataclass(frozen=True)
class If:
    reads: frozenset[str]


@dataclass(frozen=True)
class Reply:
    """A person's reply (not the default, not no_answer) to a message showing ``shown``."""

    shown: frozenset[str]


type Event = Define | Chosen | If | Reply


def _is_ai_output(history: tuple[Event, ...], at: int, name: str) -> bool:
    """Whether ``name`` holds AI output at position ``at`` of the history: its last definition
    before ``at`` is AI output, and no reply since showed it."""
    for i in range(at - 1, -1, -1):
        event = history[i]
        if isinstance(event, Define) and name in event.names:
            shown_since = any(isinstance(e, Reply) and name in e.shown for e in history[i:at])
            return event.ai and not shown_since
    return False


def _verdicts(history: tuple[Event, ...]) -> tuple[bool, bool]:
    """Whether something gates the path, and whether an AI decision chose it."""

    def tainted_if(i: int) -> bool:
        event = history[i]
        return isinstance(event, If) and any(_is_ai_output(history, i, n) for n in event.reads)

    gated = any(
        isinstance(e, Reply) or (isinstance(e, If) and not tainted_if(i))
        for i, e in enumerate(history)
    )
    ai_chosen = any(
        (isinstance(e, Chosen) or tainted_if(i))
        and not any(isinstance(later, Reply) for later in history[i + 1 :])
        for i, e in enumerate(history)
    )
    return gated, ai_chosen


def _refused(history: tuple[Event, ...], uses: set[str]) -> bool:
    gated, ai_chosen = _verdicts(history)
    carries = any(_is_ai_output(history, len(history), name) for name in uses)
    return not gated or ai_chosen or carries


def _severity_refused(history: tuple[Event, ...], severity: str) -> bool:
    gated, ai_chosen = _verdicts(history)
    return (severity in ("high", "critical") and ai_chosen) or (
        severity == "critical" and not gated
    )


def _read(text: str) -> set[str]:
    """The names a text reads: ``{{`` and ``}}`` are literal braces, ``{name}`` a value."""
    names: set[str] = set()
    i = 0
    while i < len(text):
        if text.startswith(("{{", "}}"), i):
            i += 2
        elif text[i] == "{":
            end = text.index("}", i)
            names.add(text[i + 1 : end])
            i = end + 1
        else:
            i += 1
    return names


def _action_uses(action: m.Action) -> set[str]:
    texts: list[str] = []

    def collect(value: object) -> None:
        if isinstance(value, str):
            texts.append(value)
        elif isinstance(value, tuple):
            for item in value:
                collect(item)
        elif isinstance(value, MappingProxyType | dict):
            for item in value.values():
                collect(item)

    for attr in ("data", "target"):
        collect(getattr(action, attr, None))
    return {name for text in texts for name in _read(text)}


_KIND = {m.AppAction: "app_action", m.HomeAssistantAction: "home_assistant"}


def reference(workflow: m.Workflow) -> set[str]:
    """The JSON paths of the actuators (``....app_action``) and of the alert severities
    (``....alert.severity``) the rule refuses."""
    refused: set[str] = set()
    trigger = workflow.when
    start_names = frozenset(TRIGGER_NAMES[_trigger_key(trigger)])
    history: tuple[Event, ...] = (Define(start_names, ai=trigger == m.AlertTrigger()),)
    if workflow.conditions:
        reads = frozenset().union(*(_reads(c) for c in workflow.conditions))
        history = (*history, If(reads))
    _walk(workflow.then, history, ("then",), refused)
    # ``always`` runs with the trigger's values only, whatever ``then`` did.
    _walk(workflow.always, history, ("always",), refused)
    return refused


def _trigger_key(trigger: m.Trigger) -> str:
    return next(k for k, v in TRIGGERS.items() if v == trigger)


def _reads(condition: m.Condition) -> frozenset[str]:
    if isinstance(condition, m.ValueCondition | m.ListCondition):
        return frozenset({condition.name})
    if isinstance(condition, m.CameraCondition):
        return frozenset({"camera"})
    return frozenset()


def _walk(
    steps: tuple[m.Step, ...],
    history: tuple[Event, ...],
    parts: tuple[PathPart, ...],
    refused: set[str],
) -> None:
    for i, step in enumerate(steps):
        here = (*parts, i)
        match step:
            case m.ActionStep(action=action) if isinstance(
                action, m.AppAction | m.HomeAssistantAction | m.SiteModeAction
            ):
                kind = _KIND.get(type(action), "site_mode")
                if _refused(history, _action_uses(action)):
                    refused.add(format_path((*here, kind)))
            case m.ActionStep(action=m.AlertAction(severity=level)):
                if _severity_refused(history, level):
                    refused.add(format_path((*here, "alert", "severity")))
            case m.AIStep(paths=paths):
                for outcome, path in paths.items():
                    names = {"decision", "reason", "confidence"}
                    if step.reason_as:
                        names.add(step.reason_as)
                    if outcome != "unsure":
                        names |= set(step.fields)
                    made = (*history, Define(frozenset(names), ai=True), Chosen())
                    _walk(path, made, (*here, "ai", outcome), refused)
            case m.IfStep(conditions=conditions, paths=paths):
                reads = frozenset().union(*(_reads(c) for c in conditions))
                for outcome, key in (("true", "then"), ("false", "else")):
                    _walk(paths[outcome], (*history, If(reads)), (*here, key), refused)
            case m.AskPersonStep(paths=paths):
                shown = frozenset(_read(step.message))
                for outcome, path in paths.items():
                    after = history
                    if outcome in step.replies and outcome != step.default:
                        after = (
                            *history,
                            Define(frozenset({"answer", "answered_by"}), ai=False),
                            Reply(shown),
                        )
                    _walk(path, after, (*here, outcome), refused)
            case m.ForEachStep(items=items, steps=inner):
                events = isinstance(items, m.ForEachEvents)
                item = {step.as_name, "camera"} | ({"event_type", "event_id"} if events else set())
                body: tuple[Event, ...] = (*history, Define(frozenset(item), ai=events))
                if events:
                    # Whether the steps run at all is decided by the events: a decision on
                    # them, as an `if` that reads them would be.
                    body = (*body, If(frozenset(item)))
                _walk(inner, body, (*here, "do"), refused)
                if step.collect:
                    history = (*history, Define(frozenset({step.collect}), ai=True))
            case _:
                pass


# ----------------------------------------------------------------------------------------------
# The property
# ----------------------------------------------------------------------------------------------

_ACTUATOR_PATH = re.compile(
    r"^(.*\.(?:app_action|home_assistant|site_mode|alert\.severity))(?:[.\[].*)?$"
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workflows())
def test_the_validator_refuses_exactly_the_actuators_the_reference_refuses(
    workflow: m.Workflow,
) -> None:
    assume(sum(1 for _ in walk_steps(workflow)) <= MAX_STEPS)
    report = validate_workflow(workflow)
    assert not [p for p in report.problems if p.code in STRUCTURAL], [
        p.format() for p in report.problems
    ]
    got = set()
    for problem in report.errors:
        if problem.code in SAFETY | SEVERITY:
            match = _ACTUATOR_PATH.match(problem.path)
            assert match, problem.path
            got.add(match.group(1))
    assert got == reference(workflow), [p.format() for p in report.errors]


def test_the_reference_and_the_generator_meet_every_verdict() -> None:
    """The property is only worth something if the generator reaches refusals of each kind
    and acceptances; this draws a fixed set of examples (derandomized, so the count never
    depends on luck) and counts them."""
    seen: dict[str, int] = dict.fromkeys(
        [*SAFETY, *SEVERITY, "accepted", "always", "escaped", "events"], 0
    )

    @settings(max_examples=600, deadline=None, database=None, derandomize=True)
    @given(workflows())
    def count(workflow: m.Workflow) -> None:
        report = validate_workflow(workflow)
        codes = {p.code for p in report.errors} & (SAFETY | SEVERITY)
        for code in codes:
            seen[code] += 1
        refused = reference(workflow)
        if refused == set() and _has_actuator(workflow):
            seen["accepted"] += 1
        seen["always"] += any(path.startswith("$.always") for path in refused)
        seen["escaped"] += "{{" in str(workflow)
        seen["events"] += "ForEachEvents" in str(workflow) and any(".do[" in p for p in refused)

    count()
    assert [k for k, n in seen.items() if n == 0] == [], seen


def _has_actuator(workflow: m.Workflow) -> bool:
    return any(isinstance(s, m.ActionStep) and is_actuator(s) for _, s in walk_steps(workflow))
