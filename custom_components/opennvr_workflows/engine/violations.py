"""How the run-time monitor tells a violation: in words for people, in fields for the trace.

A refused step's record says which part of the rule broke (``rule``), the decision on the
path that broke it (where, what kind of step, what decided it, and what it read), and the
value that broke it (its name and where it came from), so a person can see why nothing was
sent, and a test can check the verdict against the run's own trace.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from .provenance import Provenance
from .records import ActiveRun
from .trail import Decision

__all__ = ["Violation", "chose", "refusal"]

#: What the person who wrote the workflow can do about it.
_FIX: Final = (
    "Put an ask_person before it and place it on a reply path (not the default reply, not "
    "no_answer)"
)


@dataclass(frozen=True, slots=True)
class Violation:
    """What broke the rule: which part (``rule``), why in words, and the decision or the
    value it rests on."""

    rule: str
    why: str
    decision: Decision | None = None
    value: tuple[str, Provenance] | None = None


def refusal(run: ActiveRun, kind: str, what: str, found: Violation) -> tuple[str, dict[str, Any]]:
    """The reason a refused step gives (``what``: what the effect does) and its record."""
    reason = (
        f"{kind} {what}, and {found.why}; the engine checks the safety rule on the run's "
        f"own path before acting (AI informs, people and plain rules move things). {_FIX}"
    )
    result: dict[str, Any] = {"error": reason, "refused_by": "monitor", "rule": found.rule}
    if found.decision is not None:
        result["decision"] = _decision_trace(found.decision)
    if found.value is not None:
        name, provenance = found.value
        result["value"] = {"name": name, "from": provenance.label}
    if run.ai_derived:
        result["ai_derived_trigger"] = True
    if run.supplied_by is not None:
        result["supplied_by"] = run.supplied_by
    return reason, result


def chose(decision: Decision) -> str:
    """What a decision that is not plain was, in words."""
    if decision.kind == "start":
        return (
            "this run was started by AI output (an alert or event a workflow raised from an AI "
            "decision, or what it set off)"
            if decision.by == "ai"
            else "this run was started by name by a person with values of their own"
        )
    if decision.kind == "ai":
        return f"the AI step at {decision.at} chose this path"
    if decision.kind == "for_each":
        return (
            f"the for_each at {decision.at} runs its steps once per event, and the events "
            "include the alerts workflows raise from AI decisions"
        )
    read = (decision.record.result or {}).get("read") if decision.record else None
    said = ", ".join(f"{{{n}}} ({f})" for n, f in read.items()) if isinstance(read, dict) else ""
    where = "the workflow's `if`" if decision.at == "if" else f"the `if` at {decision.at}"
    return f"{where} chose this path on AI output" + (f": it read {said}" if said else "")


def _decision_trace(decision: Decision) -> dict[str, Any]:
    out: dict[str, Any] = {"at": decision.at, "kind": decision.kind, "by": decision.by}
    if decision.outcome is not None:
        out["outcome"] = decision.outcome
    read = (decision.record.result or {}).get("read") if decision.record else None
    if read:
        out["read"] = read
    return out
