"""The person approves what will actually happen: the engine's side of each hole class.

Every workflow here is read through the validator first (``load_workflow``), so each test
also shows that what the validator accepted is what runs: the scopes, the placeholders and
the missing values the two agree on. Each test runs the attack and, beside it, the safe
look-alike that must still act. The validator's side is tests/workflow/test_what_happens.py.
"""

from __future__ import annotations

import textwrap
from typing import Any

import pytest

from custom_components.opennvr_workflows.engine import AiResult, Engine, PlannedAction
from custom_components.opennvr_workflows.engine.reply_plans import MAX_AI_TEXT
from custom_components.opennvr_workflows.engine.steps import trigger_values
from custom_components.opennvr_workflows.engine.testing import (
    FakeAi,
    FakeEffects,
    ManualClock,
    event,
)
from custom_components.opennvr_workflows.workflow import SiteProfile, load_workflow
from custom_components.opennvr_workflows.workflow import model as m
from custom_components.opennvr_workflows.workflow.checks.taint import base_scope
from custom_components.opennvr_workflows.workflow.parse import parse_workflow
from custom_components.opennvr_workflows.workflow.template import placeholders_in
from custom_components.opennvr_workflows.workflow.vocabulary import CONTRACTED_EVENTS
from custom_components.opennvr_workflows.workflow.yaml_loader import load_yaml

from .conftest import EngineFactory

HEAD = """\
contract: workflow.v1
name: What happens
state: on
limits: { cooldown: 0s, per_hour: 360 }
"""


def workflow(body: str, site: SiteProfile | None = None) -> Any:
    return load_workflow(HEAD + textwrap.dedent(body), site=site)


def unchecked(body: str) -> Any:
    """The model of a file the validator refuses: what the engine does if one got in."""
    located, problems = load_yaml(HEAD + textwrap.dedent(body))
    assert located is not None, problems
    return parse_workflow(located.data)  # type: ignore[arg-type]


async def running(make_engine: EngineFactory, body: str, **sites: Any) -> Engine:
    engine = make_engine()
    engine.set_workflows({"wf": workflow(body, SiteProfile(**sites) if sites else None)})
    await engine.start()
    return engine


def logs(effects: FakeEffects) -> list[str]:
    return [c.request for c in effects.of("log")]


def plate(confidence: float, **more: Any) -> Any:
    return event(
        "event",
        type="plate.recognized.v1",
        camera_role="gate",
        plate="AB1",
        payload={"plate": "AB1", "confidence": confidence, **more},
    )


# ── 1. always: the trigger's values, as the validator checks it ─────────────────────────


ALWAYS = """\
when:
  event: { type: plate.recognized.v1, cameras: [gate] }
then:
  - ai: { mode: look, prompt: Who?, input: picture, decision: [known], known: [], unsure: [] }
always:
  - log: "{plate} {confidence} {reason}"
  - if: [ value: { of: "{confidence}", above: 0.9 } ]
    then: [ app_action: { app: gate_controller, action: open } ]
    else: []
"""


@pytest.mark.parametrize(("trigger_confidence", "opens"), [(0.5, False), (0.95, True)])
async def test_always_runs_on_the_trigger_values_whatever_then_decided(
    make_engine: EngineFactory,
    effects: FakeEffects,
    ai: FakeAi,
    trigger_confidence: float,
    opens: bool,
) -> None:
    # Attack: the AI step in `then` says 0.99 for {confidence} (and gives a {reason});
    # `always` must still read the plate reader's own confidence.
    ai.decide = lambda step, ctx: AiResult(outcome="known", confidence=0.99, reason="AI words")
    engine = await running(make_engine, ALWAYS.replace("{reason}", "{{reason}}"))
    engine.submit(plate(trigger_confidence, reason="whitelisted"))
    await engine.idle()
    assert logs(effects) == [f"AB1 {trigger_confidence} {{reason}}"]
    assert bool(effects.of("app_action")) is opens


async def test_the_engine_defines_in_always_exactly_what_the_validator_does(
    make_engine: EngineFactory, effects: FakeEffects, ai: FakeAi
) -> None:
    """The validator's names at ``always`` (the trigger's), each filled by the engine
    there with the trigger's value, never with what ``then`` defined."""
    wf = workflow(ALWAYS.replace("{reason}", "{{reason}}"))
    names = sorted(base_scope(wf.when).names)
    shown = " ".join(f"{n}={{{n}}}" for n in names)
    body = ALWAYS.replace('"{plate} {confidence} {reason}"', f'"{shown}"')
    ai.decide = lambda step, ctx: AiResult(outcome="known", confidence=0.99, reason="AI words")
    engine = await running(make_engine, body)
    engine.submit(plate(0.5))
    await engine.idle()
    (line,) = logs(effects)
    assert placeholders_in(line)[0] == ()  # every name the validator allows has a value
    assert "confidence=0.5" in line
    assert "AI words" not in line
    assert "0.99" not in line


@pytest.mark.parametrize(
    "trigger",
    [
        m.AlertTrigger(),
        *(m.EventTrigger(name) for name in sorted(CONTRACTED_EVENTS)),
        m.CameraOfflineTrigger(60.0),
        m.PersonInZoneTrigger(("gate",), 5.0),
        m.ScheduleTrigger(every_s=3600.0),
        m.ButtonTrigger(),
        m.MessageTrigger(),
    ],
    ids=lambda t: getattr(t, "event", type(t).__name__),
)
def test_every_name_the_validator_gives_a_trigger_has_a_value_in_the_run(
    trigger: m.Trigger,
) -> None:
    """Also when the event lacks it: defined as nothing, so a condition on it fails
    closed and a text shows it empty, never as ``{name}``."""
    wf = m.Workflow(name="Names", when=trigger, then=())
    assert set(base_scope(trigger).names) <= set(trigger_values(wf, event()))


async def test_a_loop_over_events_defines_what_the_validator_says(
    make_engine: EngineFactory, effects: FakeEffects
) -> None:
    effects.events = [{"camera": "gate", "event_type": "person", "id": 7}]
    body = """\
    when:
      button: {}
    then:
      - for_each: { events: { within: 1h } }
        do: [ log: "{event_id} {event_type} {camera}" ]
    """
    engine = await running(make_engine, body)
    engine.run_now("wf", "alice")
    await engine.idle()
    assert logs(effects) == ["7 person gate"]


# ── 2. escaped braces: one tokenizer ────────────────────────────────────────────────────


async def test_doubled_braces_are_literal_and_only_what_the_validator_read_is_filled(
    make_engine: EngineFactory, effects: FakeEffects, ai: FakeAi
) -> None:
    ai.decide = lambda step, ctx: AiResult(outcome="known", reason="Open it")
    body = """\
    when:
      event: { type: plate.recognized.v1, cameras: [gate] }
    then:
      - ai:
          mode: look
          prompt: Who?
          input: picture
          decision: [known]
          known: [ log: "literal {{reason}}, filled {{{plate}}}" ]
          unsure: []
    """
    engine = await running(make_engine, body)
    engine.submit(plate(0.5))
    await engine.idle()
    # Attack: {{reason}} used to be filled with the AI's words; safe: {{{plate}}} is
    # the plate between literal braces, as the validator reads it.
    assert logs(effects) == ["literal {reason}, filled {AB1}"]


# ── 3 and 5. severity on a path a decision on AI output chose ──────────────────────────


SEVERITY = """\
when:
  event: { type: plate.recognized.v1, cameras: [gate] }
then:
  - for_each: { ITEMS }
    do:
      - alert: { severity: medium, title: "Seen {camera}" }
"""


@pytest.mark.parametrize(
    ("items", "requested", "sent"),
    [
        # the events decide whether the alert is raised: capped as after an AI decision
        ("events: { within: 1h }", "medium", "medium"),
        ("events: { within: 1h }", "high", "medium"),
        # safe look-alike: a loop over the cameras the file names
        ("cameras: [gate]", "high", "high"),
    ],
)
async def test_a_severity_chosen_by_events_is_capped_at_run_time(
    make_engine: EngineFactory,
    effects: FakeEffects,
    items: str,
    requested: str,
    sent: str,
) -> None:
    effects.events = [{"camera": "gate", "event_type": "opennvr_workflows", "id": 7}]
    body = SEVERITY.replace("ITEMS", items).replace("medium", requested)
    # The validator refuses the attack (WF-SEVERITY-AI-CAP); the engine caps it anyway.
    wf = unchecked(body) if requested == "high" and "events" in items else workflow(body)
    engine = make_engine()
    engine.set_workflows({"wf": wf})
    await engine.start()
    engine.submit(plate(0.5))
    await engine.idle()
    (call,) = effects.of("alert")
    assert call.request.severity == sent


# ── 4. every question that clears an actuator says what each reply does ────────────────


ASK = """\
        - ask_person:
            who: role:owner
            message: "Unlock the door? {reason}"
            replies: [Unlock, Keep]
            default: Keep
"""
QUESTION = f"""\
when:
  event: {{ type: plate.recognized.v1, cameras: [gate] }}
then:
  - ai:
      mode: look
      prompt: Which door?
      input: picture
      decision: [front, back]
      front:
{ASK}          Unlock:
            - home_assistant: {{ action: lock.unlock, data: {{ entity_id: lock.front }} }}
          Keep: []
      back:
{ASK}          Unlock:
            - home_assistant: {{ action: lock.unlock, data: {{ entity_id: lock.back }} }}
            - site_mode: disarmed
          Keep: []
      unsure:
{ASK}          Unlock: [ log: "nothing moves" ]
          Keep: []
"""
FRONT = PlannedAction("home_assistant", "lock.unlock", data={"entity_id": "lock.front"})
BACK = PlannedAction("home_assistant", "lock.unlock", data={"entity_id": "lock.back"})


@pytest.mark.parametrize(
    ("decision", "unlock"),
    [
        (
            "front",
            (PlannedAction("home_assistant", "lock.unlock", data={"entity_id": "lock.front"}),),
        ),
        (
            "back",
            (
                PlannedAction("home_assistant", "lock.unlock", data={"entity_id": "lock.back"}),
                PlannedAction("site_mode", "disarmed"),
            ),
        ),
        ("unsure", None),
    ],
)
async def test_the_question_says_what_each_reply_will_do(
    make_engine: EngineFactory,
    effects: FakeEffects,
    ai: FakeAi,
    decision: str,
    unlock: tuple[PlannedAction, ...] | None,
) -> None:
    # Attack: two paths the AI chose ask the same words and unlock different doors; each
    # question now carries what its own replies do. Its AI text comes bounded.
    ai.decide = lambda step, ctx: AiResult(outcome=decision, reason="x" * 5000)
    engine = await running(make_engine, QUESTION)
    engine.submit(plate(0.5))
    await engine.idle()
    (call,) = effects.of("ask_person")
    request = call.request
    assert len(request.message) <= len("Unlock the door? ") + MAX_AI_TEXT
    if unlock is None:
        # Safe look-alike: a question whose replies move nothing carries no plans.
        assert request.plans == ()
        return
    plans = {plan.reply: plan.actions for plan in request.plans}
    assert plans == {"Unlock": unlock, "Keep": ()}


# ── 8. values that are gone: a condition on a missing value fails closed ───────────────


MISSING = """\
when:
  event: { type: access.decided.v1, cameras: [gate] }
then:
  - for_each: { cameras: [gate] }
    do:
      - log: "reason {reason}"
      - if: [ value: { of: "{reason}", is_not: [revoked] } ]
        then: [ app_action: { app: gate_controller, action: open } ]
        else: []
"""


@pytest.mark.parametrize(
    ("reason", "opens"),
    [
        ("revoked", False),  # the trigger's {reason} inside a loop: it used to be removed
        (None, False),  # a value that is missing: `is_not` fails closed
        ("allowed", True),  # safe look-alike: a value that is there and passes
    ],
)
async def test_a_condition_on_a_value_that_is_gone_fails_closed(
    make_engine: EngineFactory, effects: FakeEffects, reason: str | None, opens: bool
) -> None:
    engine = await running(make_engine, MISSING)
    payload = {"plate": "AB1", **({"reason": reason} if reason else {})}
    engine.submit(event("event", type="access.decided.v1", camera_role="gate", payload=payload))
    await engine.idle()
    assert bool(effects.of("app_action")) is opens
    assert logs(effects) == [f"reason {reason or ''}"]


# ── 10. an answer clears an action for a bounded time ───────────────────────────────────


STALE = """\
when:
  button: {}
then:
  - ask_person: { who: role:owner, message: "Open the gate?", replies: [Open, Keep], default: Keep }
    Open:
      - wait: WAIT
      - app_action: { app: gate_controller, action: open }
      - log: opened
    Keep: []
always:
  - log: done
"""


@pytest.mark.parametrize(
    ("wait", "again", "opens"),
    [
        ("1h", "Open", True),  # asked again, the same reply: it acts
        ("1h", "Keep", False),  # asked again, declined: the path ends, always runs
        ("1m", None, True),  # safe look-alike: a fresh answer acts without asking again
    ],
)
async def test_a_stale_answer_is_asked_again_before_anything_moves(
    make_engine: EngineFactory,
    effects: FakeEffects,
    clock: ManualClock,
    wait: str,
    again: str | None,
    opens: bool,
) -> None:
    engine = await running(make_engine, STALE.replace("WAIT", wait))
    engine.run_now("wf", "alice")
    await engine.idle()
    ((question, _),) = engine.pending_approvals()
    await engine.answer_approval(question.approval_id, "Open", "alice")
    await engine.idle()
    await clock.advance(3600 if wait == "1h" else 60)
    await engine.idle()
    if again is not None:
        assert effects.of("app_action") == []  # nothing moved on the hour-old answer
        ((asked, _),) = engine.pending_approvals()
        assert asked.approval_id.endswith(":again")
        assert asked.message.startswith("Asked again:")
        (request,) = [c.request for c in effects.of("ask_person")][1:]
        assert {p.reply: bool(p.actions) for p in request.plans} == {"Open": True, "Keep": False}
        await engine.answer_approval(asked.approval_id, again, "alice")
        await engine.idle()
    assert bool(effects.of("app_action")) is opens
    assert logs(effects) == (["opened", "done"] if opens else ["done"])
    assert engine.workflow_status("wf").state == "on"


# ── 13. an app that runs a model: its alerts are AI output at run time too ─────────────


MODEL_APP = """\
when:
  alert: { app: APP, cameras: [gate] }
then:
  - if: [ time: { from: "00:00", to: "23:59" } ]
    then: [ app_action: { app: gate_controller, action: open } ]
    else: []
"""


@pytest.mark.parametrize(("app", "opens"), [("scene_describer", False), ("intrusion", True)])
async def test_a_model_apps_alert_moves_nothing_without_a_persons_reply(
    make_engine: EngineFactory, effects: FakeEffects, app: str, opens: bool
) -> None:
    engine = await running(make_engine, MODEL_APP.replace("APP", app))
    engine.policy.model_apps = frozenset({"scene_describer"})
    engine.submit(event(app=app, camera_role="gate"))
    await engine.idle()
    assert bool(effects.of("app_action")) is opens
    assert (engine.workflow_status("wf").state == "needs_attention") is not opens
