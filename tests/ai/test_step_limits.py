"""What bounds one AI step besides its seconds: a cap on its model calls, the pictures
counted inside its time, a trace row for every model call (even one the deadline cut
off), and a failing or slow model reported as llm_down / over_budget, never as a
disagreeing agreement draw. Against the fake Ollama over loopback and the fake NVR."""

from __future__ import annotations

import asyncio
import gc
import json
import time
import weakref
from collections.abc import Callable
from typing import Any

import pytest
from opennvr_app_sdk.agent import Limits

from custom_components.opennvr_workflows.ai import (
    AIStepContext,
    AIStepResult,
    AISuspended,
    FixedBudget,
    OllamaLLMClient,
    StepCalls,
    max_model_calls,
    resume_ai_step,
    run_ai_step,
)
from custom_components.opennvr_workflows.workflow.model import AIStep, LookSpec
from tests.ai.conftest import MODEL
from tests.ai.fake_nvr import FakeNvr
from tests.ai.steps import investigate
from tests.fakes.ollama_server import Answer, FakeOllama, FromSchema, HttpError, Slow, ToolCalls

Ctx = Callable[..., AIStepContext]
REFUSED_TOOL = ToolCalls([("open_gate", {})])
DESCRIBE = ToolCalls([("describe_camera", {"camera_id": "gate"})])
ASK = ToolCalls([("ask_person", {"question": "Is this Ann?", "replies": ["Yes", "No"]})])


def look(**overrides: Any) -> AIStep:
    base: dict[str, Any] = {
        "spec": LookSpec(prompt="Who is at the gate?"),
        "decision": ("delivery", "cab", "visitor"),
        "sure": 0.75,
    }
    base.update(overrides)
    return AIStep(**base)


def cab() -> FromSchema:
    return FromSchema({"decision": "cab", "reason": "a taxi sign", "confidence": 0.8})


def who(value: str) -> FromSchema:
    return FromSchema({"who": value, "reason": f"the person is {value}", "confidence": 0.7})


async def decided(step: AIStep, ctx: AIStepContext) -> AIStepResult:
    result = await run_ai_step(step, ctx)
    assert isinstance(result, AIStepResult), result
    return result


def rows(result: AIStepResult) -> list[tuple[str, str, str]]:
    return [(r.kind, r.name, r.status) for r in result.decision.trace]


# ── the cap on model calls ──────────────────────────────────────────────────────────────


@pytest.mark.parametrize("hardware", ["cpu", "gpu"])
async def test_a_stream_of_refused_tool_calls_stops_at_the_call_cap(
    fake: FakeOllama, make_context: Ctx, hardware: str
) -> None:
    fake.default = REFUSED_TOOL  # the model asks for a tool it may not use, again and again
    budget = FixedBudget(60)  # an hour's worth
    ctx = make_context(budget=budget, hardware=hardware)
    result = await decided(investigate(), ctx)

    samples = ctx.samples
    cap = max_model_calls(Limits.for_hardware(hardware), samples)
    assert cap < 20
    assert (result.outcome, result.decision.unsure_reason) == ("unsure", "over_budget")
    assert len(fake.chats) == cap - samples  # the rest was the reserved agreement draws
    assert budget.drawn == cap  # not the hour: the turns and the reserved draws
    last = result.decision.trace[-1]
    assert (last.kind, last.status) == ("llm", "failed")
    assert f"limit of {cap} model calls" in last.result
    llm_rows = [r for r in result.decision.trace if r.kind == "llm"]
    assert len(llm_rows) == len(fake.chats) + 1  # every call asked, and the one refused


async def test_the_call_cap_carries_over_a_suspension(fake: FakeOllama, make_context: Ctx) -> None:
    fake.script(DESCRIBE, ASK)
    out = await run_ai_step(investigate(), make_context())
    assert isinstance(out, AISuspended)
    saved = json.loads(json.dumps(out.to_json()))
    assert saved["state"]["model_calls"] == 2

    fake.default = REFUSED_TOOL
    result = await resume_ai_step(investigate(), make_context(), saved, "Yes")
    assert isinstance(result, AIStepResult)
    cap = max_model_calls(Limits.cpu(), 1)
    assert result.decision.unsure_reason == "over_budget"
    assert len(fake.chats) == cap - 1  # two before the question, the rest after it


async def test_a_refused_tool_now_and_then_still_decides(
    fake: FakeOllama, make_context: Ctx
) -> None:
    fake.script(REFUSED_TOOL, DESCRIBE, Answer("seen enough"), who("staff"))
    result = await decided(investigate(), make_context())
    assert (result.outcome, result.rule) == ("ignore", 1)


# ── every model call leaves a row ───────────────────────────────────────────────────────


async def test_a_model_call_cut_off_by_the_deadline_leaves_a_timeout_row(
    fake: FakeOllama, make_context: Ctx
) -> None:
    fake.script(Slow(5.0, cab()))
    result = await decided(look(seconds=0.4), make_context())
    assert (result.outcome, result.decision.unsure_reason) == ("unsure", "over_budget")
    assert rows(result) == [
        ("tool", "picture", "ok"),
        ("llm", MODEL, "timeout"),
        ("llm", MODEL, "failed"),  # the SDK's own "ran out of time"
    ]
    cut = result.decision.trace[1]
    assert "cut off by the step's deadline" in cut.result
    assert 200 <= cut.ms < 2000
    assert result.decision.usage.model_calls == 1
    # Stored as it is: a row the store and a later read both take.
    assert (
        AIStepResult.from_json(json.loads(json.dumps(result.to_json()))).as_rows()
        == result.as_rows()
    )


async def test_a_tools_picture_description_cut_off_leaves_a_row(
    fake: FakeOllama, make_context: Ctx, nvr: FakeNvr
) -> None:
    nvr.caption = None  # describe_camera asks the vision model
    fake.script(DESCRIBE, Slow(5.0, Answer("too late")))
    result = await decided(investigate(seconds=0.5), make_context())
    assert (result.outcome, result.decision.unsure_reason) == ("unsure", "over_budget")
    assert rows(result)[:3] == [
        ("llm", MODEL, "ok"),
        ("llm", MODEL, "timeout"),
        ("tool", "describe_camera", "failed"),
    ]


async def test_a_call_cancelled_before_the_deadline_is_cancelled(
    fake: FakeOllama, llm: OllamaLLMClient
) -> None:
    calls = StepCalls(llm, model_name=MODEL, max_calls=5, samples=1, deadline=time.monotonic() + 60)
    fake.script(Slow(5.0, Answer("never heard")))
    task = asyncio.create_task(calls.tools.chat(messages=[{"role": "user", "content": "x"}]))
    done, _ = await asyncio.wait({task}, timeout=0.3)  # the model is thinking...
    assert not done
    assert len(fake.chats) == 1
    task.cancel()  # ...when the run is stopped, long before the deadline
    with pytest.raises(asyncio.CancelledError):
        await task
    [row] = calls.rows
    assert (row.kind, row.status) == ("llm", "cancelled")
    assert calls.records[-1].outcome == "cancelled"


async def test_a_steps_calls_are_freed_without_the_garbage_collector(
    fake: FakeOllama, llm: OllamaLLMClient
) -> None:
    """A step's calls (its records, rows and client) go as soon as the step lets go of
    them: kept in a reference cycle, every AI step left them for Python's collector, whose
    pauses land on whatever run is under way."""
    calls = StepCalls(llm, model_name=MODEL, max_calls=5, samples=1)
    fake.script(Answer("a dog"), Answer("nobody"))
    await calls.sdk.chat(messages=[{"role": "user", "content": "x"}])
    await calls.tools.chat(messages=[{"role": "user", "content": "y"}])
    assert [r.outcome for r in calls.records] == ["ok", "ok"]
    gone = weakref.ref(calls)
    gc.disable()
    try:
        del calls
        assert gone() is None
    finally:
        gc.enable()


# ── the pictures count inside the step's seconds ───────────────────────────────────────


async def test_a_hanging_snapshot_cannot_hang_the_step(
    fake: FakeOllama, make_context: Ctx, nvr: FakeNvr
) -> None:
    nvr.hang.add("snapshot")
    t0 = time.monotonic()
    result = await decided(look(seconds=0.3), make_context())
    assert time.monotonic() - t0 < 2
    assert (result.outcome, result.decision.unsure_reason) == ("unsure", "over_budget")
    assert rows(result) == [("tool", "picture", "timeout"), ("llm", MODEL, "refused")]
    assert "before the model was asked" in result.decision.trace[-1].result
    assert fake.chats == []


async def test_a_hanging_frame_stops_the_frames(
    fake: FakeOllama, make_context: Ctx, nvr: FakeNvr
) -> None:
    step = look(
        spec=LookSpec(prompt="Is the person leaving?", input="frames", frames=3), seconds=0.3
    )
    slept: list[float] = []

    async def sleep_then_hang(seconds: float) -> None:
        slept.append(seconds)
        nvr.hang.add("snapshot")  # the second frame never comes

    result = await decided(step, make_context(sleep=sleep_then_hang))
    assert rows(result) == [
        ("tool", "frames", "ok"),
        ("tool", "frames", "timeout"),
        ("llm", MODEL, "refused"),
    ]
    assert (slept, fake.chats) == ([1.0], [])


@pytest.mark.parametrize(("seconds", "outcome"), [(1.0, "unsure"), (3.0, "cab")])
async def test_picture_time_is_taken_from_the_steps_seconds(
    fake: FakeOllama, make_context: Ctx, nvr: FakeNvr, seconds: float, outcome: str
) -> None:
    nvr.delay["snapshot"] = 0.6
    fake.script(Slow(0.7, cab()))
    result = await decided(look(seconds=seconds), make_context())
    assert result.outcome == outcome
    assert result.decision.usage.seconds >= 0.6  # the step's seconds include the picture
    if outcome == "unsure":  # 0.6 s fetching left 0.4 s: less than the model's 0.7 s
        assert result.decision.unsure_reason == "over_budget"
        assert ("llm", MODEL, "timeout") in rows(result)


# ── a failing or slow model is not a disagreement ───────────────────────────────────────


async def test_a_failing_agreement_draw_is_llm_down_not_disagreement(
    fake: FakeOllama, make_context: Ctx
) -> None:
    fake.script(cab(), HttpError(500, "llama runner died"), cab())
    result = await decided(look(), make_context(hardware="gpu"))
    d = result.decision
    assert (d.decision, d.unsure_reason, d.proposed) == ("unsure", "llm_down", "cab")
    assert "1 of 3 draws got no answer" in d.confidence_source
    assert "llama runner died" in d.confidence_source
    assert [r.status for r in d.trace if r.kind == "llm"] == ["ok", "failed", "ok"]


async def test_an_agreement_draw_cut_off_is_over_budget_not_disagreement(
    fake: FakeOllama, make_context: Ctx
) -> None:
    fake.script(cab(), cab(), Slow(5.0, cab()))
    result = await decided(look(seconds=1.0), make_context(hardware="gpu"))
    d = result.decision
    assert (d.decision, d.unsure_reason, d.proposed) == ("unsure", "over_budget", "cab")
    assert "timeout" in d.confidence_source
    assert [r.status for r in d.trace if r.kind == "llm"] == ["ok", "ok", "timeout"]
    assert d.usage.model_calls == 3


async def test_real_disagreement_is_still_below_the_floor(
    fake: FakeOllama, make_context: Ctx
) -> None:
    visitor = FromSchema({"decision": "visitor", "reason": "a guest", "confidence": 0.8})
    fake.script(cab(), visitor, visitor)
    result = await decided(look(), make_context(hardware="gpu"))
    assert (result.outcome, result.decision.unsure_reason) == ("unsure", "below_floor")


async def test_a_model_that_fails_mid_investigation_is_llm_down(
    fake: FakeOllama, make_context: Ctx
) -> None:
    fake.script(DESCRIBE, HttpError(503, "server busy"))
    result = await decided(investigate(), make_context())
    assert (result.outcome, result.decision.unsure_reason) == ("unsure", "llm_down")
    assert "server busy" in result.decision.trace[-1].result


async def test_a_budget_spent_by_a_tools_picture_description_is_over_budget(
    fake: FakeOllama, make_context: Ctx, nvr: FakeNvr
) -> None:
    nvr.caption = None
    fake.script(DESCRIBE, Answer("seen"), who("staff"))
    result = await decided(investigate(), make_context(budget=FixedBudget(2)))
    # One decision draw reserved, one turn: the description and the next turn are refused.
    assert (result.outcome, result.decision.unsure_reason) == ("unsure", "over_budget")
    assert ("llm", MODEL, "refused") in rows(result)
    assert len(fake.chats) == 1
