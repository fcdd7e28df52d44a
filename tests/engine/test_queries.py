"""The read-only queries a host's views use: a workflow's latest runs (newest
first, with what the Runs list shows) and one run in full (its steps, the AI
step's tool calls and the approvals it opened)."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from collections.abc import Callable
from typing import Any

import pytest

from custom_components.opennvr_workflows.engine import AiResult, Engine, UnknownRunError
from custom_components.opennvr_workflows.engine.testing import (
    FakeAi,
    FakeEffects,
    ManualClock,
    event,
)
from custom_components.opennvr_workflows.workflow import model as m

from . import workflows as W
from .conftest import EngineFactory

#: What the Runs list of a workflow shows for each run.
RUN_FIELDS = {
    "id",
    "workflow_id",
    "version",
    "correlation_id",
    "chain",
    "depth",
    "trigger",
    "limit_key",
    "test",
    "status",
    "outcome",
    "seen_again",
    "unknown_steps",
    "started_at",
    "ended_at",
    "error",
}


def door(state: str = "on") -> m.Workflow:
    """Ask whether to open the door; "Open" opens it (an app's actuator)."""
    return m.Workflow(
        name="Door",
        when=m.AlertTrigger(cameras=("yard",)),
        state=state,  # type: ignore[arg-type]
        limits=m.WorkflowLimits(cooldown_s=0, per_hour=1000),
        then=(
            m.AskPersonStep(
                roles=("owner",),
                message="Open for {camera}?",
                replies=("Open", "Ignore"),
                timeout_s=600,
                paths={
                    "Open": (m.ActionStep(m.AppAction("door", "open")),),
                    "Ignore": (),
                    "no_answer": (),
                },
            ),
        ),
    )


async def answer_only_approval(engine: Engine, reply: str, run_id: str) -> None:
    (approval,) = [a for a, _ in engine.pending_approvals() if a.run_id == run_id]
    await engine.answer_approval(approval.approval_id, reply, "alice")
    await engine.idle()


async def four_runs(
    engine: Engine, effects: FakeEffects, clock: ManualClock
) -> tuple[str, str, str, str]:
    """A: answered Ignore (done). B: in Test (done, would have asked). C: answered
    Open with the door app gone (failed). D: still waiting, seen twice more.
    Each a minute after the one before."""
    (a,) = engine.submit(event(camera_id="c1", time=clock.now()))
    await engine.idle()
    await answer_only_approval(engine, "Ignore", a)
    await clock.advance(60)
    engine.set_workflow_state("door", "test")
    (b,) = engine.submit(event(camera_id="c2", time=clock.now()))
    await engine.idle()
    await clock.advance(60)
    engine.set_workflow_state("door", "on")
    effects.unavailable.add("app_action")
    (c,) = engine.submit(event(camera_id="c3", time=clock.now()))
    await engine.idle()
    await answer_only_approval(engine, "Open", c)
    effects.unavailable.clear()
    engine.set_workflow_state("door", "on")  # a person looked
    await clock.advance(60)
    (d,) = engine.submit(event(camera_id="c4", time=clock.now()))
    assert engine.submit(event(camera_id="c4", time=clock.now())) == (d,)
    assert engine.submit(event(camera_id="c4", time=clock.now())) == (d,)
    await engine.idle()
    return a, b, c, d


async def test_runs_are_newest_first_with_what_the_list_shows(
    make_engine: EngineFactory, effects: FakeEffects, clock: ManualClock
) -> None:
    engine = make_engine()
    other_wf = m.Workflow(
        name="Other", when=m.ButtonTrigger(), state="on", then=(m.ActionStep(m.LogAction("x")),)
    )
    engine.set_workflows({"door": door(), "other": other_wf})
    await engine.start()
    t0 = clock.now().timestamp()
    a, b, c, d = await four_runs(engine, effects, clock)
    await clock.advance(60)
    (other,) = engine.run_now("other")
    await engine.idle()

    runs = await engine.runs("door")
    assert [r["id"] for r in runs] == [d, c, b, a]
    assert all(set(r) == RUN_FIELDS for r in runs)
    version = engine.workflow_status("door").version
    by_id = {r["id"]: r for r in runs}
    assert {
        k: by_id[a][k]
        for k in ("status", "outcome", "test", "error", "started_at", "ended_at", "seen_again")
    } == {
        "status": "done",
        "outcome": "Ignore",
        "test": 0,
        "error": None,
        "started_at": t0,
        "ended_at": t0,
        "seen_again": 0,
    }
    assert (by_id[b]["status"], by_id[b]["test"], by_id[b]["outcome"]) == ("done", 1, "no_answer")
    assert by_id[c]["status"] == "failed"
    assert by_id[c]["error"] == ("provider lost: step then.0.Open.0: app_action is not available")
    assert (by_id[d]["status"], by_id[d]["outcome"], by_id[d]["ended_at"]) == (
        "waiting",
        None,
        None,
    )
    assert by_id[d]["seen_again"] == 2
    assert [r["started_at"] for r in runs] == [t0 + 180, t0 + 120, t0 + 60, t0]
    for run in runs:
        assert run["workflow_id"] == "door"
        assert run["version"] == version
        assert run["correlation_id"] == f"door/{run['id']}"
        assert json.loads(run["chain"]) == [f"door/{run['id']}"]
        assert run["depth"] == 1
        assert run["unknown_steps"] == 0
    trigger = json.loads(by_id[c]["trigger"])
    assert (trigger["kind"], trigger["camera_id"], trigger["camera_role"]) == (
        "alert",
        "c3",
        "yard",
    )

    assert [r["id"] for r in await engine.runs("door", limit=2)] == [d, c]
    assert [r["id"] for r in await engine.runs("other")] == [other]
    assert await engine.runs("no-such-workflow") == []


async def test_runs_read_back_the_same_after_a_restart(
    make_engine: EngineFactory, effects: FakeEffects, clock: ManualClock
) -> None:
    engine = make_engine()
    engine.set_workflows({"door": door()})
    await engine.start()
    await four_runs(engine, effects, clock)
    before = await engine.runs("door")
    await engine.stop()
    engine = make_engine()
    await engine.start()
    assert await engine.runs("door") == before
    # The waiting run resumes; once answered it is done, still first.
    d = before[0]["id"]
    await clock.advance(1)
    await answer_only_approval(engine, "Ignore", d)
    after = await engine.runs("door")
    assert [r["id"] for r in after] == [r["id"] for r in before]
    assert (after[0]["status"], after[0]["outcome"], after[0]["seen_again"]) == (
        "done",
        "Ignore",
        2,
    )
    assert after[0]["ended_at"] == clock.now().timestamp()


async def test_run_detail_of_a_waiting_then_finished_run(
    make_engine: EngineFactory,
    effects: FakeEffects,
    ai: FakeAi,
    clock: ManualClock,
) -> None:
    """The gate workflow: notify, an AI look (one model call traced), ask a
    person, "Let in" opens the gate and logs, always log."""
    engine = make_engine()
    engine.set_workflows({"gate": W.gate()})
    await engine.start()
    (run_id,) = engine.submit(event())
    await engine.idle()

    waiting = await engine.run_detail(run_id)
    assert set(waiting) == RUN_FIELDS | {"steps", "tool_calls", "approvals", "approval_log", "mark"}
    assert waiting["mark"] is None
    assert (waiting["id"], waiting["status"]) == (run_id, "waiting")
    assert [(s["path"], s["kind"], s["status"], s["outcome"]) for s in waiting["steps"]] == [
        ("then.0", "notify", "done", "done"),
        ("then.1", "ai", "done", "delivery"),
        ("then.1.delivery.0", "ask_person", "waiting", None),
    ]
    (pending,) = waiting["approvals"]
    assert pending["id"] == f"{run_id}:then.1.delivery.0"
    assert (pending["status"], pending["reply"], pending["asked"]) == ("pending", None, 1)
    assert json.loads(pending["who"]) == ["owner"]
    assert json.loads(pending["replies"]) == ["Let in", "Ignore"]
    assert pending["expires_at"] == clock.now().timestamp() + 60

    await clock.advance(5)
    await engine.answer_approval(pending["id"], "Let in", "al")
    await engine.idle()
    detail = await engine.run_detail(run_id)
    assert (detail["status"], detail["outcome"], detail["error"]) == ("done", "done", None)
    steps = detail["steps"]
    assert [(s["path"], s["kind"], s["status"], s["outcome"]) for s in steps] == [
        ("then.0", "notify", "done", "done"),
        ("then.1", "ai", "done", "delivery"),
        ("then.1.delivery.0", "ask_person", "done", "Let in"),
        ("then.1.delivery.0.Let in.0", "app_action", "done", "done"),
        ("then.1.delivery.0.Let in.1", "log", "done", "done"),
        ("always.0", "log", "done", "done"),
    ]
    assert [s["seq"] for s in steps] == sorted(s["seq"] for s in steps)
    ai_row = steps[1]
    assert (
        ai_row["reason"],
        ai_row["confidence"],
        ai_row["confidence_source"],
        ai_row["model"],
    ) == ("a fake decision", 0.9, "agreement", "fake-model")
    assert json.loads(ai_row["result"])["decision"] == "delivery"
    assert json.loads(steps[2]["result"])["answered_by"] == "al"
    assert json.loads(steps[4]["inputs"])["message"] == "opened for al"

    (call,) = detail["tool_calls"]
    assert (call["id"], call["run_id"], call["step_path"], call["workflow_id"]) == (
        "trace-0",
        run_id,
        "then.1",
        "gate",
    )
    assert (call["kind"], call["name"], call["status"], call["tokens_in"]) == (
        "llm",
        "fake-model",
        "ok",
        10,
    )

    (answered,) = detail["approvals"]
    assert (answered["status"], answered["reply"], answered["answered_by"]) == (
        "answered",
        "Let in",
        "al",
    )
    assert answered["answered_at"] == clock.now().timestamp()


async def test_run_detail_orders_tool_calls_by_time_and_keeps_them_per_run(
    make_engine: EngineFactory, ai: FakeAi
) -> None:
    """An Investigate step's trace: model and tool calls, in the order they started."""
    base = event().time.timestamp()

    def row(n: int, kind: str, name: str, at: float) -> dict[str, Any]:
        return {
            "id": f"{n}-{name}",
            "kind": kind,
            "name": name,
            "status": "ok",
            "started_at": base + at,
            "ms": 5,
            "args_asked": {"camera_id": "yard"} if kind == "tool" else None,
            "result": "r",
            "mode": "investigate",
            "tokens_in": 1 if kind == "llm" else None,
            "tokens_out": 1 if kind == "llm" else None,
        }

    seen: list[int] = []

    def decide(step: Any, ctx: Any) -> AiResult:
        seen.append(n := len(seen))
        trace = (
            row(n, "llm", "decide", 3.0),
            row(n, "tool", "recent_events", 1.0),
            row(n, "llm", "plan", 0.0),
            row(n, "tool", "describe_camera", 2.0),
        )
        return AiResult(outcome="watch", reason="r", trace=trace)

    ai.decide = decide
    wf = m.Workflow(
        name="Investigate",
        when=m.AlertTrigger(cameras=("yard",)),
        state="on",
        limits=m.WorkflowLimits(cooldown_s=0),
        then=(
            m.AIStep(
                spec=m.InvestigateSpec(goal="Threat?", tools=("recent_events", "describe_camera")),
                decision=("watch",),
                paths={"watch": (), "unsure": ()},
            ),
        ),
    )
    engine = make_engine()
    engine.set_workflows({"inv": wf})
    await engine.start()
    (first,) = engine.submit(event(camera_id="c1"))
    (second,) = engine.submit(event(camera_id="c2"))
    await engine.idle()
    one = await engine.run_detail(first)
    two = await engine.run_detail(second)
    names = ["plan", "recent_events", "describe_camera", "decide"]
    assert [c["name"] for c in one["tool_calls"]] == names
    assert [c["name"] for c in two["tool_calls"]] == names
    assert {c["id"][0] for c in one["tool_calls"]} != {c["id"][0] for c in two["tool_calls"]}
    assert json.loads(one["tool_calls"][1]["args_asked"]) == {"camera_id": "yard"}
    assert one["approvals"] == []


async def test_run_detail_of_a_test_run_shows_what_would_have_been_asked(
    make_engine: EngineFactory, effects: FakeEffects
) -> None:
    engine = make_engine()
    engine.set_workflows({"gate": W.gate(state="test")})
    await engine.start()
    (run_id,) = engine.submit(event())
    await engine.idle()
    detail = await engine.run_detail(run_id)
    assert detail["test"] == 1
    assert [(s["path"], s["status"]) for s in detail["steps"]] == [
        ("then.0", "would_have"),
        ("then.1", "done"),
        ("then.1.delivery.0", "would_have"),
        ("always.0", "would_have"),
    ]
    (approval,) = detail["approvals"]
    assert (approval["status"], approval["message"]) == (
        "would_have",
        "Delivery at the gate. Let in?",
    )
    assert json.loads(detail["steps"][0]["inputs"])["message"] == "Someone at yard"
    assert effects.calls == []


async def test_run_detail_reads_back_the_runs_mark_and_its_change(
    make_engine: EngineFactory, clock: ManualClock
) -> None:
    """A mark is stored, so a run read again later (a page reopened, after a restart)
    shows it; marking again replaces it, and another run stays unmarked."""
    look = m.Workflow(
        name="Look",
        when=m.AlertTrigger(cameras=("yard",)),
        state="on",
        limits=m.WorkflowLimits(cooldown_s=0, per_hour=1000),
        then=(
            m.AIStep(
                spec=m.LookSpec(prompt="Who is there?"),
                decision=("delivery", "visitor"),
                paths={"delivery": (), "visitor": (), "unsure": ()},
            ),
        ),
    )
    engine = make_engine()
    engine.set_workflows({"look": look})
    await engine.start()
    (first,) = engine.submit(event(camera_id="c1"))
    (second,) = engine.submit(event(camera_id="c2"))
    await engine.idle()
    assert (await engine.run_detail(first))["mark"] is None
    keys = sorted(await engine.mark_run(first, False, "al"))
    assert keys
    marked = (await engine.run_detail(first))["mark"]
    assert (marked["right"], marked["user"], marked["at"]) == (0, "al", clock.now().timestamp())
    assert json.loads(marked["ai_steps"]) == keys
    await clock.advance(30)
    await engine.mark_run(first, True, "bo")
    again = (await engine.run_detail(first))["mark"]
    assert (again["right"], again["user"], again["at"]) == (1, "bo", clock.now().timestamp())
    assert (await engine.run_detail(second))["mark"] is None
    await engine.stop()
    reopened = make_engine()
    reopened.set_workflows({"look": look})
    await reopened.start()
    assert (await reopened.run_detail(first))["mark"]["right"] == 1


async def test_an_unknown_run_is_a_clear_error_and_loses_no_write(
    make_engine: EngineFactory,
    effects: FakeEffects,
    open_db: Callable[[], sqlite3.Connection],
) -> None:
    """The query runs in the store's write queue: failing it must not undo the
    writes queued with it (a run that starts in the same instant)."""
    engine = make_engine()
    engine.set_workflows({"s": W.simple()})
    await engine.start()
    (run_id,) = engine.submit(event())  # its rows are queued, not yet written
    with pytest.raises(UnknownRunError, match="no-such-run"):
        await engine.run_detail("no-such-run")
    await engine.idle()
    detail = await engine.run_detail(run_id)
    assert detail["status"] == "done"
    assert [s["path"] for s in detail["steps"]] == ["then.0"]
    assert [c.request for c in effects.of("log")] == ["alert on yard"]
    conn = open_db()
    assert conn.execute("SELECT count(*) FROM workflow_runs").fetchone() == (1,)


async def test_queries_need_a_started_engine(make_engine: EngineFactory) -> None:
    engine = make_engine()
    with pytest.raises(RuntimeError, match="not started"):
        await engine.runs("s")
    with pytest.raises(RuntimeError, match="not started"):
        await engine.run_detail("x")


async def test_runs_honour_the_default_limit(
    make_engine: EngineFactory, clock: ManualClock
) -> None:
    engine = make_engine()
    engine.set_workflows({"echo": W.echo("E")})
    await engine.start()
    ids = []
    for i in range(55):
        await clock.advance(1)
        (run_id,) = engine.submit(event(camera_id=f"c{i}", time=clock.now()))
        ids.append(run_id)
    await engine.idle()
    runs = await engine.runs("echo")
    assert [r["id"] for r in runs] == ids[::-1][:50]
    assert runs[0]["started_at"] == (clock.now()).timestamp()
    assert runs[-1]["started_at"] == (clock.now() - dt.timedelta(seconds=49)).timestamp()
