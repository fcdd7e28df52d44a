"""The evidence check: a decision is only as good as the tools that actually answered.

Seed 000's design note: small models report success they did not achieve, so on CPU, where
agreement draws cost about 9 s each, the step draws once and checks the trace instead. If a
tool the decision needs failed or never ran, the confidence is capped below the floor and
the decision becomes ``unsure`` (``below_floor``), whatever the model said. The check reads
only what ran (the trace), never the model's account of it.

What a decision needs:

* Look: its input. A picture step needs a picture; a frames step at least two frames.
* Investigate: every tool the model called must have answered at least once (a failed call
  it never recovered from is a hole in its evidence), and at least one tool must have
  answered when the step has any (a decision made without looking is a guess).
"""

from __future__ import annotations

from collections.abc import Sequence

from opennvr_app_sdk.agent import UNSURE, Decision, TraceRow

#: A capped confidence is this share of the floor: clearly below it, and still ordered
#: (a weaker floor gives a weaker cap), so the eval can read it.
CAP_SHARE = 0.5


def investigate_gap(trace: Sequence[TraceRow], offered: Sequence[str]) -> str | None:
    """Why an Investigate decision lacks evidence, or None when it has what it needs."""
    tool_rows = [r for r in trace if r.kind == "tool" and r.status in ("ok", "failed")]
    worked = {r.name for r in tool_rows if r.status == "ok"}
    failed = sorted({r.name for r in tool_rows if r.status == "failed"} - worked)
    if failed:
        tools = "a needed tool" if len(failed) == 1 else "needed tools"
        return f"{tools} failed: {', '.join(failed)}"
    if offered and not worked:
        return "no tool ran"
    return None


def look_gap(input_rows: Sequence[TraceRow], *, wanted: int) -> str | None:
    """Why a Look decision lacks its input, or None. ``wanted`` is how many pictures the
    step asked for (0 for text)."""
    if wanted == 0:
        return None
    got = sum(1 for r in input_rows if r.status == "ok")
    need = 1 if wanted == 1 else 2
    if got < need:
        pictures = "picture" if wanted == 1 else "pictures"
        return f"the input is missing: {got} of {wanted} {pictures} could be fetched"
    return None


def apply_evidence(decision: Decision, gap: str | None, floor: float) -> Decision:
    """The evidence check's verdict on ``decision``, in place: with a gap, the confidence
    is capped below ``floor`` and a decision becomes unsure; without one, the evidence is
    the confidence's source."""
    if decision.decision == UNSURE and decision.unsure_reason is not None:
        return decision
    if gap is None:
        decision.confidence_source = "evidence"
        return decision
    decision.confidence = round(min(decision.confidence, floor * CAP_SHARE), 4)
    decision.confidence_source = f"evidence: {gap}"
    if decision.decision != UNSURE and decision.confidence < floor:
        decision.proposed, decision.decision, decision.fields = decision.decision, UNSURE, {}
        decision.unsure_reason = "below_floor"
    return decision
