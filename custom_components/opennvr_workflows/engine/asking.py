"""Ask a person steps, and the approvals any step opens.

The approval is stored (with its timeout) before the question is delivered and
the run then parks as ``waiting``; the answer, the timeout or a restart resumes
it, and the replay reads the answer from the approval. An AI step's ask tool
uses the same approvals (:meth:`Asking.open` and :meth:`Asking.deliver`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from ..workflow import model
from ..workflow.template import placeholders_in
from .approvals import Approvals
from .policy import SafetyPolicy
from .ports import ApprovalRequest, Effects, ProviderUnavailable, ReplyPlan, SiteClock
from .recorder import StepRecorder, run_context
from .records import SETTLED, ActiveRun, ApprovalRecord
from .render import render
from .reply_plans import bounded_values, reply_plans
from .steps import Lineage, ProviderLost, Waiting
from .store import StoreSlot
from .taint import placeholders
from .what_matters import cards

#: The outcome of a question nobody answered and that has no default.
NO_ANSWER: Final = "no_answer"


class Asking:
    """Runs Ask a person steps; opens and delivers approvals."""

    def __init__(
        self,
        recorder: StepRecorder,
        db: StoreSlot,
        clock: SiteClock,
        effects: Effects,
        approvals: Approvals,
        policy: SafetyPolicy | None = None,
    ) -> None:
        self._recorder = recorder
        self._db = db
        self._clock = clock
        self._effects = effects
        self._approvals = approvals
        self._policy = policy or SafetyPolicy()

    async def ask(
        self,
        run: ActiveRun,
        step: model.AskPersonStep,
        path: str,
        values: dict[str, Any],
        lineage: Lineage | None = None,
    ) -> str:
        """Ask (or, in Test, note the question and take the default); the run
        waits until the approval is answered or times out. The question carries what
        each reply will do, and its AI text is bounded (:mod:`.reply_plans`)."""
        rec = run.steps.get(path)
        if rec is not None and rec.status in SETTLED:
            if rec.result is not None and "by" not in rec.result:
                # Answered before its record said who decided (an older version's run).
                self._said(step, rec.result, values)
            answer_values(values, rec.result)
            return rec.outcome or NO_ANSWER
        fallback = step.default if step.default is not None else NO_ANSWER
        ai = (run.ai_names or frozenset()) | (lineage.tainted if lineage else frozenset())
        message = render(step.message, bounded_values(values, ai))
        plans = reply_plans(step, values, self._policy)
        ai_text = bool(placeholders(step.message) & ai)

        def open_as(status: str) -> ApprovalRecord:
            return self.open(
                run,
                f"{run.run_id}:{path}",
                path,
                step.roles,
                message,
                step.replies,
                step.default,
                step.timeout_s,
                status,
            )

        if run.test:
            approval = open_as("would_have")
            result: dict[str, Any] = {
                "would_have_asked": message,
                "approval_id": approval.approval_id,
                "answer": step.default,
                **({"replies_do": plans_summary(plans)} if plans else {}),
                "by": "nobody",
                **question_shows(step, plans),
            }
            self._recorder.record(
                run, path, "ask_person", "would_have", outcome=fallback, result=result
            )
            answer_values(values, result)
            return fallback
        if rec is None:
            approval = open_as("pending")
            self._recorder.record(
                run,
                path,
                "ask_person",
                "waiting",
                result={"approval_id": approval.approval_id, **question_shows(step, plans)},
            )
            await self.deliver(run, path, approval, plans, ai_text=ai_text)
            raise Waiting
        approval_id = str((rec.result or {}).get("approval_id"))
        found = self._approvals.records.get(approval_id)
        if found is None:
            raise ProviderLost(path, f"approval {approval_id} is missing")
        approval = found
        if approval.status == "pending":
            if not approval.asked:
                await self.deliver(run, path, approval, plans, ai_text=ai_text)
            raise Waiting
        outcome = approval.reply if approval.status == "answered" else fallback
        result = {
            "approval_id": approval_id,
            "answer": approval.reply,
            "answered_by": approval.answered_by,
            "status": approval.status,
            # When the answer was given: it clears an action for a bounded time (.freshness).
            "answered_at": approval.answered_at,
            # A person's reply, or nobody's (a default taken, no answer): see .trail.
            "by": "person" if replied(step, approval.status, approval.reply) else "nobody",
            # What the question showed, as recorded when it was asked.
            **(shows if "shown" in (shows := _shows(rec.result)) else question_shows(step, plans)),
        }
        self._recorder.record(
            run, path, "ask_person", "done", outcome=outcome or NO_ANSWER, result=result
        )
        answer_values(values, result)
        return outcome or NO_ANSWER

    def _said(
        self, step: model.AskPersonStep, result: dict[str, Any], values: Mapping[str, Any]
    ) -> None:
        """Complete the record of a question answered before records said who decided and
        what it showed (a run an older version asked): from its answer, and from the card
        its values give, which a replay gives as they were."""
        status, answer = result.get("status"), result.get("answer")
        result["by"] = "person" if replied(step, status, answer) else "nobody"
        result.update(question_shows(step, reply_plans(step, values, self._policy)))

    def open(
        self,
        run: ActiveRun,
        approval_id: str,
        path: str,
        roles: Sequence[str],
        message: str,
        replies: Sequence[str],
        default: str | None,
        timeout_s: float,
        status: str,
    ) -> ApprovalRecord:
        """Store an approval for this step before anything is delivered."""
        now = self._clock.now_ts()
        approval = ApprovalRecord(
            approval_id=approval_id,
            run_id=run.run_id,
            step_path=path,
            workflow_id=run.workflow_id,
            who=tuple(roles),
            message=message,
            replies=tuple(replies),
            default=default,
            camera_id=run.event.camera_id,
            status=status,
            created_at=now,
            expires_at=now + timeout_s,
        )
        self._approvals.open(approval)
        return approval

    async def deliver(
        self,
        run: ActiveRun,
        path: str,
        approval: ApprovalRecord,
        plans: tuple[ReplyPlan, ...] = (),
        *,
        ai_text: bool = True,
    ) -> None:
        """Make the approval durable, then hand it to the host (with what each reply
        does: worked out again from the run's values when a restart delivers it).
        ``ai_text`` says the question's text may carry AI output (the host keeps such
        text in the house); a caller that cannot tell leaves it true."""
        await self._db.store.flush()
        request = ApprovalRequest(
            approval_id=approval.approval_id,
            who=approval.who,
            message=approval.message,
            replies=approval.replies,
            expires_at=self._clock.local(approval.expires_at),
            default=approval.default,
            camera_id=approval.camera_id,
            seen_again=run.seen_again,
            plans=plans,
        )
        try:
            await self._effects.ask_person(
                run_context(run, path, ai_derived=run.ai_derived or ai_text), request
            )
        except ProviderUnavailable as err:
            raise ProviderLost(path, str(err) or "nobody can be asked") from err
        approval.asked = True
        self._db.store.execute_nowait(
            "UPDATE workflow_approvals SET asked=1 WHERE id=?", (approval.approval_id,)
        )


def replied(step: model.AskPersonStep, status: object, reply: object) -> bool:
    """Whether a person's reply chose the outcome: one of the replies, not the default (a
    default is also what a question nobody answers takes, so it clears nothing)."""
    return status == "answered" and reply in step.replies and reply != step.default


def _shows(result: Mapping[str, Any] | None) -> dict[str, Any]:
    return {k: v for k, v in (result or {}).items() if k in ("shown", "showed")}


def question_shows(step: model.AskPersonStep, plans: tuple[ReplyPlan, ...]) -> dict[str, Any]:
    """What a question showed, for its record: the values its message reads and, when a
    reply moves things, what each outcome does (the run-time monitor compares an effect
    with it, see :mod:`.monitor`)."""
    shown = list(dict.fromkeys(placeholders_in(step.message)[0]))
    return {"shown": shown, **({"showed": cards(plans)} if plans else {})}


def plans_summary(plans: tuple[ReplyPlan, ...]) -> dict[str, list[str]]:
    """What each reply would do, for a run's trace: ``{"Open": ["lock.unlock ..."]}``."""
    return {
        plan.reply: [
            " ".join(
                part
                for part in (
                    action.action,
                    json.dumps({**action.target, **action.data})
                    if action.target or action.data
                    else "",
                    "(maybe)" if action.maybe else "",
                )
                if part
            )
            for action in plan.actions
        ]
        for plan in plans
    }


def answer_values(values: dict[str, Any], result: Mapping[str, Any] | None) -> None:
    if result:
        values["answer"] = result.get("answer")
        values["answered_by"] = result.get("answered_by")
