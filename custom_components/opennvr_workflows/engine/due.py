"""Due rows: everything the engine must do at a time rather than on an event.

Approval timeouts, ``wait`` steps, schedules and "camera offline for N
seconds" watches are rows of ``workflow_due`` as well as entries of an
in-memory heap, so a restart picks every one of them up again. One task
sleeps until the earliest row is due (or until an earlier one is added) and
hands each row that came due to the ``fire`` callback it was started with
(:meth:`.firing.DueFiring.fire`).
"""

from __future__ import annotations

import asyncio
import heapq
import json
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..workflow import model
from .events import NvrEvent
from .ports import SiteClock
from .records import Entry
from .schedule import next_fire
from .store import StoreSlot

_LOGGER = logging.getLogger(__name__)


@dataclass(order=True, slots=True)
class Due:
    """One row of ``workflow_due``; ordered by time for the heap."""

    due_at: float
    due_id: str = field(compare=False)
    kind: str = field(compare=False)
    workflow_id: str = field(compare=False)
    run_id: str | None = field(compare=False)
    payload: dict[str, Any] = field(compare=False)


class DueRows:
    """The due rows in memory, their writes, and the task that fires them."""

    def __init__(self, db: StoreSlot, clock: SiteClock) -> None:
        self._db = db
        self._clock = clock
        self.rows: dict[str, Due] = {}
        self._heap: list[Due] = []
        #: camera -> ids of the offline watches a ``camera_online`` cancels.
        self.offline: dict[str, set[str]] = {}
        self._wake = asyncio.Event()

    def restore(self, rows: Iterable[tuple[Any, ...]]) -> None:
        """Take the stored ``(id, kind, workflow_id, run_id, due_at, payload)`` rows."""
        for row in rows:
            due = Due(float(row[4]), row[0], row[1], row[2], row[3], json.loads(row[5]))
            self.rows[due.due_id] = due
            heapq.heappush(self._heap, due)
            if due.kind == "offline":
                self.offline.setdefault(str(due.payload.get("camera_id")), set()).add(due.due_id)

    def clear(self) -> None:
        self.rows.clear()
        self._heap.clear()
        self.offline.clear()

    def add(
        self,
        due_id: str,
        kind: str,
        workflow_id: str,
        run_id: str | None,
        due_at: float,
        payload: dict[str, Any],
    ) -> None:
        due = Due(due_at, due_id, kind, workflow_id, run_id, payload)
        self.rows[due_id] = due
        heapq.heappush(self._heap, due)
        self._db.store.execute_nowait(
            "INSERT OR REPLACE INTO workflow_due (id, kind, workflow_id, run_id, due_at, payload) "
            "VALUES (?,?,?,?,?,?)",
            (due_id, kind, workflow_id, run_id, due_at, json.dumps(payload, default=str)),
        )
        if self._heap[0] is due:
            self._wake.set()

    def drop(self, due_id: str) -> None:
        due = self.rows.pop(due_id, None)
        if due is not None:
            self._db.store.execute_nowait("DELETE FROM workflow_due WHERE id=?", (due_id,))
            if due.kind == "offline":
                ids = self.offline.get(str(due.payload.get("camera_id")))
                if ids is not None:
                    ids.discard(due_id)

    async def run(self, fire: Callable[[Due], None]) -> None:
        """The scheduler task: ``fire`` what is due, sleep until the next row."""
        while True:
            self._wake.clear()
            now = self._clock.now_ts()
            while self._heap and self._heap[0].due_at <= now:
                due = heapq.heappop(self._heap)
                if self.rows.get(due.due_id) is due:
                    try:
                        fire(due)
                    except Exception:
                        _LOGGER.exception("due row %s failed", due.due_id)
            delay = self._heap[0].due_at - now if self._heap else None
            waiter = asyncio.ensure_future(self._wake.wait())
            waits: set[asyncio.Future[Any]] = {waiter}
            if delay is not None:
                waits.add(asyncio.ensure_future(self._clock.sleep(delay)))
            try:
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for w in waits:
                    w.cancel()

    # ── schedules and offline watches ──────────────────────────────────

    def ensure_schedule(self, entry: Entry) -> None:
        """Keep exactly one schedule row per scheduled workflow, for its version."""
        if not self._db.started:
            return
        due_id = f"schedule:{entry.workflow_id}"
        trigger = entry.workflow.when
        if not isinstance(trigger, model.ScheduleTrigger):
            self.drop(due_id)
            return
        current = self.rows.get(due_id)
        if current is not None and current.payload.get("version") == entry.version:
            return
        at = next_fire(trigger, self._clock.local_now())
        if at is None:
            self.drop(due_id)
            return
        self.add(
            due_id,
            "schedule",
            entry.workflow_id,
            None,
            at.timestamp(),
            {"version": entry.version, "at": at.isoformat()},
        )

    def watch_offline(
        self, entry: Entry, trigger: model.CameraOfflineTrigger, event: NvrEvent
    ) -> None:
        """A camera went offline: start the workflow only if it stays so ``for_s``."""
        camera = event.camera_id or event.camera_role or ""
        due_id = f"offline:{entry.workflow_id}:{camera}"
        if due_id in self.rows:
            return
        self.add(
            due_id,
            "offline",
            entry.workflow_id,
            None,
            self._clock.now_ts() + trigger.for_s,
            {"camera_id": camera, "event": event.summary()},
        )
        self.offline.setdefault(camera, set()).add(due_id)

    def camera_back(self, event: NvrEvent) -> None:
        camera = event.camera_id or event.camera_role or ""
        for due_id in list(self.offline.pop(camera, ())):
            self.drop(due_id)
