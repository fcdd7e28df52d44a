#!/usr/bin/env python3
"""Load benchmark of the workflow engine, next to Home Assistant's own bus and automations.

The spec's load test (RFC section 9): 200 cameras of synthetic events, 50 workflows, one
process on one core. It measures, for the engine:

* events/s dispatched for events that start no run (the trigger index's miss path);
* durable runs started per second (run row committed, first step executed, run ended);
* p50/p99 event-to-first-step latency at a fixed offered rate (measured from the intended
  send time, so a stall counts against every event it delays);
* bytes of database per run;

and, in the same process for the same flood, Home Assistant's bare event bus (one listener)
and 50 equivalent Home Assistant automations with native ``event`` triggers (4 cameras each,
filtered on ``event_data``; every event matches one automation), printing the ratios. The last
line printed is one JSON object with every figure. ``--quick`` finishes in under a minute.

    .venv/bin/python scripts/bench_engine.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from custom_components.opennvr_workflows.engine import (  # noqa: E402
    ActionRequest,
    Engine,
    NvrEvent,
    RunContext,
)
from custom_components.opennvr_workflows.engine.testing import FakeAi, FakeEffects  # noqa: E402
from custom_components.opennvr_workflows.workflow import model as m  # noqa: E402

CAMERAS = 200
WORKFLOWS = 50
PER_WORKFLOW = CAMERAS // WORKFLOWS


class TimedEffects(FakeEffects):
    """Effects that only note when each run's first step reached them."""

    def __init__(self) -> None:
        super().__init__()
        self.first_step: dict[str, float] = {}

    async def log(self, ctx: RunContext, message: str) -> None:
        self.first_step.setdefault(ctx.run_id, time.perf_counter())

    async def notify(self, ctx: RunContext, request: ActionRequest) -> None:
        return None


def role(camera: int) -> str:
    return f"cam{camera:03d}"


def workflows() -> dict[str, m.Workflow]:
    """50 workflows, each on its own 4 cameras' intrusion alerts; one log step."""
    out = {}
    for w in range(WORKFLOWS):
        cameras = tuple(role(c) for c in range(w * PER_WORKFLOW, (w + 1) * PER_WORKFLOW))
        out[f"wf{w:02d}"] = m.Workflow(
            name=f"Workflow {w}",
            when=m.AlertTrigger(alert_type="intrusion", cameras=cameras),
            state="on",
            limits=m.WorkflowLimits(
                cooldown_s=0, one_at_a_time="track", per_hour=10**9, ai_per_hour=10**9
            ),
            then=(m.ActionStep(m.LogAction("intrusion on {camera}")),),
        )
    return out


def events(n: int, *, matching: bool) -> list[NvrEvent]:
    now = datetime.now(UTC)
    kind_type = ("alert", "intrusion") if matching else ("event", "motion.detected.v1")
    return [
        NvrEvent(
            kind=kind_type[0],
            source="nats",
            time=now,
            type=kind_type[1],
            camera_id=f"id-{i % CAMERAS}",
            camera_role=role(i % CAMERAS),
            track_id=str(i),
            severity="medium",
        )
        for i in range(n)
    ]


async def bench_engine(
    db: Path, n_miss: int, n_runs: int, rate: float, n_rate: int
) -> dict[str, Any]:
    effects = TimedEffects()
    engine = Engine(db, effects, FakeAi(), retention_interval_s=0)
    engine.set_workflows(workflows())
    await engine.start()

    # 1. Events that start no run.
    miss = events(n_miss, matching=False)
    gc.collect()
    t0 = time.perf_counter()
    submit = engine.submit
    for ev in miss:
        submit(ev)
    miss_rate = n_miss / (time.perf_counter() - t0)
    assert engine.stats.started == 0

    # 2. Durable runs, as fast as they come.
    flood = events(n_runs, matching=True)
    gc.collect()
    t0 = time.perf_counter()
    for ev in flood:
        submit(ev)
    await engine.idle()
    runs_rate = n_runs / (time.perf_counter() - t0)
    assert engine.stats.started == n_runs, engine.stats

    # 3. Latency at a fixed offered rate.
    offered = events(n_rate, matching=True)
    sent: dict[str, float] = {}
    gc.collect()
    start = time.perf_counter() + 0.01
    i = 0
    while i < n_rate:
        now = time.perf_counter()
        while i < n_rate and start + i / rate <= now:
            for run_id in submit(offered[i]):
                sent[run_id] = start + i / rate
            i += 1
        await asyncio.sleep(0.0002)
    await engine.idle()
    latencies = sorted((effects.first_step[r] - t) * 1000 for r, t in sent.items())
    total_runs = engine.stats.started
    await engine.stop()
    size = sum(p.stat().st_size for p in db.parent.glob(db.name + "*"))
    return {
        "engine_events_per_s_no_run": round(miss_rate),
        "engine_runs_per_s": round(runs_rate),
        "offered_rate_per_s": rate,
        "latency_p50_ms": round(statistics.median(latencies), 3),
        "latency_p99_ms": round(latencies[int(len(latencies) * 0.99) - 1], 3),
        "latency_max_ms": round(latencies[-1], 3),
        "db_bytes_per_run": round(size / total_runs),
        "runs_total": total_runs,
    }


async def bench_home_assistant(n_bus: int, n_auto: int) -> dict[str, Any]:
    """Home Assistant's bus and 50 native automations on the same kind of flood."""
    from homeassistant.core import Event, callback
    from homeassistant.setup import async_setup_component
    from pytest_homeassistant_custom_component.common import (  # type: ignore[import-untyped]
        async_test_home_assistant,
    )

    with tempfile.TemporaryDirectory() as config_dir:
        async with async_test_home_assistant(config_dir=config_dir) as hass:
            seen = 0

            @callback
            def count(_: Event) -> None:
                nonlocal seen
                seen += 1

            hass.bus.async_listen("opennvr_bench_bus", count)
            data = [{"camera": role(i % CAMERAS), "type": "intrusion"} for i in range(n_bus)]
            gc.collect()
            t0 = time.perf_counter()
            for d in data:
                hass.bus.async_fire("opennvr_bench_bus", d)
            await hass.async_block_till_done()
            bus_rate = n_bus / (time.perf_counter() - t0)
            assert seen == n_bus

            automations = [
                {
                    "id": f"wf{w:02d}",
                    "alias": f"Workflow {w}",
                    "triggers": [
                        {
                            "trigger": "event",
                            "event_type": "opennvr_alert",
                            "event_data": {"camera": role(c), "type": "intrusion"},
                        }
                        for c in range(w * PER_WORKFLOW, (w + 1) * PER_WORKFLOW)
                    ],
                    "mode": "parallel",
                    "max": 10000,
                    "actions": [{"event": "opennvr_done", "event_data": {"w": w}}],
                }
                for w in range(WORKFLOWS)
            ]
            assert await async_setup_component(hass, "automation", {"automation": automations})
            await hass.async_block_till_done()
            done = 0

            @callback
            def finished(_: Event) -> None:
                nonlocal done
                done += 1

            hass.bus.async_listen("opennvr_done", finished)
            data = [{"camera": role(i % CAMERAS), "type": "intrusion"} for i in range(n_auto)]
            gc.collect()
            t0 = time.perf_counter()
            for d in data:
                hass.bus.async_fire("opennvr_alert", d)
            await hass.async_block_till_done()
            auto_rate = n_auto / (time.perf_counter() - t0)
            assert done == n_auto, (done, n_auto)
            await hass.async_stop(force=True)
    return {"ha_bus_events_per_s": round(bus_rate), "ha_automations_events_per_s": round(auto_rate)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller counts, under a minute")
    parser.add_argument("--rate", type=float, default=2000.0, help="offered events/s for latency")
    parser.add_argument("--no-ha", action="store_true", help="skip the Home Assistant side")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # one core
    scale = 1 if args.quick else 5
    n_miss, n_runs, n_rate = 100_000 * scale, 4_000 * scale, int(args.rate * 2 * scale)
    n_bus, n_auto = 100_000 * scale, 2_000 * scale

    with tempfile.TemporaryDirectory() as tmp:
        result = asyncio.run(
            bench_engine(Path(tmp) / "bench.db", n_miss, n_runs, args.rate, n_rate)
        )
    result.update(cameras=CAMERAS, workflows=WORKFLOWS, quick=args.quick)
    if not args.no_ha:
        result.update(asyncio.run(bench_home_assistant(n_bus, n_auto)))
        result["ratio_no_run_vs_ha_bus"] = round(
            result["engine_events_per_s_no_run"] / result["ha_bus_events_per_s"], 2
        )
        result["ratio_runs_vs_ha_automations"] = round(
            result["engine_runs_per_s"] / result["ha_automations_events_per_s"], 2
        )
    rows = [
        ("events/s dispatched, no run", result["engine_events_per_s_no_run"], ">= 50,000"),
        ("durable runs started/s", result["engine_runs_per_s"], ">= 2,000"),
        (f"p50 event->first step @ {args.rate:.0f}/s (ms)", result["latency_p50_ms"], ""),
        (f"p99 event->first step @ {args.rate:.0f}/s (ms)", result["latency_p99_ms"], "< 5"),
        ("database bytes per run", result["db_bytes_per_run"], ""),
    ]
    if not args.no_ha:
        rows += [
            ("HA bare bus events/s", result["ha_bus_events_per_s"], ""),
            ("HA 50 automations events/s", result["ha_automations_events_per_s"], ""),
            ("ratio: no-run dispatch / HA bus", result["ratio_no_run_vs_ha_bus"], ""),
            ("ratio: durable runs / HA automations", result["ratio_runs_vs_ha_automations"], ""),
        ]
    for name, value, target in rows:
        print(f"{name:<44} {value:>12,} {target}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
