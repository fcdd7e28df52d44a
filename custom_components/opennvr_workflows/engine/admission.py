"""Admission: whether an event that matched a workflow's trigger starts a run.

The trigger index only says which workflows an event is for; admission then
applies what the index cannot: a workflow ignores the alerts it raised itself
(chains between workflows stop at the depth limit instead), an offline trigger
with a duration only starts a watch, and the workflow's limits decide between
starting a run, joining the run already going for the same camera, track or
plate ("seen again"), and dropping the event with a counted reason.

A source that acknowledges events only once they are durable (see
:meth:`.engine.Engine.dispatch`) delivers again what a crash left unacknowledged,
which may include an event whose run was already committed. Such a redelivery is
recognised by its alert id (:class:`Delivered`, rebuilt from the runs of the last
hour on start) and answered with the run it started, so it never starts a second.

A workflow in Test counts its runs under limit keys of their own (:func:`run_key`), so
its Test runs never hold back its On runs. An event a limit holds back is remembered per
workflow (:class:`~.records.HeldBack`: which limit, until when) and said once per hold
(a ``held_back`` update), so a person can see why nothing ran.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import secrets
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Final

from ..workflow import model
from .catalog import RUNNABLE, Catalog
from .counters import Counters
from .driver import RunDriver
from .due import DueRows
from .errors import UnknownWorkflowError
from .events import NvrEvent
from .index import Candidate, residual_match
from .limits import HOUR, TEST_KEY
from .ports import AiBudget, SiteClock
from .recorder import dumps
from .records import ActiveRun, EngineStats, EngineUpdate, Entry, HeldBack, Updates
from .starting import Started
from .store import Kept, StoreSlot
from .taint import AiRuns

RUN_SQL: Final = (
    "INSERT INTO workflow_runs (id, workflow_id, version, correlation_id, chain, depth, trigger, "
    "limit_key, test, status, started_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)"
)


#: Sources that deliver an unacknowledged event again after a restart; their alerts are
#: recognised by alert id (an engine-raised or a named start is never a redelivery).
REDELIVERING: Final = frozenset({"websocket", "nats", "mqtt"})
#: How long, and for how many alerts at most, a run's alert id is remembered.
DELIVERED_WINDOW_S: Final = 3600.0
DELIVERED_MAX: Final = 100_000

#: The limit key prefix of a trial run: no live event shares its slot, and a restart
#: does not count it against the workflow's hourly limits.
TRIAL_KEY: Final = "trial:"


class RunIds:
    """Run ids made without a system call: a per-process prefix and a counter.

    ``uuid.uuid4()`` reads the kernel's random source for every run, a system call
    that also lets go of the interpreter lock on the busiest path. The prefix is this
    process's start time in milliseconds and 40 random bits, so ids stay unique across
    restarts and between processes; the counter makes the rest. An id is 32 hex
    digits, as a uuid's was, and a process's ids sort in the order its runs started,
    so the run tables' keys grow at their end rather than at random pages (fewer
    pages written per commit)."""

    __slots__ = ("_counter", "_prefix")

    def __init__(self) -> None:
        millis = int(time.time() * 1000) & 0xFFF_FFFF_FFFF
        self._prefix = f"{millis:011x}{secrets.token_hex(5)}"
        self._counter = itertools.count(1)

    def new(self) -> str:
        return f"{self._prefix}{next(self._counter):011x}"


#: Shared by every engine of the process, so two of them never hand out the same id.
RUN_IDS: Final = RunIds()


@dataclass(slots=True)
class Decided:
    """What one durable dispatch's event decided, so the dispatch knows what to await.

    ``rows``: the run rows it queued, each keeping its outcome (a row that failed to be
    written fails the dispatch; :class:`.store.Kept`'s ``key`` is the run's id).
    ``rests_on``: the store's count of queued writes its other decisions rest on
    (:attr:`.store.Store.queued` when the write was queued; 0 for none): a drop by
    cooldown rests on the row of the run that began the cooldown, a join on the joined
    run's row, a watch on its due row. Once the store has settled that many writes the
    decision survives a crash, and the event may be acknowledged without waiting for a
    commit. ``waiter``: the dispatch's own future while it waits for the commit (the
    engine settles it, see :meth:`.engine.Engine.dispatch_nowait`)."""

    rows: list[Kept] = field(default_factory=list)
    rests_on: int = 0
    waiter: asyncio.Future[None] | None = None

    def rest_on(self, queued: int) -> None:
        self.rests_on = max(self.rests_on, queued)


def workflow_of(correlation_id: str) -> str:
    """The workflow id a correlation id belongs to (``<workflow>/<run>``)."""
    return correlation_id.rpartition("/")[0]


def limit_key(mode: str, event: NvrEvent) -> str:
    """What "one at a time" counts per: a track, a plate, or (default) a camera."""
    if mode == "track" and event.track_id is not None:
        return f"track:{event.camera_id or ''}:{event.track_id}"
    if mode == "plate" and event.plate is not None:
        return f"plate:{event.plate}"
    return f"camera:{event.camera_id or event.camera_role or ''}"


def run_key(entry: Entry, event: NvrEvent) -> str:
    """The limit key of a run of ``entry`` on ``event``: a workflow in Test counts its
    runs apart (:data:`.limits.TEST_KEY`), so they never hold back its On runs."""
    key = limit_key(entry.workflow.limits.one_at_a_time, event)
    return TEST_KEY + key if entry.state == "test" else key


class Delivered:
    """The alerts that started runs recently, per workflow: ``(workflow, alert id)`` to
    the run, oldest first, bounded by :data:`DELIVERED_WINDOW_S` and
    :data:`DELIVERED_MAX`."""

    def __init__(self) -> None:
        self._runs: dict[tuple[str, str], tuple[str, float]] = {}
        #: When the oldest entry was added (or earlier): checked at every add instead of
        #: reading the dict's first entry, which skips every entry trimmed before it.
        self._oldest_at = math.inf

    def run_of(self, workflow_id: str, event: NvrEvent) -> str | None:
        """The run this alert already started for this workflow, if it is a redelivery."""
        if event.alert_id is None or event.source not in REDELIVERING:
            return None
        found = self._runs.get((workflow_id, event.alert_id))
        return found[0] if found is not None else None

    def add(self, workflow_id: str, event: NvrEvent, run_id: str, now: float) -> None:
        if event.alert_id is None or event.source not in REDELIVERING:
            return
        self._runs[(workflow_id, event.alert_id)] = (run_id, now)
        self._oldest_at = min(self._oldest_at, now)
        if self._oldest_at < now - DELIVERED_WINDOW_S or len(self._runs) > DELIVERED_MAX:
            self._trim(now)

    def restore(self, rows: Iterable[tuple[str, str, str, float]]) -> None:
        """``(workflow_id, alert_id, run_id, started_at)`` rows, oldest first."""
        for workflow_id, alert_id, run_id, started_at in rows:
            self._runs[(workflow_id, alert_id)] = (run_id, started_at)
            self._oldest_at = min(self._oldest_at, started_at)

    def forget(self, run_id: str) -> None:
        """A run whose row could not be written: its alert, delivered again, starts anew."""
        for key in [k for k, (r, _) in self._runs.items() if r == run_id]:
            del self._runs[key]

    def __len__(self) -> int:
        return len(self._runs)

    def _trim(self, now: float) -> None:
        cutoff = now - DELIVERED_WINDOW_S
        while self._runs:
            key, (_, at) = next(iter(self._runs.items()))
            if at >= cutoff and len(self._runs) <= DELIVERED_MAX:
                self._oldest_at = at
                return
            del self._runs[key]
        self._oldest_at = math.inf


class Admission:
    """Turns matched events into started or joined runs."""

    def __init__(
        self,
        db: StoreSlot,
        clock: SiteClock,
        stats: EngineStats,
        ai_runs: AiRuns,
        catalog: Catalog,
        due: DueRows,
        driver: RunDriver,
        counters: Counters,
        updates: Updates,
    ) -> None:
        self._db = db
        self._clock = clock
        self._stats = stats
        self._ai_runs = ai_runs
        self._catalog = catalog
        self._due = due
        self._driver = driver
        self._runs = driver.runs
        self._counters = counters
        self._updates = updates
        self.delivered = Delivered()
        #: While a durable dispatch offers its event: what it decided (:class:`Decided`).
        self.decided: Decided | None = None
        #: Per workflow, :attr:`.store.Store.queued` once its latest run row was queued:
        #: its limits (a cooldown, a run going) rest on its runs' rows.
        self._rows_at: dict[str, int] = {}
        #: Per workflow, the last time a limit held one of its events back.
        self.held: dict[str, HeldBack] = {}

    def offer(self, found: Sequence[Candidate], event: NvrEvent) -> tuple[str, ...]:
        """The event matched ``found``; returns the runs it started or joined."""
        self._stats.matched += 1
        out: list[str] = []
        for candidate in found:
            run_id = self._consider(candidate.workflow_id, event)
            if run_id is not None:
                out.append(run_id)
        return tuple(out)

    def _consider(self, workflow_id: str, event: NvrEvent) -> str | None:
        entry = self._catalog.entries.get(workflow_id)
        if entry is None or entry.state not in RUNNABLE:
            self._rest_on_all()  # the state may have been written just now
            return None
        if event.chain and workflow_of(event.chain[-1]) == workflow_id:
            self._counters.count(workflow_id, "dropped:own_event")
            return None
        trigger = entry.workflow.when
        if (
            isinstance(trigger, model.CameraOfflineTrigger)
            and trigger.for_s > 0
            and event.kind == "camera_offline"
        ):
            self._due.watch_offline(entry, trigger, event)
            self._rest_on_all()
            return None
        return self.admit(entry, event)

    def _rest_on_all(self) -> None:
        """The decision rests on every write queued so far."""
        if self.decided is not None:
            self.decided.rest_on(self._db.store.queued)

    def _rest_on_runs(self, workflow_id: str) -> None:
        """The decision rests on the workflow's run rows (its limits' state)."""
        if self.decided is not None:
            self.decided.rest_on(self._rows_at.get(workflow_id, 0))

    def start_now(self, workflow_id: str, event: NvrEvent) -> Started:
        """Start ``workflow_id`` on ``event`` by name: its state and limits apply as to
        any event; only a message trigger's words are checked of its trigger."""
        entry = self._catalog.entries.get(workflow_id)
        if entry is None:
            raise UnknownWorkflowError(f"no workflow {workflow_id!r}")
        if entry.state not in RUNNABLE:
            return Started((), entry.state)
        if self._driver.pause.paused:
            self._not_run(workflow_id)
            return Started((), "paused")
        trigger = entry.workflow.when
        if isinstance(trigger, model.MessageTrigger) and not residual_match(
            Candidate(workflow_id, trigger), event
        ):
            return Started((), "no_match")
        key = run_key(entry, event)
        verdict = self._catalog.limiter(workflow_id, entry.workflow).check(
            key, len(event.chain) + 1, self._clock.now_ts()
        )
        run_id = self.admit(entry, event)
        if run_id is None:
            return Started((), verdict.reason or "limit")
        return Started((run_id,), joined=verdict.action == "join")

    def start_trial(self, entry: Entry, event: NvrEvent, budget: AiBudget) -> ActiveRun:
        """A forced Test run of ``entry`` on ``event``, whatever the workflow's state,
        outside its limits (no cooldown, no slot, no hourly count), its AI steps paid
        from ``budget``."""
        key = TRIAL_KEY + limit_key(entry.workflow.limits.one_at_a_time, event)
        return self._start_run(entry, event, key, self._clock.now_ts(), trial=budget)

    def admit(self, entry: Entry, event: NvrEvent) -> str | None:
        """Apply the workflow's limits: start, join, or drop (counted)."""
        again = self.delivered.run_of(entry.workflow_id, event)
        if again is not None:
            self._counters.count(entry.workflow_id, "dropped:redelivered")
            self._rest_on_runs(entry.workflow_id)
            return again
        if self._driver.pause.paused:
            self._not_run(entry.workflow_id)
            return None
        workflow = entry.workflow
        limiter = self._catalog.limiter(entry.workflow_id, workflow)
        key = run_key(entry, event)
        now = self._clock.now_ts()
        verdict = limiter.check(key, len(event.chain) + 1, now)
        if verdict.action == "start":
            return self._start_run(entry, event, key, now).run_id
        if verdict.action == "join" and verdict.run_id is not None:
            run = self._runs.get(verdict.run_id)
            if run is not None:
                self._rest_on_runs(entry.workflow_id)
                run.seen_again += 1
                self._stats.joined += 1
                self._counters.seen_dirty.add(run.run_id)
                self._counters.count(entry.workflow_id, "seen_again")
                self._updates.emit(
                    EngineUpdate(
                        "seen_again", entry.workflow_id, run.run_id, {"seen_again": run.seen_again}
                    )
                )
                until = waits_until(run)
                self._hold(entry, event, key, "one_at_a_time", now, until, run.run_id)
                return run.run_id
            limiter.ended(key, verdict.run_id)
            return self.admit(entry, event)
        reason = verdict.reason or "limit"
        self._rest_on_runs(entry.workflow_id)
        stats = self._stats
        stats.dropped[reason] = stats.dropped.get(reason, 0) + 1
        self._counters.count(entry.workflow_id, f"dropped:{reason}")
        self._hold(entry, event, key, reason, now, limiter.until(key, reason, now))
        return None

    def _hold(
        self,
        entry: Entry,
        event: NvrEvent,
        key: str,
        limit: str,
        now: float,
        until: float | None,
        run_id: str | None = None,
    ) -> None:
        """Remember that ``limit`` held an event of ``entry`` back, and say so once per
        hold: a hold that goes on (the same limit, run and end) is not said again, nor a
        chain cut at its depth more than once an hour. The update carries the event's
        chain and AI mark: what the host does on it (a logbook line an automation may
        answer) descends from the event, so a loop through it still ends at the depth
        limit."""
        before = self.held.get(entry.workflow_id)
        test = key.startswith(TEST_KEY)
        if (
            before is not None
            and (before.limit, before.until, before.run_id, before.test)
            == (limit, until, run_id, test)
            and (before.holds(now, self._runs.__contains__) or now - before.at < HOUR)
        ):
            return  # the same hold goes on: nothing new to remember or say
        held = self.held[entry.workflow_id] = HeldBack(limit, now, until, run_id, test)
        detail = {**held.as_dict(), "chain": list(event.chain), "ai_derived": event.ai_derived}
        self._updates.emit(EngineUpdate("held_back", entry.workflow_id, run_id, detail))

    def _not_run(self, workflow_id: str) -> None:
        """A start refused because the site is paused: counted, never queued."""
        self._driver.pause.not_run += 1
        stats = self._stats
        stats.dropped["paused"] = stats.dropped.get("paused", 0) + 1
        self._counters.count(workflow_id, "dropped:paused")

    def _start_run(
        self,
        entry: Entry,
        event: NvrEvent,
        key: str,
        now: float,
        trial: AiBudget | None = None,
    ) -> ActiveRun:
        run_id = RUN_IDS.new()
        correlation_id = f"{entry.workflow_id}/{run_id}"
        if not event.ai_derived and self._ai_runs.event_is_derived(event):
            # Stored with the run's trigger, so a resume after a restart knows it too.
            event = replace(event, ai_derived=True)
        if event.ai_derived:
            self._ai_runs.add(correlation_id)
        run = ActiveRun(
            run_id=run_id,
            workflow_id=entry.workflow_id,
            version=entry.version,
            workflow=entry.workflow,
            correlation_id=correlation_id,
            chain=(*event.chain, correlation_id),
            event=event,
            limit_key=key,
            test=trial is not None or entry.state == "test",
            started_at=now,
            trial=trial is not None,
            ai_budget=trial,
        )
        if trial is None:
            self._catalog.limiter(entry.workflow_id).started(key, run_id, now)
            self.delivered.add(entry.workflow_id, event, run_id, now)
        self._runs[run_id] = run
        row = (
            run_id,
            entry.workflow_id,
            entry.version,
            correlation_id,
            dumps(run.chain),
            len(run.chain),
            dumps(event.summary()),
            key,
            int(run.test),
            "running",
            now,
        )
        store = self._db.store
        if self.decided is None:
            store.execute_nowait(RUN_SQL, row)
        else:
            self.decided.rows.append(store.execute_kept(RUN_SQL, row, run_id))
        if trial is None:
            self._rows_at[entry.workflow_id] = store.queued
        if trial is None:
            self._stats.started += 1
            self._counters.count(entry.workflow_id, "started")
        self._updates.emit(
            EngineUpdate(
                "run_started",
                entry.workflow_id,
                run_id,
                {"trial": True} if trial is not None else None,
            )
        )
        self._driver.spawn(run)
        return run


def waits_until(run: ActiveRun) -> float | None:
    """When a run's current ``wait`` step ends (None: it is not waiting on one)."""
    for rec in run.steps.values():
        if rec.kind == "wait" and rec.status == "waiting" and rec.result is not None:
            due_at = rec.result.get("due_at")
            if isinstance(due_at, int | float):
                return float(due_at)
    return None
