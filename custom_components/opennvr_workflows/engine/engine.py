"""The workflow engine: events in, durable runs out.

Lifecycle::

    engine = Engine(path, effects, ai, clock)
    engine.set_workflows({"night_yard": workflow, ...})   # before or after start
    await engine.start()        # opens the file, settles and resumes runs
    engine.submit(event)        # or: await engine.dispatch(event)
    await engine.answer_approval(approval_id, "Yes", "alice")
    await engine.stop()

Everything here runs on one asyncio loop; the database is written by the
store's own thread. :meth:`submit` is synchronous and cheap for an event that
starts nothing (one to four dictionary look-ups), so an event source can call
it for every event it sees.
"""

from __future__ import annotations

import asyncio
import heapq
import json
import logging
import sqlite3
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import Any, Final

from ..workflow import model
from .errors import UnknownApprovalError, UnknownRunError, UnknownWorkflowError
from .events import NvrEvent
from .index import TriggerIndex
from .limits import LimitSettings, WorkflowLimiter
from .ports import AiPort, AlertRequest, Clock, Effects, SystemClock
from .records import (
    ActiveRun,
    ApprovalRecord,
    EngineStats,
    EngineUpdate,
    StepRecord,
    WorkflowState,
    WorkflowStatus,
)
from .runner import ProviderLost, Runner, Waiting
from .schedule import next_fire
from .store import Store
from .trust import Accuracy
from .versions import VersionDecodeError, content_hash, dumps, loads

_LOGGER = logging.getLogger(__name__)

DEFAULT_RETENTION_DAYS: Final = 30
_NONE: Final[tuple[str, ...]] = ()
_RUNNABLE: Final = frozenset({"test", "on"})
_STATES: Final = frozenset({"off", "test", "on"})
_COUNTER_FLUSH_S: Final = 1.0


def workflow_of(correlation_id: str) -> str:
    """The workflow id a correlation id belongs to (``<workflow>/<run>``)."""
    return correlation_id.rpartition("/")[0]


@dataclass(slots=True)
class _Entry:
    """A workflow the engine holds."""

    workflow_id: str
    workflow: model.Workflow
    version: str
    state: WorkflowState
    reason: str | None = None


@dataclass(order=True, slots=True)
class _Due:
    due_at: float
    due_id: str = field(compare=False)
    kind: str = field(compare=False)
    workflow_id: str = field(compare=False)
    run_id: str | None = field(compare=False)
    payload: dict[str, Any] = field(compare=False)


@dataclass(slots=True)
class _Loaded:
    """What :meth:`Engine.start` reads from the file, in one transaction."""

    workflows: list[tuple[Any, ...]]
    runs: list[tuple[Any, ...]]
    steps: list[tuple[Any, ...]]
    approvals: list[tuple[Any, ...]]
    due: list[tuple[Any, ...]]
    marks: list[tuple[Any, ...]]
    versions: dict[tuple[str, str], str]
    starts: list[tuple[str, str, float]]
    ai_calls: list[tuple[str, float]]


class Engine:
    """Runs workflows durably. See the module docstring for the lifecycle."""

    def __init__(
        self,
        store_path: Path | str,
        effects: Effects,
        ai: AiPort,
        clock: Clock | None = None,
        *,
        tz: tzinfo | None = None,
        retention_days: float = DEFAULT_RETENTION_DAYS,
        retention_interval_s: float = 3600.0,
        max_chain_depth: int = 3,
        lock_timeout_s: float = 1.0,
    ) -> None:
        self.path = Path(store_path)
        self.effects = effects
        self.ai = ai
        self.clock: Clock = clock or SystemClock()
        self.tz: tzinfo = tz or UTC
        self.retention_days = retention_days
        self.retention_interval_s = retention_interval_s
        self.max_chain_depth = max_chain_depth
        self.lock_timeout_s = lock_timeout_s
        self.stats = EngineStats()
        self.approvals: dict[str, ApprovalRecord] = {}
        self._store: Store | None = None
        self._runner = Runner(self)
        self._index = TriggerIndex()
        self._entries: dict[str, _Entry] = {}
        self._stored: dict[str, tuple[str, WorkflowState, str | None]] = {}
        self._limiters: dict[str, WorkflowLimiter] = {}
        self._runs: dict[str, ActiveRun] = {}
        self._due: dict[str, _Due] = {}
        self._heap: list[_Due] = []
        self._offline: dict[str, set[str]] = {}
        self._marks: dict[str, tuple[bool, tuple[str, ...]]] = {}
        self._accuracy: dict[str, list[int]] = {}
        self._listeners: list[Callable[[EngineUpdate], None]] = []
        self._counters: dict[tuple[str, str, int], int] = {}
        self._seen_dirty: set[str] = set()
        self._flush_handle: asyncio.TimerHandle | None = None
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._started = False

    # ── lifecycle ──────────────────────────────────────────────────────

    @property
    def store(self) -> Store:
        if self._store is None:
            raise RuntimeError("the engine is not started")
        return self._store

    @property
    def started(self) -> bool:
        return self._started

    async def start(self) -> None:
        """Open the database, settle runs a crash interrupted, resume waiting
        runs and schedules. Raises a :class:`~.errors.StoreError` subclass that
        names the file when the database cannot be used."""
        if self._started:
            return
        self._store = await Store.open(self.path, lock_timeout_s=self.lock_timeout_s)
        now = self.now_ts()
        loaded: _Loaded = await self._store.submit(lambda c: _load(c, now))
        self._stored = {row[0]: (row[3], row[1], row[2]) for row in loaded.workflows}
        self._started = True
        for entry in list(self._entries.values()):
            self._apply(entry.workflow_id, entry.workflow)
        self._restore_limits(loaded)
        self._restore_marks(loaded)
        for row in loaded.due:
            due = _Due(float(row[4]), row[0], row[1], row[2], row[3], json.loads(row[5]))
            self._due[due.due_id] = due
            heapq.heappush(self._heap, due)
            if due.kind == "offline":
                self._offline.setdefault(str(due.payload.get("camera_id")), set()).add(due.due_id)
        for entry in self._entries.values():
            self._ensure_schedule(entry)
        self._restore_approvals(loaded)
        self._restore_runs(loaded)
        loop = asyncio.get_running_loop()
        self._tasks.append(loop.create_task(self._scheduler(), name="workflow-scheduler"))
        if self.retention_interval_s > 0:
            self._tasks.append(loop.create_task(self._retention(), name="workflow-retention"))
        for run in list(self._runs.values()):
            self._spawn(run)

    async def stop(self, grace_s: float = 5.0) -> None:
        """Stop: let runs reach a waiting point for up to ``grace_s``, then
        cancel what is left (a cancelled step is settled on the next start,
        exactly as after a crash), write the counters, close the file."""
        if not self._started:
            return
        for task in self._tasks:
            task.cancel()
        running = [r.task for r in self._runs.values() if r.task and not r.task.done()]
        if running:
            _, pending = await asyncio.wait(running, timeout=grace_s)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks.clear()
        self._flush_counters()
        self._started = False
        store, self._store = self._store, None
        if store is not None:
            await store.close()
        self._runs.clear()
        self.approvals.clear()
        self._due.clear()
        self._heap.clear()
        self._offline.clear()

    async def idle(self) -> None:
        """Wait until no run is executing and everything is written (tests,
        the benchmark, and a host that wants a quiet point)."""
        while True:
            for _ in range(3):
                await asyncio.sleep(0)
            busy = [r.task for r in self._runs.values() if r.task and not r.task.done()]
            if not busy:
                break
            await asyncio.gather(*busy, return_exceptions=True)
        self._flush_counters()
        if self._store is not None:
            await self._store.flush()

    # ── workflows ──────────────────────────────────────────────────────

    def set_workflows(self, workflows: Mapping[str, model.Workflow]) -> None:
        """Make these the engine's workflows: add new ones, re-version changed
        ones, remove the rest (their running runs finish on their version)."""
        for workflow_id in [w for w in self._entries if w not in workflows]:
            self.remove_workflow(workflow_id)
        for workflow_id, workflow in workflows.items():
            self.add_workflow(workflow_id, workflow)

    def add_workflow(self, workflow_id: str, workflow: model.Workflow) -> str:
        """Add or update one workflow; returns its version (content hash)."""
        if not workflow_id or "/" in workflow_id:
            raise ValueError(f"workflow id {workflow_id!r}: must be non-empty, without '/'")
        if not self._started:
            entry = _Entry(workflow_id, workflow, _version(workflow), workflow.state)
            self._entries[workflow_id] = entry
            return entry.version
        return self._apply(workflow_id, workflow).version

    def remove_workflow(self, workflow_id: str) -> None:
        """Stop starting runs of this workflow (its versions and runs stay)."""
        self._entries.pop(workflow_id, None)
        self._index.remove(workflow_id)
        if self._started:
            self.drop_due(f"schedule:{workflow_id}")

    def set_workflow_state(self, workflow_id: str, state: str) -> WorkflowStatus:
        """Off, test or on. Clears ``needs_attention`` (a person looked)."""
        if state not in _STATES:
            raise ValueError(f"state {state!r}: must be one of off, test, on")
        entry = self._entries.get(workflow_id)
        if entry is None:
            raise UnknownWorkflowError(f"no workflow {workflow_id!r}")
        self._set_state(entry, state, None)  # type: ignore[arg-type]
        return self.workflow_status(workflow_id)

    def workflow_status(self, workflow_id: str) -> WorkflowStatus:
        entry = self._entries.get(workflow_id)
        if entry is None:
            raise UnknownWorkflowError(f"no workflow {workflow_id!r}")
        return WorkflowStatus(
            workflow_id, entry.workflow.name, entry.state, entry.version, entry.reason
        )

    def workflows(self) -> list[WorkflowStatus]:
        return [self.workflow_status(w) for w in self._entries]

    def _apply(self, workflow_id: str, workflow: model.Workflow) -> _Entry:
        text = _source(workflow)
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
        entry = _Entry(workflow_id, workflow, version, state, reason)
        self._entries[workflow_id] = entry
        self._stored[workflow_id] = (version, state, reason)
        now = self.now_ts()
        self.store.execute_nowait(
            "INSERT OR IGNORE INTO workflow_versions (workflow_id, version, created_at, source) "
            "VALUES (?,?,?,?)",
            (workflow_id, version, now, text),
        )
        self.store.execute_nowait(
            _WORKFLOW_SQL, (workflow_id, workflow.name, state, reason, version, now)
        )
        limiter = self.limiter(workflow_id, workflow)
        limiter.reconfigure(self._settings(workflow))
        self._reindex(entry)
        self._ensure_schedule(entry)
        return entry

    def _reindex(self, entry: _Entry) -> None:
        if entry.state in _RUNNABLE:
            self._index.put(entry.workflow_id, entry.workflow.when)
        else:
            self._index.remove(entry.workflow_id)

    def _set_state(self, entry: _Entry, state: WorkflowState, reason: str | None) -> None:
        entry.state, entry.reason = state, reason
        self._stored[entry.workflow_id] = (entry.version, state, reason)
        self.store.execute_nowait(
            _WORKFLOW_SQL,
            (entry.workflow_id, entry.workflow.name, state, reason, entry.version, self.now_ts()),
        )
        self._reindex(entry)
        self._emit(
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
            max_depth=self.max_chain_depth,
        )

    def limiter(self, workflow_id: str, workflow: model.Workflow | None = None) -> WorkflowLimiter:
        limiter = self._limiters.get(workflow_id)
        if limiter is None:
            settings = self._settings(workflow) if workflow else LimitSettings()
            limiter = self._limiters[workflow_id] = WorkflowLimiter(settings)
        return limiter

    # ── events ─────────────────────────────────────────────────────────

    def submit(self, event: NvrEvent) -> tuple[str, ...]:
        """Offer an event. Returns the ids of the runs it started or joined.

        Synchronous and cheap when nothing matches; must be called on the
        engine's event loop."""
        self.stats.events += 1
        if event.kind == "camera_online" and self._offline:
            self._camera_back(event)
        found = self._index.match(event) if self._started else None
        if not found:
            return _NONE
        self.stats.matched += 1
        out: list[str] = []
        for candidate in found:
            run_id = self._consider(candidate.workflow_id, event)
            if run_id is not None:
                out.append(run_id)
        return tuple(out)

    async def dispatch(self, event: NvrEvent) -> tuple[str, ...]:
        """:meth:`submit` for callers that prefer to await."""
        return self.submit(event)

    def run_now(self, workflow_id: str, user: str | None = None) -> tuple[str, ...]:
        """A "Run now" button press for a button-triggered workflow."""
        event = NvrEvent(
            kind="button",
            source="button",
            time=self.clock.now(),
            type=workflow_id,
            payload={"user": user} if user else {},
        )
        return self.submit(event)

    def _consider(self, workflow_id: str, event: NvrEvent) -> str | None:
        entry = self._entries.get(workflow_id)
        if entry is None or entry.state not in _RUNNABLE:
            return None
        if event.chain and workflow_of(event.chain[-1]) == workflow_id:
            self._count(workflow_id, "dropped:own_event")
            return None
        trigger = entry.workflow.when
        if (
            isinstance(trigger, model.CameraOfflineTrigger)
            and trigger.for_s > 0
            and event.kind == "camera_offline"
        ):
            self._watch_offline(entry, trigger, event)
            return None
        return self._admit(entry, event)

    def _admit(self, entry: _Entry, event: NvrEvent) -> str | None:
        workflow = entry.workflow
        limiter = self.limiter(entry.workflow_id, workflow)
        key = _limit_key(workflow.limits.one_at_a_time, event)
        now = self.now_ts()
        verdict = limiter.check(key, len(event.chain) + 1, now)
        if verdict.action == "start":
            return self._start_run(entry, event, key, now).run_id
        if verdict.action == "join" and verdict.run_id is not None:
            run = self._runs.get(verdict.run_id)
            if run is not None:
                run.seen_again += 1
                self.stats.joined += 1
                self._seen_dirty.add(run.run_id)
                self._count(entry.workflow_id, "seen_again")
                self._emit(
                    EngineUpdate(
                        "seen_again", entry.workflow_id, run.run_id, {"seen_again": run.seen_again}
                    )
                )
                return run.run_id
            limiter.ended(key, verdict.run_id)
            return self._admit(entry, event)
        reason = verdict.reason or "limit"
        self.stats.dropped[reason] = self.stats.dropped.get(reason, 0) + 1
        self._count(entry.workflow_id, f"dropped:{reason}")
        return None

    def _start_run(self, entry: _Entry, event: NvrEvent, key: str, now: float) -> ActiveRun:
        run_id = uuid.uuid4().hex
        correlation_id = f"{entry.workflow_id}/{run_id}"
        run = ActiveRun(
            run_id=run_id,
            workflow_id=entry.workflow_id,
            version=entry.version,
            workflow=entry.workflow,
            correlation_id=correlation_id,
            chain=(*event.chain, correlation_id),
            event=event,
            limit_key=key,
            test=entry.state == "test",
            started_at=now,
        )
        self.limiter(entry.workflow_id).started(key, run_id, now)
        self._runs[run_id] = run
        self.store.execute_nowait(
            _RUN_SQL,
            (
                run_id,
                entry.workflow_id,
                entry.version,
                correlation_id,
                json.dumps(run.chain),
                len(run.chain),
                json.dumps(event.summary(), default=str),
                key,
                int(run.test),
                "running",
                now,
            ),
        )
        self.stats.started += 1
        self._count(entry.workflow_id, "started")
        self._emit(EngineUpdate("run_started", entry.workflow_id, run_id))
        self._spawn(run)
        return run

    # ── running ────────────────────────────────────────────────────────

    def _spawn(self, run: ActiveRun) -> None:
        if run.task is not None and not run.task.done():
            run.again = True
            return
        run.task = asyncio.get_running_loop().create_task(self._drive(run))

    async def _drive(self, run: ActiveRun) -> None:
        while True:
            run.again = False
            if run.status == "waiting":
                run.status = "running"
                self.store.execute_nowait(
                    "UPDATE workflow_runs SET status='running' WHERE id=?", (run.run_id,)
                )
            try:
                await self._runner.execute(run)
            except Waiting:
                if run.again:
                    continue
                run.status = "waiting"
                self.store.execute_nowait(
                    "UPDATE workflow_runs SET status='waiting' WHERE id=?", (run.run_id,)
                )
                self._emit(EngineUpdate("run_waiting", run.workflow_id, run.run_id))
                return
            except ProviderLost as err:
                self._provider_lost(run, err)
                return
            except asyncio.CancelledError:
                raise
            except Exception as err:
                _LOGGER.exception("workflow %s run %s failed", run.workflow_id, run.run_id)
                self._finish(run, "failed", error=f"{type(err).__name__}: {err}")
                return
            self._finish(run, "done")
            return

    def _finish(self, run: ActiveRun, status: str, error: str | None = None) -> None:
        now = self.now_ts()
        run.status = status  # type: ignore[assignment]
        outcome = _last_outcome(run.steps)
        self.store.execute_nowait(
            "UPDATE workflow_runs SET status=?, outcome=?, ended_at=?, error=?, seen_again=?, "
            "unknown_steps=? WHERE id=?",
            (status, outcome, now, error, run.seen_again, run.unknown_steps, run.run_id),
        )
        self._seen_dirty.discard(run.run_id)
        self.limiter(run.workflow_id).ended(run.limit_key, run.run_id)
        self._runs.pop(run.run_id, None)
        for approval in [a for a in self.approvals.values() if a.run_id == run.run_id]:
            del self.approvals[approval.approval_id]
            if approval.status == "pending":
                self._close_approval(approval, "cancelled", None, None)
        self.stats.ended += 1
        if status == "failed":
            self.stats.failed += 1
        self._emit(
            EngineUpdate(
                "run_ended",
                run.workflow_id,
                run.run_id,
                {"status": status, "outcome": outcome, "error": error},
            )
        )

    def _provider_lost(self, run: ActiveRun, err: ProviderLost) -> None:
        reason = f"step {err.path}: {err.reason}"
        _LOGGER.warning("workflow %s needs attention: %s", run.workflow_id, reason)
        self._finish(run, "failed", error=f"provider lost: {reason}")
        entry = self._entries.get(run.workflow_id)
        if entry is not None and entry.version == run.version:
            self._set_state(entry, "needs_attention", reason)

    async def alert_unknown(self, run: ActiveRun, path: str, kind: str) -> None:
        """Tell people an action may or may not have happened (never retried)."""
        request = AlertRequest(
            severity="high",
            requested="high",
            title=f"{run.workflow.name}: unknown result of {kind}",
            message=(
                f"The run was interrupted while step {path} ({kind}) was acting. It was not "
                "repeated; check whether it happened."
            ),
            camera_id=run.event.camera_id,
        )
        try:
            await self.effects.alert(self._runner.context(run, path), request)
        except Exception:
            _LOGGER.exception("could not raise the unknown-result alert for %s", run.run_id)

    # ── approvals ──────────────────────────────────────────────────────

    def open_approval(self, approval: ApprovalRecord) -> None:
        """Store a new approval (and its timeout, if it is pending)."""
        self.approvals[approval.approval_id] = approval
        self.store.execute_nowait(
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
            self.add_due(
                f"timeout:{approval.approval_id}",
                "approval_timeout",
                approval.workflow_id,
                approval.run_id,
                approval.expires_at,
                {"approval_id": approval.approval_id},
            )
            self._emit(
                EngineUpdate(
                    "approval_opened",
                    approval.workflow_id,
                    approval.run_id,
                    {"approval_id": approval.approval_id},
                )
            )

    async def answer_approval(self, approval_id: str, reply: str, user: str | None) -> None:
        """A person answered. Raises :class:`UnknownApprovalError` for an
        unknown or closed approval and ``ValueError`` for a reply that is not
        one of its buttons. The run resumes once the answer is stored."""
        approval = self.approvals.get(approval_id)
        if approval is None or approval.status != "pending":
            raise UnknownApprovalError(f"approval {approval_id!r} is not open")
        if reply not in approval.replies:
            raise ValueError(f"reply {reply!r}: must be one of {list(approval.replies)}")
        self._close_approval(approval, "answered", reply, user)
        await self.store.flush()
        run = self._runs.get(approval.run_id)
        if run is not None:
            self._spawn(run)

    def pending_approvals(self) -> list[tuple[ApprovalRecord, int]]:
        """Open approvals with their run's "seen again" count."""
        out = []
        for approval in self.approvals.values():
            if approval.status == "pending":
                run = self._runs.get(approval.run_id)
                out.append((approval, run.seen_again if run else 0))
        return out

    def _close_approval(
        self, approval: ApprovalRecord, status: str, reply: str | None, user: str | None
    ) -> None:
        approval.status = status
        approval.reply = reply
        approval.answered_by = user
        approval.answered_at = self.now_ts()
        self.store.execute_nowait(
            "UPDATE workflow_approvals SET status=?, reply=?, answered_by=?, answered_at=? "
            "WHERE id=?",
            (status, reply, user, approval.answered_at, approval.approval_id),
        )
        self.drop_due(f"timeout:{approval.approval_id}")
        self._emit(
            EngineUpdate(
                "approval_closed",
                approval.workflow_id,
                approval.run_id,
                {"approval_id": approval.approval_id, "status": status},
            )
        )
        asyncio.get_running_loop().create_task(self._tell_closed(approval))

    async def _tell_closed(self, approval: ApprovalRecord) -> None:
        try:
            await self.effects.approval_closed(
                approval.approval_id, approval.reply, approval.answered_by
            )
        except Exception:
            _LOGGER.exception("approval_closed failed for %s", approval.approval_id)

    # ── marks and trust ────────────────────────────────────────────────

    async def mark_run(self, run_id: str, right: bool, user: str | None) -> dict[str, Accuracy]:
        """Mark a run right or wrong; returns the accuracy of each AI step that
        decided in it. Marking again replaces the earlier mark."""

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

        workflow_id, results = await self.store.submit(read)
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
        await self.store.execute(
            "INSERT OR REPLACE INTO workflow_marks (run_id, workflow_id, right, user, at, "
            "ai_steps) VALUES (?,?,?,?,?,?)",
            (run_id, workflow_id, int(right), user, self.now_ts(), json.dumps(keys)),
        )
        return {key: self.accuracy_of(key) or Accuracy(0, 0) for key in keys}

    def accuracy_of(self, key: str | None) -> Accuracy | None:
        """The marked record of one AI step (by its key), if it has any."""
        if key is None:
            return None
        acc = self._accuracy.get(key)
        return Accuracy(acc[0], acc[1]) if acc else None

    def accuracy(self, workflow_id: str) -> dict[str, Accuracy]:
        """Every AI step key of a workflow (all versions) with its record."""
        prefix = f"{workflow_id}/"
        return {
            key: Accuracy(a[0], a[1]) for key, a in self._accuracy.items() if key.startswith(prefix)
        }

    # ── queries ────────────────────────────────────────────────────────

    def active_runs(self) -> list[ActiveRun]:
        return list(self._runs.values())

    async def run_detail(self, run_id: str) -> dict[str, Any]:
        """A run with its steps, tool calls and approvals, as stored."""

        def read(conn: sqlite3.Connection) -> dict[str, Any]:
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
            finally:
                conn.row_factory = None
            return {
                **dict(run),
                "steps": [dict(s) for s in steps],
                "tool_calls": [dict(c) for c in calls],
                "approvals": [dict(a) for a in approvals],
            }

        result: dict[str, Any] = await self.store.submit(read)
        return result

    async def runs(self, workflow_id: str, limit: int = 50) -> list[dict[str, Any]]:
        """The workflow's latest runs, newest first."""

        def read(conn: sqlite3.Connection) -> list[dict[str, Any]]:
            conn.row_factory = sqlite3.Row
            try:
                rows = conn.execute(
                    "SELECT * FROM workflow_runs WHERE workflow_id=? ORDER BY started_at DESC "
                    "LIMIT ?",
                    (workflow_id, limit),
                ).fetchall()
            finally:
                conn.row_factory = None
            return [dict(r) for r in rows]

        result: list[dict[str, Any]] = await self.store.submit(read)
        return result

    def subscribe(self, listener: Callable[[EngineUpdate], None]) -> Callable[[], None]:
        """Call ``listener`` on every :class:`EngineUpdate`; returns an unsubscribe."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def _emit(self, update: EngineUpdate) -> None:
        for listener in self._listeners:
            try:
                listener(update)
            except Exception:
                _LOGGER.exception("engine listener failed")

    # ── time and due rows ──────────────────────────────────────────────

    def now_ts(self) -> float:
        return self.clock.now().timestamp()

    def local_now(self) -> datetime:
        return self.clock.now().astimezone(self.tz)

    def add_due(
        self,
        due_id: str,
        kind: str,
        workflow_id: str,
        run_id: str | None,
        due_at: float,
        payload: dict[str, Any],
    ) -> None:
        due = _Due(due_at, due_id, kind, workflow_id, run_id, payload)
        self._due[due_id] = due
        heapq.heappush(self._heap, due)
        self.store.execute_nowait(
            "INSERT OR REPLACE INTO workflow_due (id, kind, workflow_id, run_id, due_at, payload) "
            "VALUES (?,?,?,?,?,?)",
            (due_id, kind, workflow_id, run_id, due_at, json.dumps(payload, default=str)),
        )
        if self._heap[0] is due:
            self._wake.set()

    def drop_due(self, due_id: str) -> None:
        due = self._due.pop(due_id, None)
        if due is not None:
            self.store.execute_nowait("DELETE FROM workflow_due WHERE id=?", (due_id,))
            if due.kind == "offline":
                ids = self._offline.get(str(due.payload.get("camera_id")))
                if ids is not None:
                    ids.discard(due_id)

    async def _scheduler(self) -> None:
        while True:
            self._wake.clear()
            now = self.now_ts()
            while self._heap and self._heap[0].due_at <= now:
                due = heapq.heappop(self._heap)
                if self._due.get(due.due_id) is due:
                    try:
                        self._fire(due)
                    except Exception:
                        _LOGGER.exception("due row %s failed", due.due_id)
            delay = self._heap[0].due_at - now if self._heap else None
            waiter = asyncio.ensure_future(self._wake.wait())
            waits: set[asyncio.Future[Any]] = {waiter}
            if delay is not None:
                waits.add(asyncio.ensure_future(self.clock.sleep(delay)))
            try:
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for w in waits:
                    w.cancel()

    def _fire(self, due: _Due) -> None:
        if due.kind == "approval_timeout":
            approval = self.approvals.get(str(due.payload.get("approval_id")))
            self.drop_due(due.due_id)
            if approval is not None and approval.status == "pending":
                self._close_approval(approval, "timed_out", approval.default, None)
                run = self._runs.get(approval.run_id)
                if run is not None:
                    self._spawn(run)
        elif due.kind == "wait":
            run = self._runs.get(due.run_id or "")
            if run is None:
                self.drop_due(due.due_id)
            else:
                self._spawn(run)
        elif due.kind == "schedule":
            self.drop_due(due.due_id)
            entry = self._entries.get(due.workflow_id)
            if entry is None:
                return
            if entry.state in _RUNNABLE and isinstance(entry.workflow.when, model.ScheduleTrigger):
                event = NvrEvent(
                    kind="schedule",
                    source="schedule",
                    time=self.clock.now(),
                    type=entry.workflow_id,
                    payload={"due_at": due.due_at},
                )
                self._admit(entry, event)
            self._ensure_schedule(entry)
        elif due.kind == "offline":
            self.drop_due(due.due_id)
            entry = self._entries.get(due.workflow_id)
            if entry is not None and entry.state in _RUNNABLE:
                self._admit(entry, NvrEvent.from_summary(due.payload["event"]))

    def _ensure_schedule(self, entry: _Entry) -> None:
        if not self._started:
            return
        due_id = f"schedule:{entry.workflow_id}"
        trigger = entry.workflow.when
        if not isinstance(trigger, model.ScheduleTrigger):
            self.drop_due(due_id)
            return
        current = self._due.get(due_id)
        if current is not None and current.payload.get("version") == entry.version:
            return
        at = next_fire(trigger, self.local_now())
        if at is None:
            self.drop_due(due_id)
            return
        self.add_due(
            due_id,
            "schedule",
            entry.workflow_id,
            None,
            at.timestamp(),
            {"version": entry.version, "at": at.isoformat()},
        )

    def _watch_offline(
        self, entry: _Entry, trigger: model.CameraOfflineTrigger, event: NvrEvent
    ) -> None:
        camera = event.camera_id or event.camera_role or ""
        due_id = f"offline:{entry.workflow_id}:{camera}"
        if due_id in self._due:
            return
        self.add_due(
            due_id,
            "offline",
            entry.workflow_id,
            None,
            self.now_ts() + trigger.for_s,
            {"camera_id": camera, "event": event.summary()},
        )
        self._offline.setdefault(camera, set()).add(due_id)

    def _camera_back(self, event: NvrEvent) -> None:
        camera = event.camera_id or event.camera_role or ""
        for due_id in list(self._offline.pop(camera, ())):
            self.drop_due(due_id)

    # ── retention ──────────────────────────────────────────────────────

    async def _retention(self) -> None:
        while True:
            await self.clock.sleep(self.retention_interval_s)
            try:
                await self.prune()
            except Exception:
                _LOGGER.exception("pruning old runs failed")

    async def prune(self, older_than_days: float | None = None) -> int:
        """Delete ended runs (and their steps, tool calls and approvals) that
        started more than ``older_than_days`` (default: the retention) ago.
        Marks are kept: they are the AI steps' accuracy record. Returns the
        number of runs removed."""
        days = self.retention_days if older_than_days is None else older_than_days
        cutoff = self.now_ts() - days * 86400.0
        removed = 0
        while True:
            count: int = await self.store.submit(lambda c: _prune_chunk(c, cutoff))
            removed += count
            if count < _PRUNE_CHUNK:
                return removed

    # ── counters ───────────────────────────────────────────────────────

    def _count(self, workflow_id: str, counter: str) -> None:
        key = (workflow_id, counter, int(self.now_ts() // 3600))
        self._counters[key] = self._counters.get(key, 0) + 1
        self._schedule_flush()

    def _schedule_flush(self) -> None:
        if self._flush_handle is None:
            loop = asyncio.get_running_loop()
            self._flush_handle = loop.call_later(_COUNTER_FLUSH_S, self._flush_counters)

    def _flush_counters(self) -> None:
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None
        if self._store is None:
            return
        counters, self._counters = self._counters, {}
        seen = [(self._runs[r].seen_again, r) for r in self._seen_dirty if r in self._runs]
        self._seen_dirty.clear()
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

        self._store.submit_nowait(write)

    def hourly_counters(self) -> dict[tuple[str, str], int]:
        """This hour's not-yet-written counter increments (for diagnostics)."""
        return {(w, c): n for (w, c, _), n in self._counters.items()}

    # ── restoring ──────────────────────────────────────────────────────

    def _restore_limits(self, loaded: _Loaded) -> None:
        starts: dict[str, list[tuple[str, float]]] = {}
        for workflow_id, key, at in loaded.starts:
            starts.setdefault(workflow_id, []).append((key, at))
        ai_calls: dict[str, list[float]] = {}
        for workflow_id, at in loaded.ai_calls:
            ai_calls.setdefault(workflow_id, []).append(at)
        for workflow_id in set(starts) | set(ai_calls):
            entry = self._entries.get(workflow_id)
            limiter = self.limiter(workflow_id, entry.workflow if entry else None)
            limiter.restore(starts.get(workflow_id, []), ai_calls.get(workflow_id, []))

    def _restore_marks(self, loaded: _Loaded) -> None:
        for run_id, right, keys_json in loaded.marks:
            keys = tuple(json.loads(keys_json))
            self._marks[run_id] = (bool(right), keys)
            for key in keys:
                acc = self._accuracy.setdefault(key, [0, 0])
                acc[0] += int(bool(right))
                acc[1] += 1

    def _restore_approvals(self, loaded: _Loaded) -> None:
        for row in loaded.approvals:
            approval = ApprovalRecord(
                approval_id=row[0],
                run_id=row[1],
                step_path=row[2],
                workflow_id=row[3],
                who=tuple(json.loads(row[4])),
                message=row[5],
                replies=tuple(json.loads(row[6])),
                default=row[7],
                camera_id=row[8],
                status=row[9],
                reply=row[10],
                answered_by=row[11],
                asked=bool(row[12]),
                created_at=row[13],
                expires_at=row[14],
                answered_at=row[15],
            )
            self.approvals[approval.approval_id] = approval

    def _restore_runs(self, loaded: _Loaded) -> None:
        steps: dict[str, dict[str, StepRecord]] = {}
        for row in loaded.steps:
            rec = StepRecord(
                path=row[1],
                seq=row[2],
                kind=row[3],
                status=row[4],
                inputs=_loads(row[5]),
                result=_loads(row[6]),
                outcome=row[7],
                started_at=row[8],
                ended_at=row[9],
                state=_loads(row[10]),
            )
            steps.setdefault(row[0], {})[rec.path] = rec
        workflows: dict[tuple[str, str], model.Workflow] = {}
        for row in loaded.runs:
            (
                run_id,
                workflow_id,
                version,
                correlation_id,
                chain,
                trigger,
                key,
                test,
                status,
                seen_again,
                unknown,
                started_at,
            ) = row
            workflow = workflows.get((workflow_id, version))
            if workflow is None:
                entry = self._entries.get(workflow_id)
                if entry is not None and entry.version == version:
                    workflow = entry.workflow
                else:
                    try:
                        workflow = loads(loaded.versions[(workflow_id, version)])
                    except (KeyError, VersionDecodeError, ValueError) as err:
                        _LOGGER.exception("run %s: its workflow version is unreadable", run_id)
                        self.store.execute_nowait(
                            "UPDATE workflow_runs SET status='failed', ended_at=?, error=? "
                            "WHERE id=?",
                            (self.now_ts(), f"workflow version unreadable: {err}", run_id),
                        )
                        continue
                workflows[(workflow_id, version)] = workflow
            run_steps = steps.get(run_id, {})
            run = ActiveRun(
                run_id=run_id,
                workflow_id=workflow_id,
                version=version,
                workflow=workflow,
                correlation_id=correlation_id,
                chain=tuple(json.loads(chain)),
                event=NvrEvent.from_summary(json.loads(trigger)),
                limit_key=key,
                test=bool(test),
                started_at=started_at,
                status=status,
                seen_again=seen_again,
                unknown_steps=unknown,
                steps=run_steps,
                seq=max((s.seq for s in run_steps.values()), default=0),
            )
            self._runs[run_id] = run
            limiter = self.limiter(workflow_id, workflow)
            limiter.active[key] = run_id


def _version(workflow: model.Workflow) -> str:
    return content_hash(_source(workflow))


def _source(workflow: model.Workflow) -> str:
    """The version text: the workflow without its state, since turning a
    workflow on or off is not a new version of it."""
    from dataclasses import replace

    return dumps(replace(workflow, state="test"))


def _limit_key(mode: str, event: NvrEvent) -> str:
    if mode == "track" and event.track_id is not None:
        return f"track:{event.camera_id or ''}:{event.track_id}"
    if mode == "plate" and event.plate is not None:
        return f"plate:{event.plate}"
    return f"camera:{event.camera_id or event.camera_role or ''}"


def _last_outcome(steps: Mapping[str, StepRecord]) -> str | None:
    if not steps:
        return None
    last = max(steps.values(), key=lambda s: s.seq)
    return last.outcome


def _loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)


_PRUNE_CHUNK: Final = 500

_WORKFLOW_SQL: Final = (
    "INSERT INTO workflows (id, name, state, reason, version, updated_at) VALUES (?,?,?,?,?,?) "
    "ON CONFLICT (id) DO UPDATE SET name=excluded.name, state=excluded.state, "
    "reason=excluded.reason, version=excluded.version, updated_at=excluded.updated_at"
)
_RUN_SQL: Final = (
    "INSERT INTO workflow_runs (id, workflow_id, version, correlation_id, chain, depth, trigger, "
    "limit_key, test, status, started_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)"
)


def _load(conn: sqlite3.Connection, now: float) -> _Loaded:
    runs = conn.execute(
        "SELECT id, workflow_id, version, correlation_id, chain, trigger, limit_key, test, "
        "status, seen_again, unknown_steps, started_at FROM workflow_runs "
        "WHERE status IN ('running', 'waiting')"
    ).fetchall()
    run_ids = [r[0] for r in runs]
    steps: list[tuple[Any, ...]] = []
    approvals: list[tuple[Any, ...]] = []
    versions: dict[tuple[str, str], str] = {}
    for chunk in _chunks(run_ids, 500):
        marks = ",".join("?" * len(chunk))
        steps += conn.execute(
            "SELECT run_id, path, seq, kind, status, inputs, result, outcome, started_at, "
            f"ended_at, state FROM workflow_run_steps WHERE run_id IN ({marks})",
            chunk,
        ).fetchall()
        approvals += conn.execute(
            "SELECT id, run_id, step_path, workflow_id, who, message, replies, default_reply, "
            "camera_id, status, reply, answered_by, asked, created_at, expires_at, answered_at "
            f"FROM workflow_approvals WHERE run_id IN ({marks})",
            chunk,
        ).fetchall()
    for workflow_id, version in {(r[1], r[2]) for r in runs}:
        row = conn.execute(
            "SELECT source FROM workflow_versions WHERE workflow_id=? AND version=?",
            (workflow_id, version),
        ).fetchone()
        if row is not None:
            versions[(workflow_id, version)] = row[0]
    hour_ago = now - 3600.0
    return _Loaded(
        workflows=conn.execute("SELECT id, state, reason, version FROM workflows").fetchall(),
        runs=runs,
        steps=steps,
        approvals=approvals,
        due=conn.execute(
            "SELECT id, kind, workflow_id, run_id, due_at, payload FROM workflow_due"
        ).fetchall(),
        marks=conn.execute("SELECT run_id, right, ai_steps FROM workflow_marks").fetchall(),
        versions=versions,
        starts=conn.execute(
            "SELECT workflow_id, limit_key, started_at FROM workflow_runs WHERE started_at > ? "
            "ORDER BY started_at",
            (hour_ago,),
        ).fetchall(),
        ai_calls=conn.execute(
            "SELECT workflow_id, started_at FROM workflow_tool_calls WHERE kind='llm' "
            "AND started_at > ?",
            (hour_ago,),
        ).fetchall(),
    )


def _prune_chunk(conn: sqlite3.Connection, cutoff: float) -> int:
    ids = [
        r[0]
        for r in conn.execute(
            "SELECT id FROM workflow_runs WHERE started_at < ? AND status NOT IN "
            "('running', 'waiting') LIMIT ?",
            (cutoff, _PRUNE_CHUNK),
        ).fetchall()
    ]
    for chunk in _chunks(ids, 500):
        marks = ",".join("?" * len(chunk))
        for table, column in (
            ("workflow_run_steps", "run_id"),
            ("workflow_tool_calls", "run_id"),
            ("workflow_approvals", "run_id"),
            ("workflow_runs", "id"),
        ):
            conn.execute(f"DELETE FROM {table} WHERE {column} IN ({marks})", chunk)
    conn.execute("DELETE FROM workflow_limit_counters WHERE hour < ?", (int(cutoff // 3600),))
    return len(ids)


def _chunks(items: list[str], size: int) -> Iterable[list[str]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]
