"""Score one run of one case: deterministic checks first, the judge's verdict after.

A row passes when every check holds: the decision is one the case accepts, each expected
field has its value, each needed tool ran and worked, each keyword group is in the reason,
and (only for rows that opt in, and only once the rules above hold) the judge says the
reason meets the case's rubric. A row marked ``xfail`` is XFAIL when it fails as predicted
and XPASS when it passes, which flags its marker as stale; neither fails the run.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from opennvr_app_sdk.agent import Decision

from ..ai import AIStepResult
from .case_model import StepCase

type Status = Literal["PASS", "FAIL", "XFAIL", "XPASS"]


@dataclass(frozen=True)
class Check:
    """One assertion on a row: its name, whether it held, and what was seen."""

    name: str
    ok: bool
    detail: str


@dataclass
class Row:
    """One case on one model, scored."""

    case_id: str
    suite: str
    model: str
    status: Status
    checks: list[Check]
    decision: str
    expected: list[str]
    fields: dict[str, str]
    reason: str
    confidence: float
    confidence_source: str
    self_reported: float | None
    unsure_reason: str | None
    decision_right: bool
    needed_tools_ok: bool | None
    tools_run: list[str]
    limit_hit: bool
    seconds: float
    model_calls: int
    tool_calls: int
    xfail: str | None = None
    trace: list[dict[str, Any]] = field(default_factory=list)

    @property
    def stale_xfail(self) -> bool:
        """An xfail row that passed: its marker should go."""
        return self.status == "XPASS"

    @property
    def confidence_kind(self) -> str:
        """``agreement``, ``evidence``, ... : the source's name without its details."""
        return self.confidence_source.split(":")[0].strip() or "none"

    @property
    def failures(self) -> list[Check]:
        return [c for c in self.checks if not c.ok]

    def as_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["stale_xfail"] = self.stale_xfail
        return out


def tools_that_worked(decision: Decision) -> list[str]:
    """The tools that ran and worked, in the order they first did."""
    names = [r.name for r in decision.trace if r.kind == "tool" and r.status == "ok"]
    return list(dict.fromkeys(names))


def hit_a_limit(decision: Decision) -> bool:
    """The step ran into one of its limits: out of time or budget, its tool calls spent, or
    a call cut off by its deadline."""
    if decision.unsure_reason == "over_budget":
        return True
    return any(
        str(r.status) == "timeout" or (r.status == "refused" and "limit" in r.result)
        for r in decision.trace
    )


def deterministic_checks(case: StepCase, decision: Decision) -> list[Check]:
    """The rule-based checks of ``case`` on ``decision``, in order."""
    expect = case.expect
    why = f" ({decision.unsure_reason})" if decision.unsure_reason else ""
    checks = [
        Check(
            "decision",
            decision.decision in expect.decisions,
            f"got {decision.decision}{why}, expected {' or '.join(expect.decisions)}",
        )
    ]
    for name, wanted in expect.fields.items():
        got = decision.fields.get(name)
        checks.append(Check(f"field {name}", got == wanted, f"got {got!r}, expected {wanted!r}"))
    worked = tools_that_worked(decision)
    for tool in expect.tools:
        checks.append(
            Check(
                f"tool {tool}",
                tool in worked,
                f"ran and worked: {', '.join(worked) or 'no tool'}",
            )
        )
    reason = decision.reason.lower()
    for group in expect.keywords:
        checks.append(
            Check(
                f"keyword {'|'.join(group)}",
                any(word.lower() in reason for word in group),
                f"reason: {decision.reason!r}",
            )
        )
    return checks


def status_of(passed: bool, xfail: str | None) -> Status:
    if xfail is None:
        return "PASS" if passed else "FAIL"
    return "XPASS" if passed else "XFAIL"


def score(
    case: StepCase,
    result: AIStepResult,
    *,
    model: str,
    seconds: float,
    judge: Check | None = None,
) -> Row:
    """The row of ``case`` run on ``model``: its checks, then ``judge`` (the judge's
    verdict, for a row that opted in and passed the checks)."""
    decision = result.decision
    checks = deterministic_checks(case, decision)
    if judge is not None:
        checks.append(judge)
    passed = all(c.ok for c in checks)
    return Row(
        case_id=case.id,
        suite=case.suite,
        model=model,
        status=status_of(passed, case.xfail),
        checks=checks,
        decision=decision.decision,
        expected=list(case.expect.decisions),
        fields=dict(decision.fields),
        reason=decision.reason,
        confidence=float(decision.confidence),
        confidence_source=decision.confidence_source,
        self_reported=decision.self_reported,
        unsure_reason=decision.unsure_reason,
        decision_right=decision.decision in case.expect.decisions,
        needed_tools_ok=(
            all(t in tools_that_worked(decision) for t in case.expect.tools)
            if case.expect.tools
            else None
        ),
        tools_run=tools_that_worked(decision),
        limit_hit=hit_a_limit(decision),
        seconds=round(seconds, 3),
        model_calls=decision.usage.model_calls,
        tool_calls=decision.usage.tool_calls,
        xfail=case.xfail,
        trace=result.as_rows(),
    )
