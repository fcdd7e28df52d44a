"""People's marks on runs (right or wrong), tallied per AI step.

The tally is what the trust rules read (:func:`~.trust.cap_severity`): an AI
step that has been marked wrong too often may not raise an alert as severe as
its workflow asks. It is keyed by the AI step's key (workflow, path and step
hash), so editing a step starts a fresh record. Marks outlive run retention.
"""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING

from .errors import UnknownRunError
from .trust import Accuracy

if TYPE_CHECKING:
    from .engine import Engine


class Marks:
    """Marks by run, and right/total counts by AI step key."""

    def __init__(self, engine: Engine) -> None:
        self.e = engine
        self._marks: dict[str, tuple[bool, tuple[str, ...]]] = {}
        self._accuracy: dict[str, list[int]] = {}

    def restore(self, run_id: str, right: bool, keys: tuple[str, ...]) -> None:
        """Count a stored mark (each run has at most one)."""
        self._marks[run_id] = (right, keys)
        for key in keys:
            acc = self._accuracy.setdefault(key, [0, 0])
            acc[0] += int(right)
            acc[1] += 1

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

        workflow_id, results = await self.e.store.submit(read)
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
        await self.e.store.execute(
            "INSERT OR REPLACE INTO workflow_marks (run_id, workflow_id, right, user, at, "
            "ai_steps) VALUES (?,?,?,?,?,?)",
            (run_id, workflow_id, int(right), user, self.e.now_ts(), json.dumps(keys)),
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
