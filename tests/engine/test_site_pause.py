"""The site's pause: nothing starts (each start counted, none queued), waiting runs stay
waiting (a wait that ends, an answer, a restart), and everything goes on at resume."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from custom_components.opennvr_workflows.engine.testing import FakeEffects, ManualClock, event
from custom_components.opennvr_workflows.workflow import model as m

from .conftest import EngineFactory
from .test_ask_paths import only_yes

LIMITS = m.WorkflowLimits(cooldown_s=0, per_hour=1000)


def logs() -> m.Workflow:
    return m.Workflow(
        name="Log",
        when=m.AlertTrigger(cameras=("yard",)),
        state="on",
        limits=LIMITS,
        then=(m.ActionStep(m.LogAction("seen {alert_id}")),),
    )


def waits() -> m.Workflow:
    return m.Workflow(
        name="Wait then log",
        when=m.AlertTrigger(cameras=("yard",)),
        state="on",
        limits=LIMITS,
        then=(m.ActionStep(m.WaitAction(600)), m.ActionStep(m.LogAction("after"))),
    )


def paused_count(open_db: Callable[[], sqlite3.Connection]) -> int:
    row = (
        open_db()
        .execute(
            "SELECT coalesce(sum(count), 0) FROM workflow_limit_counters "
            "WHERE counter='dropped:paused'"
        )
        .fetchone()
    )
    return int(row[0])


async def test_a_paused_site_starts_nothing_counts_each_trigger_and_runs_again_after(
    make_engine: EngineFactory,
    effects: FakeEffects,
    open_db: Callable[[], sqlite3.Connection],
) -> None:
    engine = make_engine()
    engine.set_workflows({"log": logs()})
    await engine.start()
    engine.pause()
    assert engine.paused
    assert engine.submit(event(alert_id="a1")) == ()
    assert await engine.dispatch(event(alert_id="a2")) == ()
    started = engine.start_now("log", {})
    assert (started.run_ids, started.reason) == ((), "paused")
    await engine.idle()
    assert effects.of("log") == []
    assert engine.not_run == 3
    assert paused_count(open_db) == 3

    engine.resume()
    await engine.idle()
    assert effects.of("log") == []  # nothing was queued: the paused triggers are gone
    assert engine.not_run == 0
    assert len(engine.submit(event(alert_id="a3"))) == 1
    await engine.idle()
    assert [c.request for c in effects.of("log")] == ["seen a3"]


async def test_a_wait_that_ends_while_paused_waits_until_the_resume(
    make_engine: EngineFactory, effects: FakeEffects, clock: ManualClock
) -> None:
    engine = make_engine()
    engine.set_workflows({"w": waits()})
    await engine.start()
    (run_id,) = engine.submit(event())
    await engine.idle()
    engine.pause()
    await clock.advance(601)
    await engine.idle()
    assert effects.of("log") == []
    assert [(r.run_id, r.status) for r in engine.active_runs()] == [(run_id, "waiting")]

    engine.resume()
    await engine.idle()
    assert [c.request for c in effects.of("log")] == ["after"]
    assert (await engine.run_detail(run_id))["status"] == "done"


async def test_an_answer_given_while_paused_is_kept_and_acted_on_at_the_resume(
    make_engine: EngineFactory, effects: FakeEffects
) -> None:
    engine = make_engine()
    engine.set_workflows({"w": only_yes()})
    await engine.start()
    (run_id,) = engine.submit(event())
    await engine.idle()
    ((approval, _),) = engine.pending_approvals()
    engine.pause()
    await engine.answer_approval(approval.approval_id, "Yes", "guard-1")
    await engine.idle()
    assert effects.of("alert") == []  # answered, and still waiting
    assert [r.run_id for r in engine.active_runs()] == [run_id]

    engine.resume()
    await engine.idle()
    assert len(effects.of("alert")) == 1
    assert (await engine.run_detail(run_id))["status"] == "done"


async def test_a_pause_set_before_a_restart_holds_the_runs_it_resumes(
    make_engine: EngineFactory, effects: FakeEffects, clock: ManualClock
) -> None:
    engine = make_engine()
    engine.set_workflows({"w": waits()})
    await engine.start()
    (run_id,) = engine.submit(event())
    await engine.idle()
    await engine.stop()

    clock.set(clock.now().replace(hour=clock.now().hour + 1))  # the wait ended meanwhile
    again = make_engine()
    again.set_workflows({"w": waits()})
    again.pause()  # the host hands the stored pause over before the start
    await again.start()
    await clock.advance(1)
    await again.idle()
    assert effects.of("log") == []
    assert [(r.run_id, r.status) for r in again.active_runs()] == [(run_id, "waiting")]

    again.resume()
    await again.idle()
    assert [c.request for c in effects.of("log")] == ["after"]
