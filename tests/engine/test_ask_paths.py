"""A question whose reply (or no answer) has no path: the run ends that branch and completes.

The contract only warns about such a question (the RFC's own example gives a path to "Yes"
alone), so the engine must finish these runs as cleanly as any other: the step recorded with
the reply taken, the ``always`` steps run, nothing else done.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

from custom_components.opennvr_workflows.engine.testing import FakeEffects, ManualClock, event
from custom_components.opennvr_workflows.workflow import model as m
from custom_components.opennvr_workflows.workflow import validate_workflow

from .conftest import EngineFactory


def only_yes(state: m.State = "on") -> m.Workflow:
    """Ask the guard; only "Yes" has a path, as in the RFC's night intrusion example."""
    return m.Workflow(
        name="Only yes has a path",
        when=m.AlertTrigger(alert_type="intrusion", cameras=("yard",)),
        state=state,
        then=(
            m.AskPersonStep(
                roles=("guard",),
                message="Possible intruder on {camera}. Threat?",
                replies=("Yes", "No"),
                timeout_s=60,
                paths={"Yes": (m.ActionStep(m.AlertAction("high", "Intruder on {camera}")),)},
            ),
        ),
        always=(m.ActionStep(m.LogAction("done with {camera}")),),
    )


def _steps(open_db: Callable[[], sqlite3.Connection]) -> list[tuple[str, str, str]]:
    conn = open_db()
    return conn.execute(
        "SELECT path, status, outcome FROM workflow_run_steps ORDER BY seq"
    ).fetchall()


def _run_status(open_db: Callable[[], sqlite3.Connection]) -> tuple[int, str]:
    return open_db().execute("SELECT test, status FROM workflow_runs").fetchone()


def test_the_contract_accepts_it_with_warnings_only() -> None:
    report = validate_workflow(only_yes(state="test"))
    assert report.ok
    assert [p.code for p in report.warnings] == ["WF-ASK-PATH-MISSING"] * 2


async def test_a_reply_without_a_path_ends_the_branch(
    make_engine: EngineFactory,
    effects: FakeEffects,
    db: Path,
    open_db: Callable[[], sqlite3.Connection],
) -> None:
    engine = make_engine()
    engine.set_workflows({"w": only_yes()})
    await engine.start()
    engine.submit(event())
    await engine.idle()
    ((approval, _),) = engine.pending_approvals()
    await engine.answer_approval(approval.approval_id, "No", "guard-1")
    await engine.idle()
    assert engine.active_runs() == []
    await engine.stop()
    assert effects.of("alert") == []
    assert [c.request for c in effects.of("log")] == ["done with yard"]
    assert _steps(open_db) == [("then.0", "done", "No"), ("always.0", "done", "done")]
    assert _run_status(open_db) == (0, "done")


async def test_no_answer_without_a_path_ends_the_branch(
    make_engine: EngineFactory,
    effects: FakeEffects,
    clock: ManualClock,
    open_db: Callable[[], sqlite3.Connection],
) -> None:
    engine = make_engine()
    engine.set_workflows({"w": only_yes()})
    await engine.start()
    engine.submit(event())
    await engine.idle()
    await clock.advance(61)
    await engine.idle()
    assert engine.active_runs() == []
    await engine.stop()
    assert effects.of("alert") == []
    assert _steps(open_db) == [("then.0", "done", "no_answer"), ("always.0", "done", "done")]
    assert _run_status(open_db) == (0, "done")


async def test_the_reply_with_a_path_still_takes_it(
    make_engine: EngineFactory, effects: FakeEffects, open_db: Callable[[], sqlite3.Connection]
) -> None:
    engine = make_engine()
    engine.set_workflows({"w": only_yes()})
    await engine.start()
    engine.submit(event())
    await engine.idle()
    ((approval, _),) = engine.pending_approvals()
    await engine.answer_approval(approval.approval_id, "Yes", "guard-1")
    await engine.idle()
    await engine.stop()
    assert [c.request.title for c in effects.of("alert")] == ["Intruder on yard"]
    assert [path for path, _, _ in _steps(open_db)] == ["then.0", "then.0.Yes.0", "always.0"]


async def test_in_test_mode_no_answer_without_a_path_ends_at_once(
    make_engine: EngineFactory, effects: FakeEffects, open_db: Callable[[], sqlite3.Connection]
) -> None:
    engine = make_engine()
    engine.set_workflows({"w": only_yes(state="test")})
    await engine.start()
    engine.submit(event())
    await engine.idle()
    assert engine.active_runs() == []
    await engine.stop()
    assert effects.calls == []
    assert _steps(open_db) == [
        ("then.0", "would_have", "no_answer"),
        ("always.0", "would_have", "done"),
    ]
    assert _run_status(open_db) == (1, "done")
