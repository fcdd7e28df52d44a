#!/usr/bin/env python3
"""Cost per durable run against the length of the flood, next to Home Assistant's automations.

Durable runs with a plain ``if`` and an actuator (a Home Assistant action that moves things:
its start is synced to disk before it runs, so the run is power-cut safe), fed as the event
hub feeds the engine (``bench_engine.py``'s part 3), on Home Assistant's own loop in a Home
Assistant started as in production, beside 50 automations doing the same (an event trigger,
a condition, a service call); the engine's actuator calls the same service the automations
call (``bench_engine.TimedEffects``). Floods of 1,000 and 10,000 events, each on a fresh
engine database, by turns (1,000, 10,000, 1,000 again), ``--rounds`` times (3), after a
1,000-event flood that warms both sides up and is not counted: CPU per run (the process: the
loop, the store's thread, Home Assistant's executor) and runs/s, for both sides. A single
flood's ratio of runs/s swings widely on a shared machine, so the summary gives the median
over the rounds and its range. The goal: the cost per run flat in the flood's length (10,000
against 1,000 within 15 %). For the engine, where the flood's wall time went too: the share
the loop's thread waited in its selector with nothing to run (every run it drives waits on
the store's commit) and how much of that wait fell while the store's writer was running a
batch; the share of the flood the writer spent in batches and how much of that it was on the
CPU (the rest: the disk's sync, and waiting for the GIL the loop holds); the share in synced
batches (those a durable flush asked for, ended by the disk's sync) and how much of the
loop's wait fell in them; the CPU per run of the loop's thread and of the store's.

``--levers`` measures the engine's flood levers side by side in the same process, each on the
same floods: ``before`` (as the engine was: the event hub started a task per event, a
coroutine waiting on ``Engine.dispatch``, each run row had a future of its own, and every
run was driven at once however many came: put back by :func:`before_levers`) and ``after``
(the code as it is: ``Engine.dispatch_nowait``, no task per event, run rows keep their own
outcome, at most ``MAX_DRIVING`` runs driven at once, the rest waiting their turn).

Called by ``scripts/bench_ha.py`` (which prints its figures); alone it prints one JSON line.

    .venv/bin/python scripts/bench_flood.py [--levers] [--rounds N]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any, Final

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_engine import (
    Arrivals,
    Bench,
    Report,
    Sizes,
    flood_phase,
    load_avg,
    open_engine,
    site,
    start_ha,
)
from bench_footprint import run_as_in_production

from custom_components.opennvr_workflows.engine import Engine
from custom_components.opennvr_workflows.engine.store import WRITER_THREAD

LENGTHS = (1_000, 10_000, 1_000)
#: How many times the floods of :data:`LENGTHS` run, by turns.
ROUNDS: Final = 3
#: The thread whose CPU a flood's figures name beside the store's writer: the event loop's.
LOOP_THREAD: Final = "MainThread"
_FLOODS = itertools.count(1)


async def one_flood(n: int, tmp: Path, notes: Arrivals, hass: Any, tag: str) -> dict[str, Any]:
    """One flood of ``n`` if + actuator runs (and the notify-first runs before it, as part 3
    of bench_engine does), on a fresh database; the figures of both sides."""
    arrivals = Arrivals()
    db = tmp / f"flood-{tag}-{n}.db"
    engine = await open_engine(db, site(), arrivals, hass)
    report = Report()
    sizes = Sizes(dispatch=0, reps=1, flood=n, rate_s=0.0, sustain_s=0.0)
    b = Bench(report, sizes, tmp, arrivals, engine, hass, False)
    b.counter = next(_FLOODS) * 100  # every flood's alert ids its own
    notes.reset()
    try:
        await flood_phase(b, notes)
    finally:
        await engine.stop()
    await asyncio.to_thread(_remove_db, db)
    r = report.result
    span = "engine_runs_actuator_per_s__"
    wall, threads = r[f"{span}wall_s"], r[f"{span}threads_cpu_s"]
    idle, busy = r[f"{span}loop_idle_s"], r[f"{span}store_busy_s"]
    return {
        "n": n,
        # Where the engine flood's wall time went: the loop's thread waiting in its selector
        # with nothing to run (every run it drives waits on the store), and how much of it
        # while the store's writer ran a batch, and a synced one (the disk's sync ends it);
        # the writer in batches, how much of that on the CPU, and in synced batches; the
        # loop's thread and the store's thread on the CPU.
        "engine_loop_idle_pct": percent(idle, wall),
        "engine_loop_idle_in_store_pct": percent(r[f"{span}loop_idle_in_store_s"], idle),
        "engine_loop_idle_in_sync_pct": percent(r[f"{span}loop_idle_in_sync_s"], idle),
        "engine_store_busy_pct": percent(busy, wall),
        "engine_store_busy_cpu_pct": percent(r[f"{span}store_busy_cpu_s"], busy),
        "engine_store_synced_pct": percent(r[f"{span}store_synced_s"], wall),
        "engine_loop_cpu_us_per_run": round(threads.get(LOOP_THREAD, 0.0) / n * 1e6),
        "engine_store_cpu_us_per_run": round(threads.get(WRITER_THREAD, 0.0) / n * 1e6),
        "engine_us_per_run": r["engine_cpu_us_per_run_actuator"],
        "engine_runs_per_s": r["engine_runs_actuator_per_s"],
        "ha_us_per_run": r["ha_cpu_us_per_run_actuator"],
        "ha_runs_per_s": r["ha_runs_actuator_per_s"],
        "ratio_runs_per_s": r["ratio_runs_actuator"],
        "notify_engine_us_per_run": r["engine_cpu_us_per_run_notify"],
        "load": load_avg(),
    }


def percent(part: float, whole: float) -> int:
    """``part`` as a whole percentage of ``whole`` (0 when there is no whole)."""
    return round(100 * part / whole) if whole else 0


def _remove_db(db: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        db.with_name(db.name + suffix).unlink(missing_ok=True)


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The 10,000-run floods' cost per run over the 1,000-run floods' (their means), and
    per length the median of the rounds' figures (with the range of the ratio)."""
    out: dict[str, Any] = {}
    by_length = {n: [r for r in rows if r["n"] == n] for n in sorted(set(LENGTHS))}
    short, long = by_length[LENGTHS[0]], by_length[LENGTHS[1]]
    for side in ("engine", "ha"):
        s = sum(r[f"{side}_us_per_run"] for r in short) / len(short)
        lg = sum(r[f"{side}_us_per_run"] for r in long) / len(long)
        out[f"{side}_us_per_run_1000"] = round(s)
        out[f"{side}_us_per_run_10000"] = round(lg)
        out[f"{side}_ratio_10000_1000"] = round(lg / s, 2)
    for n, of_n in by_length.items():
        ratios = [r["ratio_runs_per_s"] for r in of_n]
        out[f"ratio_runs_per_s_{n}"] = round(statistics.median(ratios), 2)
        out[f"ratio_runs_per_s_{n}_range"] = [min(ratios), max(ratios)]
        out[f"medians_{n}"] = {
            key: statistics.median(r[key] for r in of_n)
            for key in of_n[0]
            if key not in ("n", "load", "round")
        }
        out[f"floods_{n}"] = len(of_n)
    return out


@contextmanager
def before_levers() -> Iterator[None]:
    """The engine as it was before the levers: a task per dispatched event, and every run
    driven at once (no bound on the runs driven)."""
    nowait, init = Engine.dispatch_nowait, Engine.__init__

    def task_per_event(self: Engine, event: Any) -> asyncio.Future[None] | None:
        task = asyncio.Task(self.dispatch(event), eager_start=True)
        return None if task.done() else task  # type: ignore[return-value]

    def unbounded(self: Engine, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        self._driver.max_driving = 10**9

    Engine.dispatch_nowait = task_per_event  # type: ignore[method-assign]
    Engine.__init__ = unbounded  # type: ignore[method-assign]
    try:
        yield
    finally:
        Engine.dispatch_nowait = nowait  # type: ignore[method-assign]
        Engine.__init__ = init  # type: ignore[method-assign]


async def bench(levers: bool, rounds: int = ROUNDS) -> dict[str, Any]:
    tmp = Path(await asyncio.to_thread(tempfile.mkdtemp, prefix="bench_flood_"))
    notes = Arrivals()
    hass = await start_ha(tmp / "ha", notes)
    result: dict[str, Any] = {"lengths": list(LENGTHS), "rounds": rounds}
    variants: list[tuple[str, Callable[[], AbstractContextManager[None]]]] = [
        ("plain", nullcontext)
    ]
    if levers:
        variants = [("before", before_levers), ("after", nullcontext)]
    try:
        # One flood first, not counted: the first in a process pays for what every later
        # one finds ready (code run for the first time, caches, SQLite's pages), on both
        # sides, and would make the 1,000-run floods look dearer than they are.
        await one_flood(LENGTHS[0], tmp, notes, hass, "warm-up")
        for tag, context in variants:
            rows = []
            with context():
                for turn in range(rounds):
                    for n in LENGTHS:
                        row = await one_flood(n, tmp, notes, hass, f"{tag}{turn}")
                        rows.append({"round": turn + 1, **row})
            result[tag] = {"rows": rows, **summary(rows)}
    finally:
        await hass.async_stop()
        await asyncio.to_thread(shutil.rmtree, tmp, True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levers", action="store_true", help="before/after the levers")
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="floods of each length")
    args = parser.parse_args()
    started = time.perf_counter()
    result = run_as_in_production(bench(args.levers, max(1, args.rounds)))
    result["wall_s"] = round(time.perf_counter() - started, 1)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
