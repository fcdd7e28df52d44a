"""Runs in one process: floods, loops, Test mode, needs attention, approvals,
schedules and timeouts across a restart (with the manual clock)."""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from custom_components.opennvr_workflows.engine import (
    AiResult,
    AiSuspended,
    Engine,
    NvrEvent,
    UnknownApprovalError,
)
from custom_components.opennvr_workflows.engine.testing import (
    FakeAi,
    FakeEffects,
    ManualClock,
    event,
)
from custom_components.opennvr_workflows.workflow import model as m

from . import workflows as W
from .conftest import EngineFactory


async def test_flood_of_identical_triggers_gives_one_run_and_one_approval(
    make_engine: EngineFactory,
    effects: FakeEffects,
    db: Path,
    open_db: Callable[[], sqlite3.Connection],
) -> None:
    engine = make_engine()
    engine.set_workflows({"ask": W.ask_flood()})
    await engine.start()
    started = {run for _ in range(1000) for run in engine.submit(event())}
    await engine.idle()
    assert len(started) == 1
    approvals = engine.pending_approvals()
    assert len(approvals) == 1
    assert approvals[0][1] == 999
    assert len(effects.of("ask_person")) == 1
    await engine.stop()
    conn = open_db()
    assert conn.execute("SELECT count(*), max(seen_again) FROM workflow_runs").fetchone() == (
        1,
        999,
    )
    assert conn.execute("SELECT count(*) FROM workflow_approvals").fetchone() == (1,)


async def test_two_workflows_that_trigger_each_other_stop_at_depth_three(
    make_engine: EngineFactory,
    effects: FakeEffects,
    db: Path,
    open_db: Callable[[], sqlite3.Connection],
) -> None:
    engine = make_engine()
    # Each generation of alerts is handed back only once the runs that raised them have
    # ended: the chain depth is under test here, not how a repeat joins a run still going.
    raised: list[NvrEvent] = []
    effects.alerts_to = raised.append
    engine.set_workflows({"a": W.echo("A"), "b": W.echo("B")})
    await engine.start()
    engine.submit(event(title="intruder"))
    for _ in range(10):
        await engine.idle()
        generation, raised[:] = list(raised), []
        for alert in generation:
            engine.submit(alert)
    await engine.idle()
    conn = open_db()
    await engine.stop()
    depths = conn.execute("SELECT workflow_id, depth FROM workflow_runs ORDER BY depth").fetchall()
    # The world's alert starts both at depth 1; each answers the other's alert
    # at depth 2 and 3; nothing starts at depth 4.
    assert max(d for _, d in depths) == 3
    assert sorted(depths) == [("a", 1), ("a", 2), ("a", 3), ("b", 1), ("b", 2), ("b", 3)]
    assert engine.stats.dropped.get("chain_depth", 0) >= 1
    # A workflow ignores the alerts it raised itself.
    dropped = dict(
        conn.execute(
            "SELECT counter, sum(count) FROM workflow_limit_counters GROUP BY counter"
        ).fetchall()
    )
    assert dropped["dropped:own_event"] >= 1
    assert dropped["dropped:chain_depth"] >= 1


async def test_everything_a_run_emits_carries_its_correlation_id(
    make_engine: EngineFactory, effects: FakeEffects
) -> None:
    engine = make_engine()
    engine.set_workflows({"a": W.echo("A")})
    await engine.start()
    (run_id,) = engine.submit(event(chain=("other/123",)))
    await engine.idle()
    (call,) = effects.of("alert")
    assert call.ctx is not None
    assert call.ctx.correlation_id == f"a/{run_id}"
    assert call.ctx.chain == ("other/123", f"a/{run_id}")


async def test_test_mode_performs_nothing(
    make_engine: EngineFactory,
    effects: FakeEffects,
    ai: FakeAi,
    db: Path,
    open_db: Callable[[], sqlite3.Connection],
) -> None:
    engine = make_engine()
    engine.set_workflows({"gate": W.gate(state="test")})
    await engine.start()
    engine.submit(event())
    await engine.idle()
    assert effects.calls == []  # no notification, no question, no gate
    assert len(ai.runs) == 1  # the AI step ran for real
    assert engine.active_runs() == []  # ask_person took its default at once
    conn = open_db()
    await engine.stop()
    steps = conn.execute(
        "SELECT path, status, outcome FROM workflow_run_steps ORDER BY seq"
    ).fetchall()
    assert steps == [
        ("then.0", "would_have", "done"),
        ("then.1", "done", "delivery"),
        ("then.1.delivery.0", "would_have", "no_answer"),
        ("always.0", "would_have", "done"),
    ]
    assert conn.execute("SELECT status FROM workflow_approvals").fetchall() == [("would_have",)]
    assert conn.execute("SELECT test, status FROM workflow_runs").fetchone() == (1, "done")


async def test_ai_ask_in_test_mode_takes_the_default_at_once(
    make_engine: EngineFactory, effects: FakeEffects, ai: FakeAi
) -> None:
    ai.decide = lambda step, ctx: AiSuspended(
        pending={"id": "1", "name": "ask_person", "arguments": {"message": "Threat?"}},
        state={"v": 1},
    )
    engine = make_engine()
    engine.set_workflows({"gate": W.gate(state="test")})
    await engine.start()
    engine.submit(event())
    await engine.idle()
    assert effects.calls == []
    assert len(ai.resumes) == 1
    assert "No answer" in ai.resumes[0][1]


async def test_ai_ask_suspends_and_resumes_with_the_answer(
    make_engine: EngineFactory, effects: FakeEffects, ai: FakeAi
) -> None:
    ai.decide = lambda step, ctx: AiSuspended(
        pending={
            "id": "1",
            "name": "ask_person",
            "arguments": {"message": "Threat?", "replies": ["Yes", "No"]},
        },
        state={"v": 1, "messages": []},
    )
    ai.on_resume = lambda step, state, answer, ctx: AiResult(
        outcome="visitor" if answer == "No" else "delivery", reason=f"person said {answer}"
    )
    engine = make_engine()
    engine.set_workflows({"gate": W.gate()})
    await engine.start()
    engine.submit(event())
    await engine.idle()
    ((approval, _),) = engine.pending_approvals()
    assert approval.message == "Threat?"
    await engine.answer_approval(approval.approval_id, "No", "bob")
    await engine.idle()
    assert ai.resumes == [({"v": 1, "messages": []}, "No")]
    assert [c.request for c in effects.of("log")] == ["visitor", "done with yard"]


async def test_answering_twice_or_with_a_wrong_reply_is_refused(
    make_engine: EngineFactory,
) -> None:
    engine = make_engine()
    engine.set_workflows({"ask": W.ask_flood()})
    await engine.start()
    engine.submit(event())
    await engine.idle()
    ((approval, _),) = engine.pending_approvals()
    with pytest.raises(ValueError, match="must be one of"):
        await engine.answer_approval(approval.approval_id, "Maybe", "bob")
    await engine.answer_approval(approval.approval_id, "Yes", "bob")
    with pytest.raises(UnknownApprovalError):
        await engine.answer_approval(approval.approval_id, "Yes", "bob")


async def test_approval_timeout_fires_across_a_restart(
    make_engine: EngineFactory,
    effects: FakeEffects,
    clock: ManualClock,
    db: Path,
    open_db: Callable[[], sqlite3.Connection],
) -> None:
    engine = make_engine()
    engine.set_workflows({"ask": W.ask_flood()})
    await engine.start()
    engine.submit(event())
    await engine.idle()
    await engine.stop()
    # Down for 5 minutes: the 2-minute timeout passed while nobody ran.
    clock.set(clock.now() + dt.timedelta(minutes=5))
    engine = make_engine()
    engine.set_workflows({"ask": W.ask_flood()})
    await engine.start()
    await clock.advance(0)
    await engine.idle()
    assert engine.active_runs() == []
    await engine.stop()
    conn = open_db()
    assert conn.execute("SELECT status FROM workflow_approvals").fetchone() == ("timed_out",)
    assert conn.execute("SELECT outcome FROM workflow_run_steps").fetchone() == ("no_answer",)
    assert effects.of("alert") == []  # the "Yes" path did not run


async def test_timeout_not_yet_due_waits_after_restart(
    make_engine: EngineFactory, clock: ManualClock
) -> None:
    engine = make_engine()
    engine.set_workflows({"ask": W.ask_flood()})
    await engine.start()
    engine.submit(event())
    await engine.idle()
    await engine.stop()
    engine = make_engine()
    await engine.start()  # no workflows given: the run resumes from its stored version
    await engine.idle()
    assert len(engine.active_runs()) == 1
    await clock.advance(119)
    await engine.idle()
    assert len(engine.active_runs()) == 1
    await clock.advance(2)
    await engine.idle()
    assert engine.active_runs() == []


async def test_schedule_fires_across_a_restart(
    make_engine: EngineFactory, effects: FakeEffects, clock: ManualClock
) -> None:
    clock.set(dt.datetime(2026, 1, 5, 6, 58, tzinfo=dt.UTC))
    engine = make_engine()
    engine.set_workflows({"report": W.daily(dt.time(7, 0))})
    await engine.start()
    await clock.advance(60)  # 06:59
    await engine.idle()
    assert effects.of("log") == []
    await engine.stop()
    clock.set(dt.datetime(2026, 1, 5, 7, 30, tzinfo=dt.UTC))  # down over 07:00
    engine = make_engine()
    engine.set_workflows({"report": W.daily(dt.time(7, 0))})
    await engine.start()
    await clock.advance(0)
    await engine.idle()
    assert len(effects.of("log")) == 1  # the missed fire runs once
    await clock.advance(3600 * 23)  # 06:30 next day
    await engine.idle()
    assert len(effects.of("log")) == 1
    await clock.advance(3600)  # 07:30 next day
    await engine.idle()
    assert len(effects.of("log")) == 2


async def test_durable_wait_across_a_restart(
    make_engine: EngineFactory, effects: FakeEffects, clock: ManualClock
) -> None:
    wf = m.Workflow(
        name="Wait then log",
        when=m.AlertTrigger(cameras=("yard",)),
        state="on",
        then=(m.ActionStep(m.WaitAction(600)), m.ActionStep(m.LogAction("after"))),
    )
    engine = make_engine()
    engine.set_workflows({"w": wf})
    await engine.start()
    engine.submit(event())
    await engine.idle()
    await engine.stop()
    clock.set(clock.now() + dt.timedelta(seconds=300))
    engine = make_engine()
    engine.set_workflows({"w": wf})
    await engine.start()
    await engine.idle()
    assert effects.of("log") == []
    await clock.advance(301)
    await engine.idle()
    assert [c.request for c in effects.of("log")] == ["after"]


async def test_camera_offline_for_a_duration(
    make_engine: EngineFactory, effects: FakeEffects, clock: ManualClock
) -> None:
    wf = m.Workflow(
        name="Offline",
        when=m.CameraOfflineTrigger(for_s=120),
        state="on",
        then=(m.ActionStep(m.LogAction("{camera} offline")),),
    )
    engine = make_engine()
    engine.set_workflows({"off": wf})
    await engine.start()
    engine.submit(event("camera_offline", type=None, camera_id="c1"))
    await clock.advance(60)
    engine.submit(event("camera_online", type=None, camera_id="c1"))
    await clock.advance(120)
    await engine.idle()
    assert effects.of("log") == []
    engine.submit(event("camera_offline", type=None, camera_id="c1"))
    await clock.advance(121)
    await engine.idle()
    assert [c.request for c in effects.of("log")] == ["yard offline"]


async def test_lost_provider_puts_the_workflow_in_needs_attention(
    make_engine: EngineFactory, effects: FakeEffects, ai: FakeAi
) -> None:
    ai.unavailable = True
    engine = make_engine()
    engine.set_workflows({"gate": W.gate()})
    await engine.start()
    engine.submit(event())
    await engine.idle()
    status = engine.workflow_status("gate")
    assert status.state == "needs_attention"
    assert status.reason is not None
    assert "then.1" in status.reason
    assert engine.submit(event(time=event().time + dt.timedelta(hours=1))) == ()
    engine.set_workflow_state("gate", "on")
    assert engine.workflow_status("gate").reason is None


async def test_needs_attention_survives_a_restart(
    make_engine: EngineFactory, effects: FakeEffects
) -> None:
    effects.unavailable.add("app_action")
    wf = m.Workflow(
        name="Open",
        when=m.ButtonTrigger(),
        state="on",
        conditions=(m.TimeCondition(dt.time(0, 0), dt.time(0, 0)),),  # a plain rule first
        then=(m.ActionStep(m.AppAction(app="gate", action="open")),),
    )
    engine = make_engine()
    engine.set_workflows({"open": wf})
    await engine.start()
    assert len(engine.run_now("open", "alice")) == 1
    await engine.idle()
    await engine.stop()
    engine = make_engine()
    engine.set_workflows({"open": wf})
    await engine.start()
    assert engine.workflow_status("open").state == "needs_attention"
    assert engine.run_now("open") == ()


async def test_limits_cooldown_and_per_hour(make_engine: EngineFactory, clock: ManualClock) -> None:
    wf = W.simple(limits=m.WorkflowLimits(cooldown_s=60, per_hour=2))
    engine = make_engine()
    engine.set_workflows({"s": wf})
    await engine.start()
    assert len(engine.submit(event())) == 1
    await engine.idle()
    assert engine.submit(event()) == ()  # cooldown
    await clock.advance(61)
    assert len(engine.submit(event())) == 1
    await engine.idle()
    await clock.advance(61)
    assert engine.submit(event()) == ()  # 2 an hour
    assert len(engine.submit(event(camera_id="cam-2"))) == 0
    assert engine.stats.dropped == {"cooldown": 1, "per_hour": 2}
    await clock.advance(3600)
    assert len(engine.submit(event())) == 1


async def test_one_at_a_time_per_plate(make_engine: EngineFactory) -> None:
    wf = m.Workflow(
        name="Plates",
        when=m.EventTrigger(event="plate.recognized.v1"),
        state="on",
        limits=m.WorkflowLimits(one_at_a_time="plate", cooldown_s=0),
        then=(
            m.AskPersonStep(
                roles=("owner",),
                message="{plate}?",
                replies=("Ok",),
                default="Ok",
                paths={"Ok": ()},
            ),
        ),
    )
    engine = make_engine()
    engine.set_workflows({"p": wf})
    await engine.start()
    a = engine.submit(event("event", type="plate.recognized.v1", plate="AB1"))
    b = engine.submit(event("event", type="plate.recognized.v1", plate="CD2"))
    c = engine.submit(event("event", type="plate.recognized.v1", plate="AB1"))
    assert len(set(a + b)) == 2
    assert c == a  # joined as seen again
    await engine.idle()
    assert sorted(ap.message for ap, _ in engine.pending_approvals()) == ["AB1?", "CD2?"]


async def test_unmatched_events_start_nothing(make_engine: EngineFactory) -> None:
    engine = make_engine()
    engine.set_workflows({"s": W.simple()})
    await engine.start()
    assert engine.submit(event(camera_role="garage")) == ()
    assert engine.submit(event(type="loitering")) == ()
    assert engine.submit(event("event", type="plate.recognized.v1")) == ()
    assert engine.stats.started == 0
    engine.set_workflow_state("s", "off")
    assert engine.submit(event()) == ()


async def test_ai_budget_spent_answers_unsure_without_the_model(
    make_engine: EngineFactory, ai: FakeAi, clock: ManualClock
) -> None:
    wf = m.Workflow(
        name="Look",
        when=m.AlertTrigger(cameras=("yard",)),
        state="on",
        limits=m.WorkflowLimits(cooldown_s=0, ai_per_hour=2, per_hour=100),
        then=(
            m.AIStep(
                spec=m.LookSpec(prompt="?"),
                decision=("a",),
                paths={"a": (), "unsure": (m.ActionStep(m.LogAction("unsure")),)},
            ),
        ),
    )
    engine = make_engine()
    engine.set_workflows({"l": wf})
    await engine.start()
    for i in range(3):
        engine.submit(event(camera_id=f"c{i}"))
        await engine.idle()
    assert len(ai.runs) == 2


async def test_versions_are_recorded_per_run(
    make_engine: EngineFactory, db: Path, open_db: Callable[[], sqlite3.Connection]
) -> None:
    engine = make_engine()
    v1 = engine.add_workflow("s", W.simple())
    await engine.start()
    engine.submit(event())
    await engine.idle()
    v2 = engine.add_workflow(
        "s",
        W.simple(limits=m.WorkflowLimits(cooldown_s=0)),
    )
    assert v1 != v2
    assert (
        engine.add_workflow("s", W.simple(state="off", limits=m.WorkflowLimits(cooldown_s=0))) == v2
    )  # state is not content
    engine.submit(event(camera_id="cam-9"))
    await engine.idle()
    conn = open_db()
    await engine.stop()
    assert conn.execute("SELECT count(*) FROM workflow_versions").fetchone() == (2,)
    assert [
        r[0] for r in conn.execute("SELECT version FROM workflow_runs ORDER BY started_at, rowid")
    ] == [v1, v2]


async def test_message_trigger_and_reply(make_engine: EngineFactory, effects: FakeEffects) -> None:
    wf = m.Workflow(
        name="Ask",
        when=m.MessageTrigger(contains=("parcel",)),
        state="on",
        then=(m.ActionStep(m.ReplyAction("you said: {message}")),),
    )
    engine = make_engine()
    engine.set_workflows({"msg": wf})
    await engine.start()
    assert (
        engine.submit(
            NvrEvent(
                kind="message", source="assist", time=event().time, payload={"message": "hello"}
            )
        )
        == ()
    )
    engine.submit(
        NvrEvent(
            kind="message",
            source="assist",
            time=event().time,
            payload={"message": "Any Parcel today?", "user": "ann"},
        )
    )
    await engine.idle()
    assert [c.request for c in effects.of("reply")] == ["you said: Any Parcel today?"]


async def test_engine_resumes_run_of_an_edited_workflow_on_its_own_version(
    make_engine: EngineFactory, effects: FakeEffects, db: Path
) -> None:
    engine = make_engine()
    engine.set_workflows({"gate": W.gate()})
    await engine.start()
    engine.submit(event())
    await engine.idle()
    await engine.stop()
    edited = W.simple()  # same id, entirely different steps
    engine2: Engine = make_engine()
    engine2.set_workflows({"gate": edited})
    await engine2.start()
    ((approval, _),) = engine2.pending_approvals()
    await engine2.answer_approval(approval.approval_id, "Let in", "al")
    await engine2.idle()
    assert len(effects.of("app_action")) == 1
