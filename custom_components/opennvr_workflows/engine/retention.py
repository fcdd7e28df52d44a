"""Retention: ended runs older than the retention period are deleted, in chunks.

Chunks keep each transaction short, so pruning a large backlog never holds the
writer long enough to stall the runs being recorded. Marks are not pruned:
they are the AI steps' accuracy record, which must outlive the runs.
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
