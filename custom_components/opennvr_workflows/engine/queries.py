"""Read-only queries for a host's views: a run in full (with the mark a person gave it),
a workflow's latest runs, how many runs a workflow started since a time, the versions
recorded of a workflow.

They run on the store's thread like every other statement, so they see exactly
what has been committed and never race the writer.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from .errors import UnknownRunError, UnknownVersionError


def run_detail(conn: sqlite3.Connection, run_id: str) -> dict[str, Any]:
    """A run with its steps, tool calls and approvals, as stored, and its ``mark`` (the
    ``workflow_marks`` row: right, user, at, ai_steps), None until someone marks it; the
    mark is read here so a view reopened later shows it, not only the one that set it."""
    conn.row_factory = sqlite3.Row
    try:
        run = conn.execute("SELECT * FROM workflow_runs WHERE id=?", (run_id,)).fetchone()
        if run is None:
            raise UnknownRunError(f"no run {run_id!r}")
        steps = conn.execute(
            "SELECT * FROM workflow_run_steps WHERE run_id=? ORDER BY seq", (run_id,)
        ).fetchall()
        calls = conn.execute(
            "SELECT * FROM workflow_tool_calls WHERE run_id=? ORDER BY started_at",
            (run_id,),
        ).fetchall()
        approvals = conn.execute(
            "SELECT * FROM workflow_approvals WHERE run_id=?", (run_id,)
        ).fetchall()
        approval_log = conn.execute(
            "SELECT * FROM workflow_approval_log WHERE run_id=? ORDER BY at, rowid", (run_id,)
        ).fetchall()
        mark = conn.execute(
            "SELECT right, user, at, ai_steps FROM workflow_marks WHERE run_id=?", (run_id,)
        ).fetchone()
    finally:
        conn.row_factory = None
    return {
        **dict(run),
        "steps": [dict(s) for s in steps],
        "tool_calls": [dict(c) for c in calls],
        "approvals": [dict(a) for a in approvals],
        "approval_log": [dict(a) for a in approval_log],
        "mark": dict(mark) if mark is not None else None,
    }


def latest_runs(conn: sqlite3.Connection, workflow_id: str, limit: int) -> list[dict[str, Any]]:
    """The workflow's latest runs, newest first."""
    conn.row_factory = sqlite3.Row
    try:
        rows = conn.execute(
            "SELECT * FROM workflow_runs WHERE workflow_id=? ORDER BY started_at DESC LIMIT ?",
            (workflow_id, limit),
        ).fetchall()
    finally:
        conn.row_factory = None
    return [dict(r) for r in rows]


def count_runs_since(conn: sqlite3.Connection, workflow_id: str, since: float) -> int:
    """How many runs of the workflow started at or after ``since`` (a timestamp); trials
    (the try_workflow action's replays) are not runs of the workflow."""
    row = conn.execute(
        "SELECT COUNT(*) FROM workflow_runs WHERE workflow_id=? AND started_at>=? "
        "AND limit_key NOT LIKE 'trial:%'",
        (workflow_id, since),
    ).fetchone()
    return int(row[0])


def workflow_versions(conn: sqlite3.Connection, workflow_id: str) -> list[dict[str, Any]]:
    """Every version the engine recorded of a workflow, newest first, with how many runs
    each had (what a rollback chooses from)."""
    rows = conn.execute(
        "SELECT v.version, v.created_at, (SELECT COUNT(*) FROM workflow_runs r "
        "WHERE r.workflow_id=v.workflow_id AND r.version=v.version) "
        "FROM workflow_versions v WHERE v.workflow_id=? ORDER BY v.created_at DESC, v.version",
        (workflow_id,),
    ).fetchall()
    return [{"version": r[0], "created_at": r[1], "runs": r[2]} for r in rows]


def version_text(conn: sqlite3.Connection, workflow_id: str, version: str) -> str | None:
    """The file text one version was last saved as (None: not kept, see ``saved_text``)."""
    row = conn.execute(
        "SELECT saved_text FROM workflow_versions WHERE workflow_id=? AND version=?",
        (workflow_id, version),
    ).fetchone()
    if row is None:
        raise UnknownVersionError(f"no version {version!r} of workflow {workflow_id!r}")
    return None if row[0] is None else str(row[0])


def version_source(conn: sqlite3.Connection, workflow_id: str, version: str) -> str:
    """The stored JSON form of one version (see :mod:`.versions`)."""
    row = conn.execute(
        "SELECT source FROM workflow_versions WHERE workflow_id=? AND version=?",
        (workflow_id, version),
    ).fetchone()
    if row is None:
        raise UnknownVersionError(f"no version {version!r} of workflow {workflow_id!r}")
    return str(row[0])
