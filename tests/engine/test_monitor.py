"""The run-time monitor: each part of the safety rule, checked on the run's own path and values.

Every workflow here is read without the validator (``unchecked``): what it tries is what a
validator hole would let in. Each test runs the attack, which the monitor refuses before it
acts (recorded ``refused`` with the rule, the decision and the value that broke it; the
workflow needs attention; nothing sent), and beside it the safe look-alike that acts.
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
import textwrap
from collections.abc import Callable
from typing import Any

import pytest

from custom_components.opennvr_workflows.engine import AiResult, Engine
from custom_components.opennvr_workflows.engine.actions import ActionSteps
from custom_components.opennvr_workflows.engine.freshness import Freshness
from custom_components.opennvr_workflows.engine.provenance import (
    WORLD,
    Approval,
    Held,
    Source,
    made_by,
)
from custom_components.opennvr_workflows.engine.testing import (
    FakeAi,
    FakeEffects,
    ManualClock,
    event,
)
from custom_components.opennvr_workflows.workflow import model as m
from custom_components.opennvr_workflows.workflow.parse import parse_workflow
from custom_components.opennvr_workflows.workflow.yaml_loader import load_yaml

from .conftest import EngineFactory

HEAD = """\
contract: workflow.v1
name: Monitor
state: on
limits: { cooldown: 0s, per_hour: 360 }
"""
BUTTON = "when:\n  button: {}\n"
#: A plain rule first, so what breaks the rule is what the test puts after it.
GATED = BUTTON + "if: [ time: { from: '00:00', to: '00:00' } ]\n"
ASK = "ask_person: { who: role:owner, message: 'MESSAGE', replies: [Yes, No], default: No }"
GATE_FOR = 'app_action: { app: gate_controller, action: open, data: { for: "{WHO}" } }'


def block(step: str, indent: int) -> str:
    """``step`` (YAML, its first line the step) as an item of a list at ``indent``."""
    lines = textwrap.dedent(step).strip("\n").splitlines()
    pad = " " * indent
    return "\n".join([f"{pad}- {lines[0]}", *(f"{pad}  {line}" for line in lines[1:])])


def ai_then(go: str, *, other: str = "stay", other_path: str = "log: stayed") -> str:
    """A gated button workflow whose AI step (with a ``kind`` field) runs ``go`` on ``go``."""
    return (
        GATED
        + f"""then:
  - ai:
      mode: look
      prompt: Open?
      input: text
      text: t
      decision: [go, {other}]
      fields: {{ kind: [friend, stranger] }}
      go:
{block(go, 8)}
      {other}:
{block(other_path, 8)}
      unsure: []
"""
    )


def ask(message: str, yes: str | list[str], *, default: str = "No", no: str = "log: kept") -> str:
    """A question (default: No) whose Yes runs ``yes`` (one step, or a list of them)."""
    steps = "\n".join(block(step, 2) for step in ([yes] if isinstance(yes, str) else yes))
    return (
        ASK.replace("MESSAGE", message).replace("default: No", f"default: {default}")
        + f"\nYes:\n{steps}\nNo:\n{block(no, 2)}"
    )


def unchecked(body: str) -> m.Workflow:
    """The model of a file, never validated."""
    located, problems = load_yaml(HEAD + textwrap.dedent(body))
    assert located is not None, problems
    return parse_workflow(located.data)  # type: ignore[arg-type]


async def started(make_engine: EngineFactory, body: str, **start: Any) -> Engine:
    """Run ``body`` once (a button press, or ``start``'s event) until it waits or ends."""
    engine = make_engine()
    engine.set_workflows({"wf": unchecked(body)})
    await engine.start()
    if "event" in start:
        engine.submit(start["event"])
    else:
        engine.start_now("wf", user="alice", **start)
    await engine.idle()
    return engine


async def reply(engine: Engine, answer: str = "Yes") -> None:
    ((approval, _),) = engine.pending_approvals()
    await engine.answer_approval(approval.approval_id, answer, "alice")
    await engine.idle()


def row(conn: sqlite3.Connection, path: str) -> tuple[str, dict[str, Any]]:
    found = conn.execute(
        "SELECT status, result FROM workflow_run_steps WHERE path=?", (path,)
    ).fetchone()
    assert found is not None, path
    return found[0], json.loads(found[1] or "{}")


def assert_refused(
    engine: Engine, conn: sqlite3.Connection, effects: FakeEffects, path: str, rule: str
) -> dict[str, Any]:
    """Refused by the monitor before it acted: traced, the workflow needs attention, the
    run failed, and nothing of that step reached the effects."""
    status, result = row(conn, path)
    assert status == "refused", result
    assert result["refused_by"] == "monitor"
    assert result["rule"] == rule, result
    state = engine.workflow_status("wf")
    assert state.state == "needs_attention"
    assert state.reason is not None
    assert state.reason.startswith(f"step {path}:")
    assert not [c for c in effects.calls if c.ctx is not None and c.ctx.step_path == path]
    (run_status,) = conn.execute("SELECT status FROM workflow_runs").fetchone()
    assert run_status == "failed"
    return result


def assert_acted(engine: Engine, effects: FakeEffects, method: str) -> None:
    assert len(effects.of(method)) == 1
    assert engine.workflow_status("wf").state == "on"


# ── 1. something must decide it ─────────────────────────────────────────────────────────


@pytest.mark.parametrize(("gate", "acts"), [("", False), ("if: [ camera: [yard] ]\n", True)])
async def test_an_effect_nothing_decided_is_refused_before_it_acts(
    make_engine: EngineFactory,
    effects: FakeEffects,
    open_db: Callable[[], sqlite3.Connection],
    gate: str,
    acts: bool,
) -> None:
    body = (
        "when:\n  alert: { app: intrusion, cameras: [yard] }\n"
        + gate
        + "then:\n  - app_action: { app: gate_controller, action: open }\n"
    )
    engine = await started(make_engine, body, event=event(app="intrusion"))
    if acts:  # safe look-alike: a plain rule on the world's camera decided it
        assert_acted(engine, effects, "app_action")
        return
    result = assert_refused(engine, open_db(), effects, "then.0", "gate")
    assert "decision" not in result
    assert "no plain `if`" in result["error"]


# ── 2. a person's reply follows every decision that is not plain ────────────────────────


async def test_an_ai_decision_with_no_reply_since_is_the_decision_that_broke_it(
    make_engine: EngineFactory, effects: FakeEffects, open_db: Callable[[], sqlite3.Connection]
) -> None:
    engine = await started(make_engine, ai_then("site_mode: disarmed"))
    result = assert_refused(engine, open_db(), effects, "then.0.go.0", "decision")
    assert result["decision"] == {"at": "then.0", "kind": "ai", "by": "ai", "outcome": "go"}


@pytest.mark.parametrize(
    ("read", "acts"),
    [("kind", False), ("user", True)],  # an AI field; safe: who pressed the button
)
async def test_an_if_on_ai_output_decides_as_the_ai_and_says_what_it_read(
    make_engine: EngineFactory,
    effects: FakeEffects,
    ai: FakeAi,
    open_db: Callable[[], sqlite3.Connection],
    read: str,
    acts: bool,
) -> None:
    # The if stands after the AI step, not on its path: only what the if read can break
    # the rule here (an AI decision on the path is the test above).
    ai.decide = lambda step, ctx: AiResult(outcome="stay", fields={"kind": "friend"})
    wf = m.Workflow(
        name="If on AI output",
        when=m.ButtonTrigger(),
        state="on",
        conditions=(m.TimeCondition(dt.time(0, 0), dt.time(0, 0)),),  # a plain rule first
        then=(
            m.AIStep(
                spec=m.LookSpec(prompt="Who?", input="text", text="t"),
                decision=("stay",),
                fields={"kind": ("friend", "stranger")},
                paths={"stay": (), "unsure": ()},
            ),
            m.IfStep(
                (m.ValueCondition(read, is_in=("friend", "alice")),),
                {"true": (m.ActionStep(m.AppAction("gate_controller", "open")),), "false": ()},
            ),
        ),
    )
    engine = make_engine()
    engine.set_workflows({"wf": wf})
    await engine.start()
    engine.start_now("wf", user="alice")
    await engine.idle()
    conn = open_db()
    _, decided = row(conn, "then.1")
    assert decided["read"] == {read: "ai then.0" if read == "kind" else "world"}
    assert decided["by"] == ("rule" if acts else "ai")
    if acts:
        assert_acted(engine, effects, "app_action")
        return
    result = assert_refused(engine, conn, effects, "then.1.true.0", "decision")
    assert result["decision"]["kind"] == "if"
    assert result["decision"]["read"] == {"kind": "ai then.0"}


@pytest.mark.parametrize(
    ("items", "acts"), [("events: { within: 1h }", False), ("cameras: [gate]", True)]
)
async def test_a_loop_over_events_decides_whether_its_steps_run_as_the_ai_would(
    make_engine: EngineFactory,
    effects: FakeEffects,
    open_db: Callable[[], sqlite3.Connection],
    items: str,
    acts: bool,
) -> None:
    effects.events = [{"camera": "gate", "event_type": "opennvr_workflows", "id": 7}]
    body = (
        GATED
        + f"then:\n  - for_each: {{ {items} }}\n"
        + "    do: [ home_assistant: { action: siren.turn_on, data: { entity_id: siren.yard } } ]\n"
    )
    engine = await started(make_engine, body)
    conn = open_db()
    _, loop = row(conn, "then.0")
    assert loop["by"] == ("world" if acts else "ai")
    if acts:
        assert_acted(engine, effects, "call_action")
        return
    result = assert_refused(engine, conn, effects, "then.0.0.0", "decision")
    assert result["decision"] == {"at": "then.0", "kind": "for_each", "by": "ai"}


# ── 3. AI output among the parameters: approved by a reply to a question that showed it ─


@pytest.mark.parametrize(("message", "acts"), [("Open?", False), ("Open for {reason}?", True)])
async def test_ai_output_in_an_effect_needs_a_reply_to_a_question_that_showed_it(
    make_engine: EngineFactory,
    effects: FakeEffects,
    ai: FakeAi,
    open_db: Callable[[], sqlite3.Connection],
    message: str,
    acts: bool,
) -> None:
    ai.decide = lambda step, ctx: AiResult(outcome="go", reason="the courier")
    gate = "app_action: { app: gate_controller, action: open, data: { for: '{reason}' } }"
    engine = await started(make_engine, ai_then(ask(message, gate)))
    await reply(engine)
    conn = open_db()
    _, asked = row(conn, "then.0.go.0")
    assert asked["by"] == "person"
    assert asked["shown"] == (["reason"] if acts else [])
    if acts:
        assert_acted(engine, effects, "app_action")
        return
    result = assert_refused(engine, conn, effects, "then.0.go.0.Yes.0", "value")
    assert result["value"] == {"name": "reason", "from": "ai then.0"}


async def test_the_default_reply_approves_nothing_even_when_tapped(
    make_engine: EngineFactory, effects: FakeEffects, open_db: Callable[[], sqlite3.Connection]
) -> None:
    gate = "app_action: { app: gate_controller, action: open }"
    engine = await started(make_engine, ai_then(ask("Open?", gate, default="Yes")))
    await reply(engine, "Yes")  # the default, tapped: not a person's reply (README)
    conn = open_db()
    assert row(conn, "then.0.go.0")[1]["by"] == "nobody"
    result = assert_refused(engine, conn, effects, "then.0.go.0.Yes.0", "decision")
    assert result["decision"]["kind"] == "ai"


# ── 4. the question showed the effect as it runs ────────────────────────────────────────


@pytest.mark.parametrize(("entity", "acts"), [("lock.{camera}", False), ("lock.front", True)])
async def test_the_question_must_have_shown_the_effect_as_it_is_about_to_run(
    make_engine: EngineFactory,
    effects: FakeEffects,
    open_db: Callable[[], sqlite3.Connection],
    entity: str,
    acts: bool,
) -> None:
    body = BUTTON + textwrap.dedent(f"""\
        then:
          - {ASK.replace("MESSAGE", "Unlock?")}
            Yes:
              - for_each: {{ cameras: [front] }}
                do: [ home_assistant: {{ action: lock.unlock, data: {{ entity_id: "{entity}" }} }} ]
            No: []
        """)
    engine = await started(make_engine, body)
    await reply(engine)
    conn = open_db()
    _, asked = row(conn, "then.0")
    shown = asked["showed"]["Yes"]
    assert shown == [
        ["home_assistant", "lock.unlock", {}, {"entity_id": entity.replace("{camera}", "")}]
    ]
    if acts:
        assert_acted(engine, effects, "call_action")
        return
    result = assert_refused(engine, conn, effects, "then.0.Yes.0.0.0", "card")
    assert result["decision"]["at"] == "then.0"


# ── 5. who is asked is not the AI's choice ──────────────────────────────────────────────


@pytest.mark.parametrize(("first", "acts"), [("kids", False), ("owner", True)])
async def test_the_ai_does_not_choose_who_approves(
    make_engine: EngineFactory,
    effects: FakeEffects,
    ai: FakeAi,
    open_db: Callable[[], sqlite3.Connection],
    first: str,
    acts: bool,
) -> None:
    ai.decide = lambda step, ctx: AiResult(outcome="stranger")
    ask = "ask_person: { who: role:WHO, message: Unlock?, replies: [Unlock, Keep], default: Keep }"
    unlock = "Unlock: [ home_assistant: { action: lock.unlock, data: { entity_id: lock.front } } ]"
    body = BUTTON + textwrap.dedent(f"""\
        then:
          - ai:
              mode: look
              prompt: Who?
              input: text
              text: t
              decision: [family, stranger]
              family:
                - {ask.replace("WHO", first)}
                  {unlock}
                  Keep: []
              stranger:
                - {ask.replace("WHO", "owner")}
                  {unlock}
                  Keep: []
              unsure: []
        """)
    engine = await started(make_engine, body)
    await reply(engine, "Unlock")
    if acts:
        assert_acted(engine, effects, "call_action")
        return
    result = assert_refused(engine, open_db(), effects, "then.0.stranger.0.Unlock.0", "who")
    assert "then.0.family.0" in result["error"]
    assert result["decision"]["at"] == "then.0"


# ── 6. every reply it rests on is recent ────────────────────────────────────────────────


@pytest.mark.parametrize(("wait", "acts"), [("1h", False), ("1m", True)])
async def test_a_reply_too_old_to_act_on_is_refused_when_nobody_asked_again(
    make_engine: EngineFactory,
    effects: FakeEffects,
    ai: FakeAi,
    clock: ManualClock,
    monkeypatch: pytest.MonkeyPatch,
    open_db: Callable[[], sqlite3.Connection],
    wait: str,
    acts: bool,
) -> None:
    """The engine asks again before it acts on an old answer (test_what_happens.py); with
    that off, as a hole in it would be, the monitor does not act on the old answer."""
    monkeypatch.setattr(Freshness, "check", _nothing)
    ai.decide = lambda step, ctx: AiResult(outcome="go", reason="the courier")
    rest = [f"wait: {wait}", GATE_FOR.replace("WHO", "reason")]
    engine = await started(make_engine, ai_then(ask("Is it {reason}?", rest)))
    await reply(engine)
    await clock.advance(3600 if wait == "1h" else 60)
    await engine.idle()
    if acts:
        assert_acted(engine, effects, "app_action")
        return
    result = assert_refused(engine, open_db(), effects, "then.0.go.0.Yes.1", "fresh")
    assert result["decision"]["at"] == "then.0.go.0"


async def _nothing(*args: object, **kwargs: object) -> None:
    return None


# ── urgency: above the AI cap, only where the rule lets it ─────────────────────────────


def cap_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine's own cap off, as a hole in it would be: the monitor is what holds."""
    monkeypatch.setattr(
        ActionSteps, "_severity_limit", lambda self, run, lineage: ("critical", None)
    )


@pytest.mark.parametrize(
    ("path", "severity", "rule"),
    [
        ("go", "high", "urgency"),  # an AI decided it: at most medium
        ("go", "medium", None),  # safe look-alike: within the AI cap
        ("asked", "critical", None),  # a person's reply since: anything
    ],
)
async def test_an_urgency_above_the_ai_cap_needs_a_persons_reply_after_the_ai(
    make_engine: EngineFactory,
    effects: FakeEffects,
    ai: FakeAi,
    monkeypatch: pytest.MonkeyPatch,
    open_db: Callable[[], sqlite3.Connection],
    path: str,
    severity: str,
    rule: str | None,
) -> None:
    cap_off(monkeypatch)
    ai.decide = lambda step, ctx: AiResult(outcome=path)
    alert = f"alert: {{ severity: {severity}, title: Someone }}"
    body = ai_then(alert, other="asked", other_path=ask("Raise it?", alert))
    engine = await started(make_engine, body)
    if path == "asked":
        await reply(engine)
    at = "then.0.go.0" if path == "go" else "then.0.asked.0.Yes.0"
    if rule is None:
        assert_acted(engine, effects, "alert")
        assert effects.of("alert")[0].request.severity == severity
        return
    result = assert_refused(engine, open_db(), effects, at, rule)
    assert result["decision"]["kind"] == "ai"


@pytest.mark.parametrize(("reply_with", "acts"), [(None, False), ("Yes", True)])
async def test_critical_needs_a_plain_rule_or_a_persons_reply(
    make_engine: EngineFactory,
    effects: FakeEffects,
    clock: ManualClock,
    monkeypatch: pytest.MonkeyPatch,
    open_db: Callable[[], sqlite3.Connection],
    reply_with: str | None,
    acts: bool,
) -> None:
    cap_off(monkeypatch)
    alert = "alert: { severity: critical, title: Fire }"
    body = BUTTON + textwrap.dedent(f"""\
        then:
          - {ASK.replace("MESSAGE", "Alarm?")}
            Yes: [ {alert} ]
            No: [ {alert} ]
        """)
    engine = await started(make_engine, body)
    if reply_with is None:
        await clock.advance(301)  # nobody answers: the default, No, is taken
        await engine.idle()
    else:
        await reply(engine, reply_with)
    if acts:
        assert_acted(engine, effects, "alert")
        return
    result = assert_refused(engine, open_db(), effects, "then.0.No.0", "urgency")
    assert "no plain `if` or person's reply" in result["error"]


# ── a notification the phone takes as a command moves things ───────────────────────────


@pytest.mark.parametrize(
    ("message", "reason", "acts"),
    [
        ("command_screen_on", "", False),  # written in the file, nothing decided it
        ("{reason}", "TTS", False),  # the AI's words make it a command
        ("{reason}", "Someone is at the door", True),  # safe look-alike: text
    ],
)
async def test_a_notification_that_is_a_phone_command_follows_the_rule_for_actuators(
    make_engine: EngineFactory,
    effects: FakeEffects,
    ai: FakeAi,
    open_db: Callable[[], sqlite3.Connection],
    message: str,
    reason: str,
    acts: bool,
) -> None:
    ai.decide = lambda step, ctx: AiResult(outcome="go", reason=reason)
    notify = (
        f"home_assistant: {{ action: notify.mobile_app_phone, data: {{ message: '{message}' }} }}"
    )
    engine = await started(make_engine, ai_then(notify))
    if acts:
        assert_acted(engine, effects, "call_action")
        return
    result = assert_refused(engine, open_db(), effects, "then.0.go.0", "decision")
    assert "command to the phone" in result["error"]


# ── the start: AI output, or a person's own values ─────────────────────────────────────


@pytest.mark.parametrize(("message", "acts"), [("Open?", False), ("Open for {title}?", True)])
async def test_in_a_run_ai_output_started_the_trigger_is_ai_output(
    make_engine: EngineFactory,
    effects: FakeEffects,
    open_db: Callable[[], sqlite3.Connection],
    message: str,
    acts: bool,
) -> None:
    """The engine's first lock lets the gate act after any reply in the run; the monitor
    also holds the alert's title, AI output here, to a question that showed it."""
    body = "when:\n  alert: { cameras: [yard] }\n" + textwrap.dedent(f"""\
        then:
          - {ASK.replace("MESSAGE", message)}
            Yes: [ {GATE_FOR.replace("WHO", "title")} ]
            No: []
        """)
    engine = await started(
        make_engine, body, event=event(type="workflow", title="Courier", ai_derived=True)
    )
    await reply(engine)
    if acts:
        assert_acted(engine, effects, "app_action")
        return
    result = assert_refused(engine, open_db(), effects, "then.0.Yes.0", "value")
    assert result["value"] == {"name": "title", "from": "ai_trigger"}
    assert result["ai_derived_trigger"] is True


@pytest.mark.parametrize("start", ["ai", "supplied"])
async def test_a_run_started_by_ai_output_or_a_persons_own_values_needs_a_reply(
    make_engine: EngineFactory,
    effects: FakeEffects,
    monkeypatch: pytest.MonkeyPatch,
    open_db: Callable[[], sqlite3.Connection],
    start: str,
) -> None:
    """With the engine's first lock off, the monitor refuses on its own."""
    monkeypatch.setattr(ActionSteps, "_held_by_trigger", lambda self, *args: None)
    body = BUTTON + "if: [ time: { from: '00:00', to: '00:00' } ]\n"
    body += "then:\n  - app_action: { app: gate_controller, action: open }\n"
    kwargs = {"ai_derived": True} if start == "ai" else {"supplied_by": "bob"}
    engine = await started(make_engine, body, **kwargs)
    result = assert_refused(engine, open_db(), effects, "then.0", "decision")
    assert result["decision"] == {
        "at": "trigger",
        "kind": "start",
        "by": "ai" if start == "ai" else "supplied",
    }


async def test_test_mode_refuses_what_on_would_refuse(
    make_engine: EngineFactory, effects: FakeEffects, open_db: Callable[[], sqlite3.Connection]
) -> None:
    body = BUTTON + "then:\n  - app_action: { app: gate_controller, action: open }\n"
    engine = await started(make_engine, body.replace("state: on", "state: test"))
    assert_refused(engine, open_db(), effects, "then.0", "gate")
    assert effects.calls == []


# ── provenance: on every value, inherited by what is made from it ──────────────────────


def test_provenance_travels_with_the_values() -> None:
    held = Held.of_trigger({"plate": "AB1", "workflow": "Gate"}, WORLD)
    assert held.provenance("plate").label == "world"
    assert held.provenance("workflow").label == "constant"
    with held.written_by(made_by(Source("ai", "then.0"))):
        held["reason"] = "a courier"
    held["stray"] = 1  # said nowhere where it came from: unknown, never plain
    assert held.provenance("reason").label == "ai then.0"
    assert not held.provenance("stray").plain
    held.approve(["reason", "missing"], Approval("then.0.go.0", "Yes"))
    approved = held.provenance("reason")
    assert approved.label == "ai then.0, shown at then.0.go.0 (Yes)"
    assert approved.cleared_on("then.0.go.0.Yes.0")
    assert not approved.cleared_on("then.0.go.1")  # after the question, not behind it
    loop = held.copy()
    loop.define("item", "front", made_by(Source("constant")))
    assert "item" not in held
    assert loop.provenance("reason") is approved


async def test_a_collect_is_made_of_its_items_and_the_ais_reasons(
    make_engine: EngineFactory,
    effects: FakeEffects,
    open_db: Callable[[], sqlite3.Connection],
) -> None:
    body = BUTTON + textwrap.dedent("""\
        then:
          - for_each: { cameras: [front, back], collect: notes }
            do:
              - ai: { mode: look, prompt: Who?, input: text, text: t, decision: [seen] }
                seen: []
                unsure: []
          - for_each: { cameras: [side], collect: plain }
            do: [ log: "{camera}" ]
          - if: [ value: { of: "{notes}", is_not: [x] }, value: { of: "{plain}", is_not: [x] } ]
            then: []
            else: []
        """)
    await started(make_engine, body)
    _, decided = row(open_db(), "then.2")
    assert decided["read"] == {
        "notes": "ai then.0.0.0 + ai then.0.1.0 + constant",
        "plain": "constant",
    }
    assert decided["by"] == "ai"


async def test_each_decision_records_what_it_read(
    make_engine: EngineFactory,
    effects: FakeEffects,
    ai: FakeAi,
    open_db: Callable[[], sqlite3.Connection],
) -> None:
    ai.decide = lambda step, ctx: AiResult(outcome="go", reason="r")
    rule = (
        "if: [ value: { of: '{reason}', is: [r] } ]\n"
        "then: [ app_action: { app: gate_controller, action: open } ]\n"
        "else: []"
    )
    engine = await started(make_engine, ai_then(ask("Open for {reason}?", rule)))
    await reply(engine)
    conn = open_db()
    _, asked = row(conn, "then.0.go.0")
    assert (asked["by"], asked["shown"]) == ("person", ["reason"])
    assert asked["showed"] == {
        "Yes": [["app_action", "gate_controller.open", {}, {}]],
        "No": [],
    }
    _, decided = row(conn, "then.0.go.0.Yes.0")
    # The AI's reason, shown on the question the person replied to: a plain rule now.
    assert decided == {
        "conditions": [True],
        "read": {"reason": "ai then.0, shown at then.0.go.0 (Yes)"},
        "by": "rule",
    }
    assert_acted(engine, effects, "app_action")


async def test_a_run_an_older_version_recorded_goes_on_after_an_upgrade(
    make_engine: EngineFactory,
    effects: FakeEffects,
    clock: ManualClock,
    open_db: Callable[[], sqlite3.Connection],
) -> None:
    """Its records do not say what decided them or what its question showed: a replay
    works it out from the values it holds again, and the gate opens as it would have."""
    body = GATED + "then:\n" + block(ask("Open the gate?", ["wait: 1m", GATE_FOR]), 2) + "\n"
    wf = unchecked(body.replace("{WHO}", "{user}"))
    engine = make_engine()
    engine.set_workflows({"wf": wf})
    await engine.start()
    engine.start_now("wf", user="alice")
    await engine.idle()
    await engine.stop()
    conn = open_db()
    for path, result in conn.execute("SELECT path, result FROM workflow_run_steps").fetchall():
        old = {
            k: v
            for k, v in json.loads(result).items()
            if k not in ("by", "read", "shown", "showed")
        }
        conn.execute("UPDATE workflow_run_steps SET result=? WHERE path=?", (json.dumps(old), path))
    conn.commit()
    engine = make_engine()
    engine.set_workflows({"wf": wf})
    await engine.start()
    await reply(engine)
    await clock.advance(61)
    await engine.idle()
    assert_acted(engine, effects, "app_action")
    _, asked = row(open_db(), "then.0")
    assert (asked["by"], asked["shown"]) == ("person", [])
