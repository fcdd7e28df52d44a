"""An answer clears an action that moves things for a bounded time; past it, ask again.

A person who said "Open" agreed to open the gate now, not after a ``wait: 1d`` or a slow
step. So before an action that moves things acts on a person's answer (the question its
path stands behind), the engine checks how old that answer is; past the site's
``answer_fresh_s`` (:class:`.policy.SafetyPolicy`, ten minutes by default) it does not act:
the action's step asks the same people the same question again, with what each reply does,
and waits.

* The same reply as before, given now, lets the action act (and counts as a fresh answer
  for the other actions on that path).
* Another reply, or no answer by the question's timeout, declines: the action is recorded as
  skipped (``declined``) and the run's path ends there (:class:`.steps.Declined`); the
  workflow's ``always`` still runs. Declining is a person's choice, not a fault: the
  workflow does not need attention.

The answer's time is the one recorded with the question's step (``answered_at``); the
question asked again is an approval of its own (``<run>:<path>:again``), stored and
restored like any other, so a restart in the middle asks nothing twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..workflow import model
from .approvals import Approvals
from .asking import Asking
from .policy import SafetyPolicy
from .ports import ReplyPlan, SiteClock
from .recorder import StepRecorder
from .records import ActiveRun, ApprovalRecord
from .reply_plans import planned
from .steps import Declined, Lineage, ProviderLost, Waiting

__all__ = ["AGAIN", "Freshness", "answer_given_at"]

#: The suffix of the approval id of a question asked again at an action's step.
AGAIN: Final = ":again"


class Freshness:
    """Checks the age of the answer an action acts on, and asks again when it is stale."""

    def __init__(
        self,
        recorder: StepRecorder,
        clock: SiteClock,
        asking: Asking,
        approvals: Approvals,
        policy: SafetyPolicy,
    ) -> None:
        self._recorder = recorder
        self._clock = clock
        self._asking = asking
        self._approvals = approvals
        self._policy = policy

    async def check(
        self,
        run: ActiveRun,
        action: model.Action,
        path: str,
        kind: str,
        values: Mapping[str, Any],
        lineage: Lineage,
    ) -> None:
        """Return when the action may act on its answer; raise :class:`.steps.Waiting`
        while the question asked again waits, :class:`.steps.Declined` when it was
        declined."""
        person = lineage.person
        if person is None:
            return
        original = self._original(run, person)
        if original is None or original.reply is None:
            return
        approval_id = f"{run.run_id}:{path}{AGAIN}"
        again = self._approvals.records.get(approval_id)
        if again is None:
            answered = self._answered_at(run, person, original)
            age = self._clock.now_ts() - answered
            if age <= self._policy.answer_fresh_s:
                return
            again = self._ask_again(run, approval_id, path, original, age)
            self._recorder.record(
                run,
                path,
                kind,
                "waiting",
                result={"approval_id": approval_id, "asked_again": round(age)},
            )
        if again.status == "pending":
            if not again.asked:
                plan = planned(action, values, maybe=False)
                plans = tuple(
                    ReplyPlan(r, (plan,) if r == original.reply else ()) for r in again.replies
                )
                await self._asking.deliver(run, path, again, plans)
            raise Waiting
        if again.status == "answered" and again.reply == original.reply:
            return
        why = (
            f"the answer {original.reply!r} to the question at {person} was too old to act "
            f"on, and asked again, {again.answered_by or 'nobody'} did not give it "
            f"({again.reply or 'no answer'})"
        )
        self._recorder.record(run, path, kind, "skipped", outcome="declined", result={"error": why})
        raise Declined(path, why)

    def _original(self, run: ActiveRun, person: str) -> ApprovalRecord | None:
        """The approval the question at ``person`` was answered by."""
        rec = run.steps.get(person)
        approval_id = (rec.result or {}).get("approval_id") if rec is not None else None
        if approval_id is None:
            return None
        found = self._approvals.records.get(str(approval_id))
        if found is None:
            raise ProviderLost(person, f"approval {approval_id} is missing")
        return found

    def _answered_at(self, run: ActiveRun, person: str, original: ApprovalRecord) -> float:
        return answer_given_at(self._approvals, run.run_id, person, original)

    def _ask_again(
        self, run: ActiveRun, approval_id: str, path: str, original: ApprovalRecord, age: float
    ) -> ApprovalRecord:
        minutes = max(1, round(age / 60))
        message = (
            f"Asked again: the answer {original.reply!r} was given {minutes} min ago, "
            f"too long ago to act on. {original.message}"
        )
        return self._asking.open(
            run,
            approval_id,
            path,
            original.who,
            message,
            original.replies,
            None,
            max(60.0, original.expires_at - original.created_at),
            "pending",
        )


def answer_given_at(
    approvals: Approvals, run_id: str, question: str, original: ApprovalRecord
) -> float:
    """When the answer to the question at ``question`` was last given: the question's own
    answer, or the same reply given again since for another action of the same path (the
    run-time monitor reads answers' ages with it too)."""
    times = [original.answered_at or original.created_at]
    prefix = f"{run_id}:{question}."
    for approval in approvals.records.values():
        if (
            approval.approval_id.startswith(prefix)
            and approval.approval_id.endswith(AGAIN)
            and approval.status == "answered"
            and approval.reply == original.reply
            and approval.answered_at is not None
        ):
            times.append(approval.answered_at)
    return max(times)
