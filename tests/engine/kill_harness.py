"""The outside-kill harness: kill an engine process at random moments, count from the world.

:func:`kill_rounds` starts :mod:`.kill_child` on one database again and again and
sends it SIGKILL after a random delay the child knows nothing of: during start-up,
while it restores and replays runs, mid-step, mid-commit, while it drains. Each
round offers more alerts; the source redelivers every unacknowledged one. A last
round runs to the end without a kill. :func:`tally` then compares three records
kept independently: the alerts acknowledged (the source's fsynced log), the runs
and steps recorded (the database), and the effects performed (the world's fsynced
log). Used by ``tests/engine/test_outside_kill.py`` (a short version) and
``scripts/bench_crash.py`` (hundreds of kills).
"""

from __future__ import annotations

import contextlib
import json
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

from custom_components.opennvr_workflows.engine.driver import MAX_DRIVING

CHILD = Path(__file__).with_name("kill_child.py")
EFFECTS_LOG = "effects.log"
ACKED_LOG = "acked.log"
ACTUATOR = "app_action"


@dataclass
class Rounds:
    """What the kill rounds did: kills, where they landed, how long it took."""

    kills: int = 0
    #: Rounds whose process finished before its kill came (a clean stop).
    clean_exits: int = 0
    #: Where kills landed, by the last progress line the process printed.
    landed: Counter[str] = field(default_factory=Counter)
    offered: int = 0
    #: Rounds the last, unkilled process needed to finish.
    final_rounds: int = 0
    wall_s: float = 0.0
    max_restored: int = 0


@dataclass
class Tally:
    """The three records compared. Every ``*_problems`` list must be empty."""

    offered: int = 0
    acked: int = 0
    runs: int = 0
    actuator_runs: int = 0
    actuator_executions: int = 0
    actuators_done: int = 0
    actuators_unknown: int = 0
    unknown_that_acted: int = 0
    unknown_alerts: int = 0
    repeated_plain_effects: int = 0
    unknown_steps_counted: int = 0
    unknown_steps_column: int = 0
    #: An alert acknowledged whose run is not in the database.
    accepted_then_lost: list[str] = field(default_factory=list)
    #: An alert with two runs, or an actuator performed twice.
    duplicates: list[str] = field(default_factory=list)
    #: A run or an actuator whose fate nothing records: a run not done, an actuator
    #: neither done nor unknown, done without having acted, acted with no record of it,
    #: an unknown one nobody was alerted of, an alert never acknowledged.
    silent_losses: list[str] = field(default_factory=list)
    #: Runs whose ``unknown_steps`` differs from their steps marked unknown.
    unknown_steps_problems: list[str] = field(default_factory=list)

    def problems(self) -> dict[str, list[str]]:
        return {
            name: value[:10]
            for name, value in asdict(self).items()
            if isinstance(value, list) and value
        }


def _child(
    db: Path, folder: Path, total: int, batch: int, pause_s: float, max_driving: int
) -> subprocess.Popen[str]:
    args = [str(db), str(folder), str(total), str(batch), str(pause_s), str(max_driving)]
    return subprocess.Popen(
        [sys.executable, str(CHILD), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _progress(stdout: str) -> tuple[str, int]:
    """The last point the process reached, and how many runs its start restored."""
    lines = stdout.split()
    restored = 0
    if "started" in lines:
        restored = int(lines[lines.index("started") + 1])
    for point, name in (
        ("drained", "draining"),
        ("offered", "replaying"),
        ("started", "streaming"),
    ):
        if point in lines:
            return name, restored
    return "starting", restored


def kill_rounds(
    folder: Path,
    kills: int,
    *,
    seed: int,
    per_round: int = 100,
    max_delay_s: float = 1.0,
    batch: int = 10,
    pause_s: float = 0.02,
    final_timeout_s: float = 120.0,
    max_driving: int = MAX_DRIVING,
) -> Rounds:
    """Kill ``kills`` processes at random delays in ``[0, max_delay_s)``, each offered
    ``per_round`` more alerts, then let one run to the end. ``max_driving``: the engine's
    bound on runs driven at once (a small one keeps runs waiting their turn when a kill
    lands)."""
    rng = random.Random(seed)
    db = folder / "engine.db"
    out = Rounds()
    began = time.monotonic()
    total = 0
    while out.kills < kills:
        # Each process gets ``per_round`` alerts past those acknowledged so far: the
        # backlog stays bounded however many kills land before the stream starts.
        total = max(total, _count_lines(folder / ACKED_LOG) + per_round)
        proc = _child(db, folder, total, batch, pause_s, max_driving)
        try:
            stdout, stderr = proc.communicate(timeout=rng.uniform(0.0, max_delay_s))
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            stdout, stderr = proc.communicate()
            out.kills += 1
            landed, restored = _progress(stdout)
            out.landed[landed] += 1
            out.max_restored = max(out.max_restored, restored)
            continue
        if proc.returncode != 0:
            raise AssertionError(f"the engine process failed ({proc.returncode}):\n{stderr}")
        out.clean_exits += 1
    out.offered = total
    for _ in range(5):
        out.final_rounds += 1
        proc = _child(db, folder, total, batch, pause_s, max_driving)
        try:
            stdout, stderr = proc.communicate(timeout=final_timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise
        out.max_restored = max(out.max_restored, _progress(stdout)[1])
        if proc.returncode == 0:
            break
    else:
        raise AssertionError(f"the engine did not finish after the kills:\n{stderr}")
    out.wall_s = time.monotonic() - began
    return out


def _count_lines(path: Path) -> int:
    if not path.exists():
        return 0
    with open(path, "rb") as lines:
        return sum(1 for _ in lines)


def _lines(path: Path) -> list[list[str]]:
    """The complete lines of an append-only log (a line cut by a kill never happened)."""
    if not path.exists():
        return []
    text = path.read_text(encoding="utf-8")
    return [line.split() for line in text.splitlines(keepends=True) if line.endswith("\n")]


def tally(folder: Path, offered: int) -> Tally:
    """Compare the acknowledgements, the database and the world's effects."""
    out = Tally(offered=offered)
    acks: dict[str, set[str]] = {}
    for number, run_ids in _lines(folder / ACKED_LOG):
        acks.setdefault(f"alert-{number}", set()).update(r for r in run_ids.split(",") if r != "-")
    out.acked = len(acks)
    performed = Counter((method, key) for method, key in _lines(folder / EFFECTS_LOG))
    with contextlib.closing(sqlite3.connect(folder / "engine.db")) as conn:
        runs = conn.execute(
            "SELECT id, status, unknown_steps, trigger FROM workflow_runs"
        ).fetchall()
        steps = conn.execute("SELECT run_id, path, kind, status FROM workflow_run_steps").fetchall()
    out.runs = len(runs)
    by_run: dict[str, list[tuple[str, str, str]]] = {}
    for run_id, path, kind, status in steps:
        by_run.setdefault(run_id, []).append((path, kind, status))
    runs_of: dict[str, list[str]] = {}
    for run_id, status, unknown_column, trigger in runs:
        alert_id = json.loads(trigger).get("alert_id")
        runs_of.setdefault(alert_id, []).append(run_id)
        if status != "done":
            out.silent_losses.append(f"run {run_id} ({alert_id}) ended {status}")
        counted = sum(1 for _, _, s in by_run.get(run_id, []) if s == "unknown")
        out.unknown_steps_counted += counted
        out.unknown_steps_column += unknown_column
        if counted != unknown_column:
            out.unknown_steps_problems.append(
                f"run {run_id}: {counted} steps unknown, unknown_steps={unknown_column}"
            )
        _check_actuator(out, run_id, by_run.get(run_id, []), performed)
    for alert_id, run_ids in runs_of.items():
        if len(run_ids) > 1:
            out.duplicates.append(f"{alert_id} started {len(run_ids)} runs")
    known = {r[0] for r in runs}
    for alert_id, run_ids in acks.items():
        if alert_id not in runs_of or not run_ids <= known:
            out.accepted_then_lost.append(f"{alert_id} acknowledged as {sorted(run_ids)}")
    for number in range(offered):
        if f"alert-{number}" not in acks:
            out.silent_losses.append(f"alert-{number} was never acknowledged")
    for (method, key), times in performed.items():
        if method == ACTUATOR:
            out.actuator_executions += times
            if key.partition(":")[0] not in known:
                out.silent_losses.append(f"{ACTUATOR} {key} acted for a run not recorded")
        elif method != "alert" and times > 1:
            out.repeated_plain_effects += times - 1
    return out


def _check_actuator(
    out: Tally,
    run_id: str,
    steps: list[tuple[str, str, str]],
    performed: Counter[tuple[str, str]],
) -> None:
    actuators = [(path, status) for path, kind, status in steps if kind == ACTUATOR]
    if not actuators:
        out.silent_losses.append(f"run {run_id} has no {ACTUATOR} step")
        return
    out.actuator_runs += 1
    for path, status in actuators:
        key = f"{run_id}:{path}"
        acted = performed[(ACTUATOR, key)]
        if acted > 1:
            out.duplicates.append(f"{key} acted {acted} times")
        if status == "done":
            out.actuators_done += 1
            if acted != 1:
                out.silent_losses.append(f"{key} recorded done, acted {acted} times")
        elif status == "unknown":
            out.actuators_unknown += 1
            out.unknown_that_acted += acted
            if performed[("alert", key)]:
                out.unknown_alerts += 1
            else:
                out.silent_losses.append(f"{key} unknown, and nobody was alerted")
        else:
            out.silent_losses.append(f"{key} left {status}")
