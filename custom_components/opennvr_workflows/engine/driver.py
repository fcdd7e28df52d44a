"""Driving runs: one task per run, from start to a waiting point or the end.

The task calls the :class:`~.runner.Runner` until the run completes, waits
for a person or a due time, or loses a provider. A resume that arrives while
the task is still going (an answer racing the ask) is not lost: the task runs
the replay once more before it parks the run. Ending a run writes its
outcome, frees its limit slot and cancels its open approvals.

At most :data:`MAX_DRIVING` runs are driven at once; the others wait their turn in
arrival order, as the run they are (their row is written already, so a restart resumes
them as it would a run that was driving). A run being driven and suspended at a step
holds its task, its coroutines and what each step keeps, some forty objects, and under a
flood of thousands the garbage collector promotes them all to its oldest generation and
walks the whole heap again and again: the cost of a run would grow with the flood. A run
waiting its turn is the few objects it is made of. A trial is never kept waiting (a
person waits on its answer), and a run driven for :data:`SLOW_S` gives its slot back: it
waits on something slow (a model's answer, a service that hangs), and the runs behind it
(a siren's) must not wait on that.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections import deque
from collections.abc import Mapping
from functools import partial
from typing import Final

from .approvals import Approvals
from .catalog import Catalog
from .counters import Counters
from .pause import Pause
from .ports import SiteClock, TaskSpawner
from .records import ActiveRun, EngineStats, EngineUpdate, StepRecord, Updates
from .runner import Runner
from .steps import ProviderLost, Waiting
from .store import StoreSlot

_LOGGER = logging.getLogger(__name__)

#: How many runs are driven at once (see the module's docstring). Measured with
#: ``scripts/bench_flood.py`` on a 10,000-run flood: at 256 the runs in flight still made
#: the collector walk the whole heap once (about 40 µs a run, counted by its callbacks), at
#: 64 never (4 µs a run), with the same runs per second.
MAX_DRIVING: Final = 64
#: Seconds after which a run still driven gives its slot back (it waits on something slow).
SLOW_S: Final = 0.5
#: The context the driver's done callbacks run in (they read no context variable; a copy
#: of the current one per run would be one more object each).
_QUIET: Final = contextvars.Context()


class RunDriver:
    """Spawns, drives and ends runs; :attr:`runs` are the active ones."""

    def __init__(
        self,
        runner: Runner,
        db: StoreSlot,
        clock: SiteClock,
        spawn: TaskSpawner,
        stats: EngineStats,
        runs: dict[str, ActiveRun],
        updates: Updates,
        counters: Counters,
        catalog: Catalog,
        approvals: Approvals,
    ) -> None:
        self._runner = runner
        self._db = db
        self._clock = clock
        self._spawn = spawn
        self._stats = stats
        self.runs = runs
        self._updates = updates
        self._counters = counters
        self._catalog = catalog
        self._approvals = approvals
        #: The site's pause: while it holds, runs that would go on stay waiting.
        self.pause = Pause()
        #: The most runs driven at once, those holding a slot (by id, with the loop's time
        #: when their task started) and those waiting their turn, oldest first.
        self.max_driving = MAX_DRIVING
        self._held: dict[str, float] = {}
        self._turns: deque[ActiveRun] = deque()
        self._timer: asyncio.TimerHandle | None = None
        #: False while the engine stops: a run whose turn comes then stays as it is
        #: (written as running, so the next start resumes it).
        self.open = True

    def spawn(self, run: ActiveRun) -> None:
        """Start (or, if its task is busy, re-run once more) the run's task; while the
        site is paused, hold it where it waits instead (:mod:`.pause`); while
        :attr:`max_driving` runs are driven, queue it for its turn."""
        if run.task is not None and not run.task.done():
            run.again = True
            return
        if run.queued:  # it reads what changed when its turn comes
            return
        if self.pause.hold(run):
            return
        if len(self._held) >= self.max_driving and not run.trial:
            run.queued = True
            self._turns.append(run)
            self._arm()
            return
        self._start(run)

    def _start(self, run: ActiveRun) -> None:
        run.task = task = self._spawn(self._drive(run), f"workflow {run.workflow_id} run")
        self._held[run.run_id] = task.get_loop().time()
        task.add_done_callback(partial(self._driven, run), context=_QUIET)

    def _driven(self, run: ActiveRun, task: asyncio.Task[None]) -> None:
        """A run's task ended (done, waiting, failed or cancelled): its slot goes to the
        next in turn (unless it gave it back already, or the run has a new task), and the
        run lets go of the finished task (a run that waits would otherwise hold it, with
        its result and name, as long as it waits)."""
        if run.task is task:
            self._held.pop(run.run_id, None)
            run.task = None
        self._next()

    def _next(self) -> None:
        turns = self._turns
        while turns and self.open and len(self._held) < self.max_driving:
            run = turns.popleft()
            run.queued = False
            if self.runs.get(run.run_id) is not run:  # abandoned meanwhile
                continue
            if not self.pause.hold(run):
                self._start(run)
        self._arm()

    def _arm(self) -> None:
        """While runs wait their turn, check when the oldest run driven turns slow."""
        if self._timer is not None or not self._turns or not self.open or not self._held:
            return
        loop = asyncio.get_running_loop()
        due = min(self._held.values()) + SLOW_S
        self._timer = loop.call_at(due, self._slow)

    def _slow(self) -> None:
        """Runs driven for :data:`SLOW_S` or more give their slots back to the runs
        waiting their turn (the runs go on; they just no longer count)."""
        self._timer = None
        cutoff = asyncio.get_running_loop().time() - SLOW_S
        for run_id in [r for r, since in self._held.items() if since <= cutoff]:
            del self._held[run_id]
        self._next()

    @property
    def waiting_turn(self) -> int:
        """How many runs wait for a slot to be driven in."""
        return len(self._turns)

    def close(self) -> None:
        """The engine stops: no queued run starts any more; they stay written as
        running and resume at the next start."""
        self.open = False
        for run in self._turns:
            run.queued = False
        self._turns.clear()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def reopen(self) -> None:
        """The engine starts (again)."""
        self.open = True

    async def _drive(self, run: ActiveRun) -> None:
        while True:
            run.again = False
            if run.status == "waiting":
                run.status = "running"
                run.resumed = True
                self._db.store.execute_nowait(
                    "UPDATE workflow_runs SET status='running' WHERE id=?", (run.run_id,)
                )
            try:
                await self._runner.execute(run)
            except Waiting:
                if run.again:
                    continue
                run.status = "waiting"
                # The unknown count goes with it: a run may wait for days after one.
                self._db.store.execute_nowait(
                    "UPDATE workflow_runs SET status='waiting', unknown_steps=? WHERE id=?",
                    (run.unknown_steps, run.run_id),
                )
                self._updates.emit(EngineUpdate("run_waiting", run.workflow_id, run.run_id))
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
        now = self._clock.now_ts()
        run.status = status  # type: ignore[assignment]
        outcome = _last_outcome(run.steps)
        self._db.store.execute_nowait(
            "UPDATE workflow_runs SET status=?, outcome=?, ended_at=?, error=?, seen_again=?, "
            "unknown_steps=? WHERE id=?",
            (status, outcome, now, error, run.seen_again, run.unknown_steps, run.run_id),
        )
        self._counters.seen_dirty.discard(run.run_id)
        self._catalog.limiter(run.workflow_id).ended(run.limit_key, run.run_id)
        self.runs.pop(run.run_id, None)
        self._approvals.end_run(run.run_id)
        stats = self._stats
        stats.ended += 1
        if status == "failed":
            stats.failed += 1
        self._updates.emit(
            EngineUpdate(
                "run_ended",
                run.workflow_id,
                run.run_id,
                {"status": status, "outcome": outcome, "error": error, "trial": run.trial},
            )
        )

    def end_trial(self, run: ActiveRun) -> None:
        """End a trial that is still going when its trial returns: a trial never goes on
        later (no model call, no wait left behind), so what it waits on is dropped."""
        if run.run_id not in self.runs:
            return
        if run.task is not None and not run.task.done():
            run.task.cancel()
        self._finish(run, "cancelled", error="the trial ended before the run did")

    def abandon(self, run_id: str) -> None:
        """Drop a run whose own row could not be written: nothing durable knows it, so
        it must not act; its limit slot is freed for the event's next delivery."""
        run = self.runs.pop(run_id, None)
        if run is None:
            return
        if run.task is not None and not run.task.done():
            run.task.cancel()
        self._counters.seen_dirty.discard(run_id)
        self._catalog.limiter(run.workflow_id).ended(run.limit_key, run_id)
        self._approvals.end_run(run_id)

    def _provider_lost(self, run: ActiveRun, err: ProviderLost) -> None:
        """A provider is gone: fail the run and park its workflow version (not for a
        trial: trying a workflow tells the person what is missing, it changes nothing)."""
        reason = f"step {err.path}: {err.reason}"
        self._finish(run, "failed", error=f"provider lost: {reason}")
        if run.trial:
            return
        _LOGGER.warning("workflow %s needs attention: %s", run.workflow_id, reason)
        entry = self._catalog.entries.get(run.workflow_id)
        if entry is not None and entry.version == run.version:
            self._catalog.change_state(entry, "needs_attention", reason)


def _last_outcome(steps: Mapping[str, StepRecord]) -> str | None:
    if not steps:
        return None
    last = max(steps.values(), key=lambda s: s.seq)
    return last.outcome
