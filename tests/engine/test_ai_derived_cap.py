"""A run AI output started is held to the AI cap for everything it tells people, whatever
chose its path, until a person's reply in that run: a chain of workflows, each started by
the last one's alert, never turns a model's medium into a critical alarm. The same file
started by the world keeps what a plain rule gives it."""

from __future__ import annotations

from typing import Any

import pytest

from custom_components.opennvr_workflows.engine import Engine
from custom_components.opennvr_workflows.engine.testing import FakeEffects, event
from custom_components.opennvr_workflows.workflow import model as m

from .conftest import EngineFactory

RULE = (m.ValueCondition("severity", is_not_in=("low",)),)
LOUD = m.ActionStep(
    m.HomeAssistantAction(
        action="notify.mobile_app_phone",
        data={"message": "Yard", "data": {"push": {"interruption-level": "critical"}}},
    )
)


def loud_steps() -> tuple[m.Step, ...]:
    return (
        m.ActionStep(m.AlertAction(severity="critical", title="Yard")),
        m.ActionStep(m.NotifyAction(roles=("owner",), message="Yard", severity="critical")),
        LOUD,
    )


def plain_rule() -> m.Workflow:
    """A plain ``if`` before a critical alert, a critical notify step and a phone
    notification asking for a critical interruption."""
    return m.Workflow(
        name="Yard",
        when=m.AlertTrigger(),
        then=(m.IfStep(conditions=RULE, paths={"true": loud_steps(), "false": ()}),),
        state="on",
    )


def answered_first() -> m.Workflow:
    """The same, on the reply path of a person's answer."""
    ask = m.AskPersonStep(
        roles=("owner",),
        message="Sound the alarm?",
        replies=("Yes", "No"),
        timeout_s=600,
        paths={"Yes": loud_steps(), "No": ()},
    )
    return m.Workflow(name="Yard", when=m.AlertTrigger(), then=(ask,), state="on")


async def started(make_engine: EngineFactory, wf: m.Workflow, **trigger: Any) -> Engine:
    engine = make_engine()
    engine.set_workflows({"yard": wf})
    await engine.start()
    engine.submit(event(severity="high", **trigger))
    await engine.idle()
    return engine


def sent(engine: Engine) -> tuple[Any, Any, Any]:
    fx = engine.effects
    assert isinstance(fx, FakeEffects)
    (alert,) = fx.of("alert")
    (told,) = fx.of("notify")
    (push,) = fx.of("call_action")
    return alert.request, told.request, push.request


@pytest.mark.parametrize(
    ("ai_derived", "expected"),
    [
        pytest.param(False, ("critical", None, "critical", None), id="the-world-started-it"),
        pytest.param(
            True,
            ("medium", "ai_derived_trigger", "medium", "ai_derived_trigger"),
            id="ai-output-started-it",
        ),
    ],
)
async def test_a_run_ai_output_started_is_held_to_the_ai_cap(
    make_engine: EngineFactory, ai_derived: bool, expected: tuple[Any, ...]
) -> None:
    engine = await started(make_engine, plain_rule(), ai_derived=ai_derived)
    alert, told, push = sent(engine)
    assert (alert.severity, alert.capped_by) == expected[:2]
    assert told.params["severity"] == expected[2]
    assert told.params.get("capped_by") == expected[3]
    # A phone notification's own urgency is held to the same limit by the host, which
    # records why (the trace of the step).
    assert push.params["max_severity"] == expected[2]
    assert push.params.get("capped_by") == expected[3]


async def test_a_persons_reply_in_the_run_lifts_the_cap(make_engine: EngineFactory) -> None:
    engine = await started(make_engine, answered_first(), ai_derived=True)
    ((question, _),) = engine.pending_approvals()
    await engine.answer_approval(question.approval_id, "Yes", "alice")
    await engine.idle()
    alert, told, push = sent(engine)
    assert (alert.severity, alert.capped_by) == ("critical", None)
    assert told.params["severity"] == "critical"
    assert push.params["max_severity"] == "critical"
