"""Marks become accuracy, and accuracy earns an AI step its severity.

People mark runs right or wrong (:class:`Marks`); the tally is kept per AI step,
keyed by the step's key (workflow, path and step hash), so editing a step starts
a fresh record. Marks outlive run retention.

RFC section 7: "An AI-decided alert is capped at medium until the step has 80%
accuracy over 20 marked runs, then high." A raw ratio over 20 runs is noisy
(at 16/20 the 95 % interval is roughly 0.58-0.92), so, as the review asked,
the gate is the lower bound of the 95 % Wilson score interval: the cap lifts
only when that bound reaches 0.80 over at least 20 marked runs.
"""

from __future__ import annotations

import json
import math
import sqlite3
from dataclasses import dataclass
from typing import Final

from .errors import UnknownRunError
from .ports import SEVERITIES, Severity, SiteClock
from .store import StoreSlot

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


class Marks:
    """People's marks on runs (right or wrong), by run, and right/total counts by AI step
    key: the tally the rules above read."""

    def __init__(self, db: StoreSlot, clock: SiteClock) -> None:
        self._db = db
        self._clock = clock
        self._marks: dict[str, tuple[bool, tuple[str, ...]]] = {}
        self._accuracy: dict[str, list[int]] = {}

    def restore(self, run_id: str, right: bool, keys: tuple[str, ...]) -> None:
        """Count a stored mark (each run has at most one)."""
        self._marks[run_id] = (right, keys)
        for key in keys:
            acc = self._accuracy.setdefault(key, [0, 0])
            acc[0] += int(right)
            acc[1] += 1

    def forget(self, run_ids: list[str]) -> None:
        """Take marks that retention deleted out of the tally."""
        for run_id in run_ids:
            previous = self._marks.pop(run_id, None)
            if previous is None:
                continue
            for key in previous[1]:
                acc = self._accuracy.get(key)
                if acc is None:
                    continue
                acc[0] -= int(previous[0])
                acc[1] -= 1
                if acc[1] <= 0:
                    del self._accuracy[key]

    async def mark_run(self, run_id: str, right: bool, user: str | None) -> dict[str, Accuracy]:
        def read(conn: sqlite3.Connection) -> tuple[str | None, list[str]]:
            row = conn.execute(
                "SELECT workflow_id FROM workflow_runs WHERE id=?", (run_id,)
            ).fetchone()
            results = conn.execute(
                "SELECT result FROM workflow_run_steps WHERE run_id=? AND kind='ai' "
                "AND status='done'",
                (run_id,),
            ).fetchall()
            return (row[0] if row else None), [r[0] for r in results if r[0]]

        workflow_id, results = await self._db.store.submit(read)
        if workflow_id is None:
            raise UnknownRunError(f"no run {run_id!r}")
        keys = tuple(sorted({str(json.loads(r)["key"]) for r in results}))
        previous = self._marks.get(run_id)
        if previous is not None:
            for key in previous[1]:
                acc = self._accuracy[key]
                acc[0] -= int(previous[0])
                acc[1] -= 1
        self._marks[run_id] = (right, keys)
        for key in keys:
            acc = self._accuracy.setdefault(key, [0, 0])
            acc[0] += int(right)
            acc[1] += 1
        await self._db.store.execute(
            "INSERT OR REPLACE INTO workflow_marks (run_id, workflow_id, right, user, at, "
            "ai_steps) VALUES (?,?,?,?,?,?)",
            (run_id, workflow_id, int(right), user, self._clock.now_ts(), json.dumps(keys)),
        )
        return {key: self.accuracy_of(key) or Accuracy(0, 0) for key in keys}

    def accuracy_of(self, key: str | None) -> Accuracy | None:
        if key is None:
            return None
        acc = self._accuracy.get(key)
        return Accuracy(acc[0], acc[1]) if acc else None

    def accuracy(self, workflow_id: str) -> dict[str, Accuracy]:
        prefix = f"{workflow_id}/"
        return {
            key: Accuracy(a[0], a[1]) for key, a in self._accuracy.items() if key.startswith(prefix)
        }
