"""The workflow engine: events in, durable runs out.

Lifecycle::

    engine = Engine(path, effects, ai, clock)
    engine.set_workflows({"night_yard": workflow, ...})   # before or after start
    await engine.start()        # opens the file, settles and resumes runs
    await engine.dispatch(event)  # returns once durable (engine.submit: accepted only)
    await engine.answer_approval(approval_id, "Yes", "alice")
    await engine.stop()

Everything here runs on one asyncio loop; the database is written by the
store's own thread. :meth:`submit` is synchronous and cheap for an event that
starts nothing (one to four dictionary look-ups), so an event source can call
it for every event it sees; its return means "accepted, not yet durable".
A source that acknowledges events to a broker or a replaying server awaits
:meth:`dispatch` instead, which returns once what the event started is
committed: events dispatched together share one commit.

:class:`Engine` is the one public object; the work is done by its parts, one
module each: :mod:`.catalog` (workflows, versions, states), :mod:`.admission`
(matched events to runs, and runs started by name: :mod:`.starting`),
:mod:`.driver` (run tasks), :mod:`.runner` (a run's steps, one executor module
per kind of step), :mod:`.approvals`, :mod:`.trust` (people's marks),
:mod:`.due` and :mod:`.firing` (timed work), :mod:`.counters`,
:mod:`.retention`, :mod:`.queries` and :mod:`.restore` (what a start reads back).

Each part is handed only what it uses: the :class:`~.store.StoreSlot` (the store
while the engine is started), the :class:`~.ports.SiteClock`, a port, and the
other parts it calls. None of them holds the engine, and none imports this
module: the parts form a graph without cycles, wired once in :meth:`Engine.__init__`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Mapping
from datetime import UTC, datetime, tzinfo
from functools import partial
from pathlib import Path
from typing import Any, Final

from ..workflow import model
from .actions import ActionSteps, alert_unknown
from .admission import Admission, Decided, workflow_of
from .ai_step import AiSteps
from .approvals import Approvals
from .asking import Asking
from .catalog import Catalog
from .conditions import Conditions
from .counters import Counters
from .driver import MAX_DRIVING, RunDriver
from .due import DueRows
from .errors import UnknownWorkflowError
from .events import NvrEvent
from .firing import DueFiring
from .for_each import ForEachSteps
from .freshness import Freshness
from .limits import Allowance, WorkflowLimiter
from .monitor import Monitor
from .policy import SafetyPolicy
from .ports import (
    AiBudget,
    AiPort,
    Clock,
    Effects,
    SiteClock,
    SystemClock,
    TaskSpawner,
    loop_task,
)
from .queries import (
    count_runs_since,
    latest_runs,
    run_detail,
    version_source,
    version_text,
    workflow_versions,
)
from .recorder import StepRecorder
from .records import (
    ActiveRun,
    ApprovalRecord,
    EngineStats,
    EngineUpdate,
    HeldBack,
    Updates,
    WorkflowStatus,
)
from .restore import (
    Loaded,
    load,
    restore_approvals,
    restore_limits,
    restore_marks,
    restore_runs,
)
from .retention import prune_before, prune_every, prune_marks, prune_versions
from .runner import Runner
from .starting import Started, trigger_event
from .store import Store, StoreSlot
from .taint import AiRuns
from .trust import Accuracy, Marks
from .versions import loads

__all__ = ["DEFAULT_RETENTION_DAYS", "Engine", "TaskSpawner", "workflow_of"]

DEFAULT_RETENTION_DAYS: Final = 30
_NONE: Final[tuple[str, ...]] = ()


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
        versions_days: float | None = None,
        marks_days: float | None = None,
        max_chain_depth: int = 3,
        lock_timeout_s: float = 1.0,
        spawn: TaskSpawner | None = None,
        max_driving: int = MAX_DRIVING,
    ) -> None:
        self.path = Path(store_path)
        self.effects = effects
        self.ai = ai
        self.clock: Clock = clock or SystemClock()
        self.tz: tzinfo = tz or UTC
        self.retention_days = retention_days
        self.retention_interval_s = retention_interval_s
        #: How long versions nobody runs and marks are kept (None: for good).
        self.versions_days = versions_days
        self.marks_days = marks_days
        self.max_chain_depth = max_chain_depth
        self.lock_timeout_s = lock_timeout_s
        self.stats = EngineStats()
        #: Runs whose effects carried AI output, by correlation id (see :mod:`.taint`).
        #: The site's settings for AI output and approvals (the host keeps them current).
        self.policy = SafetyPolicy()
        self.ai_runs = AiRuns(policy=self.policy)
        self._tasks: list[asyncio.Task[None]] = []
        # What the parts share: the store while started, the clock, the task spawner,
        # the active runs and the update feed.
        db = self._db = StoreSlot()
        time = self._time = SiteClock(self.clock, self.tz)
        spawn_task = self._spawn_task = spawn or loop_task
        runs: dict[str, ActiveRun] = {}
        self._runs = runs
        updates = self._updates = Updates()
        # The parts, each built after the parts it calls.
        counters = self._counters = Counters(db, time, runs)
        due = self._due = DueRows(db, time)
        catalog = self._catalog = Catalog(db, time, updates, due, max_chain_depth=max_chain_depth)
        approvals = self._approvals = Approvals(db, time, effects, spawn_task, updates, due, runs)
        self.approvals: dict[str, ApprovalRecord] = approvals.records
        marks = self._marks = Marks(db, time)
        recorder = StepRecorder(db, time)
        asking = Asking(recorder, db, time, effects, approvals, self.policy)
        freshness = Freshness(recorder, time, asking, approvals, self.policy)
        monitor = Monitor(recorder, time, self.policy, marks, approvals)
        runner = Runner(
            time,
            Conditions(recorder, effects, time),
            ActionSteps(
                recorder,
                db,
                time,
                effects,
                due,
                marks,
                self.ai_runs,
                self.stats,
                freshness,
                monitor,
            ),
            asking,
            AiSteps(recorder, asking, ai, approvals, catalog, time),
            ForEachSteps(recorder, effects),
        )
        driver = self._driver = RunDriver(
            runner, db, time, spawn_task, self.stats, runs, updates, counters, catalog, approvals
        )
        driver.max_driving = max_driving
        admission = self._admission = Admission(
            db, time, self.stats, self.ai_runs, catalog, due, driver, counters, updates
        )
        self._firing = DueFiring(time, due, catalog, approvals, driver, admission)
        # Direct references for :meth:`submit`, which every event goes through.
        self._index = self._catalog.index
        self._offline = self._due.offline
        #: The commit request the :meth:`durable` callers of this loop turn share: each
        #: caller waits on a future of its own in this list, settled with the request.
        self._barrier: list[asyncio.Future[None] | Decided] | None = None

    # ── lifecycle ──────────────────────────────────────────────────────

    @property
    def store(self) -> Store:
        return self._db.store

    @property
    def started(self) -> bool:
        return self._db.started

    async def start(self) -> None:
        """Open the database, settle runs a crash interrupted, resume waiting
        runs and schedules. Raises a :class:`~.errors.StoreError` subclass that
        names the file when the database cannot be used."""
        if self._db.started:
            return
        store = await Store.open(self.path, lock_timeout_s=self.lock_timeout_s)
        now = self.now_ts()
        loaded: Loaded = await store.submit(lambda c: load(c, now))
        self._catalog.restore(loaded.workflows)
        self._db.current = store  # started: the parts write from here on
        self._catalog.apply_all()
        restore_limits(loaded, self._catalog)
        self._admission.delivered.restore(loaded.delivered)
        restore_marks(loaded, self._marks)
        self._due.restore(loaded.due)
        self._catalog.ensure_schedules()
        restore_approvals(loaded, self.approvals)
        restore_runs(loaded, self._catalog, self._runs, store, self._time)
        for run in self._runs.values():
            if run.ai_derived:
                self.ai_runs.add(run.correlation_id)
        self._tasks.append(self.spawn_task(self._due.run(self._firing.fire), "workflow scheduler"))
        if self.retention_interval_s > 0:
            retention = prune_every(self.clock, lambda: self.retention_interval_s, self.prune)
            self._tasks.append(self.spawn_task(retention, "workflow retention"))
        self._driver.reopen()
        for run in list(self._runs.values()):
            self._driver.spawn(run)

    def spawn_task(self, coro: Coroutine[Any, Any, None], name: str) -> asyncio.Task[None]:
        """Start one of the engine's tasks (a run, the scheduler) the host's way: Home
        Assistant tracks them as its config entry's background tasks."""
        return self._spawn_task(coro, name)

    async def stop(self, grace_s: float = 5.0) -> None:
        """Stop: let runs reach a waiting point for up to ``grace_s``, then
        cancel what is left (a cancelled step is settled on the next start,
        exactly as after a crash), write the counters, close the file."""
        if not self._db.started:
            return
        for task in self._tasks:
            task.cancel()
        self._driver.close()
        running = [r.task for r in self._runs.values() if r.task and not r.task.done()]
        if running:
            _, pending = await asyncio.wait(running, timeout=grace_s)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks.clear()
        self._counters.flush()
        store, self._db.current = self._db.store, None
        await store.close()
        self._runs.clear()
        self.approvals.clear()
        self._due.clear()

    # ── the site's pause and backups ───────────────────────────────────

    @property
    def paused(self) -> bool:
        """Whether the site is paused (see :mod:`.pause`)."""
        return self._driver.pause.paused

    @property
    def not_run(self) -> int:
        """Triggers that matched a workflow and started nothing since the pause began."""
        return self._driver.pause.not_run

    def pause(self) -> None:
        """Pause every workflow: nothing starts (each refused start is counted), and
        runs that would go on stay waiting until :meth:`resume`. May be called before
        :meth:`start`, so the runs a restart resumes are held too."""
        pause = self._driver.pause
        if pause.paused:
            return
        pause.paused = True
        self._updates.emit(EngineUpdate("site_paused", "", None, {"paused": True}))

    def resume(self) -> None:
        """End the pause: the runs held meanwhile go on (new starts were not kept)."""
        pause = self._driver.pause
        if not pause.paused:
            return
        held = pause.release()
        self._updates.emit(EngineUpdate("site_paused", "", None, {"paused": False}))
        for run in held:
            if self._runs.get(run.run_id) is run:
                self._driver.spawn(run)

    async def hold_writes(self) -> None:
        """Write what is pending, fold the WAL into the database file and keep it still
        until :meth:`release_writes` (a backup copies it meanwhile). Runs go on; what
        they write waits in memory, and a :meth:`dispatch` returns after the release."""
        if not self._db.started:
            return
        self._counters.flush()
        await self.store.hold()

    def release_writes(self) -> None:
        """Let the writes :meth:`hold_writes` kept waiting go to the file."""
        if self._db.current is not None:
            self._db.current.release()

    async def idle(self) -> None:
        """Wait until no run is executing and everything is written (tests,
        the benchmark, and a host that wants a quiet point)."""
        while True:
            for _ in range(3):
                await asyncio.sleep(0)
            busy = [r.task for r in self._runs.values() if r.task and not r.task.done()]
            if not busy:
                if self._driver.waiting_turn:  # a run's end hands its slot on a turn later
                    continue
                break
            await asyncio.gather(*busy, return_exceptions=True)
        self._counters.flush()
        if self._db.current is not None:
            await self._db.current.flush()

    # ── workflows ──────────────────────────────────────────────────────

    def set_workflows(
        self, workflows: Mapping[str, model.Workflow], texts: Mapping[str, str] | None = None
    ) -> None:
        """Make these the engine's workflows: add new ones, re-version changed
        ones, remove the rest (their running runs finish on their version).
        ``texts`` are the files they were read from, kept with each version for
        a rollback to write back as the author saved it."""
        self._catalog.set_all(workflows, texts)

    def add_workflow(self, workflow_id: str, workflow: model.Workflow) -> str:
        """Add or update one workflow; returns its version (content hash)."""
        return self._catalog.add(workflow_id, workflow)

    def remove_workflow(self, workflow_id: str) -> None:
        """Stop starting runs of this workflow (its versions and runs stay)."""
        self._catalog.remove(workflow_id)

    def set_workflow_state(self, workflow_id: str, state: str) -> WorkflowStatus:
        """Off, test or on. Clears ``needs_attention`` (a person looked)."""
        return self._catalog.set_state(workflow_id, state)

    def workflow_status(self, workflow_id: str) -> WorkflowStatus:
        return self._catalog.status(workflow_id)

    def workflows(self) -> list[WorkflowStatus]:
        return self._catalog.statuses()

    def limiter(self, workflow_id: str, workflow: model.Workflow | None = None) -> WorkflowLimiter:
        return self._catalog.limiter(workflow_id, workflow)

    # ── events ─────────────────────────────────────────────────────────

    def submit(self, event: NvrEvent) -> tuple[str, ...]:
        """Offer an event. Returns the ids of the runs it started or joined.

        The return means *accepted, not yet durable*: the rows of a run it started
        are queued, and a process killed before the next commit loses them. A caller
        that tells the event's source "delivered" (an ack) must await
        :meth:`dispatch` instead. Synchronous and cheap when nothing matches; must
        be called on the engine's event loop."""
        return self._offer(event)[0]

    def submit_for_role(self, event: NvrEvent) -> tuple[str, ...]:
        """Offer an event again under another role its camera plays: only the
        workflows that name that role are matched, so one that takes any camera
        is not started twice by the same event. Accepted, not yet durable, as
        :meth:`submit`; await :meth:`durable` before acknowledging it."""
        found = self._index.match_role(event) if self._db.current is not None else None
        if not found:
            return _NONE
        return self._admission.offer(found, event)

    async def dispatch(self, event: NvrEvent) -> tuple[str, ...]:
        """Offer an event and return once what it decided is committed.

        The run rows it started, the run it joined, or the decision that it starts
        nothing (a cooldown, a watch it began or cancelled) are on disk when this
        returns, so the caller may acknowledge the event to its source: a process
        killed after that point resumes the run on its next start. An event that
        matches no workflow returns at once, and so does one whose decision rests
        only on writes already committed (a drop by a cooldown whose run's row is
        on disk: a crash loses only the drop's counter, and a redelivery is dropped
        again or starts one run). Concurrent dispatches share one commit
        (the store writes everything queued as one transaction). Raises
        :class:`~.errors.StoreError` when the store cannot commit or a run row it
        started could not be written (do not acknowledge the event then), and
        ``RuntimeError`` before :meth:`start`."""
        run_ids, waiter = self._accept(event)
        if waiter is not None:
            await waiter
        return run_ids

    def dispatch_nowait(self, event: NvrEvent) -> asyncio.Future[None] | None:
        """:meth:`dispatch` without a coroutine: None when what the event decided is
        durable already (or it decided nothing), else a future of the caller's own that
        resolves once it is committed, or fails as :meth:`dispatch` raises.

        The event source's path (:meth:`.nvr.hub.EventHub.publish_tracked`): under a flood
        thousands of events wait for their commit at once, and a task per event (its
        coroutine, its context, the future it awaits) is a dozen objects the garbage
        collector walks again at every collection while they wait; this is one future and
        the :class:`~.admission.Decided` the engine keeps anyway."""
        return self._accept(event)[1]

    def _accept(self, event: NvrEvent) -> tuple[tuple[str, ...], asyncio.Future[None] | None]:
        """The runs the event started or joined, and what to wait on before it is durable
        (None: nothing). The future is settled with this turn's shared commit, after the
        event's run rows are checked (:meth:`_settle_barrier`)."""
        if not self._db.started:
            raise RuntimeError("the engine is not started")
        run_ids, decided = self._offer(event, durable=True)
        if decided is None:  # it matched nothing and changed nothing
            return run_ids, None
        if not decided.rows and decided.rests_on <= self.store.settled:
            return run_ids, None
        waiter = decided.waiter = self._durable_waiter(decided)
        return run_ids, waiter

    @property
    def waiting_turn(self) -> int:
        """Runs started and written that wait for their turn to be carried out (at most
        :data:`.driver.MAX_DRIVING` are at once: see :mod:`.driver`)."""
        return self._driver.waiting_turn

    def durable_nowait(self) -> asyncio.Future[None]:
        """:meth:`durable` without a coroutine: a future of the caller's own."""
        return self._durable_waiter()

    async def durable(self) -> None:
        """Return once everything accepted so far is committed (group commit).

        Every caller in the same turn of the event loop shares one commit request,
        queued at the end of that turn behind all their writes; a caller that is
        cancelled leaves the others waiting on it.

        Each caller waits on a plain future of its own rather than a shield of a shared
        one: under a flood thousands of callers wait at once, and a shield costs about
        twenty objects each (a future, two closures and their cells, contexts) that the
        garbage collector walks again at every collection while they wait."""
        await self._durable_waiter()

    def _durable_waiter(self, decided: Decided | None = None) -> asyncio.Future[None]:
        """A future of the caller's own, settled with this turn's shared commit request
        (after ``decided``'s run rows are checked, for a dispatch)."""
        loop = asyncio.get_running_loop()
        waiters = self._barrier
        if waiters is None:
            waiters = self._barrier = []
            loop.call_soon(self._commit_barrier, waiters)
        waiter: asyncio.Future[None] = loop.create_future()
        waiters.append(waiter if decided is None or not decided.rows else decided)
        return waiter

    def _commit_barrier(self, waiters: list[asyncio.Future[None] | Decided]) -> None:
        """Queue the commit request the callers of :meth:`durable` in this turn share."""
        if self._barrier is waiters:
            self._barrier = None
        try:
            flushed = self.store.flush()
        except Exception as err:  # closed or failed store: the callers must not ack
            _settle_waiters(waiters, err, self._row_failed)
            return
        flushed.add_done_callback(partial(_settle_barrier, waiters, self._row_failed))

    def _row_failed(self, run_id: str) -> None:
        """A run row a dispatch queued could not be written: nothing durable knows the
        run, so it must not act, and its alert, delivered again, starts anew."""
        self._admission.delivered.forget(run_id)
        self._driver.abandon(run_id)

    def _offer(
        self, event: NvrEvent, *, durable: bool = False
    ) -> tuple[tuple[str, ...], Decided | None]:
        """The runs the event started or joined and, for a ``durable`` dispatch, what
        it decided (None when it matched nothing and changed nothing)."""
        self.stats.events += 1
        decided: Decided | None = None
        if event.kind == "camera_online" and self._offline:
            self._due.camera_back(event)
            if durable:
                decided = Decided()
                decided.rest_on(self.store.queued)
        # ``current`` rather than ``started``: a plain attribute on the path of every event.
        found = self._index.match(event) if self._db.current is not None else None
        if not found:
            return _NONE, decided
        if not durable:
            return self._admission.offer(found, event), None
        if decided is None:
            decided = Decided()
        admission = self._admission
        admission.decided = decided
        try:
            return admission.offer(found, event), decided
        finally:
            admission.decided = None

    def run_now(
        self,
        workflow_id: str,
        user: str | None = None,
        *,
        chain: tuple[str, ...] = (),
        ai_derived: bool = False,
        ai_origin: str | None = None,
    ) -> tuple[str, ...]:
        """A "Run now" button press for a button-triggered workflow; ``chain``,
        ``ai_derived`` and ``ai_origin`` as for :meth:`start_now` (an automation that a
        run set off may press it)."""
        event = NvrEvent(
            kind="button",
            source="button",
            time=self.clock.now(),
            type=workflow_id,
            payload={"user": user} if user else {},
            chain=chain,
            ai_derived=ai_derived,
            ai_origin=ai_origin if ai_derived else None,
        )
        return self.submit(event)

    def start_now(
        self,
        workflow_id: str,
        variables: Mapping[str, Any] | None = None,
        *,
        message: str | None = None,
        user: str | None = None,
        chain: tuple[str, ...] = (),
        ai_derived: bool = False,
        supplied_by: str | None = None,
        ai_origin: str | None = None,
    ) -> Started:
        """Start a run of one named workflow now (the run_workflow action).

        The event is the one its trigger would have produced, filled from
        ``variables`` (see :func:`.starting.trigger_event`); a message workflow
        gets ``message`` and ``user``. The workflow's state and limits apply as to
        any event: an Off workflow does not start, a Test one runs in Test, a
        cooldown drops the start (counted), a run going for the same camera is
        joined. ``chain`` is the runs that led to this call, so a workflow that
        starts itself stops at the depth limit; a run it starts is AI-derived when
        ``ai_derived`` says so or any run of the chain carried AI output (see
        :mod:`.taint`); ``supplied_by`` names the person whose variables filled the
        event (``NvrEvent.supplied_by``); ``ai_origin`` says how the host found the AI
        mark (``NvrEvent.ai_origin``). Raises :class:`UnknownWorkflowError`."""
        entry = self._catalog.entries.get(workflow_id)
        if entry is None:
            raise UnknownWorkflowError(f"no workflow {workflow_id!r}")
        event = trigger_event(
            workflow_id,
            entry.workflow.when,
            time=self.clock.now(),
            variables=variables,
            message=message,
            user=user,
            chain=chain,
            ai_derived=ai_derived,
            supplied_by=supplied_by,
            ai_origin=ai_origin,
        )
        self.stats.events += 1
        return self._admission.start_now(workflow_id, event)

    async def try_run(
        self, workflow_id: str, event: NvrEvent, budget: AiBudget | None = None
    ) -> str:
        """Run one workflow on one event in Test, whatever its state and limits (the
        try_workflow action): nothing is done, every step is recorded as it would
        have been. The trial takes no limit slot, starts no cooldown and counts in no
        hourly window or counter; its AI steps draw from ``budget`` (default: a fresh
        allowance of the workflow's ``ai_per_hour``). Its waits are skipped (recorded
        as ``skipped`` with how long they would have been), and a run still going when
        it returns is ended: a trial never resumes later, so it never calls a model or
        holds a due row after the action answered. Returns the run id once the run has
        ended, with its rows written. Raises :class:`UnknownWorkflowError`."""
        entry = self._catalog.entries.get(workflow_id)
        if entry is None:
            raise UnknownWorkflowError(f"no workflow {workflow_id!r}")
        allowance = budget if budget is not None else Allowance(entry.workflow.limits.ai_per_hour)
        run = self._admission.start_trial(entry, event, allowance)
        if run.task is not None:
            await asyncio.gather(run.task, return_exceptions=True)
        if run.run_id in self._runs:
            for due_id in [d for d, due in self._due.rows.items() if due.run_id == run.run_id]:
                self._due.drop(due_id)
            self._driver.end_trial(run)
        await self.store.flush()
        return run.run_id

    def held_back(self, workflow_id: str) -> HeldBack | None:
        """The limit holding the workflow's events back now, if one does: which, since
        and until when (None once it let go)."""
        held = self._admission.held.get(workflow_id)
        if held is None or not held.holds(self._time.now_ts(), self._runs.__contains__):
            return None
        return held

    # ── running ────────────────────────────────────────────────────────

    async def alert_unknown(self, run: ActiveRun, path: str, kind: str) -> None:
        """Tell people an action may or may not have happened (never retried)."""
        await alert_unknown(self.effects, run, path, kind)

    # ── approvals ──────────────────────────────────────────────────────

    def open_approval(self, approval: ApprovalRecord) -> None:
        """Store a new approval (and its timeout, if it is pending)."""
        self._approvals.open(approval)

    async def answer_approval(self, approval_id: str, reply: str, user: str | None) -> None:
        """A person answered. Raises :class:`UnknownApprovalError` for an
        unknown or closed approval and ``ValueError`` for a reply that is not
        one of its buttons. The run resumes once the answer is stored."""
        run = await self._approvals.answer(approval_id, reply, user)
        if run is not None:
            self._driver.spawn(run)

    def note_approval(
        self, approval_id: str, event: str, user: str | None, detail: str = ""
    ) -> None:
        """Log what happened to a question (delivered, refused and why, answered) in the
        run's trace (:meth:`run_detail`'s ``approval_log``)."""
        self._approvals.note(approval_id, event, user, detail)

    def approval(self, approval_id: str) -> ApprovalRecord | None:
        """An approval of an active run, whatever its status."""
        return self._approvals.records.get(approval_id)

    def pending_approvals(self) -> list[tuple[ApprovalRecord, int]]:
        """Open approvals with their run's "seen again" count."""
        return self._approvals.pending()

    # ── marks and trust ────────────────────────────────────────────────

    async def mark_run(self, run_id: str, right: bool, user: str | None) -> dict[str, Accuracy]:
        """Mark a run right or wrong; returns the accuracy of each AI step that
        decided in it. Marking again replaces the earlier mark. A ``run_marked``
        update tells views that the workflow's accuracy changed."""
        accuracy = await self._marks.mark_run(run_id, right, user)
        for workflow_id in sorted({key.split("/", 1)[0] for key in accuracy}):
            self._updates.emit(EngineUpdate("run_marked", workflow_id, run_id, {"right": right}))
        return accuracy

    def accuracy_of(self, key: str | None) -> Accuracy | None:
        """The marked record of one AI step (by its key), if it has any."""
        return self._marks.accuracy_of(key)

    def accuracy(self, workflow_id: str) -> dict[str, Accuracy]:
        """Every AI step key of a workflow (all versions) with its record."""
        return self._marks.accuracy(workflow_id)

    # ── queries ────────────────────────────────────────────────────────

    def active_runs(self) -> list[ActiveRun]:
        return list(self._runs.values())

    async def run_detail(self, run_id: str) -> dict[str, Any]:
        """A run with its steps, tool calls and approvals, as stored."""
        result: dict[str, Any] = await self.store.submit(lambda c: run_detail(c, run_id))
        return result

    async def runs(self, workflow_id: str, limit: int = 50) -> list[dict[str, Any]]:
        """The workflow's latest runs, newest first."""
        result: list[dict[str, Any]] = await self.store.submit(
            lambda c: latest_runs(c, workflow_id, limit)
        )
        return result

    def count_runs(self, workflow_id: str, since_ts: float) -> asyncio.Future[int]:
        """How many runs of the workflow started at or after ``since_ts``.

        The query is queued when this is called (not when it is awaited), behind every
        run already started: together with :meth:`subscribe`, a view counts each run
        exactly once, either here or from its ``run_started`` update."""
        return self.store.submit(lambda c: count_runs_since(c, workflow_id, since_ts))

    async def versions(self, workflow_id: str) -> list[dict[str, Any]]:
        """Every recorded version of a workflow, newest first: ``version``,
        ``created_at`` and ``runs`` (how many runs it had)."""
        result: list[dict[str, Any]] = await self.store.submit(
            lambda c: workflow_versions(c, workflow_id)
        )
        return result

    async def version_text(self, workflow_id: str, version: str) -> str | None:
        """The file text a recorded version was last saved as; None for a version
        recorded before texts were kept (or without a file). Raises
        :class:`UnknownVersionError` for a version never recorded."""
        text: str | None = await self.store.submit(lambda c: version_text(c, workflow_id, version))
        return text

    async def version_workflow(self, workflow_id: str, version: str) -> model.Workflow:
        """The workflow as one recorded version had it (a rollback writes it back).
        Raises :class:`UnknownVersionError`, or :class:`.versions.VersionDecodeError`
        for a version this code cannot rebuild."""
        source: str = await self.store.submit(lambda c: version_source(c, workflow_id, version))
        return loads(source)

    def subscribe(self, listener: Callable[[EngineUpdate], None]) -> Callable[[], None]:
        """Call ``listener`` on every :class:`EngineUpdate`; returns an unsubscribe."""
        return self._updates.subscribe(listener)

    def hourly_counters(self) -> dict[tuple[str, str], int]:
        """This hour's not-yet-written counter increments (for diagnostics)."""
        return self._counters.pending()

    # ── time and due rows ──────────────────────────────────────────────

    def now_ts(self) -> float:
        return self._time.now_ts()

    def local_now(self) -> datetime:
        return self._time.local_now()

    def add_due(
        self,
        due_id: str,
        kind: str,
        workflow_id: str,
        run_id: str | None,
        due_at: float,
        payload: dict[str, Any],
    ) -> None:
        """Do something at ``due_at``, durably (see :mod:`.due`)."""
        self._due.add(due_id, kind, workflow_id, run_id, due_at, payload)

    def drop_due(self, due_id: str) -> None:
        self._due.drop(due_id)

    # ── retention ──────────────────────────────────────────────────────

    async def prune(self, older_than_days: float | None = None) -> int:
        """Delete ended runs (and their steps, tool calls and approvals) that
        started more than ``older_than_days`` (default: the retention) ago; then
        the marks older than :attr:`marks_days` and the versions older than
        :attr:`versions_days` that nothing uses (when they are set: marks are the
        AI steps' accuracy record and outlive the runs). Returns the number of
        runs removed."""
        days = self.retention_days if older_than_days is None else older_than_days
        now = self.now_ts()
        removed = await prune_before(self._db, now - days * 86400.0)
        if self.marks_days is not None:
            self._marks.forget(await prune_marks(self._db, now - self.marks_days * 86400.0))
        if self.versions_days is not None:
            await prune_versions(self._db, now - self.versions_days * 86400.0)
        return removed


def _settle_barrier(
    waiters: list[asyncio.Future[None] | Decided],
    row_failed: Callable[[str], None],
    flushed: asyncio.Future[Any],
) -> None:
    """Settle every caller of :meth:`Engine.durable` of one turn as its commit settled."""
    if flushed.cancelled():
        for entry in waiters:
            waiter = entry.waiter if isinstance(entry, Decided) else entry
            if waiter is not None:
                waiter.cancel()  # a no-op on one already done
        return
    _settle_waiters(waiters, flushed.exception(), row_failed)


def _settle_waiters(
    waiters: list[asyncio.Future[None] | Decided],
    err: BaseException | None,
    row_failed: Callable[[str], None],
) -> None:
    """Resolve each waiter with ``err`` (None: committed); a dispatch whose run row failed
    gets that row's error, and the run is dropped (``row_failed``)."""
    for entry in waiters:
        failed = err
        if isinstance(entry, Decided):
            waiter = entry.waiter
            # Written before the shared request, so settled by now; the commit's own
            # failure leaves the runs as they are (the event, delivered again, joins them).
            for row in entry.rows if err is None else ():
                if row.error is not None:
                    row_failed(row.key)
                    failed = failed or row.error
        else:
            waiter = entry
        if waiter is None or waiter.done():  # its caller was cancelled
            continue
        if failed is None:
            waiter.set_result(None)
        else:
            waiter.set_exception(failed)
            waiter.exception()  # nobody may wait (a plain publish): the hub logs it
