"""Marks become accuracy, and accuracy earns an AI step its severity.

RFC section 7: "An AI-decided alert is capped at medium until the step has 80%
accuracy over 20 marked runs, then high." A raw ratio over 20 runs is noisy
(at 16/20 the 95 % interval is roughly 0.58-0.92), so, as the review asked,
the gate is the lower bound of the 95 % Wilson score interval: the cap lifts
only when that bound reaches 0.80 over at least 20 marked runs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

from .ports import SEVERITIES, Severity

Z95: Final = 1.959963984540054
MIN_MARKED: Final = 20
LOWER_BOUND_GATE: Final = 0.80
AI_CAP: Final[Severity] = "medium"
AI_TRUSTED_MAX: Final[Severity] = "high"


def wilson_interval(right: int, total: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval for ``right`` successes out of ``total``.

    (0.0, 1.0) when nothing is marked: no evidence either way."""
    if total < 0 or right < 0 or right > total:
        raise ValueError(f"need 0 <= right <= total, got {right}/{total}")
    if total == 0:
        return 0.0, 1.0
    p = right / total
    z2 = z * z
    denom = 1.0 + z2 / total
    centre = (p + z2 / (2 * total)) / denom
    half = z * math.sqrt(p * (1 - p) / total + z2 / (4 * total * total)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True, slots=True)
class Accuracy:
    """One AI step's marked record."""

    right: int
    total: int

    @property
    def ratio(self) -> float | None:
        return self.right / self.total if self.total else None

    @property
    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.right, self.total)

    @property
    def trusted(self) -> bool:
        """Whether the step has earned severities above medium."""
        return self.total >= MIN_MARKED and self.interval[0] >= LOWER_BOUND_GATE


def ai_severity_limit(accuracy: Accuracy | None) -> tuple[Severity, str]:
    """The most an AI-decided alert or notification may be, and the reason it is lower
    than critical: high once the step has earned trust, medium before. Critical is never
    AI-decided (it phones people; it needs a person or a plain rule)."""
    if accuracy is not None and accuracy.trusted:
        return AI_TRUSTED_MAX, "ai_trusted_max"
    return AI_CAP, "ai_untrusted"


def lower_severity(
    requested: Severity, limit: Severity, why: str | None
) -> tuple[Severity, str | None]:
    """``requested``, or ``limit`` and ``why`` when it asks for more."""
    if SEVERITIES.index(requested) <= SEVERITIES.index(limit):
        return requested, None
    return limit, why


def cap_severity(requested: Severity, accuracy: Accuracy | None) -> tuple[Severity, str | None]:
    """The severity an AI-decided alert may have, and why it was lowered."""
    return lower_severity(requested, *ai_severity_limit(accuracy))
