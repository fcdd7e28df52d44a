"""Kill the engine from outside hundreds of times and count what the world saw.

The long version of ``tests/engine/test_outside_kill.py``: an engine process runs
the porch workflow (notify, wait, an actuator, wait, log) on one SQLite file under
a stream of alerts it acknowledges only after ``Engine.dispatch`` returned; it is
SIGKILLed after a random delay, restarted on the same file, again and again; a last
process runs to the end. Then the source's acknowledgements, the database and the
fake world's own fsynced log are compared (see ``tests/engine/kill_harness.py``).

    .venv/bin/python scripts/bench_crash.py [--kills 600] [--seed 1] [--folder DIR]

Prints the counts, where the kills landed, the timings and the load average, and
exits 1 if anything was lost or done twice.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.engine.kill_harness import kill_rounds, tally  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=600)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--per-round", type=int, default=100, help="new alerts per process")
    parser.add_argument("--max-delay", type=float, default=1.0, help="longest kill delay (s)")
    parser.add_argument("--folder", type=Path, help="keep the database and logs here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.folder or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        load_before = os.getloadavg()
        cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        rounds = kill_rounds(
            folder,
            args.kills,
            seed=args.seed,
            per_round=args.per_round,
            max_delay_s=args.max_delay,
        )
        cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
        began = time.monotonic()
        counts = tally(folder, rounds.offered)
        tally_s = time.monotonic() - began
        db_bytes = sum(p.stat().st_size for p in folder.glob("engine.db*") if p.is_file())
    child_cpu = (cpu_after.ru_utime + cpu_after.ru_stime) - (
        cpu_before.ru_utime + cpu_before.ru_stime
    )
    print(
        f"kills: {rounds.kills} (seed {args.seed}), clean exits before the kill came: "
        f"{rounds.clean_exits}, last process finished in {rounds.final_rounds} round(s)"
    )
    print(
        f"kills landed while: {dict(sorted(rounds.landed.items()))}; "
        f"most runs restored by one start: {rounds.max_restored}"
    )
    print(
        f"alerts offered {counts.offered}, acknowledged {counts.acked}, runs recorded {counts.runs}"
    )
    print(
        f"actuator: runs {counts.actuator_runs}, executions {counts.actuator_executions}, "
        f"done {counts.actuators_done}, unknown {counts.actuators_unknown} "
        f"(of which acted {counts.unknown_that_acted}, alerted {counts.unknown_alerts})"
    )
    print(
        f"unknown steps: counted from the steps {counts.unknown_steps_counted}, "
        f"runs' unknown_steps {counts.unknown_steps_column}"
    )
    print(f"repeated idempotent effects (notify, log; same key): {counts.repeated_plain_effects}")
    print(
        f"duplicates {len(counts.duplicates)}, accepted-then-lost "
        f"{len(counts.accepted_then_lost)}, silent losses {len(counts.silent_losses)}, "
        f"unknown_steps mismatches {len(counts.unknown_steps_problems)}"
    )
    print(
        f"wall {rounds.wall_s:.1f} s ({rounds.wall_s / max(1, rounds.kills):.2f} s a kill), "
        f"engine processes' CPU {child_cpu:.1f} s, tally {tally_s:.1f} s, "
        f"database + WAL {db_bytes / 1e6:.1f} MB"
    )
    print(f"load average before {_load(load_before)}, after {_load(os.getloadavg())}")
    problems = counts.problems()
    if problems:
        print(json.dumps(problems, indent=2))
        return 1
    return 0


def _load(load: tuple[float, float, float]) -> str:
    return "/".join(f"{x:.2f}" for x in load)


if __name__ == "__main__":
    sys.exit(main())
