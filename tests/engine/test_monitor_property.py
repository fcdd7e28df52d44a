"""The run-time monitor against a reference: random workflows, random AI outputs, random answers.

Each example draws a workflow that was never validated (tests/engine/random_workflows.py), a
start (the world's event, one that carries AI output, or a person's own values given by
name), whether the engine's first lock is on (its severity cap and its refusal of actuators
in runs AI output started), and then, as the run goes, every AI decision, every field and
reason, and every answer (a reply, or none until the question times out). The run's trace
is read back from the database, and for every action step the monitor's verdict (recorded
``refused``, or not) must be the reference's (tests/engine/rule_reference.py), which walks
the trace with its own reading of the README's rule.
"""

from __future__ import annotations

import asyncio
import sqlite3
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from custom_components.opennvr_workflows.engine import AiResult, Engine
from custom_components.opennvr_workflows.engine.actions import ActionSteps
from custom_components.opennvr_workflows.engine.testing import (
    FakeAi,
    FakeEffects,
    ManualClock,
    event,
)
from custom_components.opennvr_workflows.workflow import model as m

from .locks import settle
from .random_workflows import loop_events, workflows
from .rule_reference import read_trace, verdicts

#: Effects whose verdict the test counts, to show the generator reaches each kind.
MOVING = {"app_action", "home_assistant", "site_mode"}


class LoopEvents(FakeEffects):
    """Each loop over events reads its own events (told apart by its ``within``)."""

    async def recent_events(
        self, cameras: Sequence[str], within_s: float
    ) -> Sequence[Mapping[str, Any]]:
        return loop_events(within_s)


def first_lock_off(patch: pytest.MonkeyPatch) -> None:
    """The engine's first lock off: no severity cap, no refusal in runs AI output started."""
    patch.setattr(ActionSteps, "_severity_limit", lambda self, run, lineage: ("critical", None))
    patch.setattr(ActionSteps, "_held_by_trigger", lambda self, *args: None)


async def play(
    data: st.DataObject, db: Path, key: str, workflow: m.Workflow, start: str
) -> tuple[str, FakeEffects]:
    """Run ``workflow`` once, drawing the AI's outputs and the answers; returns the run."""
    clock = ManualClock()
    effects = LoopEvents(lists={"plates": ["AB1"]})

    def decide(step: m.AIStep, ctx: object) -> AiResult:
        outcome = data.draw(st.sampled_from([*step.decision, "unsure"]), label="decision")
        fields = {
            name: data.draw(st.sampled_from(values), label=name)
            for name, values in step.fields.items()
            if outcome != "unsure"
        }
        reason = data.draw(st.sampled_from(["seen at the gate", "TTS"]), label="reason")
        return AiResult(outcome=outcome, fields=fields, reason=reason, confidence=0.8)

    engine = Engine(db, effects, FakeAi(decide=decide), clock, retention_interval_s=0)
    engine.policy.answer_fresh_s = 1e9  # answers' ages are tested apart (test_monitor.py)
    engine.set_workflows({"wf": workflow})
    await engine.start()
    try:
        ai = start == "ai"
        if key == "button":
            supplied = "bob" if start == "supplied" else None
            started = engine.start_now("wf", user="alice", ai_derived=ai, supplied_by=supplied)
            (run_id,) = started.run_ids
        else:
            kind = "event" if key == "plate" else "alert"
            (run_id,) = engine.submit(
                event(
                    kind,
                    type="plate.recognized.v1" if key == "plate" else "intrusion",
                    plate="AB1" if key == "plate" else None,
                    ai_derived=ai,
                )
            )
        await settle(
            engine,
            clock,
            lambda approval: data.draw(st.sampled_from([*approval.replies, None]), label="reply"),
        )
        assert engine.active_runs() == []
    finally:
        await engine.stop()
    return run_id, effects


def test_the_monitor_refuses_exactly_what_the_reference_refuses() -> None:
    """The property, then a count of what its examples met: refusals of each part of the
    rule and effects that acted, of each kind (a property that never refuses proves
    nothing)."""
    seen: dict[str, int] = {}

    @settings(
        max_examples=400,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(drawn=workflows(), data=st.data())
    def agrees(drawn: tuple[str, m.Workflow], data: st.DataObject) -> None:
        key, workflow = drawn
        starts = ["world", "ai", "supplied"] if key == "button" else ["world", "ai"]
        start = data.draw(st.sampled_from(starts), label="start")
        lax = data.draw(st.booleans(), label="first lock off")
        with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as patch:
            if lax:
                first_lock_off(patch)
            db = Path(tmp) / "wf.db"
            run_id, effects = asyncio.run(play(data, db, key, workflow, start))
            conn = sqlite3.connect(db)
            try:
                trace = read_trace(conn, run_id)
            finally:
                conn.close()
        expected = verdicts(workflow, trace)
        got = {p: r.status == "refused" for p, r in trace.rows.items() if p in expected}
        assert got == expected, {
            p: (r.kind, r.status, r.result.get("rule")) for p, r in trace.rows.items()
        }
        assert all(r.status != "refused" for p, r in trace.rows.items() if p not in expected)
        # A refused step sent nothing.
        refused = {p for p, r in trace.rows.items() if r.status == "refused"}
        assert not [c for c in effects.calls if c.ctx is not None and c.ctx.step_path in refused]
        for path, row in trace.rows.items():
            if path in expected:
                tag = ("refused " if expected[path] else "acted ") + row.kind
                seen[tag] = seen.get(tag, 0) + 1
            if rule := row.result.get("rule"):
                seen[f"rule {rule}"] = seen.get(f"rule {rule}", 0) + 1

    agrees()
    wanted = [
        *(f"refused {k}" for k in (*MOVING, "alert")),
        *(f"acted {k}" for k in (*MOVING, "alert")),
        *(f"rule {r}" for r in ("gate", "decision", "value", "card", "urgency", "who")),
    ]
    assert [w for w in wanted if not seen.get(w)] == [], sorted(seen.items())
