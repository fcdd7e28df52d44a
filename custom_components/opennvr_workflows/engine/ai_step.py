"""AI steps: run the AI port within the workflow's hourly budget, record its decision.

The step's key (workflow, path and a hash of the step) names it in the marks
table, so the accuracy people record follows the step until it is edited.
When the AI asks a person (its ask tool), the port's state is stored with the
step and the run waits like an Ask a person step; the answer resumes the port
where it stopped. In Test the question is not asked: the AI gets "no answer".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..workflow import model
from .approvals import Approvals
from .asking import Asking
from .catalog import Catalog
from .limits import Budget
from .ports import (
    AiBudget,
    AiContext,
    AiPort,
    AiResult,
    AiSuspended,
    ProviderUnavailable,
    SiteClock,
)
from .recorder import StepRecorder, run_context
from .records import SETTLED, ActiveRun
from .steps import Decider, ProviderLost, Waiting
from .versions import step_hash

#: Default time a person has to answer an ask tool an AI step raised.
AI_ASK_TIMEOUT_S: Final = 300.0
#: The AI steps' hashes kept (one per workflow version and path); past it, they are worked
#: out again as the steps run.
STEP_HASHES_KEPT: Final = 1024


class AiSteps:
    """Runs AI steps."""

    def __init__(
        self,
        recorder: StepRecorder,
        asking: Asking,
        ai: AiPort,
        approvals: Approvals,
        catalog: Catalog,
        clock: SiteClock,
    ) -> None:
        self._recorder = recorder
        self._asking = asking
        self._ai = ai
        self._approvals = approvals
        self._catalog = catalog
        self._clock = clock
        #: (workflow version, path) -> the step's hash. A version is its workflow's content,
        #: so the step at a path of a version never changes; hashing it (its sorted JSON,
        #: then SHA-256) took about 40 µs at every run of the step.
        self._step_hashes: dict[tuple[str, str], str] = {}

    def _step_hash(self, run: ActiveRun, step: model.AIStep, path: str) -> str:
        key = (run.version, path)
        known = self._step_hashes.get(key)
        if known is None:
            if len(self._step_hashes) >= STEP_HASHES_KEPT:
                self._step_hashes.clear()  # versions edited away: start over
            known = self._step_hashes[key] = step_hash(step)
        return known

    async def run(
        self, run: ActiveRun, step: model.AIStep, path: str, values: dict[str, Any]
    ) -> tuple[str, Decider]:
        """Decide with the AI port; returns the outcome and the decider of its paths."""
        key = f"{run.workflow_id}/{path}@{self._step_hash(run, step, path)}"
        decider: Decider = ("ai", key)
        rec = run.steps.get(path)
        if rec is not None and rec.status in SETTLED:
            ai_values(values, rec.result, step.reason_as)
            return rec.outcome or "unsure", decider
        budget: AiBudget = (
            run.ai_budget
            if run.ai_budget is not None
            else Budget(self._catalog.limiter(run.workflow_id, run.workflow), self._clock.now_ts)
        )
        actx = AiContext(run=run_context(run, path), inputs=dict(values), budget=budget)
        asks = 0
        out: AiResult | AiSuspended
        try:
            if rec is not None and rec.status == "waiting" and rec.state is not None:
                asks = int(rec.state.get("asks", 1))
                approval = self._approvals.records.get(str(rec.state.get("approval_id")))
                if approval is None:
                    raise ProviderLost(path, "the AI step's approval is missing")
                if approval.status == "pending":
                    if not approval.asked:
                        await self._asking.deliver(run, path, approval)
                    raise Waiting
                answer = approval.reply if approval.status == "answered" else None
                out = await self._ai.resume(step, rec.state["ai"], ai_answer(answer), actx)
            elif budget.remaining() <= 0:
                out = AiResult(
                    outcome="unsure",
                    unsure_reason="over_budget",
                    reason="the workflow's hourly AI allowance is spent",
                )
            else:
                self._recorder.record(run, path, "ai", "running", inputs={"key": key})
                out = await self._ai.run(step, actx)
            while isinstance(out, AiSuspended):
                asks += 1
                out = await self._suspended(run, step, path, key, out, asks, actx)
        except ProviderUnavailable as err:
            self._recorder.record(
                run, path, "ai", "failed", outcome="unsure", result={"error": str(err)}
            )
            raise ProviderLost(path, str(err) or "the AI model is not available") from err
        self._recorder.trace(run, path, out.trace)
        result = {
            "key": key,
            "decision": out.outcome,
            "fields": dict(out.fields),
            "reason": out.reason,
            "confidence": out.confidence,
            "evidence": list(out.evidence),
        }
        self._recorder.record(run, path, "ai", "done", outcome=out.outcome, result=result, ai=out)
        ai_values(values, result, step.reason_as)
        return out.outcome, decider

    async def _suspended(
        self,
        run: ActiveRun,
        step: model.AIStep,
        path: str,
        key: str,
        out: AiSuspended,
        asks: int,
        actx: AiContext,
    ) -> AiResult | AiSuspended:
        """An AI step's ask tool: in Test take the default at once; otherwise
        store the step's state and the approval, ask, and wait."""
        self._recorder.trace(run, path, out.trace)
        args = out.pending.get("arguments") or {}
        if not isinstance(args, Mapping):
            args = {}
        message = str(args.get("message") or args.get("question") or "The AI step asks.")
        replies = tuple(str(r) for r in args.get("replies") or ("Yes", "No"))
        who = args.get("who") or args.get("roles") or ()
        roles = (who,) if isinstance(who, str) else tuple(str(w) for w in who)
        approval_id = f"{run.run_id}:{path}#{asks}"
        status = "would_have" if run.test else "pending"
        approval = self._asking.open(
            run, approval_id, path, roles, message, replies, None, AI_ASK_TIMEOUT_S, status
        )
        if run.test:
            return await self._ai.resume(step, out.state, ai_answer(None), actx)
        state = {"ai": dict(out.state), "approval_id": approval_id, "asks": asks, "key": key}
        self._recorder.record(run, path, "ai", "waiting", state=state, inputs={"key": key})
        await self._asking.deliver(run, path, approval)
        raise Waiting


def ai_values(
    values: dict[str, Any], result: Mapping[str, Any] | None, reason_as: str | None = None
) -> None:
    """Define the step's placeholders; ``reason_as`` also names the reason, so a
    later AI step's ``{reason}`` does not hide it."""
    if not result:
        return
    values["decision"] = result.get("decision")
    values["reason"] = result.get("reason")
    if reason_as:
        values[reason_as] = result.get("reason")
    values["confidence"] = result.get("confidence")
    for name, value in (result.get("fields") or {}).items():
        values[name] = value


def ai_answer(reply: str | None) -> str:
    return reply if reply is not None else "No answer (the person did not reply in time)."
