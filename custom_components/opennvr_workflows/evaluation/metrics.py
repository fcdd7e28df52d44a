"""The figures a suite run is judged by, per suite and model.

Decision accuracy comes with its 95 % Wilson interval (the engine's own helper, the one
its trust rule gates severity on), because a ratio over a few dozen cases says little
alone: 18 of 20 right is an interval of roughly 0.70 to 0.97. Calibration is the AUROC of a
confidence as a predictor of a right decision, for the step's computed confidence
(agreement across draws, or the evidence check) and for the model's self-reported number
side by side, so a run shows whether either separates right from wrong.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..engine import wilson_interval
from .scoring import Row


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile (0 to 100), linear between the nearest ranks; None when
    there are no values."""
    if not values:
        return None
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def auroc(scores: Sequence[float], right: Sequence[bool]) -> float | None:
    """The probability that a right row scores above a wrong one (ties count half): 1.0
    separates perfectly, 0.5 is chance. None when the rows are all right or all wrong."""
    pos = [s for s, r in zip(scores, right, strict=True) if r]
    neg = [s for s, r in zip(scores, right, strict=True) if not r]
    if not pos or not neg:
        return None
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


@dataclass(frozen=True)
class SuiteMetrics:
    """One suite on one model. ``accuracy`` is over every row (xfail included: it measures
    the model, the xfail marker only keeps a known gap from failing the run)."""

    suite: str
    model: str
    rows: int
    passed: int
    failed: int
    xfailed: int
    xpassed: int
    right: int
    accuracy: float | None
    wilson_low: float
    wilson_high: float
    needed_tools_rate: float | None
    needed_tools_rows: int
    unsure_rate: float | None
    limit_hits: int
    p50_s: float | None
    p95_s: float | None
    auroc_confidence: float | None
    auroc_self_reported: float | None
    self_reported_rows: int
    confidence_sources: tuple[str, ...]

    @property
    def ok(self) -> bool:
        """Every row that is not xfail passed (the run's exit status)."""
        return self.failed == 0


def summarize(suite: str, model: str, rows: Sequence[Row]) -> SuiteMetrics:
    """The metrics of ``rows`` (one suite, one model)."""
    right = sum(1 for r in rows if r.decision_right)
    low, high = wilson_interval(right, len(rows))
    tool_rows = [r for r in rows if r.needed_tools_ok is not None]
    reported = [r for r in rows if r.self_reported is not None]
    return SuiteMetrics(
        suite=suite,
        model=model,
        rows=len(rows),
        passed=sum(1 for r in rows if r.status == "PASS"),
        failed=sum(1 for r in rows if r.status == "FAIL"),
        xfailed=sum(1 for r in rows if r.status == "XFAIL"),
        xpassed=sum(1 for r in rows if r.status == "XPASS"),
        right=right,
        accuracy=ratio(right, len(rows)),
        wilson_low=low,
        wilson_high=high,
        needed_tools_rate=ratio(sum(1 for r in tool_rows if r.needed_tools_ok), len(tool_rows)),
        needed_tools_rows=len(tool_rows),
        unsure_rate=ratio(sum(1 for r in rows if r.decision == "unsure"), len(rows)),
        limit_hits=sum(1 for r in rows if r.limit_hit),
        p50_s=percentile([r.seconds for r in rows], 50),
        p95_s=percentile([r.seconds for r in rows], 95),
        auroc_confidence=auroc([r.confidence for r in rows], [r.decision_right for r in rows]),
        auroc_self_reported=auroc(
            [float(r.self_reported or 0.0) for r in reported], [r.decision_right for r in reported]
        ),
        self_reported_rows=len(reported),
        confidence_sources=tuple(sorted({r.confidence_kind for r in rows})),
    )
