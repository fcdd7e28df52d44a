"""Questions to people: open approvals, their answers, timeouts and cancellations.

An approval is stored (with its timeout as a due row) before the question is
delivered, so an answer that arrives after a restart still finds it. Closing
one, for whatever reason, tells the host so it can withdraw the question from
wherever it showed it. An answer or a timeout hands back the run it resumes,
and the caller starts it: the :class:`~.driver.RunDriver` uses these approvals
(a run that ends cancels its own), so they do not use it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping

from .due import DueRows
from .errors import UnknownApprovalError
from .ports import Effects, SiteClock, TaskSpawner
from .records import ActiveRun, ApprovalRecord, EngineUpdate, Updates
from .store import StoreSlot

_LOGGER = logging.getLogger(__name__)


class Approvals:
    """The approvals of active runs, by id (:attr:`records`)."""

    def __init__(
        self,
        db: StoreSlot,
        clock: SiteClock,
        effects: Effects,
        spawn: TaskSpawner,
        updates: Updates,
        due: DueRows,
        runs: Mapping[str, ActiveRun],
    ) -> None:
        self._db = db
        self._clock = clock
        self._effects = effects
        self._spawn = spawn
        self._updates = updates
        self._due = due
        self._runs = runs
        self.records: dict[str, ApprovalRecord] = {}

    def open(self, approval: ApprovalRecord) -> None:
        """Store a new approval (and its timeout, if it is pending)."""
        self.records[approval.approval_id] = approval
        self._db.store.execute_nowait(
            "INSERT OR REPLACE INTO workflow_approvals (id, run_id, step_path, workflow_id, who, "
            "message, replies, default_reply, camera_id, status, created_at, expires_at) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                approval.approval_id,
                approval.run_id,
                approval.step_path,
                approval.workflow_id,
                json.dumps(approval.who),
                approval.message,
                json.dumps(approval.replies),
                approval.default,
                approval.camera_id,
                approval.status,
                approval.created_at,
                approval.expires_at,
            ),
        )
        if approval.status == "pending":
            self._due.add(
                f"timeout:{approval.approval_id}",
                "approval_timeout",
                approval.workflow_id,
                approval.run_id,
                approval.expires_at,
                {"approval_id": approval.approval_id},
            )
            self._updates.emit(
                EngineUpdate(
                    "approval_opened",
                    approval.workflow_id,
                    approval.run_id,
                    {"approval_id": approval.approval_id},
                )
            )

    async def answer(self, approval_id: str, reply: str, user: str | None) -> ActiveRun | None:
        """Close the approval with the reply once it is stored; returns its run to resume
        (None when the run has ended)."""
        approval = self.records.get(approval_id)
        if approval is None or approval.status != "pending":
            raise UnknownApprovalError(f"approval {approval_id!r} is not open")
        if reply not in approval.replies:
            raise ValueError(f"reply {reply!r}: must be one of {list(approval.replies)}")
        self.close(approval, "answered", reply, user)
        await self._db.store.flush()
        return self._runs.get(approval.run_id)

    def time_out(self, approval_id: str) -> ActiveRun | None:
        """The approval's timeout came due: take its default; returns its run to resume
        (None when it was no longer pending or the run has ended)."""
        approval = self.records.get(approval_id)
        if approval is None or approval.status != "pending":
            return None
        self.close(approval, "timed_out", approval.default, None)
        return self._runs.get(approval.run_id)

    def note(self, approval_id: str, event: str, user: str | None, detail: str = "") -> None:
        """Add a line to the approval's log (the run's trace shows it): a delivery, an
        answer, a refused tap and why. Notes on an approval no longer in memory (a run
        that ended) are kept too, under the run the id names."""
        approval = self.records.get(approval_id)
        run_id = approval.run_id if approval is not None else approval_id.partition(":")[0]
        self._db.store.execute_nowait(
            "INSERT INTO workflow_approval_log (approval_id, run_id, at, event, user, detail) "
            "VALUES (?,?,?,?,?,?)",
            (approval_id, run_id, self._clock.now_ts(), event, user, detail),
        )

    def pending(self) -> list[tuple[ApprovalRecord, int]]:
        out = []
        for approval in self.records.values():
            if approval.status == "pending":
                run = self._runs.get(approval.run_id)
                out.append((approval, run.seen_again if run else 0))
        return out

    def end_run(self, run_id: str) -> None:
        """Forget a finished run's approvals; cancel those still pending."""
        for approval in [a for a in self.records.values() if a.run_id == run_id]:
            del self.records[approval.approval_id]
            if approval.status == "pending":
                self.close(approval, "cancelled", None, None)

    def close(
        self, approval: ApprovalRecord, status: str, reply: str | None, user: str | None
    ) -> None:
        approval.status = status
        approval.reply = reply
        approval.answered_by = user
        approval.answered_at = self._clock.now_ts()
        self._db.store.execute_nowait(
            "UPDATE workflow_approvals SET status=?, reply=?, answered_by=?, answered_at=? "
            "WHERE id=?",
            (status, reply, user, approval.answered_at, approval.approval_id),
        )
        self._due.drop(f"timeout:{approval.approval_id}")
        self._updates.emit(
            EngineUpdate(
                "approval_closed",
                approval.workflow_id,
                approval.run_id,
                {"approval_id": approval.approval_id, "status": status},
            )
        )
        self._spawn(self._tell_closed(approval), "workflow approval closed")

    async def _tell_closed(self, approval: ApprovalRecord) -> None:
        try:
            await self._effects.approval_closed(
                approval.approval_id, approval.status, approval.reply, approval.answered_by
            )
        except Exception:
            _LOGGER.exception("approval_closed failed for %s", approval.approval_id)
