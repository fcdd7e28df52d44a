"""For each: repeat a branch over cameras, a site list or recent events
(RFC section 2), collect a line per item, and survive a restart in the middle
with the items it recorded first, each item's branch running once."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pytest

from custom_components.opennvr_workflows.engine import AiResult, ProviderUnavailable
from custom_components.opennvr_workflows.engine.testing import (
    FakeAi,
    FakeEffects,
    ManualClock,
    event,
)
from custom_components.opennvr_workflows.workflow import model as m

from .conftest import EngineFactory


def log(text: str) -> m.ActionStep:
    return m.ActionStep(m.LogAction(text))


def logs(effects: FakeEffects) -> list[str]:
    return [c.request for c in effects.of("log")]


def looping(
    items: m.ForEachCameras | m.ForEachList | m.ForEachEvents,
    steps: tuple[m.Step, ...],
    *,
    as_name: str,
    collect: str | None = None,
    max_items: int = 20,
    after: tuple[m.Step, ...] = (),
    state: str = "on",
) -> m.Workflow:
    """A button-triggered workflow: the loop, then ``after``, then an ``always`` log."""
    return m.Workflow(
        name="Loop",
        when=m.ButtonTrigger(),
        state=state,  # type: ignore[arg-type]
        limits=m.WorkflowLimits(cooldown_s=0, per_hour=1000),
        then=(
            m.ForEachStep(
                items=items,
                steps=steps,
                as_name=as_name,
                max_items=max_items,
                collect=collect,
            ),
            *after,
        ),
        always=(log("always"),),
    )


def loop_row(conn: sqlite3.Connection, path: str = "then.0") -> tuple[str, str | None, Any]:
    status, outcome, result = conn.execute(
        "SELECT status, outcome, result FROM workflow_run_steps WHERE path=?", (path,)
    ).fetchone()
    return status, outcome, json.loads(result)


def steps_of(conn: sqlite3.Connection) -> list[tuple[str, str, str, str | None]]:
    return conn.execute(
        "SELECT path, kind, status, outcome FROM workflow_run_steps ORDER BY seq"
    ).fetchall()


async def start(make_engine: EngineFactory, wf: m.Workflow) -> Any:
    engine = make_engine()
    engine.set_workflows({"loop": wf})
    await engine.start()
    return engine


async def test_cameras_in_a_group_each_run_the_branch_in_order(
    make_engine: EngineFactory,
    effects: FakeEffects,
    open_db: Callable[[], sqlite3.Connection],
) -> None:
    wf = looping(
        m.ForEachCameras(("yard", "drive", "porch")),
        (log("check {cam} ({camera})"), m.ActionStep(m.SaveClipAction())),
        as_name="cam",
        after=(log("after the loop on {camera}"),),
    )
    engine = await start(make_engine, wf)
    (run_id,) = engine.run_now("loop")
    await engine.idle()
    assert logs(effects) == [
        "check yard (yard)",
        "check drive (drive)",
        "check porch (porch)",
        # The item does not leak out of the loop: the button has no camera.
        "after the loop on ",
        "always",
    ]
    # Each item's effect carries its own step path.
    assert [c.ctx.step_path for c in effects.of("save_clip") if c.ctx] == [
        "then.0.0.1",
        "then.0.1.1",
        "then.0.2.1",
    ]
    conn = open_db()
    assert steps_of(conn) == [
        ("then.0", "for_each", "done", "done"),
        ("then.0.0.0", "log", "done", "done"),
        ("then.0.0.1", "save_clip", "done", "done"),
        ("then.0.1.0", "log", "done", "done"),
        ("then.0.1.1", "save_clip", "done", "done"),
        ("then.0.2.0", "log", "done", "done"),
        ("then.0.2.1", "save_clip", "done", "done"),
        ("then.1", "log", "done", "done"),
        ("always.0", "log", "done", "done"),
    ]
    assert loop_row(conn) == ("done", "done", {"items": ["yard", "drive", "porch"], "by": "world"})
    assert conn.execute("SELECT status FROM workflow_runs WHERE id=?", (run_id,)).fetchone() == (
        "done",
    )


async def test_each_item_takes_its_own_branch(
    make_engine: EngineFactory,
    effects: FakeEffects,
    ai: FakeAi,
    open_db: Callable[[], sqlite3.Connection],
) -> None:
    """An AI step per camera: each camera's decision picks that camera's path."""
    verdicts = {"yard": "clear", "drive": "blocked", "porch": "clear"}
    ai.decide = lambda step, ctx: AiResult(
        outcome=verdicts[ctx.inputs["camera"]], reason=f"looked at {ctx.inputs['camera']}"
    )
    wf = looping(
        m.ForEachCameras(("yard", "drive", "porch")),
        (
            m.AIStep(
                spec=m.LookSpec(prompt="Is the way clear?"),
                decision=("clear", "blocked"),
                paths={
                    "clear": (),
                    "blocked": (m.ActionStep(m.AlertAction("medium", "{camera} blocked")),),
                    "unsure": (),
                },
            ),
        ),
        as_name="camera",
    )
    engine = await start(make_engine, wf)
    engine.run_now("loop")
    await engine.idle()
    assert [c.request.title for c in effects.of("alert")] == ["drive blocked"]
    assert [ctx.run.step_path for _, ctx in ai.runs] == ["then.0.0.0", "then.0.1.0", "then.0.2.0"]
    conn = open_db()
    assert conn.execute(
        "SELECT path, outcome FROM workflow_run_steps WHERE kind='ai' ORDER BY seq"
    ).fetchall() == [
        ("then.0.0.0", "clear"),
        ("then.0.1.0", "blocked"),
        ("then.0.2.0", "clear"),
    ]


async def test_a_site_list_and_collect(
    make_engine: EngineFactory,
    effects: FakeEffects,
    ai: FakeAi,
    open_db: Callable[[], sqlite3.Connection],
) -> None:
    """Expected plates from Site rules; ``collect`` gathers one line per item with
    the reason of the AI step that ran for it (none: the item alone)."""
    effects.lists = {"expected": ["AB123", "CD456", "EF789"]}
    ai.decide = lambda step, ctx: AiResult(outcome="seen", reason=f"{ctx.inputs['plate']} parked")
    wf = looping(
        m.ForEachList("expected"),
        (
            m.IfStep(
                (m.ValueCondition("plate", is_not_in=("CD456",)),),
                paths={
                    "true": (
                        m.AIStep(
                            spec=m.LookSpec(prompt="Is {plate} here?"),
                            decision=("seen",),
                            paths={"seen": (), "unsure": ()},
                        ),
                    ),
                    "false": (),
                },
            ),
        ),
        as_name="plate",
        collect="summary",
        after=(m.ActionStep(m.NotifyAction(("owner",), "{summary}")),),
    )
    engine = await start(make_engine, wf)
    engine.run_now("loop")
    await engine.idle()
    summary = "AB123: AB123 parked\nCD456\nEF789: EF789 parked"
    assert [c.request.params["message"] for c in effects.of("notify")] == [summary]
    conn = open_db()
    assert loop_row(conn) == (
        "done",
        "done",
        {"items": ["AB123", "CD456", "EF789"], "by": "world", "collected": summary},
    )


async def test_an_empty_list_runs_no_item_and_the_flow_goes_on(
    make_engine: EngineFactory,
    effects: FakeEffects,
    open_db: Callable[[], sqlite3.Connection],
) -> None:
    effects.lists = {"visitors": []}
    wf = looping(
        m.ForEachList("visitors"),
        (log("{item}"),),
        as_name="item",
        collect="seen",
        after=(log("seen: [{seen}]"),),
    )
    engine = await start(make_engine, wf)
    engine.run_now("loop")
    await engine.idle()
    assert logs(effects) == ["seen: []", "always"]
    conn = open_db()
    assert loop_row(conn) == ("done", "done", {"items": [], "by": "world", "collected": ""})


async def test_max_items_caps_the_loop(
    make_engine: EngineFactory,
    effects: FakeEffects,
    open_db: Callable[[], sqlite3.Connection],
) -> None:
    effects.lists = {"plates": [f"P{i}" for i in range(10)]}
    wf = looping(m.ForEachList("plates"), (log("{item}"),), as_name="item", max_items=3)
    engine = await start(make_engine, wf)
    engine.run_now("loop")
    await engine.idle()
    assert logs(effects) == ["P0", "P1", "P2", "always"]
    assert loop_row(open_db())[2] == {"items": ["P0", "P1", "P2"], "by": "world"}


async def test_events_in_a_window(
    make_engine: EngineFactory,
    effects: FakeEffects,
    open_db: Callable[[], sqlite3.Connection],
) -> None:
    """Each event is an item: ``{event}`` is its label, ``{camera}`` and
    ``{event_type}`` its own; events on other cameras are not items."""
    effects.events = [
        {"time": "01:58", "camera": "back_lane", "event_type": "loitering", "id": 1},
        {"time": "02:03", "camera": "garage", "event_type": "motion", "id": 2},
        {"time": "02:10", "camera": "yard", "event_type": "intrusion", "id": 3},
    ]
    wf = m.Workflow(
        name="Recent",
        when=m.AlertTrigger(cameras=("yard",)),
        state="on",
        then=(
            m.ForEachStep(
                items=m.ForEachEvents(within_s=1800, cameras=("back_lane", "yard")),
                as_name="event",
                collect="seen",
                steps=(
                    m.IfStep(
                        (m.ValueCondition("event_type", is_in=("loitering",)),),
                        paths={
                            "true": (m.ActionStep(m.AlertAction("low", "{camera}: {event}")),),
                            "false": (),
                        },
                    ),
                ),
            ),
            log("{camera} / {event_type}: {seen}"),
        ),
    )
    engine = await start(make_engine, wf)
    engine.submit(event(type="intrusion"))
    await engine.idle()
    assert [c.request.title for c in effects.of("alert")] == [
        "back_lane: 01:58 back_lane loitering"
    ]
    # After the loop, {camera} and {event_type} are the trigger's again.
    assert logs(effects) == [
        "yard / : 01:58 back_lane loitering\n02:10 yard intrusion",
    ]
    conn = open_db()
    items = loop_row(conn)[2]["items"]
    assert [i["id"] for i in items] == [1, 3]
    assert conn.execute(
        "SELECT path, outcome FROM workflow_run_steps WHERE kind='if' ORDER BY seq"
    ).fetchall() == [("then.0.0.0", "true"), ("then.0.1.0", "false")]


async def test_test_mode_runs_every_item_and_performs_nothing(
    make_engine: EngineFactory,
    effects: FakeEffects,
    open_db: Callable[[], sqlite3.Connection],
) -> None:
    loop = looping(
        m.ForEachCameras(("yard", "drive")),
        (
            m.ActionStep(m.AppAction("gate", "close", {"camera": "{camera}"})),
            m.AskPersonStep(
                roles=("owner",),
                message="All fine at {camera}?",
                replies=("Yes", "No"),
                default="Yes",
                paths={"Yes": (), "No": (m.ActionStep(m.AlertAction("high", "{camera}")),)},
            ),
        ),
        as_name="camera",
        state="test",
    )
    # The gate moves things, so a plain rule stands before it (the safety rule holds in Test
    # too: the run-time monitor refuses what On would refuse).
    wf = replace(loop, conditions=(m.TimeCondition(dt.time(0, 0), dt.time(0, 0)),))
    engine = await start(make_engine, wf)
    engine.run_now("loop")
    await engine.idle()
    assert effects.calls == []
    assert engine.active_runs() == []
    conn = open_db()
    assert steps_of(conn) == [
        ("if", "if", "done", "true"),
        ("then.0", "for_each", "done", "done"),
        ("then.0.0.0", "app_action", "would_have", "done"),
        ("then.0.0.1", "ask_person", "would_have", "Yes"),
        ("then.0.1.0", "app_action", "would_have", "done"),
        ("then.0.1.1", "ask_person", "would_have", "Yes"),
        ("always.0", "log", "would_have", "done"),
    ]
    inputs = [
        json.loads(r[0])
        for r in conn.execute(
            "SELECT inputs FROM workflow_run_steps WHERE kind='app_action' ORDER BY seq"
        )
    ]
    assert ["yard" in json.dumps(i) for i in inputs] == [True, False]
    assert ["drive" in json.dumps(i) for i in inputs] == [False, True]
    assert sorted(
        (status, msg)
        for status, msg in conn.execute("SELECT status, message FROM workflow_approvals")
    ) == [("would_have", "All fine at drive?"), ("would_have", "All fine at yard?")]


def plates_at_the_gate(state: str = "on") -> m.Workflow:
    """For each expected plate: ask whether to let it in; "Let in" opens the gate."""
    return looping(
        m.ForEachList("expected"),
        (
            log("asking about {plate}"),
            m.AskPersonStep(
                roles=("owner",),
                message="Let {plate} in?",
                replies=("Let in", "Ignore"),
                timeout_s=3600,
                paths={
                    "Let in": (
                        m.ActionStep(m.AppAction("gate", "open", {"plate": "{plate}"})),
                        log("let {plate} in"),
                    ),
                    "Ignore": (),
                    "no_answer": (),
                },
            ),
        ),
        as_name="plate",
        collect="handled",
        after=(log("handled:\n{handled}"),),
        state=state,
    )


async def test_a_restart_in_the_middle_walks_the_recorded_items_once_each(
    make_engine: EngineFactory,
    effects: FakeEffects,
    clock: ManualClock,
    open_db: Callable[[], sqlite3.Connection],
) -> None:
    """The items are recorded before the first one runs. The engine stops while
    an item waits for a person, the site list changes meanwhile, and on each
    restart the run carries on with the items it recorded: each item's question,
    gate and log happen exactly once."""
    effects.lists = {"expected": ["AB123", "CD456", "EF789"]}
    wf = plates_at_the_gate()
    engine = make_engine()
    engine.set_workflows({"loop": wf})
    await engine.start()
    (run_id,) = engine.run_now("loop")
    await engine.idle()
    conn = open_db()
    # Waiting on the first item: the loop's row already holds all three items.
    assert loop_row(conn) == (
        "running",
        None,
        {"items": ["AB123", "CD456", "EF789"], "by": "world"},
    )
    assert conn.execute("SELECT status FROM workflow_runs WHERE id=?", (run_id,)).fetchone() == (
        "waiting",
    )
    effects.lists = {"expected": ["ZZ000"]}
    answers = ["Let in", "Ignore", "Let in"]
    for answer in answers:
        await engine.stop()
        clock.set(clock.now().replace(minute=clock.now().minute + 1))
        engine = make_engine()
        engine.set_workflows({"loop": wf})
        await engine.start()
        await engine.idle()
        ((approval, _),) = engine.pending_approvals()
        await engine.answer_approval(approval.approval_id, answer, "al")
        await engine.idle()
    assert engine.active_runs() == []
    assert [c.request.message for c in effects.of("ask_person")] == [
        "Let AB123 in?",
        "Let CD456 in?",
        "Let EF789 in?",
    ]
    assert [c.request.params["data"] for c in effects.of("app_action")] == [
        {"plate": "AB123"},
        {"plate": "EF789"},
    ]
    assert logs(effects) == [
        "asking about AB123",
        "let AB123 in",
        "asking about CD456",
        "asking about EF789",
        "let EF789 in",
        "handled:\nAB123\nCD456\nEF789",
        "always",
    ]
    assert loop_row(conn) == (
        "done",
        "done",
        {"items": ["AB123", "CD456", "EF789"], "by": "world", "collected": "AB123\nCD456\nEF789"},
    )
    assert conn.execute(
        "SELECT step_path, reply FROM workflow_approvals ORDER BY created_at"
    ).fetchall() == [
        ("then.0.0.1", "Let in"),
        ("then.0.1.1", "Ignore"),
        ("then.0.2.1", "Let in"),
    ]
    assert conn.execute("SELECT status FROM workflow_runs WHERE id=?", (run_id,)).fetchone() == (
        "done",
    )
    # Every step of every item was written once (paths are the primary key, so
    # a second run of an item would show as a changed seq, not a new row).
    paths = [p for (p,) in conn.execute("SELECT path FROM workflow_run_steps ORDER BY seq")]
    assert paths == [
        "then.0",
        "then.0.0.0",
        "then.0.0.1",
        "then.0.0.1.Let in.0",
        "then.0.0.1.Let in.1",
        "then.0.1.0",
        "then.0.1.1",
        "then.0.2.0",
        "then.0.2.1",
        "then.0.2.1.Let in.0",
        "then.0.2.1.Let in.1",
        "then.1",
        "always.0",
    ]


async def test_a_restart_resumes_on_the_stored_version_with_its_collected_reasons(
    make_engine: EngineFactory,
    effects: FakeEffects,
    ai: FakeAi,
    open_db: Callable[[], sqlite3.Connection],
) -> None:
    """The engine comes back without the workflow (the file is gone): the run
    finishes on its stored version, and the reasons collected before the restart
    are still in the summary."""
    ai.decide = lambda step, ctx: AiResult(outcome="ok", reason=f"{ctx.inputs['camera']} quiet")
    wf = looping(
        m.ForEachCameras(("yard", "drive")),
        (
            m.AIStep(
                spec=m.LookSpec(prompt="Anything odd?"),
                decision=("ok",),
                paths={
                    "ok": (
                        m.AskPersonStep(
                            roles=("owner",),
                            message="{camera}: {reason}. Fine?",
                            replies=("Fine",),
                            paths={"Fine": (), "no_answer": ()},
                        ),
                    ),
                    "unsure": (),
                },
            ),
        ),
        as_name="camera",
        collect="report",
        after=(m.ActionStep(m.NotifyAction(("owner",), "{report}")),),
    )
    engine = make_engine()
    engine.set_workflows({"loop": wf})
    await engine.start()
    engine.run_now("loop")
    for _ in range(2):
        await engine.idle()
        await engine.stop()
        engine = make_engine()
        await engine.start()
        await engine.idle()
        ((approval, _),) = engine.pending_approvals()
        await engine.answer_approval(approval.approval_id, "Fine", "al")
    await engine.idle()
    assert len(ai.runs) == 2  # one AI step per camera, never repeated by a replay
    assert [c.request.message for c in effects.of("ask_person")] == [
        "yard: yard quiet. Fine?",
        "drive: drive quiet. Fine?",
    ]
    assert [c.request.params["message"] for c in effects.of("notify")] == [
        "yard: yard quiet\ndrive: drive quiet"
    ]
    assert open_db().execute("SELECT status FROM workflow_runs").fetchall() == [("done",)]


async def test_events_recorded_before_a_restart_are_the_items_after_it(
    make_engine: EngineFactory,
    effects: FakeEffects,
    open_db: Callable[[], sqlite3.Connection],
) -> None:
    """Event items go through JSON before they are recorded, so an item read back
    after a restart labels and scopes exactly like the one first seen."""
    effects.events = [
        {"time": "02:10", "camera": "yard", "event_type": "intrusion"},
        {"time": "02:12", "camera": "drive", "event_type": "vehicle"},
    ]
    wf = m.Workflow(
        name="Review",
        when=m.ButtonTrigger(),
        state="on",
        then=(
            m.ForEachStep(
                items=m.ForEachEvents(within_s=600),
                as_name="event",
                steps=(
                    m.AskPersonStep(
                        roles=("owner",),
                        message="{event}?",
                        replies=("Ok",),
                        paths={"Ok": (log("ok {camera} {event_type}"),), "no_answer": ()},
                    ),
                ),
            ),
        ),
    )
    engine = make_engine()
    engine.set_workflows({"r": wf})
    await engine.start()
    engine.run_now("r")
    await engine.idle()
    effects.events = []
    for _ in range(2):
        await engine.stop()
        engine = make_engine()
        await engine.start()
        await engine.idle()
        ((approval, _),) = engine.pending_approvals()
        await engine.answer_approval(approval.approval_id, "Ok", "al")
        await engine.idle()
    assert [c.request.message for c in effects.of("ask_person")] == [
        "02:10 yard intrusion?",
        "02:12 drive vehicle?",
    ]
    assert logs(effects) == ["ok yard intrusion", "ok drive vehicle"]


@dataclass
class ReadsDown(FakeEffects):
    """Site rules and the event store are gone."""

    async def site_list(self, name: str) -> list[str]:
        raise ProviderUnavailable(f"site list {name!r} is not available")

    async def recent_events(
        self, cameras: Sequence[str], within_s: float
    ) -> list[Mapping[str, Any]]:
        raise ProviderUnavailable("the event store is not available")


@pytest.mark.parametrize(
    "items",
    [m.ForEachList("expected"), m.ForEachEvents(within_s=600)],
    ids=["list", "events"],
)
async def test_items_whose_source_is_lost_put_the_workflow_in_needs_attention(
    items: m.ForEachList | m.ForEachEvents,
    make_engine: EngineFactory,
    open_db: Callable[[], sqlite3.Connection],
) -> None:
    effects = ReadsDown()
    engine = make_engine(effects=effects)
    engine.set_workflows({"loop": looping(items, (log("{item}"),), as_name="item")})
    await engine.start()
    (run_id,) = engine.run_now("loop")
    await engine.idle()
    status = engine.workflow_status("loop")
    assert status.state == "needs_attention"
    assert status.reason is not None
    assert status.reason.startswith("step then.0:")
    assert effects.calls == []  # no item ran, and no always either
    conn = open_db()
    run_status, error = conn.execute(
        "SELECT status, error FROM workflow_runs WHERE id=?", (run_id,)
    ).fetchone()
    assert (run_status, error.startswith("provider lost: step then.0:")) == ("failed", True)
    assert steps_of(conn) == [("then.0", "for_each", "failed", "done")]
    assert engine.run_now("loop") == ()


async def test_what_a_finished_loop_collected_survives_a_restart(
    make_engine: EngineFactory,
    effects: FakeEffects,
    ai: FakeAi,
) -> None:
    """The loop finished, then the run waited for a person across a restart:
    the collected lines come back from the loop's record, with no item re-run."""
    ai.decide = lambda step, ctx: AiResult(outcome="ok", reason=f"{ctx.inputs['camera']} clear")
    wf = looping(
        m.ForEachCameras(("yard", "drive")),
        (
            m.AIStep(
                spec=m.LookSpec(prompt="Clear?"),
                decision=("ok",),
                paths={"ok": (), "unsure": ()},
            ),
        ),
        as_name="camera",
        collect="report",
        after=(
            m.AskPersonStep(
                roles=("owner",),
                message="Send the report?",
                replies=("Send",),
                paths={"Send": (m.ActionStep(m.NotifyAction(("owner",), "{report}")),)},
                default="Send",
            ),
        ),
    )
    engine = await start(make_engine, wf)
    engine.run_now("loop")
    await engine.idle()
    await engine.stop()
    engine = make_engine()
    await engine.start()
    ((approval, _),) = engine.pending_approvals()
    await engine.answer_approval(approval.approval_id, "Send", "al")
    await engine.idle()
    assert len(ai.runs) == 2
    assert [c.request.params["message"] for c in effects.of("notify")] == [
        "yard: yard clear\ndrive: drive clear"
    ]
