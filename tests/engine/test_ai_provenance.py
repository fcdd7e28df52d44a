"""AI output laundered through another workflow, and alert triggers that match more than
they say: the engine marks what carries an AI's output, and a run started by it moves
nothing without a person's reply in that run."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from collections.abc import Callable

import pytest

from custom_components.opennvr_workflows.engine import Engine, NvrEvent
from custom_components.opennvr_workflows.engine.testing import (
    FakeAi,
    FakeEffects,
    ManualClock,
    event,
)
from custom_components.opennvr_workflows.workflow import model as m

from .conftest import EngineFactory

Open = m.ActionStep(m.AppAction(app="gate", action="open"))
Arm = m.ActionStep(m.SiteModeAction(mode="armed_away"))


def raiser(then: tuple[m.Step, ...], **kw: object) -> m.Workflow:
    """Workflow A: a camera alert, then ``then`` (raises alerts of its own)."""
    return m.Workflow(
        name="Raiser",
        when=m.AlertTrigger(alert_type="intrusion", cameras=("yard",)),
        then=then,
        state="on",
        **kw,  # type: ignore[arg-type]
    )


def ai_alert(*, on: str = "person", message: str = "someone there") -> tuple[m.Step, ...]:
    """An AI step whose ``on`` path raises an alert."""
    return (
        m.AIStep(
            spec=m.LookSpec(prompt="Who is there?"),
            decision=("person", "nobody"),
            fields={"who": ("stranger", "owner")},
            paths={
                "person": (alert(message),) if on == "person" else (),
                "nobody": (),
                "unsure": (),
            },
        ),
    )


def alert(message: str = "someone there") -> m.ActionStep:
    return m.ActionStep(m.AlertAction(severity="medium", title="Yard", message=message))


def follower(
    then: tuple[m.Step, ...],
    trigger: m.AlertTrigger | None = None,
    name: str = "Follower",
    cooldown: float = 60.0,
) -> m.Workflow:
    """Workflow B: starts on the alerts workflows raise (type ``workflow`` in the fakes)."""
    return m.Workflow(
        name=name,
        when=trigger or m.AlertTrigger(alert_type="workflow"),
        then=then,
        state="on",
        limits=m.WorkflowLimits(cooldown_s=cooldown),
    )


def rule_then(*steps: m.Step) -> m.IfStep:
    """A plain rule that holds for every event, then ``steps``."""
    return m.IfStep(
        conditions=(m.TimeCondition(dt.time(0, 0), dt.time(0, 0)),),
        paths={"true": steps, "false": ()},
    )


def ask_then(*steps: m.Step, default: str | None = None) -> m.AskPersonStep:
    return m.AskPersonStep(
        roles=("owner",),
        message="Open the gate?",
        replies=("Open", "Leave"),
        timeout_s=60,
        default=default,
        paths={
            "Open": steps,
            "Leave": (),
            **({} if default is not None else {"no_answer": ()}),
        },
    )


async def relay(engine: Engine, raised: list[NvrEvent], rounds: int = 4) -> None:
    """Hand every raised alert back to the engine once its runs are idle, as the host does."""
    for _ in range(rounds):
        await engine.idle()
        batch, raised[:] = list(raised), []
        for alert_event in batch:
            engine.submit(alert_event)
    await engine.idle()


async def setup(
    make_engine: EngineFactory, effects: FakeEffects, workflows: dict[str, m.Workflow]
) -> tuple[Engine, list[NvrEvent]]:
    engine = make_engine()
    raised: list[NvrEvent] = []
    effects.alerts_to = raised.append
    engine.set_workflows(workflows)
    await engine.start()
    return engine, raised


def step_rows(conn: sqlite3.Connection, workflow_id: str) -> list[tuple[str, str, str]]:
    return conn.execute(
        "SELECT s.path, s.kind, s.status FROM workflow_run_steps s JOIN workflow_runs r "
        "ON r.id = s.run_id WHERE r.workflow_id=? ORDER BY s.seq",
        (workflow_id,),
    ).fetchall()


def assert_refused(
    engine: Engine, conn: sqlite3.Connection, effects: FakeEffects, path: str, kind: str
) -> None:
    """The actuator is a traced, refused step; the run failed; B needs attention."""
    assert effects.of(kind) == []
    status = engine.workflow_status("b")
    assert status.state == "needs_attention"
    assert status.reason is not None
    assert status.reason.startswith(f"step {path}:")
    assert "person's reply" in status.reason
    row = conn.execute(
        "SELECT s.status, s.result FROM workflow_run_steps s JOIN workflow_runs r "
        "ON r.id = s.run_id WHERE r.workflow_id='b' AND s.path=?",
        (path,),
    ).fetchone()
    assert row is not None
    assert row[0] == "refused"
    assert "AI" in json.loads(row[1])["error"]
    (run_status,) = conn.execute(
        "SELECT status FROM workflow_runs WHERE workflow_id='b'"
    ).fetchone()
    assert run_status == "failed"


# ── the mark on what a run emits ───────────────────────────────────────


@pytest.mark.parametrize(
    ("then", "derived"),
    [
        pytest.param(ai_alert(), True, id="on-an-ai-decided-path"),
        pytest.param((alert("plain text"),), False, id="on-the-world-path"),
        pytest.param(
            (*ai_alert(on="nobody"), alert("{who} seen: {reason}")),
            True,
            id="world-path-carrying-ai-text",
        ),
        pytest.param(
            (*ai_alert(on="nobody"), alert("seen on {camera}")),
            False,
            id="world-path-after-ai-without-its-text",
        ),
        pytest.param(
            (
                m.AIStep(
                    spec=m.LookSpec(prompt="?"),
                    decision=("person", "nobody"),
                    paths={"person": (rule_then(alert()),), "nobody": (), "unsure": ()},
                ),
            ),
            True,
            id="an-if-under-an-ai-path-still-ai",
        ),
    ],
)
async def test_an_alert_carries_whether_it_holds_ai_output(
    then: tuple[m.Step, ...],
    derived: bool,
    make_engine: EngineFactory,
    effects: FakeEffects,
) -> None:
    engine, raised = await setup(make_engine, effects, {"a": raiser(then)})
    engine.submit(event())
    await engine.idle()
    (call,) = effects.of("alert")
    assert call.ctx is not None
    assert call.ctx.ai_derived is derived
    assert call.request.ai_derived is derived
    (back,) = raised
    assert back.ai_derived is derived


def test_the_mark_survives_the_stored_trigger() -> None:
    marked = event(ai_derived=True, chain=("a/1",))
    assert NvrEvent.from_summary(json.loads(json.dumps(marked.summary()))).ai_derived
    plain = event()
    assert "ai_derived" not in plain.summary()
    assert not NvrEvent.from_summary(plain.summary()).ai_derived


# ── a run started by AI output moves nothing without a person ──────────


@pytest.mark.parametrize(
    ("then", "path", "kind"),
    [
        pytest.param((Open,), "then.0", "app_action", id="actuator-first"),
        pytest.param((rule_then(Open),), "then.0.true.0", "app_action", id="behind-a-rule"),
        pytest.param(
            (
                m.IfStep(
                    conditions=(m.ValueCondition("title", is_in=("Yard",)),),
                    paths={"true": (Arm,), "false": ()},
                ),
            ),
            "then.0.true.0",
            "set_site_mode",
            id="rule-on-the-laundered-title",
        ),
        pytest.param(
            (
                ask_then(
                    m.AIStep(
                        spec=m.LookSpec(prompt="?"),
                        decision=("go", "stop"),
                        paths={"go": (Open,), "stop": (), "unsure": ()},
                    )
                ),
            ),
            "then.0.Open.0.go.0",
            "app_action",
            id="an-ai-decision-after-the-person",
        ),
    ],
)
async def test_an_actuator_in_a_run_an_ai_alert_started_is_refused(
    then: tuple[m.Step, ...],
    path: str,
    kind: str,
    make_engine: EngineFactory,
    effects: FakeEffects,
    open_db: Callable[[], sqlite3.Connection],
) -> None:
    engine, raised = await setup(
        make_engine, effects, {"a": raiser(ai_alert()), "b": follower(then)}
    )
    engine.submit(event())
    await relay(engine, raised)
    for approval, _ in engine.pending_approvals():
        await engine.answer_approval(approval.approval_id, "Open", "alice")
    await engine.idle()
    assert_refused(engine, open_db(), effects, path, kind)
    # Needs attention: the next AI alert starts no run of B.
    engine.submit(event(time=event().time + dt.timedelta(hours=1)))
    await relay(engine, raised)
    runs = open_db().execute("SELECT count(*) FROM workflow_runs WHERE workflow_id='b'")
    assert runs.fetchone() == (1,)


async def test_a_persons_reply_in_that_run_lets_the_actuator_act(
    make_engine: EngineFactory, effects: FakeEffects, open_db: Callable[[], sqlite3.Connection]
) -> None:
    engine, raised = await setup(
        make_engine,
        effects,
        {"a": raiser(ai_alert()), "b": follower((ask_then(Open),))},
    )
    engine.submit(event())
    await relay(engine, raised)
    ((approval, _),) = engine.pending_approvals()
    await engine.answer_approval(approval.approval_id, "Open", "alice")
    await engine.idle()
    assert len(effects.of("app_action")) == 1
    assert engine.workflow_status("b").state == "on"
    ((trigger,),) = open_db().execute("SELECT trigger FROM workflow_runs WHERE workflow_id='b'")
    assert json.loads(trigger)["ai_derived"] is True


async def test_a_default_reply_on_timeout_is_no_persons_reply(
    make_engine: EngineFactory,
    effects: FakeEffects,
    clock: ManualClock,
    open_db: Callable[[], sqlite3.Connection],
) -> None:
    engine, raised = await setup(
        make_engine,
        effects,
        {"a": raiser(ai_alert()), "b": follower((ask_then(Open, default="Open"),))},
    )
    engine.submit(event())
    await relay(engine, raised)
    assert len(engine.pending_approvals()) == 1
    await clock.advance(120)
    await engine.idle()
    assert_refused(engine, open_db(), effects, "then.0.Open.0", "app_action")


async def test_a_world_alert_through_the_same_workflow_acts(
    make_engine: EngineFactory, effects: FakeEffects
) -> None:
    """The rule is decided per event: the same follower acts on a plain rule when the
    alert it reads was raised on a path the world chose, without AI text."""
    engine, raised = await setup(
        make_engine,
        effects,
        {"a": raiser((alert("plain"),)), "b": follower((rule_then(Open),))},
    )
    engine.submit(event())
    await relay(engine, raised)
    assert len(effects.of("app_action")) == 1
    assert engine.workflow_status("b").state == "on"


async def test_the_mark_follows_the_chain_to_depth_three(
    make_engine: EngineFactory, effects: FakeEffects, open_db: Callable[[], sqlite3.Connection]
) -> None:
    """A's AI alert starts B, whose plain alert (on its world path, no AI text) starts C:
    everything B raises carries the mark, so C's run at depth three is AI-derived too."""
    c = follower((m.ActionStep(m.LogAction("c")),), name="C", cooldown=0)
    engine, raised = await setup(
        make_engine,
        effects,
        {"a": raiser(ai_alert()), "b": follower((alert("relayed"),)), "c": c},
    )
    engine.submit(event())
    await relay(engine, raised, rounds=6)
    by_workflow = {
        call.ctx.workflow_id: call.ctx.ai_derived for call in effects.of("alert") if call.ctx
    }
    assert by_workflow == {"a": True, "b": True}
    rows = (
        open_db()
        .execute(
            "SELECT workflow_id, depth, trigger FROM workflow_runs ORDER BY depth, workflow_id"
        )
        .fetchall()
    )
    derived = {(w, d): json.loads(t).get("ai_derived", False) for w, d, t in rows}
    assert derived == {("a", 1): False, ("b", 2): True, ("c", 2): True, ("c", 3): True}


async def test_an_ai_alert_read_back_without_the_mark_is_still_known(
    make_engine: EngineFactory, effects: FakeEffects
) -> None:
    """An alert that comes back by another road (OpenNVR's websocket) carries only the
    raising run's correlation id: the engine remembers that run carried AI output."""
    engine, raised = await setup(
        make_engine, effects, {"a": raiser(ai_alert()), "b": follower((rule_then(Open),))}
    )
    engine.submit(event())
    await engine.idle()
    (back,) = raised
    stripped = event(
        type="workflow", camera_role=None, correlation_id=back.correlation_id, source="websocket"
    )
    engine.submit(stripped)
    await engine.idle()
    assert effects.of("app_action") == []
    assert engine.workflow_status("b").state == "needs_attention"


# ── run_workflow from a run's context ──────────────────────────────────


@pytest.mark.parametrize(
    ("then", "derived"),
    [
        pytest.param(ai_alert(), True, id="caller-carried-ai-output"),
        pytest.param((alert("plain"),), False, id="caller-did-not"),
    ],
)
async def test_a_run_started_by_name_from_a_chain_inherits_the_mark(
    then: tuple[m.Step, ...],
    derived: bool,
    make_engine: EngineFactory,
    effects: FakeEffects,
) -> None:
    target = m.Workflow(name="Target", when=m.ButtonTrigger(), then=(rule_then(Open),), state="on")
    engine, _ = await setup(make_engine, effects, {"a": raiser(then), "b": target})
    engine.submit(event())
    await engine.idle()
    (call,) = effects.of("alert")
    assert call.ctx is not None
    started = engine.start_now("b", chain=call.ctx.chain)
    assert started.run_ids
    await engine.idle()
    assert (effects.of("app_action") == []) is derived
    assert (engine.workflow_status("b").state == "needs_attention") is derived


async def test_a_host_may_say_a_start_by_name_is_ai_derived(
    make_engine: EngineFactory, effects: FakeEffects
) -> None:
    target = m.Workflow(name="Target", when=m.ButtonTrigger(), then=(Open,), state="on")
    engine, _ = await setup(make_engine, effects, {"b": target})
    engine.start_now("b", ai_derived=True)
    await engine.idle()
    assert effects.of("app_action") == []
    assert engine.workflow_status("b").state == "needs_attention"


async def test_an_ai_derived_run_waiting_for_a_person_keeps_its_mark_across_a_restart(
    make_engine: EngineFactory, effects: FakeEffects, ai: FakeAi
) -> None:
    wf = follower((rule_then(ask_then(Open)), alert("after")))
    engine, _ = await setup(make_engine, effects, {"b": wf})
    engine.submit(event(type="workflow", ai_derived=True))
    await engine.idle()
    await engine.stop()
    effects.calls.clear()
    engine = make_engine()
    await engine.start()
    ((approval, _),) = engine.pending_approvals()
    await engine.answer_approval(approval.approval_id, "Open", "alice")
    await engine.idle()
    assert len(effects.of("app_action")) == 1
    (after,) = effects.of("alert")
    assert after.ctx is not None
    assert after.ctx.ai_derived  # its run still carries AI output


# ── alert triggers without a filter (class 10) ─────────────────────────


@pytest.mark.parametrize(
    "trigger",
    [m.AlertTrigger(), m.AlertTrigger(cameras=("yard",)), m.AlertTrigger(min_severity="low")],
    ids=["no-filter", "camera-only", "severity-only"],
)
@pytest.mark.parametrize(("ai_raised", "opened"), [(False, 2), (True, 1)], ids=["plain", "ai"])
async def test_an_unfiltered_alert_trigger_reads_ai_alerts_as_ai_output(
    trigger: m.AlertTrigger,
    ai_raised: bool,
    opened: int,
    make_engine: EngineFactory,
    effects: FakeEffects,
    open_db: Callable[[], sqlite3.Connection],
) -> None:
    """The same workflow, the same rule, decided per event: the world's alert opens the
    gate; the alert workflow A raises from an AI decision does not."""
    catch_all = follower((rule_then(Open),), trigger, name="Any alert", cooldown=0)
    a = raiser(ai_alert() if ai_raised else (alert("plain"),))
    engine, raised = await setup(make_engine, effects, {"a": a, "b": catch_all})
    engine.submit(event(severity="high"))
    await relay(engine, raised)
    assert len(effects.of("app_action")) == opened
    expected = "needs_attention" if ai_raised else "on"
    assert engine.workflow_status("b").state == expected
    triggers = [
        json.loads(t).get("ai_derived", False)
        for (t,) in open_db().execute(
            "SELECT trigger FROM workflow_runs WHERE workflow_id='b' ORDER BY depth"
        )
    ]
    assert triggers == [False, ai_raised]


Speak = m.ActionStep(m.HomeAssistantAction(action="notify.living_room_speaker"))


async def test_the_host_is_told_when_a_step_needs_a_persons_reply_first(
    make_engine: EngineFactory, effects: FakeEffects
) -> None:
    """An action the contract thinks only informs (a notify) may move things by its effect
    (the host finds a speaker behind it): in a run AI output started, the host learns
    whether a person's reply in this run stands before the step."""
    engine, raised = await setup(
        make_engine,
        effects,
        {"a": raiser(ai_alert()), "b": follower((Speak, ask_then(Speak)))},
    )
    engine.submit(event())
    await relay(engine, raised)
    ((approval, _),) = engine.pending_approvals()
    await engine.answer_approval(approval.approval_id, "Open", "alice")
    await engine.idle()
    before, after = effects.of("call_action")
    assert before.ctx is not None
    assert after.ctx is not None
    assert (before.ctx.step_path, before.ctx.needs_person) == ("then.0", True)
    assert (after.ctx.step_path, after.ctx.needs_person) == ("then.1.Open.0", False)


async def test_a_run_the_world_started_needs_no_person_for_its_steps(
    make_engine: EngineFactory, effects: FakeEffects
) -> None:
    engine, _ = await setup(make_engine, effects, {"a": raiser((*ai_alert(), Speak))})
    engine.submit(event())
    await engine.idle()
    (call,) = effects.of("call_action")
    assert call.ctx is not None
    assert call.ctx.needs_person is False
