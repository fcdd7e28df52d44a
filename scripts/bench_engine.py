#!/usr/bin/env python3
"""Load benchmark of the workflow engine, with Home Assistant's automations in the same run.

The spec's load test (RFC section 9): 200 cameras of synthetic events, one process on one
core. Every event is built inside the timed loop (a source parses each message into an
event; Home Assistant's bus figure includes building its event too), and the engine is fed
as the integration's event hub feeds it: one eagerly started ``Engine.dispatch`` per event,
which returns once what the event decided is committed (``submit``, the synchronous accept
without that wait, is shown beside it where the two differ). Figures:

1. **Dispatch of events that start no run**, on a site of 150 workflows (50 on intrusion
   alerts, 50 on tamper alerts with an actuator, 50 on loitering alerts with the default
   limits): an event no workflow watches; a watched alert type on a camera no workflow
   names; a watched alert dropped by the workflow's cooldown (limits on; the drop is
   counted and committed). Home Assistant's bus beside the first two: an event nothing
   listens to, and the automations' event on a camera none of their triggers names.
2. **Camera-less workflows, 10 / 50 / 500 side by side**: workflows without a camera list,
   filtered by app, alert type and severity; events filtered out by every one of them. The
   rate should not depend on the count (ratio 500/10 near 1).
3. **Durable runs, as fast as they come**: every event starts a run whose first step
   reaches the effects; with a notify first, and with a plain ``if`` and an actuator (a
   Home Assistant action that moves things: its start is synced to disk before it runs).
   Against 50 + 50 Home Assistant automations doing the same (notify; condition and a
   service call). Then the same runs again with the run-time monitor (the check of the
   safety rule before every effect that matters) timed: its cost per checked effect, per
   step run, and its share of the engine's CPU.
4. **p50/p99 event-to-first-effect at 200, 500, 1,000 and 2,000 events/s offered**, paced
   open loop, from each event's intended send time (a stall counts against every event it
   delays); the engine's event-to-durable (``dispatch`` returned) beside it; the
   automations' event-to-notification at the same rates.
5. **Sustained**: a fresh database, events offered at a fixed rate (default 500/s) for 30 s,
   each starting a run: completed runs/s, latency, the most runs in flight, the WAL's largest
   size, and database + WAL bytes per run after the run (file open, and after stop).

Wall time, CPU time (the process: the event loop, the store's threads, Home Assistant's
executor) and the load average are printed with every figure: the machine's load changes
every figure, so compare the ratios, which are measured side by side in one run. Home
Assistant is started as in production (asyncio debug off, logging at WARNING, its own event
loop; see ``scripts/bench_ha.py``, whose helpers start it), and the engine runs on that same
loop, before it in each phase. The last line printed is one JSON object with every figure.

    .venv/bin/python scripts/bench_engine.py [--quick] [--no-ha] [--profile]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import io
import json
import os
import pstats
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any, Final

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench_ha import (  # noqa: E402
    BUS_EVENT,
    CAMERAS,
    NOTIFY,
    WORKFLOWS,
    automations,
    cameras_of,
    quantile,
    role,
    run_as_in_production,
    start_home_assistant,
)
from homeassistant.const import __version__ as HA_VERSION  # noqa: E402
from homeassistant.core import Context, HomeAssistant, ServiceCall, callback  # noqa: E402
from homeassistant.setup import async_setup_component  # noqa: E402

from custom_components.opennvr_workflows.engine import (  # noqa: E402
    ActionRequest,
    Engine,
    NvrEvent,
    RunContext,
)
from custom_components.opennvr_workflows.engine.monitor import Monitor  # noqa: E402
from custom_components.opennvr_workflows.engine.ports import SEVERITIES  # noqa: E402
from custom_components.opennvr_workflows.engine.store import Store  # noqa: E402
from custom_components.opennvr_workflows.engine.testing import FakeAi, FakeEffects  # noqa: E402
from custom_components.opennvr_workflows.workflow import model as m  # noqa: E402

#: A key in the service data of the engine's calls: the services the automations call
#: note the automations' arrivals only (the engine's effects note their own).
ENGINE_SIDE: Final = "engine_side"
#: The automations' actuator: a service call behind a condition, as the workflows' ``if``.
ACT_EVENT: Final = "opennvr_bench_tamper"
ACT_SERVICE: Final = ("bench_light", "turn_on")
RATES: Final = (200.0, 500.0, 1000.0, 2000.0)
CAMERALESS: Final = (10, 50, 500)
P99_GOAL_MS: Final = 5.0
#: Limits that never drop a benchmark event: no cooldown, one run per track (every event is
#: its own track), no hourly ceiling; as ``mode: parallel`` automations.
OPEN: Final = m.WorkflowLimits(
    cooldown_s=0, one_at_a_time="track", per_hour=10**9, ai_per_hour=10**9
)


# ── measuring ─────────────────────────────────────────────────────────────────────────────


def load_avg() -> tuple[float, float, float]:
    one, five, fifteen = os.getloadavg()
    return (round(one, 2), round(five, 2), round(fifteen, 2))


@dataclass
class Span:
    """Wall and CPU seconds of one measurement, and the load average at its end; where the
    wall time went: the seconds the event loop's thread waited in its selector with nothing
    to run, and the CPU seconds of each thread by name (Linux; empty elsewhere)."""

    wall_s: float = 0.0
    cpu_s: float = 0.0
    load: tuple[float, float, float] = (0.0, 0.0, 0.0)
    loop_idle_s: float = 0.0
    threads_cpu_s: dict[str, float] = field(default_factory=dict)
    #: The store's writer: its wall seconds inside batches (reading the queue aside), its
    #: CPU seconds there, and the seconds of the loop's idle that fell inside a batch; the
    #: same wall seconds and idle for the synced batches alone (those a durable flush asked
    #: for, which end with the disk's sync).
    store_busy_s: float = 0.0
    store_busy_cpu_s: float = 0.0
    loop_idle_in_store_s: float = 0.0
    store_synced_s: float = 0.0
    loop_idle_in_sync_s: float = 0.0


def threads_cpu() -> dict[int, tuple[str, float]]:
    """Each live thread's name and CPU seconds so far, by native id (``/proc``; Linux)."""
    names = {t.native_id: t.name for t in threading.enumerate() if t.native_id is not None}
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    out: dict[int, tuple[str, float]] = {}
    for tid, name in names.items():
        try:
            with open(f"/proc/self/task/{tid}/stat", encoding="ascii") as stat:
                fields = stat.read().rpartition(")")[2].split()
        except OSError:
            continue
        out[tid] = (name, (int(fields[11]) + int(fields[12])) / tick)
    return out


@contextmanager
def loop_idle_counted(span: Span) -> Iterator[None]:
    """Add to ``span.loop_idle_s`` the time the running loop's selector waits (if any),
    and to its ``store_*`` figures what the store's writer did meanwhile
    (:func:`store_batches_timed`)."""
    try:
        selector = asyncio.get_running_loop()._selector  # type: ignore[attr-defined]
    except (RuntimeError, AttributeError):
        yield
        return
    select, own = selector.select, vars(selector).get("select")
    idle: list[tuple[float, float]] = []

    def counted(timeout: float | None = None) -> Any:
        started = time.perf_counter()
        try:
            return select(timeout)
        finally:
            ended = time.perf_counter()
            span.loop_idle_s += ended - started
            idle.append((started, ended))

    selector.select = counted
    try:
        with store_batches_timed() as batches:
            yield
    finally:
        if own is None:
            del selector.select  # the class's method is back
        else:
            selector.select = own  # an enclosing span's counter
        span.store_busy_s = sum(end - start for start, end, _, _ in batches)
        span.store_busy_cpu_s = sum(cpu for _, _, cpu, _ in batches)
        span.loop_idle_in_store_s = overlap(idle, [(start, end) for start, end, _, _ in batches])
        synced = [(start, end) for start, end, _, sync in batches if sync]
        span.store_synced_s = sum(end - start for start, end in synced)
        span.loop_idle_in_sync_s = overlap(idle, synced)


@contextmanager
def store_batches_timed() -> Iterator[list[tuple[float, float, float, bool]]]:
    """Each batch the store's writer runs meanwhile: its start and end (``perf_counter``),
    the writer's CPU seconds in it, and whether it was synced (a durable flush in it:
    the batch's third field, as ``Store._run_batch`` reads it); appended on the writer's
    thread."""
    batches: list[tuple[float, float, float, bool]] = []
    run_batch = Store._run_batch

    def timed(self: Store, conn: Any, batch: Any) -> None:
        started, cpu = time.perf_counter(), time.thread_time()
        synced = any(item[2] for item in batch)
        try:
            run_batch(self, conn, batch)
        finally:
            batches.append((started, time.perf_counter(), time.thread_time() - cpu, synced))

    Store._run_batch = timed  # type: ignore[method-assign]
    try:
        yield batches
    finally:
        Store._run_batch = run_batch  # type: ignore[method-assign]


def overlap(a: list[tuple[float, float]], b: list[tuple[float, float]]) -> float:
    """Seconds that two lists of intervals, each in time order and not overlapping
    itself, have in common."""
    i = j = 0
    total = 0.0
    while i < len(a) and j < len(b):
        start, end = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if end > start:
            total += end - start
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


@contextmanager
def measured() -> Iterator[Span]:
    span = Span()
    gc.collect()
    threads = threads_cpu()
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        with loop_idle_counted(span):
            yield span
    finally:
        span.wall_s = time.perf_counter() - wall
        span.cpu_s = time.process_time() - cpu
        span.load = load_avg()
        for tid, (name, seconds) in threads_cpu().items():
            used = seconds - threads.get(tid, (name, 0.0))[1]
            span.threads_cpu_s[name] = round(span.threads_cpu_s.get(name, 0.0) + used, 3)


@dataclass
class Report:
    """Every figure: a table row each (with its span) and the JSON line."""

    rows: list[tuple[str, Any, str, Span | None]] = field(default_factory=list)
    result: dict[str, Any] = field(default_factory=dict)

    def add(self, key: str, label: str, value: Any, span: Span | None, target: str = "") -> None:
        self.rows.append((label, value, target, span))
        self.result[key] = value
        if span is not None:
            self.result[f"{key}__wall_s"] = round(span.wall_s, 3)
            self.result[f"{key}__cpu_s"] = round(span.cpu_s, 3)
            self.result[f"{key}__load"] = span.load
            self.result[f"{key}__loop_idle_s"] = round(span.loop_idle_s, 3)
            self.result[f"{key}__threads_cpu_s"] = span.threads_cpu_s
            self.result[f"{key}__store_busy_s"] = round(span.store_busy_s, 3)
            self.result[f"{key}__store_busy_cpu_s"] = round(span.store_busy_cpu_s, 3)
            self.result[f"{key}__loop_idle_in_store_s"] = round(span.loop_idle_in_store_s, 3)
            self.result[f"{key}__store_synced_s"] = round(span.store_synced_s, 3)
            self.result[f"{key}__loop_idle_in_sync_s"] = round(span.loop_idle_in_sync_s, 3)

    def ratio(self, key: str, label: str, ours: str, theirs: str, target: str = "") -> None:
        a, b = self.result.get(ours), self.result.get(theirs)
        value = round(a / b, 2) if a is not None and b else None
        self.add(key, label, value, None, target)

    def print(self) -> None:
        print(f"{'figure':<58} {'value':>10} {'target':<9} {'wall s':>7} {'cpu s':>7}  load")
        for label, value, target, span in self.rows:
            shown = f"{value:,}" if isinstance(value, int) else f"{value}"
            where = (
                f"{span.wall_s:7.2f} {span.cpu_s:7.2f}  {' '.join(map(str, span.load))}"
                if span
                else ""
            )
            print(f"{label:<58} {shown:>10} {target:<9} {where}")


class Arrivals:
    """When each event's first effect arrived (by alert id), and waiting for a set of them."""

    def __init__(self) -> None:
        self.at: dict[str, float] = {}
        self._pending: set[str] = set()
        self._done = asyncio.Event()

    def mark(self, alert_id: str) -> None:
        if alert_id in self.at:
            return
        self.at[alert_id] = time.perf_counter()
        pending = self._pending
        if pending:
            pending.discard(alert_id)
            if not pending:
                self._done.set()

    def expect(self, ids: set[str]) -> None:
        self._pending = ids - self.at.keys()
        self._done = asyncio.Event()
        if not self._pending:
            self._done.set()

    async def wait(self, what: str, seconds: float = 120.0) -> None:
        try:
            async with asyncio.timeout(seconds):
                await self._done.wait()
        except TimeoutError:
            raise SystemExit(f"{what}: {len(self._pending)} first effects missing") from None

    def reset(self) -> None:
        self.at.clear()


# ── the engine's site ─────────────────────────────────────────────────────────────────────


class TimedEffects(FakeEffects):
    """Effects that note when each alert's first effect reached them, and keep nothing.

    Given a Home Assistant, a notify and an action end in the same services the automations
    call (``notify.<NOTIFY>`` and :data:`ACT_SERVICE`, blocking, with a context of their
    own, as the integration's effects call them), so both sides of a flood pay for the same
    service call; without one (``--no-ha``), they only note the arrival."""

    def __init__(self, arrivals: Arrivals, hass: HomeAssistant | None = None) -> None:
        super().__init__()
        self.arrivals = arrivals
        self.hass = hass

    def _first(self, ctx: RunContext) -> None:
        self.arrivals.mark(ctx.trigger.alert_id or ctx.run_id)

    async def _call(self, domain: str, service: str, data: dict[str, Any]) -> None:
        if self.hass is not None:
            await self.hass.services.async_call(
                domain, service, data, blocking=True, context=Context()
            )

    async def notify(self, ctx: RunContext, request: ActionRequest) -> None:
        message = request.params.get("message", "")
        await self._call("notify", NOTIFY, {"message": message, ENGINE_SIDE: True})
        self._first(ctx)

    async def call_action(self, ctx: RunContext, request: ActionRequest) -> None:
        await self._call(*ACT_SERVICE, {**(request.params.get("data") or {}), ENGINE_SIDE: True})
        self._first(ctx)

    async def log(self, ctx: RunContext, message: str) -> None:
        self._first(ctx)


def _notify_first() -> tuple[m.Step, ...]:
    return (m.ActionStep(m.NotifyAction(roles=("household",), message="Intrusion {alert_id}")),)


def _actuator_behind_if() -> tuple[m.Step, ...]:
    """A plain rule, then an action that moves things (the contract needs the rule)."""
    act = m.HomeAssistantAction(action=".".join(ACT_SERVICE), data={"message": "Lights {alert_id}"})
    severe = m.ValueCondition(name="severity", is_in=SEVERITIES[1:])
    paths = {"true": (m.ActionStep(act),), "false": ()}
    return (m.IfStep(conditions=(severe,), paths=paths),)


def site() -> dict[str, m.Workflow]:
    """150 workflows, each on its own 4 of the 200 cameras: intrusion alerts (a notify
    first), tamper alerts (an ``if``, then an actuator), loitering alerts (the default
    limits: a 60 s cooldown per camera)."""
    out: dict[str, m.Workflow] = {}
    for w in range(WORKFLOWS):
        cams = tuple(role(c) for c in cameras_of(w))
        for name, alert_type, then, limits in (
            ("intrusion", "intrusion", _notify_first(), OPEN),
            ("tamper", "tamper", _actuator_behind_if(), OPEN),
            ("loitering", "loitering", _notify_first(), m.WorkflowLimits()),
        ):
            out[f"{name}_{w:02d}"] = m.Workflow(
                name=f"{name} {w}",
                when=m.AlertTrigger(alert_type=alert_type, cameras=cams),
                state="on",
                limits=limits,
                then=then,
            )
    return out


def cameraless_site(n: int) -> dict[str, m.Workflow]:
    """``n`` workflows without a camera list: half by app and minimum severity, half by
    alert type and minimum severity."""
    out: dict[str, m.Workflow] = {}
    for w in range(n):
        severity = SEVERITIES[w % len(SEVERITIES)]
        trigger = (
            m.AlertTrigger(app=f"app{w}", min_severity=severity)
            if w % 2 == 0
            else m.AlertTrigger(alert_type=f"type{w}", min_severity=severity)
        )
        out[f"any_{w:03d}"] = m.Workflow(
            name=f"Any camera {w}", when=trigger, state="on", limits=OPEN, then=_notify_first()
        )
    return out


def alert(
    alert_id: str, camera: int, alert_type: str = "intrusion", app: str = "guard"
) -> NvrEvent:
    """An alert as a source builds it from a message."""
    return NvrEvent(
        kind="alert",
        source="nats",
        time=datetime.now(UTC),
        type=alert_type,
        camera_id=str(camera),
        camera_role=role(camera),
        alert_id=alert_id,
        app=app,
        severity="medium",
        track_id=alert_id,
    )


def unwatched(alert_id: str, camera: int) -> NvrEvent:
    """An event kind and type no workflow watches."""
    return NvrEvent(
        kind="event",
        source="nats",
        time=datetime.now(UTC),
        type="motion.detected.v1",
        camera_id=str(camera),
        camera_role=role(camera),
        payload={"zone": "drive"},
    )


async def open_engine(
    db: Path,
    workflows: dict[str, m.Workflow],
    arrivals: Arrivals,
    hass: HomeAssistant | None = None,
) -> Engine:
    """An engine on ``db`` running ``workflows``, its effects timed (and ending in
    ``hass``'s services when one is given: see :class:`TimedEffects`)."""
    engine = Engine(db, TimedEffects(arrivals, hass), FakeAi(), retention_interval_s=0)
    engine.set_workflows(workflows)
    await engine.start()
    return engine


Send = Callable[[Any], Any]


def feeder(engine: Engine, durable: bool) -> tuple[Send, list[asyncio.Future[Any]]]:
    """How a source hands the engine an event: ``dispatch_nowait`` (as the event hub does:
    no task per event; None when the event changed nothing), or the synchronous
    ``submit``. The futures still waiting for their commit are collected."""
    if not durable:
        return engine.submit, []
    dispatch = engine.dispatch_nowait
    waiting: list[asyncio.Future[Any]] = []

    def send(event: NvrEvent) -> None:
        waiter = dispatch(event)
        if waiter is not None:
            waiting.append(waiter)

    return send, waiting


class AlertSender:
    """Feeds the engine alerts as the event hub does (``dispatch_nowait``), noting when
    each one's dispatch settled: its event-to-durable time."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._durable = has_dispatch_commit(engine)
        self.committed: dict[str, float] = {}
        self._waiting: set[asyncio.Future[Any]] = set()

    def __call__(self, alert_id: str, camera: int) -> None:
        event = alert(alert_id, camera)
        if not self._durable:
            self._engine.submit(event)
            return
        waiter = self._engine.dispatch_nowait(event)
        if waiter is None:
            self.committed[alert_id] = time.perf_counter()
            return
        self._waiting.add(waiter)
        waiter.add_done_callback(partial(self._done, alert_id))

    def _done(self, alert_id: str, task: asyncio.Future[Any]) -> None:
        self.committed[alert_id] = time.perf_counter()
        self._waiting.discard(task)

    async def settle(self) -> None:
        """Wait for every commit asked for; raise what a dispatch raised."""
        await asyncio.gather(*self._waiting)


def ha_sender(hass: HomeAssistant) -> Callable[[str, int], None]:
    """Fires the automations' event for an alert, as the engine's sender does."""
    fire = hass.bus.async_fire

    def send(alert_id: str, camera: int) -> None:
        fire(BUS_EVENT, {"camera": role(camera), "type": "intrusion", "alert_id": alert_id})

    return send


def commits(engine: Engine) -> tuple[int, int]:
    """The store's commits and synced commits so far (0 where it does not count them)."""
    store = engine.store
    return getattr(store, "commits", 0), getattr(store, "synced_commits", 0)


def has_dispatch_commit(engine: Engine) -> bool:
    """Whether this engine's ``dispatch`` waits for the commit (it may be the same as
    ``submit`` in an older engine, and then only one column is measured)."""
    return hasattr(engine, "durable")


async def files_size(db: Path) -> tuple[int, int]:
    """Bytes of the database file and of its WAL (read off the event loop)."""

    def sizes() -> tuple[int, int]:
        wal = db.with_name(db.name + "-wal")
        return (
            db.stat().st_size if db.exists() else 0,
            wal.stat().st_size if wal.exists() else 0,
        )

    return await asyncio.to_thread(sizes)


# ── the phases ────────────────────────────────────────────────────────────────────────────


@dataclass
class Sizes:
    dispatch: int
    reps: int
    flood: int
    rate_s: float
    sustain_s: float


QUICK = Sizes(dispatch=40_000, reps=5, flood=2_000, rate_s=1.5, sustain_s=8.0)
FULL = Sizes(dispatch=200_000, reps=5, flood=10_000, rate_s=5.0, sustain_s=30.0)


async def burst(send: Send, make: Callable[[int], Any], n: int, waiting: list[Any]) -> Span:
    """Send ``n`` events built in the loop; wait for the commits they asked for."""
    with measured() as span:
        for i in range(n):
            send(make(i))
        if waiting:
            await asyncio.gather(*waiting)
            waiting.clear()
    return span


async def best_of(reps: int, run: Callable[[], Awaitable[Span]]) -> Span:
    """The fastest of ``reps`` runs (the least disturbed by the machine's other work)."""
    spans = [await run() for _ in range(reps)]
    return min(spans, key=lambda s: s.wall_s)


@dataclass
class Bench:
    """What the phases share: the report, the sizes, the site, Home Assistant (or None)."""

    report: Report
    sizes: Sizes
    tmp: Path
    arrivals: Arrivals
    engine: Engine
    hass: HomeAssistant | None
    profile: bool
    counter: int = 0

    def tag(self, name: str) -> Callable[[int], str]:
        self.counter += 1
        prefix = f"{name}{self.counter}-"
        return lambda i: f"{prefix}{i}"


async def dispatch_phase(b: Bench) -> None:
    """Part 1: events that start no run."""
    n, engine, report = b.sizes.dispatch, b.engine, b.report
    durable = has_dispatch_commit(engine)
    modes = [("submit", False), ("dispatch", True)] if durable else [("submit", False)]
    started = engine.stats.started
    # Each camera's loitering workflow starts once; every later loitering alert is dropped.
    warm, waiting = feeder(engine, durable)
    for c in range(1, CAMERAS + 1):
        warm(alert(f"warm-{c}", c, "loitering"))
    await asyncio.gather(*waiting)
    await engine.idle()
    cases: list[tuple[str, str, Callable[[int], NvrEvent]]] = [
        ("no_workflow", "no workflow watches it", lambda i: unwatched("", i % CAMERAS + 1)),
        (
            "unwatched_camera",
            "watched type, camera no workflow names",
            lambda i: alert(str(i), CAMERAS + 1 + i % CAMERAS),
        ),
        (
            "cooldown",
            "watched, dropped by cooldown (limits on)",
            lambda i: alert(str(i), i % CAMERAS + 1, "loitering"),
        ),
    ]
    dropped_before = engine.stats.dropped.get("cooldown", 0)
    expect_dropped = 0
    for key, label, make in cases:
        for mode, use_durable in modes:
            # A drop that waits for its commit is two orders slower: fewer of them.
            count = max(2_000, n // 10) if key == "cooldown" and use_durable else n
            if key == "cooldown":
                expect_dropped += count * b.sizes.reps
            send, waiting = feeder(engine, use_durable)
            span = await best_of(b.sizes.reps, partial(burst, send, make, count, waiting))
            report.add(
                f"engine_{key}_{mode}_per_s",
                f"engine {mode}: {label} (ev/s)",
                round(count / span.wall_s),
                span,
                ">= 50,000" if mode == "submit" else "",
            )
    dropped = engine.stats.dropped.get("cooldown", 0) - dropped_before
    if dropped != expect_dropped or engine.stats.started != started + CAMERAS:
        raise SystemExit(f"the cooldown case did not drop every event: {engine.stats}")
    if b.hass is not None:
        fire = b.hass.bus.async_fire
        ha_cases: list[tuple[str, str, str, int]] = [
            ("no_workflow", "nothing listens to it", "opennvr_bench_other", 1),
            ("unwatched_camera", "camera no automation names", BUS_EVENT, CAMERAS + 1),
        ]
        for key, label, event_type, first in ha_cases:

            async def run(event_type: str = event_type, first: int = first) -> Span:
                with measured() as span:
                    for i in range(n):
                        fire(event_type, {"camera": role(first + i % CAMERAS), "type": "intrusion"})
                    assert b.hass is not None
                    await b.hass.async_block_till_done()
                return span

            span = await best_of(b.sizes.reps, run)
            report.add(f"ha_{key}_per_s", f"HA bus: {label} (ev/s)", round(n / span.wall_s), span)
            report.ratio(
                f"ratio_{key}",
                f"ratio engine dispatch/HA: {key}",
                f"engine_{key}_{modes[-1][0]}_per_s",
                f"ha_{key}_per_s",
            )


async def cameraless_phase(b: Bench) -> None:
    """Part 2: 10 / 50 / 500 workflows without a camera list, side by side."""
    n, report = b.sizes.dispatch, b.report
    engines = {
        count: await open_engine(b.tmp / f"any{count}.db", cameraless_site(count), b.arrivals)
        for count in CAMERALESS
    }
    best: dict[int, Span] = {}
    least_cpu: dict[int, float] = {}
    try:
        for _ in range(b.sizes.reps):  # interleaved, so each count sees the same load
            for count, engine in engines.items():
                send, waiting = feeder(engine, has_dispatch_commit(engine))
                span = await burst(
                    send, lambda i: alert(str(i), i % CAMERAS + 1, "motion", "other"), n, waiting
                )
                if count not in best or span.wall_s < best[count].wall_s:
                    best[count] = span
                least_cpu[count] = min(least_cpu.get(count, span.cpu_s), span.cpu_s)
        for count, engine in engines.items():
            if engine.stats.started:
                raise SystemExit(f"{count} camera-less workflows started runs: {engine.stats}")
            report.add(
                f"engine_cameraless_{count}_per_s",
                f"engine dispatch: {count} camera-less workflows, none fit (ev/s)",
                round(n / best[count].wall_s),
                best[count],
            )
        report.ratio(
            "ratio_cameraless_500_vs_10",
            "ratio 500/10 camera-less workflows",
            f"engine_cameraless_{CAMERALESS[-1]}_per_s",
            f"engine_cameraless_{CAMERALESS[0]}_per_s",
            "~ 1",
        )
        # CPU seconds are what the index costs; a busy machine moves wall time more.
        report.add(
            "ratio_cameraless_500_vs_10_cpu",
            "ratio 500/10 camera-less workflows, by CPU time",
            round(least_cpu[CAMERALESS[0]] / least_cpu[CAMERALESS[-1]], 2),
            None,
            "~ 1",
        )
    finally:
        for engine in engines.values():
            await engine.stop()


async def flood_phase(b: Bench, notes: Arrivals | None) -> None:
    """Part 3: durable runs as fast as they come, engine then automations."""
    n, engine, report = b.sizes.flood, b.engine, b.report
    for key, alert_type, event_type, label in (
        ("notify", "intrusion", BUS_EVENT, "notify first"),
        ("actuator", "tamper", ACT_EVENT, "if + actuator"),
    ):
        ids = b.tag(f"flood-{key}")
        b.arrivals.expect({ids(i) for i in range(n)})
        send, waiting = feeder(engine, has_dispatch_commit(engine))
        commits_before, synced_before = commits(engine)
        with measured() as span:
            t0 = time.perf_counter()
            for i in range(n):
                send(alert(ids(i), i % CAMERAS + 1, alert_type))
            await b.arrivals.wait(f"engine flood {key}")
            await asyncio.gather(*waiting)
            await engine.idle()
        last = max(b.arrivals.at[ids(i)] for i in range(n))
        report.add(
            f"engine_runs_{key}_per_s",
            f"engine: durable runs/s, {label}",
            round(n / span.wall_s),
            span,
            ">= 2,000" if key == "notify" else "",
        )
        report.result[f"engine_runs_{key}_first_effects_per_s"] = round(n / (last - t0))
        report.add(
            f"engine_cpu_us_per_run_{key}",
            f"  engine CPU per run, {label} (us; less load-bound)",
            round(span.cpu_s / n * 1e6),
            None,
        )
        commits_after, synced_after = commits(engine)
        report.add(
            f"engine_runs_{key}_commits_per_1000",
            f"  commits / synced commits per 1,000 runs, {label}",
            f"{(commits_after - commits_before) * 1000 // n} / "
            f"{(synced_after - synced_before) * 1000 // n}",
            None,
        )
        if b.hass is None or notes is None:
            continue
        notes.expect({ids(i) for i in range(n)})
        fire = b.hass.bus.async_fire
        with measured() as span:
            for i in range(n):
                c = i % CAMERAS + 1
                fire(
                    event_type,
                    {
                        "camera": role(c),
                        "type": "intrusion",
                        "alert_id": ids(i),
                        "severity": "medium",
                    },
                )
            await notes.wait(f"automations flood {key}")
            await b.hass.async_block_till_done()
        report.add(
            f"ha_runs_{key}_per_s", f"HA automations: runs/s, {label}", round(n / span.wall_s), span
        )
        report.add(
            f"ha_cpu_us_per_run_{key}",
            f"  HA CPU per run, {label} (us)",
            round(span.cpu_s / n * 1e6),
            None,
        )
        report.ratio(
            f"ratio_runs_{key}",
            f"ratio engine/HA runs/s, {label}",
            f"engine_runs_{key}_per_s",
            f"ha_runs_{key}_per_s",
            ">= 2" if key == "actuator" else "",
        )


async def monitor_phase(b: Bench) -> None:
    """Part 3, the monitor's cost: the durable runs again, each check of the safety rule
    timed (apart from the figures above, which run untimed)."""
    n, engine, report = b.sizes.flood, b.engine, b.report
    spent = [0.0, 0]
    check = Monitor.check

    def timed(self: Monitor, *args: Any, **kwargs: Any) -> None:
        start = time.perf_counter()
        try:
            check(self, *args, **kwargs)
        finally:
            spent[0] += time.perf_counter() - start
            spent[1] += 1

    Monitor.check = timed  # type: ignore[method-assign]
    try:
        for key, alert_type, steps, label in (
            ("notify", "intrusion", 1, "notify first"),
            ("actuator", "tamper", 2, "if + actuator"),
        ):
            spent[:] = [0.0, 0]
            ids = b.tag(f"monitor-{key}")
            b.arrivals.expect({ids(i) for i in range(n)})
            send, waiting = feeder(engine, has_dispatch_commit(engine))
            with measured() as span:
                for i in range(n):
                    send(alert(ids(i), i % CAMERAS + 1, alert_type))
                await b.arrivals.wait(f"monitor {key}")
                await asyncio.gather(*waiting)
                await engine.idle()
            report.add(
                f"monitor_us_per_check_{key}",
                f"monitor: us per checked effect, {label}",
                round(spent[0] / max(1, spent[1]) * 1e6, 2),
                span,
            )
            report.add(
                f"monitor_us_per_step_{key}",
                f"  monitor: us per step run ({steps} a run), {label}",
                round(spent[0] / (n * steps) * 1e6, 2),
                None,
            )
            report.add(
                f"monitor_cpu_share_{key}",
                f"  monitor: share of the engine's CPU, {label}",
                f"{spent[0] / span.cpu_s:.1%}",
                None,
            )
    finally:
        Monitor.check = check  # type: ignore[method-assign]


async def paced(
    send: Callable[[str, int], None], ids: Callable[[int], str], rate: float, seconds: float
) -> dict[str, float]:
    """Offer ``rate`` events/s for ``seconds``, open loop; each event's intended time."""
    n = int(rate * seconds)
    intended: dict[str, float] = {}
    start = time.perf_counter() + 0.01
    i = 0
    while i < n:
        now = time.perf_counter()
        while i < n and start + i / rate <= now:
            alert_id = ids(i)
            intended[alert_id] = start + i / rate
            send(alert_id, i % CAMERAS + 1)
            i += 1
        await asyncio.sleep(0.0002)
    return intended


def latencies(intended: dict[str, float], at: dict[str, float]) -> list[float]:
    return sorted((at[a] - t) * 1000 for a, t in intended.items())


async def rates_phase(b: Bench, notes: Arrivals | None) -> None:
    """Part 4: p50/p99 event-to-first-effect at each offered rate, engine then automations."""
    engine, report, seconds = b.engine, b.report, b.sizes.rate_s
    durable = has_dispatch_commit(engine)
    for rate in RATES:
        tag = f"{rate:.0f}"
        ids = b.tag(f"rate{tag}")
        b.arrivals.reset()
        n = int(rate * seconds)
        b.arrivals.expect({ids(i) for i in range(n)})
        send = AlertSender(engine)
        profiler = cProfile.Profile() if b.profile and rate == RATES[-1] else None
        with measured() as span:
            if profiler:
                profiler.enable()
            intended = await paced(send, ids, rate, seconds)
            await b.arrivals.wait(f"engine at {tag}/s")
            await send.settle()
            if profiler:
                profiler.disable()
            await engine.idle()
        if profiler:
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(30)
            print(out.getvalue())
        lat = latencies(intended, b.arrivals.at)
        goal = f"< {P99_GOAL_MS:.0f}" if rate == RATES[-1] else ""
        report.add(
            f"engine_at_{tag}_p50_ms",
            f"engine p50 event->first effect @ {tag}/s (ms)",
            quantile(lat, 0.5),
            span,
        )
        report.add(
            f"engine_at_{tag}_p99_ms",
            f"engine p99 event->first effect @ {tag}/s (ms)",
            quantile(lat, 0.99),
            span,
            goal,
        )
        report.result[f"engine_at_{tag}_max_ms"] = round(lat[-1], 2)
        if durable:
            dur = latencies(intended, send.committed)
            report.add(
                f"engine_at_{tag}_durable_p99_ms",
                f"engine p99 event->durable (dispatch returned) @ {tag}/s (ms)",
                quantile(dur, 0.99),
                None,
            )
            report.result[f"engine_at_{tag}_durable_p50_ms"] = quantile(dur, 0.5)
        if b.hass is None or notes is None:
            continue
        hids = b.tag(f"harate{tag}")
        notes.reset()
        notes.expect({hids(i) for i in range(n)})
        with measured() as span:
            intended = await paced(ha_sender(b.hass), hids, rate, seconds)
            await notes.wait(f"automations at {tag}/s")
            await b.hass.async_block_till_done()
        lat = latencies(intended, notes.at)
        report.add(
            f"ha_at_{tag}_p50_ms",
            f"HA automations p50 event->notify @ {tag}/s (ms)",
            quantile(lat, 0.5),
            span,
        )
        report.add(
            f"ha_at_{tag}_p99_ms",
            f"HA automations p99 event->notify @ {tag}/s (ms)",
            quantile(lat, 0.99),
            span,
        )
        report.result[f"ha_at_{tag}_max_ms"] = round(lat[-1], 2)
        report.ratio(
            f"ratio_at_{tag}_p99",
            f"ratio engine/HA p99 @ {tag}/s",
            f"engine_at_{tag}_p99_ms",
            f"ha_at_{tag}_p99_ms",
        )


async def sustained_phase(b: Bench, rate: float) -> None:
    """Part 5: a fresh database, ``rate`` runs/s offered for the sustained time."""
    report, seconds = b.report, b.sizes.sustain_s
    db = b.tmp / "sustained.db"
    arrivals = Arrivals()
    engine = await open_engine(db, site(), arrivals, b.hass)
    n = int(rate * seconds)
    ids = b.tag("sustain")
    arrivals.expect({ids(i) for i in range(n)})
    send = AlertSender(engine)
    most_active = 0
    wal_max = 0
    stop_sampling = asyncio.Event()

    async def sample() -> None:
        nonlocal wal_max, most_active
        while not stop_sampling.is_set():
            _, wal = await files_size(db)
            wal_max = max(wal_max, wal)
            most_active = max(most_active, len(engine.active_runs()))
            try:
                async with asyncio.timeout(0.5):
                    await stop_sampling.wait()
            except TimeoutError:
                pass

    sampler = asyncio.create_task(sample())
    commits_before, synced_before = commits(engine)
    with measured() as span:
        intended = await paced(send, ids, rate, seconds)
        await arrivals.wait("sustained run", seconds=max(120.0, seconds * 4))
        last = max(arrivals.at.values())
        await send.settle()
        await engine.idle()
    stop_sampling.set()
    await sampler
    lat = latencies(intended, arrivals.at)
    runs = engine.stats.started
    commits_after, synced_after = commits(engine)
    db_bytes, wal_bytes = await files_size(db)
    await engine.stop()
    closed_db, closed_wal = await files_size(db)
    tag = f"{rate:.0f}/s for {seconds:.0f} s"
    report.add(
        "sustained_runs_per_s",
        f"sustained: runs completed/s, offered {tag}",
        round(n / (last - min(intended.values()))),
        span,
    )
    report.add(
        "sustained_p50_ms", "sustained: p50 event->first effect (ms)", quantile(lat, 0.5), span
    )
    report.add(
        "sustained_p99_ms", "sustained: p99 event->first effect (ms)", quantile(lat, 0.99), span
    )
    report.add(
        "sustained_max_ms", "sustained: max event->first effect (ms)", round(lat[-1], 2), span
    )
    report.add(
        "sustained_cpu_us_per_run",
        "sustained: CPU per run (us, the pacing loop's wake-ups included)",
        round(span.cpu_s / runs * 1e6),
        span,
    )
    report.add(
        "sustained_most_active_runs", "sustained: most runs in flight (sampled)", most_active, span
    )
    report.add(
        "sustained_wal_max_bytes", "sustained: largest WAL seen (bytes, sampled)", wal_max, span
    )
    report.add(
        "sustained_bytes_per_run_open",
        "sustained: (database + WAL) bytes/run, file open",
        round((db_bytes + wal_bytes) / runs),
        span,
    )
    report.add(
        "sustained_bytes_per_run_closed",
        "sustained: (database + WAL) bytes/run, after stop",
        round((closed_db + closed_wal) / runs),
        span,
    )
    report.add(
        "sustained_commits_per_1000",
        "sustained: commits / synced commits per 1,000 runs",
        f"{(commits_after - commits_before) * 1000 // runs} / "
        f"{(synced_after - synced_before) * 1000 // runs}",
        None,
    )
    report.result.update(
        sustained_runs=runs, sustained_db_bytes=db_bytes, sustained_wal_bytes=wal_bytes
    )


# ── Home Assistant's side ─────────────────────────────────────────────────────────────────


def actuator_automations() -> list[dict[str, Any]]:
    """50 automations doing what the tamper workflows do: a condition, then a service."""
    return [
        {
            "id": f"bench_act{w:02d}",
            "alias": f"Tamper {w:02d}",
            "triggers": [
                {
                    "trigger": "event",
                    "event_type": ACT_EVENT,
                    "event_data": {"camera": role(c), "type": "intrusion"},
                }
                for c in cameras_of(w)
            ],
            "conditions": [
                {
                    "condition": "template",
                    "value_template": "{{ trigger.event.data.severity in "
                    "['medium', 'high', 'critical'] }}",
                }
            ],
            "mode": "parallel",
            "max": 10_000,
            "actions": [
                {
                    "action": ".".join(ACT_SERVICE),
                    "data": {"message": "Lights {{ trigger.event.data.alert_id }}"},
                }
            ],
        }
        for w in range(WORKFLOWS)
    ]


async def start_ha(config_dir: Path, notes: Arrivals) -> HomeAssistant:
    hass = await start_home_assistant(config_dir)

    @callback
    def handle(call: ServiceCall) -> None:
        if call.data.get(ENGINE_SIDE):  # the engine's effects note their own arrivals
            return
        notes.mark(str(call.data.get("message", "")).rpartition(" ")[2])

    hass.services.async_register("notify", NOTIFY, handle)
    hass.services.async_register(*ACT_SERVICE, handle)
    configured = {"automation": automations() + actuator_automations()}
    if not await async_setup_component(hass, "automation", configured):
        raise SystemExit("the automations did not set up")
    await hass.async_start()
    await hass.async_block_till_done()
    return hass


# ── the run ───────────────────────────────────────────────────────────────────────────────


async def bench(sizes: Sizes, with_ha: bool, sustain_rate: float, profile: bool) -> Report:
    report = Report()
    tmp = Path(await asyncio.to_thread(tempfile.mkdtemp, prefix="bench_engine_"))
    notes = Arrivals()
    hass = await start_ha(tmp / "ha", notes) if with_ha else None
    arrivals = Arrivals()
    engine = await open_engine(tmp / "bench.db", site(), arrivals, hass)
    b = Bench(report, sizes, tmp, arrivals, engine, hass, profile)
    try:
        await dispatch_phase(b)
        await cameraless_phase(b)
        await flood_phase(b, notes if hass else None)
        await monitor_phase(b)
        await rates_phase(b, notes if hass else None)
        db_bytes, wal_bytes = await files_size(tmp / "bench.db")
        report.add(
            "bytes_per_run_open",
            "phases 1-4: (database + WAL) bytes/run, file open",
            round((db_bytes + wal_bytes) / max(1, engine.stats.started)),
            None,
        )
        report.result.update(
            runs_total=engine.stats.started, db_bytes=db_bytes, wal_bytes=wal_bytes
        )
        await engine.stop()
        await sustained_phase(b, sustain_rate)
    finally:
        await engine.stop()
        if hass is not None:
            await hass.async_stop()
        await asyncio.to_thread(shutil.rmtree, tmp, True)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller counts, 8 s sustained")
    parser.add_argument("--no-ha", action="store_true", help="skip Home Assistant's side")
    parser.add_argument("--sustain-rate", type=float, default=500.0, help="events/s offered")
    parser.add_argument("--sustain-s", type=float, help="seconds of the sustained run")
    parser.add_argument(
        "--profile", action="store_true", help="profile the engine at the highest offered rate"
    )
    args = parser.parse_args()
    sizes = QUICK if args.quick else FULL
    if args.sustain_s is not None:
        sizes.sustain_s = args.sustain_s
    wall, cpu = time.perf_counter(), time.process_time()
    report = run_as_in_production(bench(sizes, not args.no_ha, args.sustain_rate, args.profile))
    report.result.update(
        home_assistant=None if args.no_ha else HA_VERSION,
        asyncio_debug=False,
        log_level="WARNING",
        cameras=CAMERAS,
        quick=args.quick,
        python=sys.version.split()[0],
        wall_s=round(time.perf_counter() - wall, 1),
        cpu_s=round(time.process_time() - cpu, 1),
        load=load_avg(),
    )
    print(
        f"One core, asyncio debug off, logging WARNING; {CAMERAS} cameras; "
        f"Home Assistant {'not run' if args.no_ha else HA_VERSION}. Events built in the timed "
        "loops; the engine fed by eager dispatch tasks as the event hub does; latencies from "
        "each event's intended send time. Wall/CPU per figure: its best (or only) run."
    )
    report.print()
    print(json.dumps(report.result))


if __name__ == "__main__":
    main()
