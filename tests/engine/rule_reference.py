"""A straightforward reference for the safety rule, over a run's recorded trace.

Written from the README's rule ("Writing a workflow"), apart from both the validator and the
engine's monitor: it walks the workflow along the outcomes the run recorded and keeps a
plain *history* of what happened on the path (values defined, decisions taken, questions
answered), then says, for each effect that matters, whether the rule refuses it:

* an action that moves things (an app action, a site mode, a Home Assistant action outside
  the read/notify allow-list, a notification the phone takes as a command) is refused when
  nothing gates it (no plain ``if``, no person's reply); when a decision that is not plain
  (an AI step, an ``if`` that read AI output, a loop over events, a start by AI output or by
  a person's own values) has no person's reply after it; when it reads AI output no reply
  after its definition approved by showing it; when the question it stands behind could
  not show it (a value it reads was defined after that question, or it moves things only by
  what the run filled in); or when an AI decision chose, among questions that ask other
  people, the one that clears it;
* an urgency above medium is refused after an AI decision with no person's reply since, and
  ``critical`` also where nothing gates it.

A person's reply is an answered reply other than the default. Answers' ages are left out
(the property test sets a bound no run reaches); trust from marks too (no run is marked).
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

from custom_components.opennvr_workflows.engine import NvrEvent
from custom_components.opennvr_workflows.engine.steps import trigger_values
from custom_components.opennvr_workflows.workflow import model as m

# The validator's own property test reads braces and records definitions the same way: a
# reference of the rule, written apart from both the validator and the engine.
from ..workflow.test_taint_property import Define
from ..workflow.test_taint_property import _read as read

COMMON = frozenset({"workflow", "time", "date"})
ANSWER = frozenset({"answer", "answered_by"})
ALLOWED = (
    "notify.*",
    "persistent_notification.create",
    "persistent_notification.dismiss",
    "logbook.log",
    "system_log.write",
)
URGENT = ("high", "critical")


@dataclass(frozen=True)
class Row:
    """One recorded step."""

    path: str
    kind: str
    status: str
    outcome: str | None
    inputs: Mapping[str, Any]
    result: Mapping[str, Any]


@dataclass(frozen=True)
class Trace:
    """A run as recorded: its trigger and its steps by path."""

    trigger: NvrEvent
    rows: Mapping[str, Row]


def read_trace(conn: sqlite3.Connection, run_id: str) -> Trace:
    (trigger,) = conn.execute("SELECT trigger FROM workflow_runs WHERE id=?", (run_id,)).fetchone()
    rows = {
        path: Row(path, kind, status, outcome, json.loads(i or "{}"), json.loads(r or "{}"))
        for path, kind, status, outcome, i, r in conn.execute(
            "SELECT path, kind, status, outcome, inputs, result FROM workflow_run_steps "
            "WHERE run_id=?",
            (run_id,),
        )
    }
    return Trace(NvrEvent.from_summary(json.loads(trigger)), rows)


# ── the history of a path ──────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class Decide:
    kind: str  # start, if, ai, loop
    ai: bool
    supplied: bool = False
    step: m.Step | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Asked:
    replied: bool
    shown: frozenset[str]
    roles: frozenset[str]


type Event = Define | Decide | Asked


def reads(value: Any) -> set[str]:
    """Every name an action's texts and data read."""
    if isinstance(value, str):
        return read(value)
    if isinstance(value, Mapping):
        return set().union(*(reads(v) for v in value.values())) if value else set()
    if isinstance(value, tuple | list):
        return set().union(*(reads(v) for v in value)) if value else set()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return set().union(*(reads(getattr(value, f.name)) for f in dataclasses.fields(value)))
    return set()


def is_ai(history: Sequence[Event], name: str) -> bool:
    """Whether ``name`` holds AI output no person's reply approved since it was defined."""
    for k in range(len(history) - 1, -1, -1):
        event = history[k]
        if isinstance(event, Define) and name in event.names:
            approved = any(
                isinstance(e, Asked) and e.replied and name in e.shown for e in history[k:]
            )
            return event.ai and not approved
    return False


def condition_reads(conditions: Iterable[m.Condition]) -> set[str]:
    out: set[str] = set()
    for c in conditions:
        if isinstance(c, m.ValueCondition | m.ListCondition):
            out.add(c.name)
        elif isinstance(c, m.CameraCondition):
            out.add("camera")
    return out


def moves(action: m.Action) -> bool:
    if isinstance(action, m.AppAction | m.SiteModeAction):
        return True
    return isinstance(action, m.HomeAssistantAction) and not any(
        fnmatchcase(action.action, p) for p in ALLOWED
    )


def phone_command(action: m.Action, inputs: Mapping[str, Any]) -> bool:
    if not isinstance(action, m.HomeAssistantAction) or not action.action.startswith("notify."):
        return False
    word = str((inputs.get("data") or {}).get("message") or "").strip().casefold()
    return word.startswith("command_") or word in ("tts", "request_location_update")


def urgency(action: m.Action, inputs: Mapping[str, Any]) -> str | None:
    if isinstance(action, m.AlertAction | m.NotifyAction):
        return str(inputs.get("severity"))
    if isinstance(action, m.HomeAssistantAction) and action.action.startswith("notify."):
        return str(inputs.get("max_severity"))
    return None


# ── the rule ───────────────────────────────────────────────────────────────────────────


def refused_moving(history: Sequence[Event], action: m.Action, command: bool) -> bool:
    replies = [k for k, e in enumerate(history) if isinstance(e, Asked) and e.replied]
    ruled = any(isinstance(e, Decide) and e.kind == "if" and not e.ai for e in history)
    if not replies and not ruled:
        return True
    for k, e in enumerate(history):
        if isinstance(e, Decide) and (e.ai or e.supplied) and not any(r > k for r in replies):
            return True
    used = reads(action)
    if any(is_ai(history, name) for name in used):
        return True
    if replies and _ai_chose_approvers(history, replies):
        return True
    asked = [k for k, e in enumerate(history) if isinstance(e, Asked)]
    if asked and not any(isinstance(e, Decide) and e.kind == "ai" for e in history[asked[-1] :]):
        if command and not moves(action):
            return True  # the card lists what moves things when it asks, not what the run fills
        for name in used:
            defined = [
                k for k, e in enumerate(history) if isinstance(e, Define) and name in e.names
            ]
            if defined and defined[-1] > asked[-1]:
                return True
    return False


def refused_urgency(history: Sequence[Event], level: str) -> bool:
    replies = [k for k, e in enumerate(history) if isinstance(e, Asked) and e.replied]
    for k, e in enumerate(history):
        if isinstance(e, Decide) and e.ai and not any(r > k for r in replies):
            return level in URGENT
    ruled = any(isinstance(e, Decide) and e.kind == "if" and not e.ai for e in history)
    return level == "critical" and not replies and not ruled


def _ai_chose_approvers(history: Sequence[Event], replies: list[int]) -> bool:
    last = history[replies[-1]]
    assert isinstance(last, Asked)
    since = replies[-2] + 1 if len(replies) > 1 else 0
    for e in history[since : replies[-1]]:
        chooser = isinstance(e, Decide) and e.ai and e.kind in ("ai", "if")
        if chooser and e.step is not None and any(r != last.roles for r in _clearing_roles(e.step)):
            return True
    return False


def _clearing_roles(step: m.Step) -> Iterator[frozenset[str]]:
    """The roles of every question under a decision's branches that clears an action that
    moves things, going past a question only where nobody replied."""
    for branch in getattr(step, "paths", {}).values():
        yield from _roles_in(branch)


def _roles_in(steps: Sequence[m.Step]) -> Iterator[frozenset[str]]:
    for step in steps:
        if isinstance(step, m.AskPersonStep):
            if any(
                _moves_before_asking(path)
                for reply, path in step.paths.items()
                if reply in step.replies and reply != step.default
            ):
                yield frozenset(step.roles)
            for reply, path in step.paths.items():
                if reply not in step.replies or reply == step.default:
                    yield from _roles_in(path)
        elif isinstance(step, m.ForEachStep):
            yield from _roles_in(step.steps)
        elif isinstance(step, m.IfStep | m.AIStep):
            yield from _clearing_roles(step)


def _moves_before_asking(steps: Sequence[m.Step]) -> bool:
    for step in steps:
        if isinstance(step, m.ActionStep) and moves(step.action):
            return True
        if isinstance(step, m.IfStep):
            if any(_moves_before_asking(p) for p in step.paths.values()):
                return True
        elif isinstance(step, m.ForEachStep):
            if _moves_before_asking(step.steps):
                return True
        elif isinstance(step, m.AskPersonStep | m.AIStep):
            return False
    return False


# ── the walk along the trace ───────────────────────────────────────────────────────────


def verdicts(workflow: m.Workflow, trace: Trace) -> dict[str, bool]:
    """For every recorded action step: whether the rule refuses it (False for an effect
    that does not matter)."""
    event = trace.trigger
    named = frozenset(trigger_values(workflow, event)) - COMMON
    start: tuple[Event, ...] = (
        Define(named, ai=event.ai_derived),
        Decide("start", ai=event.ai_derived, supplied=event.supplied_by is not None),
    )
    if workflow.conditions and "if" in trace.rows:
        start = (*start, _if(start, workflow.conditions, None))
    out: dict[str, bool] = {}
    _walk(workflow.then, "then", start, trace.rows, out)
    _walk(workflow.always, "always", start, trace.rows, out)
    return out


def _if(history: Sequence[Event], conditions: Iterable[m.Condition], step: m.Step | None) -> Decide:
    return Decide("if", ai=any(is_ai(history, n) for n in condition_reads(conditions)), step=step)


def _walk(
    steps: Sequence[m.Step],
    prefix: str,
    history: tuple[Event, ...],
    rows: Mapping[str, Row],
    out: dict[str, bool],
) -> None:
    for i, step in enumerate(steps):
        path = f"{prefix}.{i}"
        row = rows.get(path)
        if row is None:
            return
        match step:
            case m.ActionStep(action=action):
                command = phone_command(action, row.inputs)
                level = urgency(action, row.inputs)
                refused = (moves(action) or command) and refused_moving(history, action, command)
                out[path] = refused or (level is not None and refused_urgency(history, level))
            case m.IfStep(conditions=conditions, paths=paths):
                decided = (*history, _if(history, conditions, step))
                _walk(paths.get(row.outcome or "", ()), f"{path}.{row.outcome}", decided, rows, out)
            case m.AIStep(paths=paths):
                names = {"decision", "reason", "confidence", *(row.result.get("fields") or {})}
                if step.reason_as:
                    names.add(step.reason_as)
                decided = (
                    *history,
                    Define(frozenset(names), ai=True),
                    Decide("ai", True, step=step),
                )
                _walk(paths.get(row.outcome or "", ()), f"{path}.{row.outcome}", decided, rows, out)
            case m.AskPersonStep(paths=paths):
                replied = (
                    row.result.get("status") == "answered"
                    and row.outcome in step.replies
                    and row.outcome != step.default
                )
                asked = Asked(replied, frozenset(read(step.message)), frozenset(step.roles))
                decided = (*history, Define(ANSWER, ai=False), asked)
                _walk(paths.get(row.outcome or "", ()), f"{path}.{row.outcome}", decided, rows, out)
            case m.ForEachStep(items=items, steps=body):
                events = isinstance(items, m.ForEachEvents)
                names = {step.as_name, "camera"} | ({"event_type", "event_id"} if events else set())
                inner: tuple[Event, ...] = (*history, Define(frozenset(names), ai=events))
                if events:
                    inner = (*inner, Decide("loop", ai=True))
                for j in range(len(row.result.get("items") or ())):
                    _walk(body, f"{path}.{j}", inner, rows, out)
                if step.collect:
                    reasons = any(
                        r.kind == "ai" for p, r in rows.items() if p.startswith(f"{path}.")
                    )
                    history = (*history, Define(frozenset({step.collect}), ai=events or reasons))
            case _:
                pass
