"""The product's gate on a model: the look suite's 95 % Wilson lower bound reaching 0.80.

The RFC trusts an AI step only on measured cases, and lets a site use Investigate (and
drafting a workflow from a sentence) only on a model that passed: the options' model page
runs the shipped ``look`` cases against the chosen model through :func:`measure_look` (the
harness's own :func:`~.harness.run_case` and scoring, never a copy) and stores the
:class:`GateResult` in the options. The lower bound, not the ratio, is the gate: 18 right of
20 is an interval of about 0.70 to 0.97, too wide to trust. With every row right, the bound
reaches 0.80 only from 16 cases on; the shipped suite has more, so one model is measured on
enough of them to pass. No Home Assistant imports.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any, Final

from ..ai import Hardware, OllamaLLMClient
from .case_loader import DEFAULT_CASES, load_suite
from .case_model import StepCase, Suite
from .harness import run_case
from .metrics import summarize
from .scoring import Row, score

__all__ = [
    "GATE_THRESHOLD",
    "GateResult",
    "gate_result",
    "look_cases",
    "measure_look",
    "score_cases",
    "shipped_cases",
]

#: The Wilson lower bound a model's look suite must reach.
GATE_THRESHOLD: Final = 0.80


@dataclass(frozen=True, slots=True)
class GateResult:
    """One measurement: ``right`` of ``rows`` look cases decided right on ``model``, the
    95 % Wilson interval of that accuracy, and when (``date``, ISO 8601, UTC)."""

    model: str
    wilson_low: float
    wilson_high: float
    right: int
    rows: int
    date: str

    @property
    def passed(self) -> bool:
        return self.wilson_low >= GATE_THRESHOLD

    def opens_for(self, model: str) -> bool:
        """The gate is open for ``model``: this result measured it and passed (a result
        says nothing about another model)."""
        return self.passed and bool(model) and model == self.model

    def as_option(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_option(cls, raw: object) -> GateResult | None:
        """The stored result, or None when there is none or it cannot be read (a gate
        that cannot be read stays closed)."""
        if not isinstance(raw, Mapping):
            return None
        try:
            return cls(
                model=str(raw["model"]),
                wilson_low=float(raw["wilson_low"]),
                wilson_high=float(raw["wilson_high"]),
                right=int(raw["right"]),
                rows=int(raw["rows"]),
                date=str(raw["date"]),
            )
        except (KeyError, TypeError, ValueError):
            return None


def shipped_cases(suite: Suite) -> list[StepCase]:
    """The shipped cases of a step suite (reads files: call it off the event loop)."""
    return [c for c in load_suite(DEFAULT_CASES, suite) if isinstance(c, StepCase)]


def look_cases() -> list[StepCase]:
    """The shipped look cases (reads files: call it off the event loop)."""
    return shipped_cases("look")


async def score_cases(
    cases: Sequence[StepCase],
    llm: OllamaLLMClient,
    model: str,
    hardware: Hardware,
    on_row: Callable[[int, int], None] | None = None,
) -> list[Row]:
    """Run ``cases`` on ``model`` and score each (the harness's own run and scoring);
    ``on_row(done, total)`` after each case (a progress bar)."""
    rows = []
    for done, case in enumerate(cases, start=1):
        result, seconds = await run_case(case, llm, model, hardware)
        rows.append(score(case, result, model=model, seconds=seconds))
        if on_row is not None:
            on_row(done, len(cases))
    return rows


def gate_result(
    model: str, rows: Sequence[Row], now: Callable[[], datetime] = lambda: datetime.now(UTC)
) -> GateResult:
    """The gate's figures of ``rows`` (the shipped look cases on ``model``)."""
    metrics = summarize("look", model, rows)
    return GateResult(
        model=model,
        wilson_low=metrics.wilson_low,
        wilson_high=metrics.wilson_high,
        right=metrics.right,
        rows=metrics.rows,
        date=now().isoformat(timespec="seconds"),
    )


async def measure_look(
    cases: Sequence[StepCase],
    llm: OllamaLLMClient,
    model: str,
    hardware: Hardware,
    on_row: Callable[[int, int], None] | None = None,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> GateResult:
    """Run ``cases`` on ``model`` and measure its decision accuracy; ``on_row(done,
    total)`` after each case (a progress bar)."""
    return gate_result(model, await score_cases(cases, llm, model, hardware, on_row), now)
