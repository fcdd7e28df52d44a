"""Hourly limit counters and "seen again" counts, batched into one write a second.

Every event a workflow drops or joins bumps a counter; writing each bump on its
own would put a database statement on the event path. They are summed in memory
and written together (at most a second later, and on idle and stop).
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Mapping
from typing import Final

from .ports import SiteClock
from .records import ActiveRun
from .store import StoreSlot

FLUSH_DELAY_S: Final = 1.0


class Counters:
    """Counter increments and dirty "seen again" counts not yet written."""

    def __init__(self, db: StoreSlot, clock: SiteClock, runs: Mapping[str, ActiveRun]) -> None:
        self._db = db
        self._clock = clock
        self._runs = runs
        self._counts: dict[tuple[str, str, int], int] = {}
        self.seen_dirty: set[str] = set()
        self._flush_handle: asyncio.TimerHandle | None = None

    def count(self, workflow_id: str, counter: str) -> None:
        key = (workflow_id, counter, int(self._clock.now_ts() // 3600))
        self._counts[key] = self._counts.get(key, 0) + 1
        self._schedule_flush()

    def _schedule_flush(self) -> None:
        if self._flush_handle is None:
            loop = asyncio.get_running_loop()
            self._flush_handle = loop.call_later(FLUSH_DELAY_S, self.flush)

    def flush(self) -> None:
        """Queue what has accumulated (nothing when the store is closed)."""
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None
        store = self._db.current
        if store is None:
            return
        counters, self._counts = self._counts, {}
        seen = [(self._runs[r].seen_again, r) for r in self.seen_dirty if r in self._runs]
        self.seen_dirty.clear()
        if not counters and not seen:
            return

        def write(conn: sqlite3.Connection) -> None:
            conn.executemany(
                "INSERT INTO workflow_limit_counters (workflow_id, counter, hour, count) "
                "VALUES (?,?,?,?) ON CONFLICT (workflow_id, counter, hour) "
                "DO UPDATE SET count = count + excluded.count",
                [(w, c, h, n) for (w, c, h), n in counters.items()],
            )
            conn.executemany("UPDATE workflow_runs SET seen_again=? WHERE id=?", seen)

        store.submit_nowait(write)

    def pending(self) -> dict[tuple[str, str], int]:
        """This hour's not-yet-written counter increments (for diagnostics)."""
        return {(w, c): n for (w, c, _), n in self._counts.items()}
