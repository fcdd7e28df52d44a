"""What a workflow's entities show, read from the engine's records.

A run's row says how it ended (done, failed) and the outcome of its last step, which for
most workflows is an action (``done``). What a person wants to see is what the workflow
*decided*: the outcome of its last AI step, with the model's reason and confidence.
Accuracy is kept per AI step and version (editing a step starts a fresh record); the
workflow shows the weakest of its current steps, since that is the one that holds its
alerts back (see :mod:`...engine.trust`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from ...engine import Accuracy
from ...engine.versions import step_hash
from ...workflow import Workflow, ai_steps

#: Run statuses after which a run has an outcome.
ENDED: Final = frozenset({"done", "failed", "cancelled"})
#: Runs a workflow's last outcome may show: ended ones, and those waiting (which have
#: usually decided already, and may wait for a long time).
SHOWN: Final = ENDED | {"waiting"}
#: Longest outcome shown as an entity state (Home Assistant's limit is 255).
MAX_STATE: Final = 255


#: How the engine marks a trial's limit key: a try_workflow replay, not a run of the workflow.
TRIAL_PREFIX: Final = "trial:"


def is_trial(row: Mapping[str, Any]) -> bool:
    """Whether a ``workflow_runs`` row is a trial (left out of the workflow's history)."""
    return str(row.get("limit_key") or "").startswith(TRIAL_PREFIX)


def is_trial_update(detail: Mapping[str, Any] | None) -> bool:
    """Whether an engine update's detail says its run is a trial."""
    return bool(detail and detail.get("trial"))


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """How one ended run came out."""

    run_id: str
    outcome: str
    status: str
    test: bool
    reason: str | None = None
    confidence: float | None = None
    step: str | None = None
    ended_at: datetime | None = None
    #: the outcome is AI output: an AI step decided it, or AI output started the run
    ai_derived: bool = False

    def attributes(self) -> dict[str, Any]:
        return {
            "ai_derived": self.ai_derived,
            "run_id": self.run_id,
            "reason": self.reason,
            "confidence": self.confidence,
            "status": self.status,
            "test": self.test,
            "step": self.step,
            "ended_at": self.ended_at.isoformat() if self.ended_at else None,
        }


def run_outcome(detail: Mapping[str, Any]) -> RunOutcome:
    """The outcome of a run as :meth:`~...engine.Engine.run_detail` returns it.

    A failed or cancelled run shows that, with its error as the reason; otherwise the
    decision of its last AI step; a run without one shows its own outcome."""
    status = str(detail.get("status") or "")
    ended = detail.get("ended_at")
    common: dict[str, Any] = {
        "run_id": str(detail["id"]),
        "status": status,
        "test": bool(detail.get("test")),
        "ended_at": datetime.fromtimestamp(ended, UTC) if ended else None,
        "ai_derived": started_by_ai(detail),
    }
    if status in ("failed", "cancelled"):
        return RunOutcome(outcome=status, reason=detail.get("error"), **common)
    decided = [s for s in detail.get("steps", ()) if s.get("kind") == "ai" and s.get("outcome")]
    if decided:
        common["ai_derived"] = True
        last = max(decided, key=lambda s: s.get("seq") or 0)
        confidence = last.get("confidence")
        return RunOutcome(
            outcome=str(last["outcome"])[:MAX_STATE],
            reason=last.get("reason"),
            confidence=float(confidence) if confidence is not None else None,
            step=last.get("path"),
            **common,
        )
    return RunOutcome(outcome=str(detail.get("outcome") or status)[:MAX_STATE], **common)


def started_by_ai(detail: Mapping[str, Any]) -> bool:
    """Whether AI output started the run (its stored trigger is marked)."""
    trigger = detail.get("trigger")
    if isinstance(trigger, str):
        try:
            trigger = json.loads(trigger)
        except ValueError:
            return False
    return isinstance(trigger, Mapping) and trigger.get("ai_derived") is True


@dataclass(frozen=True, slots=True)
class WorkflowAccuracy:
    """The marked record of a workflow's weakest current AI step."""

    lower_bound: float
    right: int
    marked: int
    trusted: bool
    step: str


def workflow_accuracy(
    workflow: Workflow, records: Mapping[str, Accuracy]
) -> WorkflowAccuracy | None:
    """The weakest marked AI step of this version of the workflow (lowest Wilson bound);
    None while none of its AI steps has a mark."""
    current = {step_hash(step) for _, step in ai_steps(workflow)}
    marked = [
        (key, acc)
        for key, acc in records.items()
        if acc.total > 0 and key.rpartition("@")[2] in current
    ]
    if not marked:
        return None
    key, acc = min(marked, key=lambda item: (item[1].interval[0], -item[1].total, item[0]))
    return WorkflowAccuracy(acc.interval[0], acc.right, acc.total, acc.trusted, key)
