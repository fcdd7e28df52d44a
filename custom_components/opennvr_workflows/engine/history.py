"""The history index: this site's AI decisions, found by their words (and by meaning, see
:mod:`.history_vectors`).

Every finished AI step gets one ``workflow_history`` row (what it decided, why, its fields,
the workflow and the trigger it ran on) and the same text in the full-text table
``workflow_history_text`` (SQLite FTS5, an external-content table over the rows). The
recorder queues :func:`index_step` right after the step's own row, in the same writer, so
the index never misses a decision nor holds one the runs table does not; the schema's V3
migration filled it from the runs already kept. Retention forgets a run's rows with the run
(:func:`forget_runs`).

Searches filter by camera inside the query (:class:`Scope`), as spec 001 asks: a person
never retrieves a decision about a camera they may not see, and a decision about no camera
is only for someone who sees every camera.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from .schema import HISTORY_SOURCE
from .store import Store

COLUMNS: Final = (
    "run_id, step_path, workflow_id, at, camera_id, event_id, alert_id, test, decision, "
    "reason, fields, subject"
)
_TEXT: Final = "decision, reason, fields, subject"
#: bm25 weights of decision, reason, fields and subject: a word in what the AI decided or
#: said counts more than one in the workflow's name.
_WEIGHTS: Final = "bm25(workflow_history_text, 2.0, 1.5, 1.5, 1.0)"
#: The most words of a query the index is asked for; the rest are ignored.
MAX_TERMS: Final = 16
_WORD: Final = re.compile(r"\w+", re.UNICODE)
#: Words that would match nearly every decision and only slow the search.
STOP_WORDS: Final = frozenset(
    [
        "a",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "by",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "i",
        "in",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "so",
        "that",
        "the",
        "there",
        "this",
        "to",
        "was",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "with",
    ]
)


@dataclass(frozen=True, slots=True)
class Scope:
    """What one search may return: ``cameras`` are the camera ids (as text) the asker may
    see, None for every camera and the decisions about none; ``since`` an epoch time."""

    cameras: frozenset[str] | None = None
    since: float | None = None
    camera: str | None = None  # only this camera (already one the asker may see)

    def where(self, alias: str = "h") -> tuple[str, list[Any]]:
        """The SQL condition (``AND ...``) and its parameters."""
        sql = ""
        params: list[Any] = []
        if self.cameras is not None:
            sql += f" AND {alias}.camera_id IN ({','.join('?' * len(self.cameras))})"
            params.extend(sorted(self.cameras))
        if self.camera is not None:
            sql += f" AND {alias}.camera_id = ?"
            params.append(self.camera)
        if self.since is not None:
            sql += f" AND {alias}.at >= ?"
            params.append(self.since)
        return sql, params

    @property
    def empty(self) -> bool:
        """Nothing can match: the asker sees no camera, or not the one asked for."""
        if self.cameras is None:
            return False
        return not self.cameras or (self.camera is not None and self.camera not in self.cameras)


@dataclass(frozen=True, slots=True)
class Decision:
    """One indexed decision, as a search returns it."""

    id: int
    run_id: str
    step_path: str
    workflow_id: str
    at: float
    camera_id: str | None
    event_id: int | None
    alert_id: str | None
    test: bool
    decision: str
    reason: str
    fields: str
    subject: str

    @classmethod
    def from_row(cls, row: Sequence[Any]) -> Decision:
        return cls(
            id=int(row[0]),
            run_id=str(row[1]),
            step_path=str(row[2]),
            workflow_id=str(row[3]),
            at=float(row[4]),
            camera_id=None if row[5] is None else str(row[5]),
            event_id=None if row[6] is None else int(row[6]),
            alert_id=None if row[7] is None else str(row[7]),
            test=bool(row[8]),
            decision=str(row[9]),
            reason=str(row[10]),
            fields=str(row[11]),
            subject=str(row[12]),
        )

    @property
    def text(self) -> str:
        """What an embedding model reads for this decision."""
        parts = [f"Decision: {self.decision}.", self.reason, self.fields, self.subject]
        return " ".join(p.strip() for p in parts if p.strip())


#: A decision's columns, id first, as :meth:`Decision.from_row` reads them.
DECISION_COLUMNS: Final = f"h.id, {', '.join('h.' + c.strip() for c in COLUMNS.split(','))}"


# ── writing ─────────────────────────────────────────────────────────────────────────────


def index_decision(store: Store, run_id: str, path: str) -> None:
    """Queue the index row of the AI step just recorded (the recorder's hook)."""
    store.submit_nowait(lambda conn: index_step(conn, run_id, path))


def index_step(conn: sqlite3.Connection, run_id: str, path: str) -> bool:
    """(Re)index one finished AI step from its stored row; False when it is not one."""
    row = conn.execute(
        f"{HISTORY_SOURCE} AND s.run_id = ? AND s.path = ?", (run_id, path)
    ).fetchone()
    if row is None:
        return False
    _forget(conn, "run_id = ? AND step_path = ?", [run_id, path])
    cursor = conn.execute(
        f"INSERT INTO workflow_history ({COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", row
    )
    conn.execute(
        f"INSERT INTO workflow_history_text (rowid, {_TEXT}) VALUES (?,?,?,?,?)",
        (cursor.lastrowid, row[8], row[9], row[10], row[11]),
    )
    return True


def forget_runs(conn: sqlite3.Connection, run_ids: Sequence[str]) -> None:
    """Remove these runs' decisions from the index (retention, with the runs)."""
    if run_ids:
        _forget(conn, f"run_id IN ({','.join('?' * len(run_ids))})", list(run_ids))


def _forget(conn: sqlite3.Connection, where: str, params: list[Any]) -> None:
    # An external-content index is told each row's old text before the row goes.
    conn.execute(
        f"INSERT INTO workflow_history_text (workflow_history_text, rowid, {_TEXT}) "
        f"SELECT 'delete', id, {_TEXT} FROM workflow_history WHERE {where}",
        params,
    )
    conn.execute(f"DELETE FROM workflow_history WHERE {where}", params)


# ── reading ─────────────────────────────────────────────────────────────────────────────


def match_expression(query: str) -> str | None:
    """The FTS5 query for plain words: each word (stop words dropped, unless that leaves
    none) quoted, joined by OR, so bm25 ranks the rows matching most of them first and no
    character of the asker's text is read as FTS5 syntax. None when it has no word."""
    words = [w.casefold() for w in _WORD.findall(query)]
    kept = [w for w in words if w not in STOP_WORDS] or words
    unique = list(dict.fromkeys(kept))[:MAX_TERMS]
    if not unique:
        return None
    return " OR ".join(f'"{w}"' for w in unique)


def search_text(
    conn: sqlite3.Connection, query: str, scope: Scope, limit: int
) -> list[tuple[Decision, float]]:
    """The decisions matching ``query``'s words, best first, with their bm25 score (lower
    is better, as SQLite gives it)."""
    expression = match_expression(query)
    if expression is None or scope.empty or limit <= 0:
        return []
    where, params = scope.where()
    rows = conn.execute(
        f"SELECT {DECISION_COLUMNS}, {_WEIGHTS} AS score FROM workflow_history_text "
        f"JOIN workflow_history h ON h.id = workflow_history_text.rowid "
        f"WHERE workflow_history_text MATCH ?{where} ORDER BY score LIMIT ?",
        [expression, *params, limit],
    ).fetchall()
    return [(Decision.from_row(r), float(r[-1])) for r in rows]


def decisions(conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, Decision]:
    """These decisions by id (those still kept)."""
    if not ids:
        return {}
    rows = conn.execute(
        f"SELECT {DECISION_COLUMNS} FROM workflow_history h "
        f"WHERE h.id IN ({','.join('?' * len(ids))})",
        list(ids),
    ).fetchall()
    return {int(r[0]): Decision.from_row(r) for r in rows}


def index_stats(conn: sqlite3.Connection) -> dict[str, int]:
    """How many decisions the index holds, and how many have an embedding."""
    row = conn.execute("SELECT count(*), count(embed_model) FROM workflow_history").fetchone()
    return {"decisions": int(row[0]), "embedded": int(row[1])}
