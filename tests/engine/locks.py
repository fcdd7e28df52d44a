"""The two locks, each switched off in a test build, and a driver that tries a workflow's paths.

* :func:`validator_without_taint`: the validator with its taint checks off (the safety rule
  on actuators, severities, the card, who is asked, names that shadow others): a file that
  only those checks refuse now imports, as it would through a hole in them.
* :func:`monitor_off`: the engine without its run-time monitor.
* :func:`first_lock_off`: the engine without its own older guards (its severity cap and its
  refusal of actuators in runs AI output or a person's own values started), so what holds
  is the monitor alone.

Each is a test-only switch (a monkeypatch), never an option of the product.

:func:`explore` runs a workflow many times, each on a fresh engine, with the AI taking each
of its options and each question answered with each reply or timing out, and returns every
run's recorded trace and effects.
"""

from __future__ import annotations

import sqlite3
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from custom_components.opennvr_workflows.engine import AiResult, Engine
from custom_components.opennvr_workflows.engine.actions import ActionSteps
from custom_components.opennvr_workflows.engine.monitor import Monitor
from custom_components.opennvr_workflows.engine.records import ApprovalRecord
from custom_components.opennvr_workflows.engine.testing import (
    Call,
    FakeAi,
    FakeEffects,
    ManualClock,
)
from custom_components.opennvr_workflows.workflow import model as m
from custom_components.opennvr_workflows.workflow.checks import actions as action_checks
from custom_components.opennvr_workflows.workflow.checks import flow, semantic

from .rule_reference import Trace, read_trace

#: The codes of the taint checks: what the switch turns off.
TAINT_CODES = frozenset(
    {
        "WF-SAFETY-ACTUATOR-UNGATED",
        "WF-SAFETY-ACTUATOR-AFTER-AI",
        "WF-SAFETY-ACTUATOR-AFTER-AI-IF",
        "WF-SAFETY-ACTUATOR-AI-VALUE",
        "WF-SEVERITY-AI-CAP",
        "WF-SEVERITY-CRITICAL-UNGATED",
        "WF-ASK-EFFECT-HIDDEN",
        "WF-ASK-WHO-AI",
        "WF-AI-NAME-SHADOWS",
    }
)


def _nothing(*args: object, **kwargs: object) -> None:
    return None


@contextmanager
def validator_without_taint() -> Iterator[None]:
    """The validator with the checks that judge what AI output may do switched off."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(action_checks, "check_actuator", _nothing)
        patch.setattr(action_checks, "check_severity", _nothing)
        patch.setattr(semantic, "check_approvers", _nothing)
        patch.setattr(flow, "check_shadowing", _nothing)
        patch.setattr(flow, "check_collect_shadowing", _nothing)
        yield


@contextmanager
def monitor_off() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Monitor, "check", _nothing)
        yield


@contextmanager
def first_lock_off() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ActionSteps, "_severity_limit", lambda self, run, lineage: ("critical", None))
        patch.setattr(ActionSteps, "_held_by_trigger", _nothing)
        yield


@dataclass
class Start:
    """How a run starts: by name (``start_now``'s arguments), the site's model apps, the
    events a loop over events finds."""

    variables: Mapping[str, Any] = field(default_factory=dict)
    message: str | None = None
    ai_derived: bool = False
    supplied_by: str | None = None
    model_apps: frozenset[str] = frozenset()
    events: Sequence[Mapping[str, Any]] = tuple(
        {"camera": camera, "event_type": "person", "id": i}
        for i, camera in enumerate(
            ("front_door", "back_door", "gate", "garden", "driveway", "yard")
        )
    )


class AnyList(FakeEffects):
    """Every site list exists, with one entry."""

    async def site_list(self, name: str) -> Sequence[str]:
        return ["AB1"]


@dataclass
class Ran:
    """One run: its trace, every effect it reached, and how it ended."""

    trace: Trace
    calls: list[Call]
    #: How the run ended: done, failed (a step refused, a provider lost), ...
    status: str


async def explore(
    workflow: m.Workflow, start: Start, decisions: int = 4, answers: int = 3, shifts: int = 2
) -> list[Ran]:
    """Run ``workflow`` (On) once per first AI option, first answer and shift (each AI step
    and each question after the first moves on by the shift), by night or by day and the
    site armed or not on alternate runs, on a fresh engine each time."""
    out: list[Ran] = []
    for d in range(decisions):
        for a in range(answers):
            for shift in range(shifts):
                with tempfile.TemporaryDirectory() as tmp:
                    db = Path(tmp) / "wf.db"
                    out.append(await _round(db, workflow, start, d, a, shift))
    return out


async def _round(
    db: Path, workflow: m.Workflow, start: Start, first: int, answer: int, shift: int
) -> Ran:
    night = (first + shift) % 2 == 0
    clock = ManualClock(datetime(2026, 1, 5, 23 if night else 12, 30, tzinfo=UTC))
    armed = (first + answer + shift) % 2 == 0
    effects = AnyList(
        events=list(start.events), site_mode_value="armed_away" if armed else "disarmed"
    )
    calls = [0]

    def decide(step: m.AIStep, ctx: object) -> AiResult:
        options = [*step.decision, "unsure"]
        outcome = options[(first + shift * calls[0]) % len(options)]
        calls[0] += 1
        fields = (
            {n: v[first % len(v)] for n, v in step.fields.items()} if outcome != "unsure" else {}
        )
        return AiResult(outcome=outcome, fields=fields, reason="TTS", confidence=0.9)

    engine = Engine(db, effects, FakeAi(decide=decide), clock, retention_interval_s=0)
    engine.policy.model_apps = start.model_apps
    engine.set_workflows({"wf": _on(workflow)})
    await engine.start()
    try:
        started = engine.start_now(
            "wf",
            dict(start.variables),
            message=start.message,
            user="alice",
            ai_derived=start.ai_derived,
            supplied_by=start.supplied_by,
        )
        (run_id,) = started.run_ids
        asked = [0]

        def choose(approval: ApprovalRecord) -> str | None:
            choices = [*approval.replies, None]
            asked[0] += 1
            return choices[(answer + shift * (asked[0] - 1)) % len(choices)]

        await settle(engine, clock, choose)
    finally:
        await engine.stop()
    conn = sqlite3.connect(db)
    try:
        (status,) = conn.execute(
            "SELECT status FROM workflow_runs WHERE id=?", (run_id,)
        ).fetchone()
        return Ran(read_trace(conn, run_id), list(effects.calls), status)
    finally:
        conn.close()


async def settle(
    engine: Engine, clock: ManualClock, choose: Callable[[ApprovalRecord], str | None]
) -> None:
    """Carry the runs to their end: each question answered with what ``choose`` says (None:
    nobody answers, and it times out), each ``wait`` waited out."""
    for _ in range(40):
        await engine.idle()
        pending = engine.pending_approvals()
        if not pending:
            if not await waited(engine, clock):
                break
            continue
        for approval, _ in pending:
            reply = choose(approval)
            if reply is not None:
                await engine.answer_approval(approval.approval_id, reply, "alice")
        left = engine.pending_approvals()
        if left:  # the rest time out
            last = max(approval.expires_at for approval, _ in left)
            await clock.advance(last - clock.now().timestamp() + 1)
    await engine.idle()


async def waited(engine: Engine, clock: ManualClock) -> bool:
    """Move the clock to the first ``wait`` a run is waiting on (False: none is)."""
    due = [
        float(rec.result["due_at"])
        for run in engine.active_runs()
        for rec in run.steps.values()
        if rec.status == "waiting" and rec.result and "due_at" in rec.result
    ]
    if not due:
        return False
    await clock.advance(max(0.0, min(due) - clock.now().timestamp()) + 1)
    return True


def _on(workflow: m.Workflow) -> m.Workflow:
    return replace(
        workflow,
        state="on",
        limits=m.WorkflowLimits(cooldown_s=0, per_hour=1000, ai_per_hour=1000),
    )
