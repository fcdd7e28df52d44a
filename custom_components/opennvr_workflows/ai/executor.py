"""``run_ai_step``: one workflow AI step, Look or Investigate, through the SDK's loop.

Seed 000's executor: build the SDK ``DecisionSpec`` and ``Tool`` list from the step, call
``run_look``, ``run_investigate`` or ``resume``, and come back with a result or a
suspension. Around the SDK it adds what belongs to this product:

* the workflow's AI budget, drawn per model call; the agreement draws are reserved first;
* a cap on the model calls of one step, and a trace row for every call, even one cut off
  by the step's deadline or made inside a tool (:mod:`.step_calls`);
* the step's seconds counted from the first picture fetched, not from the first model call;
* a model that fails or runs out of time is ``llm_down`` or ``over_budget``, never a
  disagreeing agreement draw;
* agreement draws by hardware class (GPU three, CPU one plus the evidence check);
* rule tables (first match wins, no match is ``unsure`` with ``no_rule``);
* limits from the hardware preset, overridden by the step;
* placeholders as data only, site facts (capped) in Investigate's instructions;
* the read tools over the NVR port, in the site's modes tightened by the step.

Never raises: whatever fails (the model, the NVR, the budget, a bug) comes back as an
``unsure`` result with the reason, because an AI step must never crash a workflow.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from opennvr_app_sdk.agent import (
    UNSURE,
    Decision,
    DecisionSpec,
    Limits,
    LLMClient,
    Suspended,
    Tool,
    ToolResult,
    TraceRow,
    resume,
    run_investigate,
    run_look,
)

from ..workflow.model import AIStep, InvestigateSpec, LookSpec
from .budget import BudgetedClient
from .context import AIStepContext
from .evidence import apply_evidence, investigate_gap, look_gap
from .inputs import LookInput, frame_count, gather_pictures
from .prompts import data_block, fill_text, placeholders, site_facts
from .read_tools import ToolHost, build_tools
from .result import RESULT_VERSION, AIStepResult, AISuspended
from .rules import RuleRow, RuleTableClient
from .step_calls import StepCalls, max_model_calls, merge_rows
from .tool_policy import Mode, site_policy, step_mode

_LOGGER = logging.getLogger(__name__)


async def run_ai_step(step: AIStep, context: AIStepContext) -> AIStepResult | AISuspended:
    """Run ``step`` in ``context``: a result, or a suspension while a person answers an
    ``ask_person`` call (persist ``AISuspended.to_json()``; later :func:`resume_ai_step`).
    Never raises."""
    try:
        return await _run(step, context)
    except Exception as err:  # the never-raise rule: a bug here is an unsure step
        _LOGGER.exception("AI step failed")
        return _failed(step, context, err)


async def resume_ai_step(
    step: AIStep,
    context: AIStepContext,
    suspended: AISuspended | Mapping[str, Any],
    answer: ToolResult | str,
) -> AIStepResult | AISuspended:
    """Carry on a suspended Investigate step with the person's ``answer``, in this process
    or a fresh one: ``suspended`` may be the object or its ``to_json()``. The time spent
    waiting is not counted against the step's seconds. Never raises."""
    try:
        sus = suspended if isinstance(suspended, AISuspended) else AISuspended.from_json(suspended)
        return await _resume(step, context, sus, answer)
    except Exception as err:
        _LOGGER.exception("resuming an AI step failed")
        return _failed(step, context, err)


# ── building the SDK's inputs from the step ─────────────────────────────────────────────


def decision_spec(step: AIStep, context: AIStepContext) -> DecisionSpec:
    """The SDK's ``DecisionSpec``: the step's options and fields, its floor or the site's."""
    floor = step.sure if step.sure is not None else context.site.floor
    return DecisionSpec(
        options=tuple(step.decision),
        fields={k: tuple(v) for k, v in step.fields.items()},
        floor=floor,
    )


def rule_rows(step: AIStep) -> tuple[RuleRow, ...]:
    return tuple(
        RuleRow(when={k: tuple(v) for k, v in r.when.items()}, then=r.then) for r in step.rules
    )


def step_limits(step: AIStep, context: AIStepContext) -> Limits:
    """The hardware class's preset, with the step's own caps where it sets them."""
    preset = Limits.for_hardware(context.hardware)
    tool_calls = preset.tool_calls
    if isinstance(step.spec, InvestigateSpec) and step.spec.tool_calls is not None:
        tool_calls = step.spec.tool_calls
    seconds = step.seconds if step.seconds is not None else preset.seconds
    return Limits(tool_calls=tool_calls, seconds=seconds)


def tool_modes(names: tuple[str, ...], context: AIStepContext) -> dict[str, Mode]:
    """Each tool's mode on this step: the site's policy, tightened by the step."""
    site = site_policy(context.site.tool_policy)
    return {n: step_mode(site, n, context.step_tool_modes.get(n)) for n in names}


def step_tools(
    step: AIStep, context: AIStepContext, llm: LLMClient
) -> tuple[list[Tool], list[str], dict[str, Mode]]:
    """The step's tools, built on ``llm`` (the client their picture descriptions use),
    the names refused, and each tool's mode."""
    if not isinstance(step.spec, InvestigateSpec):
        raise TypeError("only an Investigate step has tools")
    modes = tool_modes(step.spec.tools, context)
    host = ToolHost(
        nvr=context.nvr,
        llm=llm,
        site_lists=context.site.lists,
        image_size=context.image_size,
        now=context.now,
    )
    tools, refused = build_tools(step.spec.tools, host, modes)
    return tools, refused, modes


# ── running ────────────────────────────────────────────────────────────────────────────


@dataclass
class _Run:
    """One step's plumbing: the budgeted client, the door every call goes through, the
    rule table if any, the draws."""

    step: AIStep
    ctx: AIStepContext
    spec: DecisionSpec
    budgeted: BudgetedClient
    calls: StepCalls
    ruled: RuleTableClient | None
    samples: int

    @property
    def client(self) -> LLMClient:
        """What the SDK's loop calls (it traces these calls itself)."""
        return self.ruled if self.ruled is not None else self.calls.sdk


def _prepare(
    step: AIStep,
    ctx: AIStepContext,
    *,
    deadline: float,
    prepaid: int | None = None,
    samples: int | None = None,
    made: int = 0,
) -> _Run | None:
    """The run's client, with its agreement draws reserved from the budget (or, on a
    resume, the reservation and the calls made carried over). None when the budget
    cannot pay one call."""
    spec = decision_spec(step, ctx)
    if prepaid is None or samples is None:
        samples = ctx.samples
        if not ctx.budget.try_draw(samples):
            if samples == 1 or not ctx.budget.try_draw(1):
                return None
            samples = 1  # what the budget affords: one draw and the evidence check
        prepaid = samples
    budgeted = BudgetedClient(ctx.llm, ctx.budget, prepaid=prepaid)
    calls = StepCalls(
        budgeted,
        model_name=ctx.model_name,
        max_calls=max_model_calls(step_limits(step, ctx), samples),
        samples=samples,
        made=made,
        deadline=deadline,
        clock=ctx.clock,
    )
    rules = rule_rows(step)
    ruled = RuleTableClient(calls.sdk, spec, rules) if rules else None
    return _Run(step, ctx, spec, budgeted, calls, ruled, samples)


async def _run(step: AIStep, ctx: AIStepContext) -> AIStepResult | AISuspended:
    if isinstance(step.spec, LookSpec):
        return await _look(step, step.spec, ctx)
    return await _investigate(step, step.spec, ctx)


async def _look(step: AIStep, look: LookSpec, ctx: AIStepContext) -> AIStepResult:
    limits = step_limits(step, ctx)
    deadline = ctx.clock() + limits.seconds  # the pictures count against the step's time
    shown = LookInput()
    if look.input in ("picture", "frames"):
        count = 1 if look.input == "picture" else frame_count(look.frames)
        shown = await gather_pictures(ctx, look.camera or ctx.camera, count, deadline=deadline)
        if shown.timed_out:
            return _over_budget(step, ctx, shown.rows, _OUT_OF_TIME)
        gap = look_gap(shown.rows, wanted=count)
        if gap is not None:  # nothing to look at: do not spend a model call guessing
            decision = Decision(
                UNSURE,
                unsure_reason="below_floor",
                confidence=0.0,
                confidence_source=f"evidence: {gap}",
                trace=list(shown.rows),
            )
            return _result(step, ctx, decision, samples=0)
    left = deadline - ctx.clock()
    if left <= 0:
        return _over_budget(step, ctx, shown.rows, _OUT_OF_TIME)
    run = _prepare(step, ctx, deadline=deadline)
    if run is None:
        return _over_budget(step, ctx, shown.rows)
    inputs = data_block(ctx.values, placeholders(look.prompt))
    if look.input == "text":
        inputs["text"] = fill_text(look.text or "", ctx.values)
    decision = await run_look(
        run.client,
        run.spec,
        prompt=look.prompt,
        inputs=inputs,
        images=shown.images,
        limits=Limits(tool_calls=limits.tool_calls, seconds=left),
        samples=run.samples,
        model_name=ctx.model_name,
        clock=ctx.clock,
    )
    decision.trace = [*shown.rows, *decision.trace]
    decision.evidence = [r.id for r in shown.rows if r.status == "ok"]
    decision.usage.seconds = round(ctx.clock() - (deadline - limits.seconds), 3)
    _account(run, decision)
    rule = _settle(run, decision)
    if run.samples == 1:
        apply_evidence(decision, look_gap(shown.rows, wanted=shown.wanted), run.spec.floor)
    return _result(step, ctx, decision, samples=run.samples, rule=rule)


async def _investigate(
    step: AIStep, inv: InvestigateSpec, ctx: AIStepContext
) -> AIStepResult | AISuspended:
    limits = step_limits(step, ctx)
    run = _prepare(step, ctx, deadline=ctx.clock() + limits.seconds)
    if run is None:
        return _over_budget(step, ctx, [])
    tools, refused, _ = step_tools(step, ctx, run.calls.tools)
    pre_rows = [_refused_row(name) for name in refused]
    inputs = data_block(ctx.values, placeholders(inv.goal))
    if inv.memory == "camera":
        inputs["recent_decisions"] = list(ctx.recent_decisions)
    out = await run_investigate(
        run.client,
        run.spec,
        goal=inv.goal,
        tools=tools,
        instructions=inv.instructions or "",
        site_facts=site_facts(ctx.site.facts),
        inputs=inputs,
        policy=site_policy(ctx.site.tool_policy),
        limits=limits,
        samples=run.samples,
        model_name=ctx.model_name,
        clock=ctx.clock,
    )
    return _after_investigate(run, out, pre_rows, refused, _offered_reads(tools))


async def _resume(
    step: AIStep, ctx: AIStepContext, sus: AISuspended, answer: ToolResult | str
) -> AIStepResult | AISuspended:
    state = sus.state
    if state.get("v") != RESULT_VERSION or not isinstance(step.spec, InvestigateSpec):
        raise ValueError("the suspended state does not belong to an Investigate step")
    sdk_state = dict(state["sdk"])
    left = Limits(**sdk_state["limits"]).seconds - float(sdk_state.get("elapsed") or 0.0)
    run = _prepare(
        step,
        ctx,
        deadline=ctx.clock() + left,
        prepaid=int(state["prepaid"]),
        samples=int(state["samples"]),
        made=int(state.get("model_calls") or 0),
    )
    assert run is not None
    tools, _, _ = step_tools(step, ctx, run.calls.tools)
    sdk_state["pending"] = sus.pending
    out = await resume(run.client, run.spec, sdk_state, answer, tools=tools, clock=ctx.clock)
    pre_rows = [TraceRow(**row) for row in state.get("pre_rows") or []]
    return _after_investigate(
        run, out, pre_rows, list(state.get("refused") or []), _offered_reads(tools)
    )


def _after_investigate(
    run: _Run,
    out: Decision | Suspended,
    pre_rows: list[TraceRow],
    refused: list[str],
    offered: list[str],
) -> AIStepResult | AISuspended:
    if isinstance(out, Suspended):
        sdk_state = dict(out.state)
        trace = [TraceRow(**row) for row in sdk_state.get("trace") or []]
        sdk_state["trace"] = [r.as_row() for r in merge_rows(trace, run.calls.rows)]
        usage = dict(sdk_state.get("usage") or {})
        usage["model_calls"] = int(usage.get("model_calls") or 0) + _unseen_calls(run)
        sdk_state["usage"] = usage
        return AISuspended(
            pending=dict(out.pending),
            state={
                "v": RESULT_VERSION,
                "sdk": sdk_state,
                "prepaid": run.budgeted.prepaid,
                "samples": run.samples,
                "model_calls": run.calls.made,
                "pre_rows": [r.as_row() for r in pre_rows],
                "refused": refused,
            },
        )
    out.trace = [*pre_rows, *out.trace]
    _account(run, out)
    rule = _settle(run, out)
    if run.samples == 1:
        apply_evidence(out, investigate_gap(out.trace, offered), run.spec.floor)
    return _result(run.step, run.ctx, out, samples=run.samples, rule=rule, refused=tuple(refused))


def _unseen_calls(run: _Run) -> int:
    """Model calls made that the SDK did not count: a tool's, and those cut off."""
    return sum(1 for r in run.calls.rows if r.status != "refused")


def _account(run: _Run, decision: Decision) -> None:
    """Put every model call on the decision's trace and in its usage, and name why a
    step the model could not finish is unsure: ``over_budget`` when a call was refused
    (the budget, the step's call cap) or cut off by the step's deadline, ``llm_down``
    when the model failed. An agreement draw that got no answer is not a disagreeing
    vote: the SDK counts it as one, so the decision is taken back here."""
    decision.trace = merge_rows(decision.trace, run.calls.rows)
    decision.usage.model_calls += _unseen_calls(run)
    if decision.unsure_reason == "llm_down":
        last = run.calls.last_failure()
        if last is not None and last.outcome != "failed":
            decision.unsure_reason = "over_budget"
        return
    draws = run.calls.decision_draws
    unanswered = [d for d in draws[1:] if d.outcome != "ok"]
    proposed = decision.decision if decision.decision != UNSURE else decision.proposed
    if not draws or draws[0].outcome != "ok" or not unanswered or proposed is None:
        return
    failed = any(d.outcome == "failed" for d in unanswered)
    decision.proposed, decision.decision, decision.fields = proposed, UNSURE, {}
    decision.unsure_reason = "llm_down" if failed else "over_budget"
    decision.confidence_source = (
        f"agreement: {len(unanswered)} of {len(draws)} draws got no answer "
        f"({unanswered[-1].outcome}: {unanswered[-1].detail})"
    )


def _settle(run: _Run, decision: Decision) -> int | None:
    """Name the unsure reasons the SDK cannot know, and return the rule that fired."""
    if run.ruled is None or not run.ruled.results:
        return None
    first = run.ruled.results[0].draw
    if first is None or not first.valid:
        return None
    if first.rule is None and decision.decision == UNSURE and decision.unsure_reason is None:
        decision.unsure_reason = "no_rule"
    return first.rule


# ── results ────────────────────────────────────────────────────────────────────────────


def _result(
    step: AIStep,
    ctx: AIStepContext,
    decision: Decision,
    *,
    samples: int,
    rule: int | None = None,
    refused: tuple[str, ...] = (),
) -> AIStepResult:
    return AIStepResult(
        decision=decision,
        mode=step.mode,
        model=ctx.model_name,
        hardware=ctx.hardware,
        samples=samples,
        rule=rule,
        refused_tools=refused,
    )


_BUDGET_SPENT = "the workflow's AI budget is spent; the model was not asked"
_OUT_OF_TIME = "the step's time ran out before the model was asked"


def _over_budget(
    step: AIStep, ctx: AIStepContext, rows: list[TraceRow], why: str = _BUDGET_SPENT
) -> AIStepResult:
    row = TraceRow(
        kind="llm",
        name=ctx.model_name,
        status="refused",
        started_at=time.time(),
        ms=0,
        result=why,
    )
    decision = Decision(UNSURE, unsure_reason="over_budget", trace=[*rows, row])
    return _result(step, ctx, decision, samples=0)


def _failed(step: AIStep, ctx: AIStepContext, err: BaseException) -> AIStepResult:
    row = TraceRow(
        kind="llm",
        name=ctx.model_name,
        status="failed",
        started_at=time.time(),
        ms=0,
        result=f"the AI step could not run: {type(err).__name__}: {err}",
    )
    decision = Decision(UNSURE, unsure_reason="error", trace=[row])
    mode = getattr(step, "mode", "look")
    return AIStepResult(
        decision=decision, mode=str(mode), model=ctx.model_name, hardware=ctx.hardware, samples=0
    )


def _offered_reads(tools: list[Tool]) -> list[str]:
    """The read tools the model could run: what the evidence check expects to see used."""
    return [t.name for t in tools if t.effect == "read" and t.mode != "unavailable"]


def _refused_row(name: str) -> TraceRow:
    return TraceRow(
        kind="tool",
        name=name,
        status="refused",
        started_at=time.time(),
        ms=0,
        result="not a read or ask tool of this site; never offered to the model",
        mode="unavailable",
    )
