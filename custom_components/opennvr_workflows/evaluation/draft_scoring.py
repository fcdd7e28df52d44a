"""Score one drafting of one ``draft`` case, and sum a suite of them.

A draft is measured in two steps, as the issue of Describe it asks: does the validator
accept it (the hard gate), then does it say what the expected workflow says, field by field
at the case's ``match`` paths (the whole workflow when it lists none), both read as the
contract's canonical data so spelling does not count. A row passes when the draft is valid
and every matched field is equal. The pass rate of the validator carries its Wilson
interval, like a step suite's decision accuracy.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ..ai.draft import DraftResult
from ..engine import wilson_interval
from ..workflow import workflow_to_data
from .case_model import DraftCase
from .metrics import percentile, ratio
from .scoring import Check, Status, status_of

__all__ = [
    "MISSING",
    "DraftMetrics",
    "DraftRow",
    "score_draft",
    "summarize_drafts",
    "value_at",
]

_PATH_PART = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]")
_MISSING = object()


def value_at(data: Any, path: str) -> Any:
    """The value at the JSON path ``path`` (``$.then[0].ai.decision``) in ``data``, or
    :data:`MISSING` when the path names nothing there."""
    rest, here = path.removeprefix("$"), data
    while rest:
        match = _PATH_PART.match(rest)
        if match is None:
            return MISSING
        key, index = match.groups()
        if key is not None and isinstance(here, dict) and key in here:
            here = here[key]
        elif index is not None and isinstance(here, list) and int(index) < len(here):
            here = here[int(index)]
        else:
            return MISSING
        rest = rest[match.end() :]
    return here


#: What :func:`value_at` gives for a path that names nothing.
MISSING: Any = _MISSING


@dataclass
class DraftRow:
    """One draft case on one model, scored. ``yaml`` is the last draft the model wrote
    (the valid one, or the one refused); ``problems`` the validator's errors with it."""

    case_id: str
    model: str
    status: Status
    valid: bool
    checks: list[Check]
    fields_matched: int
    fields_total: int
    repairs: int
    seconds: float
    problems: list[str] = field(default_factory=list)
    yaml: str = ""
    xfail: str | None = None
    suite: str = "draft"

    @property
    def failures(self) -> list[Check]:
        return [c for c in self.checks if not c.ok]

    @property
    def stale_xfail(self) -> bool:
        return self.status == "XPASS"

    def as_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["stale_xfail"] = self.stale_xfail
        return out


def score_draft(case: DraftCase, result: DraftResult, *, model: str, seconds: float) -> DraftRow:
    """The row of ``case`` drafted on ``model``: the validator's verdict, then each
    ``match`` path compared with the expected workflow."""
    valid = result.ok and result.report is not None and result.report.workflow is not None
    problems = [f"{p.path}: {p.code}: {p.message}" for p in result.problems]
    checks = [
        Check(
            "valid",
            valid,
            f"valid after {result.repairs} repair(s)"
            if valid
            else f"refused: {'; '.join(problems[:3]) or 'no draft'}",
        )
    ]
    expected = workflow_to_data(case.expected)
    got: Any = (
        workflow_to_data(result.report.workflow)
        if valid and result.report is not None and result.report.workflow is not None
        else None
    )
    matched = 0
    paths = case.match or ("$",)
    for path in paths:
        want = value_at(expected, path)
        have = MISSING if got is None else value_at(got, path)
        same = have is not MISSING and have == want
        matched += same
        shown = "nothing" if have is MISSING else repr(have)
        checks.append(Check(f"field {path}", same, f"got {shown}, expected {want!r}"))
    last = result.attempts[-1].text if result.attempts else ""
    return DraftRow(
        case_id=case.id,
        model=model,
        status=status_of(all(c.ok for c in checks), case.xfail),
        valid=valid,
        checks=checks,
        fields_matched=matched,
        fields_total=len(paths),
        repairs=result.repairs,
        seconds=round(seconds, 3),
        problems=problems,
        yaml=result.text or last,
        xfail=case.xfail,
    )


@dataclass(frozen=True)
class DraftMetrics:
    """The draft suite on one model: the validator's pass rate with its 95 % Wilson
    interval, the share of matched fields over all rows (a refused draft matches none),
    how many drafts matched every field, repairs per valid draft, latency."""

    model: str
    rows: int
    passed: int
    failed: int
    xfailed: int
    xpassed: int
    valid: int
    valid_rate: float | None
    wilson_low: float
    wilson_high: float
    fields_matched: int
    fields_total: int
    field_rate: float | None
    all_fields: int
    mean_repairs: float | None
    p50_s: float | None
    p95_s: float | None
    suite: str = "draft"

    @property
    def ok(self) -> bool:
        return self.failed == 0


def summarize_drafts(model: str, rows: Sequence[DraftRow]) -> DraftMetrics:
    """The metrics of ``rows`` (the draft suite on one model)."""
    valid = [r for r in rows if r.valid]
    low, high = wilson_interval(len(valid), len(rows))
    matched = sum(r.fields_matched for r in rows)
    total = sum(r.fields_total for r in rows)
    return DraftMetrics(
        model=model,
        rows=len(rows),
        passed=sum(1 for r in rows if r.status == "PASS"),
        failed=sum(1 for r in rows if r.status == "FAIL"),
        xfailed=sum(1 for r in rows if r.status == "XFAIL"),
        xpassed=sum(1 for r in rows if r.status == "XPASS"),
        valid=len(valid),
        valid_rate=ratio(len(valid), len(rows)),
        wilson_low=low,
        wilson_high=high,
        fields_matched=matched,
        fields_total=total,
        field_rate=ratio(matched, total),
        all_fields=sum(1 for r in rows if r.valid and r.fields_matched == r.fields_total),
        mean_repairs=ratio(sum(r.repairs for r in valid), len(valid)),
        p50_s=percentile([r.seconds for r in rows], 50),
        p95_s=percentile([r.seconds for r in rows], 95),
    )
