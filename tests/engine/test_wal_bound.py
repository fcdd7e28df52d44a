"""The WAL stays a few megabytes while thousands of runs are written, and
shrinks to nothing once the engine is idle.

A watcher thread samples the WAL file's size every few milliseconds while a
flood of runs (each with an actuator, so durable commits are mixed in) is
written. Without the writer's own checkpoints a checkpoint running beside a
busy writer never catches up and the WAL only grows (tens of megabytes for
these runs).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
from pathlib import Path

import pytest

from custom_components.opennvr_workflows.engine import Engine
from custom_components.opennvr_workflows.engine import store as store_module
from custom_components.opennvr_workflows.engine.testing import (
    FakeAi,
    FakeEffects,
    ManualClock,
    event,
)
from custom_components.opennvr_workflows.workflow import model as m

RUNS = 3000
#: The bound the test holds the WAL to: "a few megabytes".
WAL_BOUND_BYTES = 6 * 1024 * 1024


def busy_workflow() -> m.Workflow:
    """Each run: an actuator (a durable commit), a notification and two logs."""
    return m.Workflow(
        name="Busy yard",
        when=m.AlertTrigger(alert_type="intrusion", cameras=("yard",)),
        state="on",
        limits=m.WorkflowLimits(
            cooldown_s=0, one_at_a_time="track", per_hour=10**6, ai_per_hour=10**6
        ),
        # A plain rule before the actuator: the engine refuses an ungated one at run time.
        conditions=(m.CameraCondition(("yard",)),),
        then=(
            m.ActionStep(m.LogAction("someone in the {camera}")),
            m.ActionStep(m.AppAction(app="lights", action="on")),
            m.ActionStep(m.NotifyAction(roles=("owner",), message="Lights on in the {camera}")),
            m.ActionStep(m.LogAction("done with {camera}")),
        ),
    )


def _emptied(wal: Path, within_s: float) -> bool:
    """Whether the WAL file is empty within ``within_s`` seconds (polled, off the loop)."""
    deadline = time.monotonic() + within_s
    while wal.stat().st_size > 0:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


class WalWatcher:
    """Samples the WAL file's size on a thread until stopped; keeps the largest seen."""

    def __init__(self, wal: Path) -> None:
        self.wal = wal
        self.largest = 0
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        while not self._stop.is_set():
            with contextlib.suppress(FileNotFoundError):
                self.largest = max(self.largest, os.stat(self.wal).st_size)
            self.samples += 1
            time.sleep(0.002)

    def __enter__(self) -> WalWatcher:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


async def test_wal_stays_bounded_under_a_flood_and_empties_when_idle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_module, "IDLE_CHECKPOINT_S", 0.2)
    db = tmp_path / "workflows.db"
    wal = Path(f"{db}-wal")
    effects = FakeEffects()
    engine = Engine(db, effects, FakeAi(), ManualClock(), retention_interval_s=0)
    engine.set_workflows({"busy": busy_workflow()})
    await engine.start()
    try:
        with WalWatcher(wal) as watcher:
            for i in range(RUNS):
                engine.submit(event(track_id=f"t{i}"))
                if i % 50 == 49:  # a sustained stream, not one burst
                    await asyncio.sleep(0)
            await engine.idle()
            await engine.store.flush()
        written = engine.store.commits
        assert len(effects.of("app_action")) == RUNS
        assert watcher.samples > 10
        assert 0 < watcher.largest < WAL_BOUND_BYTES, (watcher.largest, written)

        # Idle: the writer copies the rest into the database and truncates the WAL.
        assert await asyncio.to_thread(_emptied, wal, 10.0)
    finally:
        await engine.stop(grace_s=0.1)
    assert db.stat().st_size > RUNS * 200  # the runs went into the database itself
