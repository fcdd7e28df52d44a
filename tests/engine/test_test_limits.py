"""Test runs keep apart from On runs' limits, and a limit that holds an event back says
which and until when (issue 23, item 5: a Test run waiting half an hour kept the
workflow's one-at-a-time slot busy once it was On, and nothing said why)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from custom_components.opennvr_workflows.engine import EngineUpdate, HeldBack
from custom_components.opennvr_workflows.engine.testing import ManualClock, event
from custom_components.opennvr_workflows.workflow import model as m

from .conftest import EngineFactory


def waits(state: str = "test", cooldown_s: float = 900, per_hour: int = 30) -> m.Workflow:
    """Log, wait half an hour, log: one run per camera at a time."""
    return m.Workflow(
        name="Parcel",
        when=m.AlertTrigger(alert_type="intrusion", cameras=("yard",)),
        state=state,  # type: ignore[arg-type]
        limits=m.WorkflowLimits(cooldown_s=cooldown_s, per_hour=per_hour),
        then=(
            m.ActionStep(m.LogAction("parcel")),
            m.ActionStep(m.WaitAction(1800)),
            m.ActionStep(m.LogAction("still there")),
        ),
    )


async def test_a_waiting_test_run_does_not_hold_the_on_runs(
    make_engine: EngineFactory, clock: ManualClock
) -> None:
    """A Test run waits half an hour; the workflow is set On: the next parcel starts an
    On run at once (not joined to the Test run, no cooldown, no hourly count)."""
    engine = make_engine()
    engine.set_workflows({"p": waits(per_hour=1)})
    await engine.start()
    (test_run,) = engine.submit(event())
    await engine.idle()
    assert [r.status for r in engine.active_runs()] == ["waiting"]
    engine.set_workflow_state("p", "on")
    await clock.advance(60)
    (on_run,) = engine.submit(event())
    await engine.idle()
    assert on_run != test_run
    assert {r.run_id: r.test for r in engine.active_runs()} == {test_run: True, on_run: False}
    assert engine.stats.dropped == {}
    # The On run holds its own slot: a parcel now joins it, not the Test run.
    assert engine.submit(event()) == (on_run,)


async def test_test_runs_keep_their_own_limits_across_a_restart(
    make_engine: EngineFactory, clock: ManualClock
) -> None:
    """Test runs are limited among themselves (the README's "one run per camera at a
    time" in Test), and a restart restores their slot and hour apart from On's."""
    engine = make_engine()
    engine.set_workflows({"p": waits(per_hour=1)})
    await engine.start()
    (test_run,) = engine.submit(event())
    await engine.idle()
    assert engine.submit(event()) == (test_run,)  # joined: one at a time, in Test too
    await engine.stop()
    engine = make_engine()
    engine.set_workflows({"p": waits(per_hour=1)})
    await engine.start()
    engine.set_workflow_state("p", "on")
    now = clock.now().timestamp()
    assert engine.limiter("p").runs_last_hour(now) == 0
    assert engine.limiter("p").runs_last_hour(now, test=True) == 1
    (on_run,) = engine.submit(event())
    assert on_run != test_run


async def test_a_join_says_which_run_holds_it_and_until_when(
    make_engine: EngineFactory, clock: ManualClock
) -> None:
    engine = make_engine()
    engine.set_workflows({"p": waits(state="on")})
    await engine.start()
    updates: list[EngineUpdate] = []
    engine.subscribe(updates.append)
    started = clock.now().timestamp()
    (run_id,) = engine.submit(event())
    await engine.idle()
    assert engine.held_back("p") is None
    engine.submit(event())
    engine.submit(event())  # the same hold: said once
    held = engine.held_back("p")
    assert held == HeldBack("one_at_a_time", started, started + 1800, run_id, False)
    said = [u for u in updates if u.kind == "held_back"]
    detail = {**held.as_dict(), "chain": [], "ai_derived": False}
    assert [(u.workflow_id, u.run_id, u.detail) for u in said] == [("p", run_id, detail)]
    # The run ends: nothing holds any more.
    await clock.advance(1801)
    await engine.idle()
    assert engine.held_back("p") is None


async def test_a_cooldown_and_the_hourly_limit_say_until_when(
    make_engine: EngineFactory, clock: ManualClock
) -> None:
    wf = m.Workflow(
        name="Log",
        when=m.AlertTrigger(alert_type="intrusion", cameras=("yard",)),
        state="on",
        limits=m.WorkflowLimits(cooldown_s=600, per_hour=2),
        then=(m.ActionStep(m.LogAction("x")),),
    )
    engine = make_engine()
    engine.set_workflows({"l": wf})
    await engine.start()
    first = clock.now().timestamp()
    engine.submit(event())
    await engine.idle()
    engine.submit(event())
    assert engine.held_back("l") == HeldBack("cooldown", first, first + 600, None, False)
    await clock.advance(600)
    assert engine.held_back("l") is None
    engine.submit(event())
    await engine.idle()
    await clock.advance(600)
    now = clock.now().timestamp()
    engine.submit(event())
    assert engine.held_back("l") == HeldBack("per_hour", now, first + 3600, None, False)
    assert engine.stats.dropped == {"cooldown": 1, "per_hour": 1}


async def test_a_test_run_stored_before_test_keys_does_not_hold_the_on_runs(
    make_engine: EngineFactory,
    clock: ManualClock,
    open_db: Callable[[], sqlite3.Connection],
) -> None:
    """The issue's own case after an upgrade: a Test run stored waiting under the plain
    camera key is restored under the Test runs' key, and its hour counts there."""
    engine = make_engine()
    engine.set_workflows({"p": waits(per_hour=1)})
    await engine.start()
    (test_run,) = engine.submit(event())
    await engine.idle()
    await engine.stop()
    db = open_db()
    with db:
        db.execute("UPDATE workflow_runs SET limit_key='camera:cam-1'")
    db.close()
    engine = make_engine()
    engine.set_workflows({"p": waits(per_hour=1)})
    await engine.start()
    engine.set_workflow_state("p", "on")
    assert engine.limiter("p").runs_last_hour(clock.now().timestamp(), test=True) == 1
    (on_run,) = engine.submit(event())
    assert on_run != test_run
    await clock.advance(1801)
    await engine.idle()
    assert {r["status"] for r in await engine.runs("p")} == {"done", "waiting"}
