#!/usr/bin/env python3
"""Cost per durable run against the length of the flood, next to Home Assistant's automations.

Durable runs with a plain ``if`` and an actuator (a Home Assistant action that moves things:
its start is synced to disk before it runs, so the run is power-cut safe), fed as the event
hub feeds the engine (``bench_engine.py``'s part 3), on Home Assistant's own loop in a
Home Assistant started as in production, beside 50 automations doing the same (an event
trigger, a condition, a service call). Floods of 1,000 and 10,000 events, each on a fresh
engine database, by turns (1,000, 10,000, 1,000 again): CPU per run (the process: the loop,
the store's thread, Home Assistant's executor) and runs/s, for both sides. The goal: the
cost per run flat in the flood's length (10,000 against 1,000 within 15 %).

``--levers`` measures the levers side by side in the same process, each on the same floods:
``before`` (the engine as it was: each caller of ``Engine.durable`` waits on a shield of the
shared commit future, and each queued statement is a closure that keeps its cursor until the
batch settles: put back by :func:`before_levers`), ``after`` (the code as it is: a plain
future per caller, one slotted object per statement), and ``after + gc.freeze()`` (the heap
that was there before the flood moved out of the collector's generations, so it is not
walked again and again while thousands of runs are in flight; not shipped, see the README).

Called by ``scripts/bench_ha.py`` (which prints its figures); alone it prints one JSON line.

    .venv/bin/python scripts/bench_flood.py [--levers]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import itertools
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from functools import partial
from pathlib import Path
from typing import Any

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
from custom_components.opennvr_workflows.engine.store import Store

LENGTHS = (1_000, 10_000, 1_000)
_FLOODS = itertools.count(1)


async def one_flood(n: int, tmp: Path, notes: Arrivals, hass: Any, tag: str) -> dict[str, Any]:
    """One flood of ``n`` if + actuator runs (and the notify-first runs before it, as part 3
    of bench_engine does), on a fresh database; the figures of both sides."""
    arrivals = Arrivals()
    db = tmp / f"flood-{tag}-{n}.db"
    engine = await open_engine(db, site(), arrivals)
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
    return {
        "n": n,
        "engine_us_per_run": r["engine_cpu_us_per_run_actuator"],
        "engine_runs_per_s": r["engine_runs_actuator_per_s"],
        "ha_us_per_run": r["ha_cpu_us_per_run_actuator"],
        "ha_runs_per_s": r["ha_runs_actuator_per_s"],
        "ratio_runs_per_s": r["ratio_runs_actuator"],
        "notify_engine_us_per_run": r["engine_cpu_us_per_run_notify"],
        "load": load_avg(),
    }


def _remove_db(db: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        db.with_name(db.name + suffix).unlink(missing_ok=True)


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The 10,000-run flood's cost per run over the 1,000-run floods' (their mean)."""
    short = [r for r in rows if r["n"] == LENGTHS[0]]
    long = [r for r in rows if r["n"] == LENGTHS[1]]
    out: dict[str, Any] = {}
    for side in ("engine", "ha"):
        s = sum(r[f"{side}_us_per_run"] for r in short) / len(short)
        lg = sum(r[f"{side}_us_per_run"] for r in long) / len(long)
        out[f"{side}_us_per_run_1000"] = round(s)
        out[f"{side}_us_per_run_10000"] = round(lg)
        out[f"{side}_ratio_10000_1000"] = round(lg / s, 2)
    out["ratio_runs_per_s_10000"] = long[0]["ratio_runs_per_s"]
    out["ratio_runs_per_s_1000"] = short[0]["ratio_runs_per_s"]
    return out


@contextmanager
def before_levers() -> Iterator[None]:
    """The engine as it was before the levers: callers of ``durable`` wait on a shield of
    one shared future; statements are queued as closures that return their cursor."""
    waiter, execute, nowait = Engine._durable_waiter, Store.execute, Store.execute_nowait
    shared: dict[int, asyncio.Future[None]] = {}

    def shielded(self: Engine) -> asyncio.Future[None]:
        barrier = shared.get(id(self))
        if barrier is None or barrier.done():
            barrier = shared[id(self)] = asyncio.get_running_loop().create_future()
            waiter(self).add_done_callback(partial(_pass_on, barrier))
        return asyncio.shield(barrier)

    def old_execute(self: Store, sql: str, params: Any = ()) -> asyncio.Future[Any]:
        return self.submit(lambda c: c.execute(sql, params).rowcount)

    def old_nowait(self: Store, sql: str, params: Any = ()) -> None:
        self.submit_nowait(lambda c: c.execute(sql, params))

    Engine._durable_waiter = shielded  # type: ignore[method-assign]
    Store.execute, Store.execute_nowait = old_execute, old_nowait  # type: ignore[method-assign]
    try:
        yield
    finally:
        Engine._durable_waiter = waiter  # type: ignore[method-assign]
        Store.execute, Store.execute_nowait = execute, nowait  # type: ignore[method-assign]


def _pass_on(barrier: asyncio.Future[None], done: asyncio.Future[None]) -> None:
    if barrier.done():
        return
    if done.cancelled():
        barrier.cancel()
    elif (err := done.exception()) is not None:
        barrier.set_exception(err)
    else:
        barrier.set_result(None)


@contextmanager
def frozen() -> Iterator[None]:
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


async def bench(levers: bool) -> dict[str, Any]:
    tmp = Path(await asyncio.to_thread(tempfile.mkdtemp, prefix="bench_flood_"))
    notes = Arrivals()
    hass = await start_ha(tmp / "ha", notes)
    result: dict[str, Any] = {"lengths": list(LENGTHS)}
    variants: list[tuple[str, Callable[[], AbstractContextManager[None]]]] = [
        ("plain", nullcontext)
    ]
    if levers:
        variants = [("before", before_levers), ("after", nullcontext), ("after_frozen", frozen)]
    try:
        for tag, context in variants:
            with context():
                rows = [await one_flood(n, tmp, notes, hass, tag) for n in LENGTHS]
            result[tag] = {"rows": rows, **summary(rows)}
    finally:
        await hass.async_stop()
        await asyncio.to_thread(shutil.rmtree, tmp, True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levers", action="store_true", help="before/after the levers")
    args = parser.parse_args()
    started = time.perf_counter()
    result = run_as_in_production(bench(args.levers))
    result["wall_s"] = round(time.perf_counter() - started, 1)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
