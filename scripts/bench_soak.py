#!/usr/bin/env python3
"""What durability costs, and what the disk sees over a long run.

Two parts, both the engine alone (no Home Assistant), each figure printed with
the wall and CPU time it took and the load average:

1. **Durable actuators.** Runs/s with one actuator per run (an app action,
   which moves things: its intent is written before it acts), with the intent's
   commit synced to the disk (power-cut safe, the default) and not synced (only
   crash safe), side by side and alternating; offered all at once (group commit
   shares syncs among waiting runs) and one run at a time (every run pays its
   own sync). Beside them, the disk's own rate of SQLite commits in WAL mode with
   and without a sync per commit, the baseline that says what one sync costs.
2. **Soak.** Runs offered at a steady pace (default 500/s for 600 s; ``--quick``:
   20 s), each an actuator and a log; the database and WAL sizes are printed over
   time with the largest WAL seen (sampled every 5 ms), and the bytes per run at
   the end, then once more after the writer's idle checkpoint.

The last line printed is one JSON object with every figure.

    .venv/bin/python scripts/bench_soak.py [--quick] [--rate 500] [--duration 600]
        [--db-dir DIR]   # put the database on the disk you care about (an SD card)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import sqlite3
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from custom_components.opennvr_workflows.engine import Engine, NvrEvent  # noqa: E402
from custom_components.opennvr_workflows.engine.testing import FakeAi, FakeEffects  # noqa: E402
from custom_components.opennvr_workflows.workflow import model as m  # noqa: E402


def load() -> float:
    return round(os.getloadavg()[0], 2)


def workflow() -> m.Workflow:
    """Yard alert -> turn the lights on (an actuator) -> log."""
    return m.Workflow(
        name="Lights on for intruders",
        when=m.AlertTrigger(alert_type="intrusion", cameras=("yard",)),
        state="on",
        limits=m.WorkflowLimits(
            cooldown_s=0, one_at_a_time="track", per_hour=10**9, ai_per_hour=10**9
        ),
        then=(
            m.ActionStep(m.AppAction(app="lights", action="on")),
            m.ActionStep(m.LogAction("lights on in the {camera}")),
        ),
    )


def alert(i: int) -> NvrEvent:
    return NvrEvent(
        kind="alert",
        source="nats",
        time=datetime.now(UTC),
        type="intrusion",
        camera_id="cam-yard",
        camera_role="yard",
        alert_id=f"a{i}",
        track_id=f"t{i}",
        severity="medium",
    )


def sizes(db: Path) -> tuple[int, int]:
    """The database file's and the WAL's size in bytes."""
    wal = Path(f"{db}-wal")
    return db.stat().st_size, wal.stat().st_size if wal.exists() else 0


@contextlib.contextmanager
def fresh_db(base: Path | None) -> Iterator[Path]:
    with tempfile.TemporaryDirectory(dir=base) as folder:
        yield Path(folder) / "workflows.db"


class Timer:
    """Wall and CPU seconds of a block, and the load average when it ended."""

    def __enter__(self) -> Timer:
        self.wall0, self.cpu0 = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *_: object) -> None:
        self.wall = time.perf_counter() - self.wall0
        self.cpu = time.process_time() - self.cpu0
        self.load = load()


# ── part 1: what the synced intent costs ────────────────────────────────────


async def actuator_runs(db: Path, n: int, *, synced: bool, one_at_a_time: bool) -> dict[str, Any]:
    effects = FakeEffects()
    engine = Engine(db, effects, FakeAi(), retention_interval_s=0)
    engine.set_workflows({"lights": workflow()})
    await engine.start()
    engine.store.sync_durable = synced
    offered = [alert(i) for i in range(n)]
    gc.collect()
    try:
        with Timer() as t:
            for event in offered:
                engine.submit(event)
                if one_at_a_time:
                    await engine.idle()
            await engine.idle()
        assert len(effects.of("app_action")) == n, len(effects.of("app_action"))
        store = engine.store
        return {
            "runs_per_s": round(n / t.wall),
            "runs_per_cpu_s": round(n / t.cpu),
            "wall_s": round(t.wall, 3),
            "cpu_s": round(t.cpu, 3),
            "load": t.load,
            "synced_commits": store.synced_commits,
            "runs_per_sync": round(store.durable_requests / store.synced_commits, 1)
            if store.synced_commits
            else None,
        }
    finally:
        await engine.stop()


def disk_baseline(db: Path, seconds: float) -> dict[str, Any]:
    """Bare SQLite in WAL mode: one small insert per commit, with and without a sync."""
    out: dict[str, Any] = {}
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("CREATE TABLE t (a INTEGER, b TEXT)")
        for mode in ("NORMAL", "FULL"):
            conn.execute(f"PRAGMA synchronous={mode}")
            n = 0
            with Timer() as t:
                end = time.perf_counter() + seconds
                while time.perf_counter() < end:
                    conn.execute("INSERT INTO t VALUES (?, 'x')", (n,))
                    n += 1
            out[f"commits_per_s_{mode.lower()}"] = round(n / t.wall)
            out["load"] = t.load
    finally:
        conn.close()
    return out


async def part_durability(args: argparse.Namespace) -> dict[str, Any]:
    print(f"== durable actuators: one actuator per run (load {load()})")
    result: dict[str, Any] = {}
    with fresh_db(args.db_dir) as db:
        base = disk_baseline(db, 1.0 if args.quick else 3.0)
    result["disk_baseline"] = base
    print(
        f"disk baseline (bare SQLite, WAL): {base['commits_per_s_normal']} commits/s unsynced, "
        f"{base['commits_per_s_full']} commits/s with a sync each  (load {base['load']})"
    )
    for label, n, single in (
        ("offered at once", args.sync_runs, False),
        ("one at a time", args.sync_runs // 10, True),
    ):
        best: dict[bool, dict[str, Any]] = {}
        for _ in range(args.rounds):
            for synced in (False, True):
                with fresh_db(args.db_dir) as db:
                    got = await actuator_runs(db, n, synced=synced, one_at_a_time=single)
                if synced not in best or got["runs_per_s"] > best[synced]["runs_per_s"]:
                    best[synced] = got
        ratio = best[True]["runs_per_s"] / best[False]["runs_per_s"]
        cpu_ratio = best[True]["runs_per_cpu_s"] / best[False]["runs_per_cpu_s"]
        key = "flood" if not single else "sequential"
        result[key] = {"runs": n, "not_synced": best[False], "synced": best[True]}
        result[key]["synced_over_not_synced"] = round(ratio, 3)
        result[key]["synced_over_not_synced_cpu"] = round(cpu_ratio, 3)
        for synced in (False, True):
            got = best[synced]
            print(
                f"{label:>16}, intent {'synced    ' if synced else 'not synced'}: "
                f"{got['runs_per_s']:>6} runs/s, {got['runs_per_cpu_s']:>6} runs/cpu-s  "
                f"({n} runs, wall {got['wall_s']} s, "
                f"cpu {got['cpu_s']} s, load {got['load']}"
                + (
                    f", {got['synced_commits']} syncs, {got['runs_per_sync']} runs per sync)"
                    if synced
                    else ")"
                )
            )
        print(
            f"{label:>16}: synced / not synced = {ratio:.2f} per wall second, "
            f"{cpu_ratio:.2f} per CPU second  (best of {args.rounds} each)"
        )
    return result


# ── part 2: the soak ────────────────────────────────────────────────────────


class WalPeak:
    """The largest WAL file seen, sampled every 5 ms on a thread."""

    def __init__(self, db: Path) -> None:
        self.wal = Path(f"{db}-wal")
        self.largest = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        while not self._stop.is_set():
            with contextlib.suppress(FileNotFoundError):
                self.largest = max(self.largest, self.wal.stat().st_size)
            time.sleep(0.005)

    def __enter__(self) -> WalPeak:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


async def part_soak(args: argparse.Namespace) -> dict[str, Any]:
    rate, duration = args.rate, args.duration
    print(f"== soak: {rate} runs/s offered for {duration} s (load {load()})")
    print(f"{'t_s':>6} {'runs':>8} {'db_MB':>8} {'wal_MB':>7} {'wal_peak_MB':>11} {'cpu%':>5} load")
    samples: list[dict[str, Any]] = []
    with fresh_db(args.db_dir) as db:
        effects = FakeEffects()
        engine = Engine(db, effects, FakeAi(), retention_interval_s=0)
        engine.set_workflows({"lights": workflow()})
        await engine.start()
        try:
            with WalPeak(db) as peak:
                start = time.perf_counter()
                cpu0 = last_cpu = time.process_time()
                last_t = start
                next_sample = start + args.every
                sent = 0
                worst_lag = 0.0
                total = int(rate * duration)
                while sent < total:
                    now = time.perf_counter()
                    due = min(total, int((now - start) * rate) + 1)
                    if due > sent:
                        worst_lag = max(worst_lag, now - (start + sent / rate))
                    while sent < due:
                        engine.submit(alert(sent))
                        sent += 1
                    if now >= next_sample:
                        db_b, wal_b = sizes(db)
                        cpu = time.process_time()
                        row = {
                            "t_s": round(now - start, 1),
                            "runs": engine.stats.started,
                            "db_bytes": db_b,
                            "wal_bytes": wal_b,
                            "wal_peak_bytes": peak.largest,
                            "cpu_pct": round(100 * (cpu - last_cpu) / (now - last_t)),
                            "load": load(),
                        }
                        samples.append(row)
                        print(
                            f"{row['t_s']:>6} {row['runs']:>8} {db_b / 1e6:>8.2f} "
                            f"{wal_b / 1e6:>7.2f} {peak.largest / 1e6:>11.2f} "
                            f"{row['cpu_pct']:>5} {row['load']}"
                        )
                        last_cpu, last_t = cpu, now
                        next_sample += args.every
                    await asyncio.sleep(0.002)
                await engine.idle()
                await engine.store.flush()
                wall = time.perf_counter() - start
                cpu_s = time.process_time() - cpu0
                runs = engine.stats.started
                db_b, wal_b = sizes(db)
                # Idle: the writer's idle checkpoint truncates the WAL.
                await asyncio.sleep(3.0)
                db_idle, wal_idle = sizes(db)
        finally:
            await engine.stop()
        acted = len(effects.of("app_action"))
    result = {
        "rate_offered": rate,
        "duration_s": duration,
        "runs": runs,
        "actuator_calls": acted,
        "rate_achieved": round(runs / wall, 1),
        "worst_pacing_lag_ms": round(worst_lag * 1000, 1),
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu_s, 1),
        "load": load(),
        "db_bytes": db_b,
        "wal_bytes": wal_b,
        "wal_peak_bytes": peak.largest,
        "bytes_per_run": round((db_b + wal_b) / runs),
        "idle_db_bytes": db_idle,
        "idle_wal_bytes": wal_idle,
        "idle_bytes_per_run": round((db_idle + wal_idle) / runs),
        "samples": samples,
    }
    print(
        f"soak: {runs} runs ({acted} actuator calls) in {wall:.1f} s = "
        f"{result['rate_achieved']} runs/s (cpu {cpu_s:.1f} s, worst pacing lag "
        f"{result['worst_pacing_lag_ms']} ms, load {result['load']})"
    )
    print(
        f"soak: at the end db {db_b / 1e6:.2f} MB + WAL {wal_b / 1e6:.2f} MB = "
        f"{result['bytes_per_run']} bytes/run; largest WAL {peak.largest / 1e6:.2f} MB; "
        f"idle: db {db_idle / 1e6:.2f} MB + WAL {wal_idle / 1e6:.2f} MB = "
        f"{result['idle_bytes_per_run']} bytes/run"
    )
    return result


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a 20 s soak and smaller runs")
    parser.add_argument("--rate", type=float, default=500.0, help="soak: runs offered per second")
    parser.add_argument("--duration", type=float, help="soak seconds (default 600; quick 20)")
    parser.add_argument("--every", type=float, help="soak: seconds between size samples")
    parser.add_argument("--sync-runs", type=int, help="runs per durability measurement")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds per pair")
    parser.add_argument("--db-dir", type=Path, help="where to put the databases")
    parser.add_argument("--skip-durability", action="store_true")
    parser.add_argument("--skip-soak", action="store_true")
    args = parser.parse_args()
    args.duration = args.duration or (20.0 if args.quick else 600.0)
    args.every = args.every or (2.0 if args.quick else 10.0)
    args.sync_runs = args.sync_runs or (2000 if args.quick else 10000)
    print(f"python {sys.version.split()[0]}, sqlite {sqlite3.sqlite_version}, load {load()}")
    out: dict[str, Any] = {}
    if not args.skip_durability:
        out["durability"] = await part_durability(args)
    if not args.skip_soak:
        out["soak"] = await part_soak(args)
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main())
