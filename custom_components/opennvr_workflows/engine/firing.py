"""What a due row does when its time comes.

* ``approval_timeout``: the person did not answer; the approval takes its
  default and the run resumes;
* ``wait``: a ``wait`` step is over; the run resumes;
* ``schedule``: a scheduled workflow starts a run (through the limits, like
  any event) and its next time is scheduled;
* ``offline``: a camera stayed offline long enough; the workflow starts.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..workflow import model
from .admission import Admission
from .approvals import Approvals
from .catalog import RUNNABLE, Catalog
from .driver import RunDriver
from .due import Due, DueRows
from .events import NvrEvent
from .ports import Clock
from .records import ActiveRun


class DueFiring:
    """The ``fire`` callback of the :class:`~.due.DueRows` scheduler task."""

    def __init__(
        self,
        clock: Clock,
        due: DueRows,
        catalog: Catalog,
        approvals: Approvals,
        driver: RunDriver,
        admission: Admission,
    ) -> None:
        self._clock = clock
        self._due = due
        self._catalog = catalog
        self._approvals = approvals
        self._driver = driver
        self._runs: Mapping[str, ActiveRun] = driver.runs
        self._admission = admission

    def fire(self, due: Due) -> None:
        if due.kind == "approval_timeout":
            self._due.drop(due.due_id)
            run = self._approvals.time_out(str(due.payload.get("approval_id")))
            if run is not None:
                self._driver.spawn(run)
        elif due.kind == "wait":
            run = self._runs.get(due.run_id or "")
            if run is None:
                self._due.drop(due.due_id)
            else:
                self._driver.spawn(run)
        elif due.kind == "schedule":
            self._due.drop(due.due_id)
            entry = self._catalog.entries.get(due.workflow_id)
            if entry is None:
                return
            if entry.state in RUNNABLE and isinstance(entry.workflow.when, model.ScheduleTrigger):
                event = NvrEvent(
                    kind="schedule",
                    source="schedule",
                    time=self._clock.now(),
                    type=entry.workflow_id,
                    payload={"due_at": due.due_at},
                )
                self._admission.admit(entry, event)
            self._due.ensure_schedule(entry)
        elif due.kind == "offline":
            self._due.drop(due.due_id)
            entry = self._catalog.entries.get(due.workflow_id)
            if entry is not None and entry.state in RUNNABLE:
                self._admission.admit(entry, NvrEvent.from_summary(due.payload["event"]))
