"""The severity cap follows the path, not only the innermost branch: after an AI decision
with no person's answer since (through an `if`, through a question nobody answered), an
alert, a notification and a Home Assistant notification's own urgency are held to the AI
cap; critical needs a plain rule or a person's answer."""

from __future__ import annotations

from typing import Any

import pytest

from custom_components.opennvr_workflows.engine import AiResult
from custom_components.opennvr_workflows.engine.testing import (
    FakeAi,
    FakeEffects,
    ManualClock,
    event,
)
from custom_components.opennvr_workflows.workflow import model as m

from .conftest import EngineFactory


def alert(severity: m.Severity = "critical") -> m.ActionStep:
    return m.ActionStep(m.AlertAction(severity=severity, title="Yard"))


def notify(severity: m.Severity = "high") -> m.ActionStep:
    return m.ActionStep(m.NotifyAction(roles=("owner",), message="Yard", severity=severity))


PUSH = m.ActionStep(m.HomeAssistantAction(action="notify.mobile_app_phone"))
RULE = (m.ValueCondition("severity", is_not_in=("low",)),)


def look(*then: m.Step, on: str = "person") -> m.AIStep:
    paths: dict[str, tuple[m.Step, ...]] = {"person": (), "nobody": (), "unsure": ()}
    paths[on] = then
    return m.AIStep(spec=m.LookSpec(prompt="?"), decision=("person", "nobody"), paths=paths)


def unanswered(*then: m.Step) -> m.AskPersonStep:
    return m.AskPersonStep(
        roles=("owner",),
        message="Is it a threat?",
        replies=("Yes", "No"),
        timeout_s=60,
        paths={"Yes": (), "No": (), "no_answer": then},
    )


def rule(*then: m.Step) -> m.IfStep:
    return m.IfStep(conditions=RULE, paths={"true": then, "false": ()})


def workflow(*then: m.Step, conditions: tuple[m.Condition, ...] = ()) -> m.Workflow:
    return m.Workflow(
        name="Yard", when=m.AlertTrigger(), then=then, conditions=conditions, state="on"
    )


async def run(make_engine: EngineFactory, wf: m.Workflow, **engine_kw: Any) -> FakeEffects:
    engine = make_engine(**engine_kw)
    engine.set_workflows({"yard": wf})
    await engine.start()
    engine.submit(event(severity="high"))
    await engine.idle()
    fx = engine.effects
    assert isinstance(fx, FakeEffects)
    return fx


@pytest.mark.parametrize(
    ("then", "expected"),
    [
        pytest.param((look(alert()),), ("medium", "ai_untrusted"), id="ai-path"),
        pytest.param((look(rule(alert())),), ("medium", "ai_untrusted"), id="ai-then-if"),
        pytest.param((alert(),), ("high", "critical_ungated"), id="nothing-chose"),
        pytest.param((rule(alert()),), ("critical", None), id="a-plain-rule"),
        pytest.param((alert("low"),), ("low", None), id="asks-for-less"),
    ],
)
async def test_an_alerts_severity_follows_its_path(
    make_engine: EngineFactory, then: tuple[m.Step, ...], expected: tuple[str, str | None]
) -> None:
    fx = await run(make_engine, workflow(*then))
    (call,) = fx.of("alert")
    assert (call.request.severity, call.request.capped_by) == expected
    assert call.request.requested == then_severity(then)


def then_severity(then: tuple[m.Step, ...]) -> str:
    step: Any = then[0]
    while not isinstance(step, m.ActionStep):
        step = next(s for path in step.paths.values() for s in path)
    return str(step.action.severity)


async def test_a_question_nobody_answered_keeps_the_ai_cap(
    make_engine: EngineFactory, ai: FakeAi, clock: ManualClock
) -> None:
    """The no_answer path of a question asked after an AI decision is still the AI's."""
    ai.decide = lambda step, ctx: AiResult(outcome="unsure", reason="not sure")
    wf = workflow(look(unanswered(alert("high"), notify("high"), PUSH), on="unsure"))
    engine = make_engine()
    engine.set_workflows({"yard": wf})
    await engine.start()
    engine.submit(event(severity="high"))
    await engine.idle()
    assert engine.pending_approvals()
    await clock.advance(120)  # nobody answers
    await engine.idle()
    fx = engine.effects
    assert isinstance(fx, FakeEffects)
    (sent,) = fx.of("alert")
    assert (sent.request.severity, sent.request.capped_by) == ("medium", "ai_untrusted")
    (told,) = fx.of("notify")
    assert told.request.params["severity"] == "medium"
    assert told.request.params["capped_by"] == "ai_untrusted"
    (push,) = fx.of("call_action")
    assert push.request.params["max_severity"] == "medium"


@pytest.mark.parametrize(
    ("wf", "limit"),
    [
        pytest.param(workflow(PUSH), "high", id="nothing-chose"),
        pytest.param(workflow(PUSH, conditions=RULE), "critical", id="workflow-condition"),
        pytest.param(workflow(rule(PUSH)), "critical", id="a-plain-rule"),
        pytest.param(workflow(look(PUSH)), "medium", id="ai-path"),
    ],
)
async def test_a_home_assistant_notifications_urgency_limit(
    make_engine: EngineFactory, wf: m.Workflow, limit: str
) -> None:
    fx = await run(make_engine, wf)
    (call,) = fx.of("call_action")
    assert call.request.params["max_severity"] == limit
