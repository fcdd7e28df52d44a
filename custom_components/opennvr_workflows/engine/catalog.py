"""The workflows the engine holds: their versions, states, limiters and trigger index.

A workflow's version is the hash of its text without its state, because turning
a workflow on or off is not a new version of it. Every version is kept in the
database, so a run always finishes on the version it started with, together with
the file text it was last saved as (when the host gave one), so a rollback writes
back what the author wrote, comments included. A workflow
parked in ``needs_attention`` stays there across restarts until a person sets
its state or a changed version replaces the one that failed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any, Final

from ..workflow import model
from .due import DueRows
from .errors import UnknownWorkflowError
from .index import TriggerIndex
from .limits import LimitSettings, WorkflowLimiter
from .ports import SiteClock
from .records import EngineUpdate, Entry, Updates, WorkflowState, WorkflowStatus
from .store import StoreSlot
from .versions import content_hash, dumps

#: States in which a workflow's trigger is indexed (Test runs but acts on nothing).
RUNNABLE: Final = frozenset({"test", "on"})
STATES: Final = frozenset({"off", "test", "on"})

WORKFLOW_SQL: Final = (
    "INSERT INTO workflows (id, name, state, reason, version, updated_at) VALUES (?,?,?,?,?,?) "
    "ON CONFLICT (id) DO UPDATE SET name=excluded.name, state=excluded.state, "
    "reason=excluded.reason, version=excluded.version, updated_at=excluded.updated_at"
)


def workflow_source(workflow: model.Workflow) -> str:
    """The version text: the workflow without its state, since turning a
    workflow on or off is not a new version of it."""
    return dumps(replace(workflow, state="test"))


def workflow_version(workflow: model.Workflow) -> str:
    return content_hash(workflow_source(workflow))


class Catalog:
    """Adds, re-versions and removes workflows; keeps index and limiters in step."""

    def __init__(
        self,
        db: StoreSlot,
        clock: SiteClock,
        updates: Updates,
        due: DueRows,
        *,
        max_chain_depth: int,
    ) -> None:
        self._db = db
        self._clock = clock
        self._max_chain_depth = max_chain_depth
        self._updates = updates
        self._due = due
        self.index = TriggerIndex()
        self.entries: dict[str, Entry] = {}
        self._stored: dict[str, tuple[str, WorkflowState, str | None]] = {}
        self._limiters: dict[str, WorkflowLimiter] = {}
        #: The file text each workflow was read from (absent: built without a file).
        self._texts: dict[str, str] = {}

    def restore(self, rows: Iterable[tuple[Any, ...]]) -> None:
        """Take the stored ``(id, state, reason, version)`` rows: a workflow's
        state survives a restart unless its version changed."""
        self._stored = {row[0]: (row[3], row[1], row[2]) for row in rows}

    def apply_all(self) -> None:
        for entry in list(self.entries.values()):
            self.apply(entry.workflow_id, entry.workflow)

    def ensure_schedules(self) -> None:
        for entry in self.entries.values():
            self._due.ensure_schedule(entry)

    def set_all(
        self, workflows: Mapping[str, model.Workflow], texts: Mapping[str, str] | None = None
    ) -> None:
        for workflow_id in [w for w in self.entries if w not in workflows]:
            self.remove(workflow_id)
        for workflow_id, workflow in workflows.items():
            self.add(workflow_id, workflow, (texts or {}).get(workflow_id))

    def add(self, workflow_id: str, workflow: model.Workflow, text: str | None = None) -> str:
        if not workflow_id or "/" in workflow_id:
            raise ValueError(f"workflow id {workflow_id!r}: must be non-empty, without '/'")
        if text is None:
            self._texts.pop(workflow_id, None)
        else:
            self._texts[workflow_id] = text
        if not self._db.started:
            entry = Entry(workflow_id, workflow, workflow_version(workflow), workflow.state)
            self.entries[workflow_id] = entry
            return entry.version
        return self.apply(workflow_id, workflow).version

    def remove(self, workflow_id: str) -> None:
        self.entries.pop(workflow_id, None)
        self._texts.pop(workflow_id, None)
        self.index.remove(workflow_id)
        if self._db.started:
            self._due.drop(f"schedule:{workflow_id}")

    def set_state(self, workflow_id: str, state: str) -> WorkflowStatus:
        if state not in STATES:
            raise ValueError(f"state {state!r}: must be one of off, test, on")
        entry = self.entries.get(workflow_id)
        if entry is None:
            raise UnknownWorkflowError(f"no workflow {workflow_id!r}")
        self.change_state(entry, state, None)  # type: ignore[arg-type]
        return self.status(workflow_id)

    def status(self, workflow_id: str) -> WorkflowStatus:
        entry = self.entries.get(workflow_id)
        if entry is None:
            raise UnknownWorkflowError(f"no workflow {workflow_id!r}")
        return WorkflowStatus(
            workflow_id, entry.workflow.name, entry.state, entry.version, entry.reason
        )

    def statuses(self) -> list[WorkflowStatus]:
        return [self.status(w) for w in self.entries]

    def apply(self, workflow_id: str, workflow: model.Workflow) -> Entry:
        """Store the workflow's version and state, then index and schedule it."""
        text = workflow_source(workflow)
        version = content_hash(text)
        stored = self._stored.get(workflow_id)
        state: WorkflowState
        reason: str | None = None
        if stored is None:
            state = workflow.state
        else:
            old_version, old_state, old_reason = stored
            state, reason = old_state, old_reason
            if old_state == "needs_attention" and old_version != version:
                state, reason = workflow.state, None
        entry = Entry(workflow_id, workflow, version, state, reason)
        self.entries[workflow_id] = entry
        self._stored[workflow_id] = (version, state, reason)
        now = self._clock.now_ts()
        store = self._db.store
        # A version saved again (its comments edited, or only its state) keeps its first
        # time and model, and the latest text it was saved as.
        store.execute_nowait(
            "INSERT INTO workflow_versions (workflow_id, version, created_at, source, saved_text) "
            "VALUES (?,?,?,?,?) ON CONFLICT (workflow_id, version) DO UPDATE SET "
            "saved_text = coalesce(excluded.saved_text, saved_text)",
            (workflow_id, version, now, text, self._texts.get(workflow_id)),
        )
        store.execute_nowait(
            WORKFLOW_SQL, (workflow_id, workflow.name, state, reason, version, now)
        )
        limiter = self.limiter(workflow_id, workflow)
        limiter.reconfigure(self._settings(workflow))
        self._reindex(entry)
        self._due.ensure_schedule(entry)
        return entry

    def _reindex(self, entry: Entry) -> None:
        if entry.state in RUNNABLE:
            self.index.put(entry.workflow_id, entry.workflow.when)
        else:
            self.index.remove(entry.workflow_id)

    def change_state(self, entry: Entry, state: WorkflowState, reason: str | None) -> None:
        entry.state, entry.reason = state, reason
        self._stored[entry.workflow_id] = (entry.version, state, reason)
        now = self._clock.now_ts()
        self._db.store.execute_nowait(
            WORKFLOW_SQL,
            (entry.workflow_id, entry.workflow.name, state, reason, entry.version, now),
        )
        self._reindex(entry)
        self._updates.emit(
            EngineUpdate(
                "workflow_state", entry.workflow_id, detail={"state": state, "reason": reason}
            )
        )

    def _settings(self, workflow: model.Workflow) -> LimitSettings:
        lim = workflow.limits
        return LimitSettings(
            cooldown_s=lim.cooldown_s,
            one_at_a_time=lim.one_at_a_time,
            per_hour=lim.per_hour,
            ai_per_hour=lim.ai_per_hour,
            max_depth=self._max_chain_depth,
        )

    def limiter(self, workflow_id: str, workflow: model.Workflow | None = None) -> WorkflowLimiter:
        limiter = self._limiters.get(workflow_id)
        if limiter is None:
            settings = self._settings(workflow) if workflow else LimitSettings()
            limiter = self._limiters[workflow_id] = WorkflowLimiter(settings)
        return limiter
