"""Retention: ended runs older than the retention period are deleted, in chunks.

Chunks keep each transaction short, so pruning a large backlog never holds the
writer long enough to stall the runs being recorded. Marks outlive the runs (they
are the AI steps' accuracy record) but not forever: a host may give them their own,
longer period (:func:`prune_marks`). Workflow versions are kept while a workflow
runs them or a kept run used them; older ones go after their own period
(:func:`prune_versions`), so a rollback reaches back that far.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Awaitable, Callable
from typing import Final

from .history import forget_runs
from .ports import Clock
from .store import StoreSlot, chunks

_LOGGER = logging.getLogger(__name__)

PRUNE_CHUNK: Final = 500


async def prune_before(db: StoreSlot, cutoff: float) -> int:
    """Delete ended runs (with their steps, tool calls, approvals and history index rows) started
    before ``cutoff``, and counters older than it; returns the runs removed."""
    removed = 0
    while True:
        count: int = await db.store.submit(lambda c: _prune_chunk(c, cutoff))
        removed += count
        if count < PRUNE_CHUNK:
            return removed


async def prune_marks(db: StoreSlot, cutoff: float) -> list[str]:
    """Delete people's marks made before ``cutoff``; returns the runs whose mark went (the
    caller takes them out of the accuracy it keeps in memory)."""

    def prune(conn: sqlite3.Connection) -> list[str]:
        ids = [
            r[0]
            for r in conn.execute(
                "SELECT run_id FROM workflow_marks WHERE at < ?", (cutoff,)
            ).fetchall()
        ]
        conn.execute("DELETE FROM workflow_marks WHERE at < ?", (cutoff,))
        return ids

    removed: list[str] = await db.store.submit(prune)
    return removed


async def prune_versions(db: StoreSlot, cutoff: float) -> int:
    """Delete workflow versions recorded before ``cutoff`` that no workflow runs now and
    no kept run used; returns how many went."""

    def prune(conn: sqlite3.Connection) -> int:
        return conn.execute(
            "DELETE FROM workflow_versions WHERE created_at < ? "
            "AND (workflow_id, version) NOT IN (SELECT id, version FROM workflows) "
            "AND (workflow_id, version) NOT IN "
            "(SELECT DISTINCT workflow_id, version FROM workflow_runs)",
            (cutoff,),
        ).rowcount

    removed: int = await db.store.submit(prune)
    return removed


async def prune_every(
    clock: Clock, interval_s: Callable[[], float], prune: Callable[[], Awaitable[int]]
) -> None:
    """The retention task: ``prune`` every ``interval_s()`` seconds (read each time,
    so a host may change it); a failure is logged, not fatal."""
    while True:
        await clock.sleep(interval_s())
        try:
            await prune()
        except Exception:
            _LOGGER.exception("pruning old runs failed")


def _prune_chunk(conn: sqlite3.Connection, cutoff: float) -> int:
    ids = [
        r[0]
        for r in conn.execute(
            "SELECT id FROM workflow_runs WHERE started_at < ? AND status NOT IN "
            "('running', 'waiting') LIMIT ?",
            (cutoff, PRUNE_CHUNK),
        ).fetchall()
    ]
    for chunk in chunks(ids, 500):
        marks = ",".join("?" * len(chunk))
        forget_runs(conn, chunk)  # the history index's rows, before the steps they read
        for table, column in (
            ("workflow_run_steps", "run_id"),
            ("workflow_tool_calls", "run_id"),
            ("workflow_approvals", "run_id"),
            ("workflow_approval_log", "run_id"),
            ("workflow_runs", "id"),
        ):
            conn.execute(f"DELETE FROM {table} WHERE {column} IN ({marks})", chunk)
    conn.execute("DELETE FROM workflow_limit_counters WHERE hour < ?", (int(cutoff // 3600),))
    return len(ids)
