"""Power cuts around an actuator: the disk keeps only what was synced.

The engine runs on :class:`~.power_cut_vfs.PowerCutVfs`, which keeps, for each
file, its bytes as of its last sync. The power is cut at the instant before and
the instant after the actuator (an app action opening the gate) reaches the
world; a second engine starts on what the disk kept. The actuator must then be
either not run at all, or recorded as ``unknown`` and never run again. The
background checkpoints are pushed out of the way, so no incidental sync hides a
missing one: only the store's own durable commit can save the intent.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from custom_components.opennvr_workflows.engine import Engine
from custom_components.opennvr_workflows.engine import store as store_module
from custom_components.opennvr_workflows.engine.ports import RunContext
from custom_components.opennvr_workflows.engine.store import Store
from custom_components.opennvr_workflows.engine.testing import (
    FakeAi,
    FakeEffects,
    ManualClock,
    event,
)
from custom_components.opennvr_workflows.workflow import model as m

from .power_cut_vfs import PowerCutVfs

GATE = "then.0"


def gate_opener() -> m.Workflow:
    """Yard alert -> open the gate (moves things: at most once) -> log."""
    return m.Workflow(
        name="Open the gate",
        when=m.AlertTrigger(alert_type="intrusion", cameras=("yard",)),
        state="on",
        limits=m.WorkflowLimits(
            cooldown_s=0, one_at_a_time="track", per_hour=10**6, ai_per_hour=10**6
        ),
        # A plain rule before the actuator: the engine refuses an ungated one at run time.
        conditions=(m.CameraCondition(("yard",)),),
        then=(
            m.ActionStep(m.AppAction(app="gate", action="open")),
            m.ActionStep(m.LogAction("gate opened for {camera}")),
        ),
    )


@pytest.fixture
def vfs(monkeypatch: pytest.MonkeyPatch) -> Iterator[PowerCutVfs]:
    """The power-cut VFS as SQLite's default, with no background checkpoint in the way."""
    monkeypatch.setattr(store_module, "CHECKPOINT_INTERVAL_S", 3600.0)
    monkeypatch.setattr(store_module, "CHECKPOINT_EVERY", 10**9)
    monkeypatch.setattr(store_module, "IDLE_CHECKPOINT_S", 3600.0)
    shim = PowerCutVfs()
    with shim.installed():
        yield shim


@dataclass
class World:
    """What reached the world, and the disk image taken at the chosen instant."""

    cut_at: str
    acted: list[str] = field(default_factory=list)
    image: dict[str, bytes | None] | None = None


def _effects(vfs: PowerCutVfs, world: World) -> FakeEffects:
    def before(method: str, ctx: RunContext | None) -> None:
        if method == "app_action" and world.cut_at == "before" and world.image is None:
            world.image = vfs.cut()

    def after(method: str, ctx: RunContext | None) -> None:
        if method == "app_action":
            assert ctx is not None
            world.acted.append(ctx.run_id)
            if world.cut_at == "after" and world.image is None:
                world.image = vfs.cut()

    return FakeEffects(before=before, after=after)


def _read(db: Path, sql: str) -> list[tuple[object, ...]]:
    with contextlib.closing(sqlite3.connect(f"file:{db}?vfs=unix", uri=True)) as conn:
        return conn.execute(sql).fetchall()


async def _first_life(tmp_path: Path, vfs: PowerCutVfs, world: World, *, synced: bool) -> Path:
    db = tmp_path / "before" / "workflows.db"
    db.parent.mkdir()
    engine = Engine(db, _effects(vfs, world), FakeAi(), ManualClock(), retention_interval_s=0)
    engine.set_workflows({"gate": gate_opener()})
    await engine.start()
    engine.store.sync_durable = synced
    try:
        engine.submit(event(track_id="t1"))
        await engine.idle()
    finally:
        await engine.stop(grace_s=0.1)
    assert world.image is not None, "the actuator was never called"
    return db


async def _second_life(tmp_path: Path, image: dict[str, bytes | None], db: Path) -> FakeEffects:
    """Restore what the disk kept and run the engine on it until it has nothing to do."""
    after = tmp_path / "after" / "workflows.db"
    after.parent.mkdir()
    PowerCutVfs.restore_to(image, db, after)
    effects = FakeEffects()
    engine = Engine(after, effects, FakeAi(), ManualClock(), retention_interval_s=0)
    engine.set_workflows({"gate": gate_opener()})
    try:
        await engine.start()
        await engine.idle()
    finally:
        await engine.stop(grace_s=0.1)
    return effects


def _violations(world: World, again: FakeEffects, after_db: Path) -> list[str]:
    """The promise, checked: run at most once; if it ran, the record says so (or unknown)."""
    problems = []
    if again.of("app_action"):
        problems.append(
            f"the gate opened again after the power cut ({len(again.of('app_action'))})"
        )
    steps = _read(after_db, f"SELECT status FROM workflow_run_steps WHERE path='{GATE}'")
    if world.acted and [s for (s,) in steps] not in (["unknown"], ["done"]):
        problems.append(f"the gate opened but the restarted engine's record is {steps}")
    return problems


@pytest.mark.parametrize("cut_at", ["before", "after"])
async def test_power_cut_around_the_actuator(tmp_path: Path, vfs: PowerCutVfs, cut_at: str) -> None:
    world = World(cut_at)
    db = await _first_life(tmp_path, vfs, world, synced=True)
    assert world.image is not None
    again = await _second_life(tmp_path, world.image, db)
    after_db = tmp_path / "after" / "workflows.db"

    assert _violations(world, again, after_db) == []
    assert len(world.acted) == 1  # the first life did call it (the cut lost only the disk)
    # The intent was on the disk before the call, so whichever side of the call the
    # power went, the restart finds it: the step is unknown, said, and not retried.
    assert _read(after_db, f"SELECT status FROM workflow_run_steps WHERE path='{GATE}'") == [
        ("unknown",)
    ]
    assert len(again.of("alert")) == 1
    assert len(again.of("log")) == 1  # the run went on past the unknown step
    assert _read(after_db, "SELECT status, unknown_steps FROM workflow_runs") == [("done", 1)]


async def test_without_the_synced_intent_a_power_cut_loses_the_actuator(
    tmp_path: Path, vfs: PowerCutVfs
) -> None:
    """The control: the same cut with the durable commit turned off breaks the promise,
    so the test above would catch its loss."""
    world = World("after")
    db = await _first_life(tmp_path, vfs, world, synced=False)
    assert world.image is not None
    again = await _second_life(tmp_path, world.image, db)
    problems = _violations(world, again, tmp_path / "after" / "workflows.db")
    assert len(problems) == 1, problems
    assert "record is []" in problems[0]


async def test_every_actuator_call_finds_its_intent_on_the_disk(
    tmp_path: Path, vfs: PowerCutVfs
) -> None:
    """Many runs at once: at each actuator call, the synced image already holds that
    step's intent, and the runs shared syncs of the WAL: fewer than there are calls (how
    many share one depends on how the writer thread and the loop are scheduled: on a loaded
    machine as few as two; the benchmark measures the gain)."""
    runs = 40
    checks: list[tuple[str, list[tuple[object, ...]]]] = []
    db = tmp_path / "workflows.db"
    probe = tmp_path / "probe" / "workflows.db"
    probe.parent.mkdir()

    def before(method: str, ctx: RunContext | None) -> None:
        if method != "app_action" or ctx is None:
            return
        for stale in probe.parent.iterdir():
            stale.unlink()
        PowerCutVfs.restore_to(vfs.cut(), db, probe)
        sql = (
            "SELECT status FROM workflow_run_steps "
            f"WHERE run_id='{ctx.run_id}' AND path='{ctx.step_path}'"
        )
        checks.append((ctx.run_id, _read(probe, sql)))

    effects = FakeEffects(before=before)
    engine = Engine(db, effects, FakeAi(), ManualClock(), retention_interval_s=0)
    engine.set_workflows({"gate": gate_opener()})
    await engine.start()
    wal = f"{db}-wal"
    try:
        syncs_before = vfs.syncs.get(wal, 0)
        for i in range(runs):
            engine.submit(event(track_id=f"t{i}"))
        await engine.idle()
        wal_syncs = vfs.syncs.get(wal, 0) - syncs_before
        store = engine.store
        assert store.durable_requests == runs
        assert store.synced_commits < runs, (store.synced_commits, runs)
    finally:
        await engine.stop(grace_s=0.1)
    assert len(checks) == runs
    assert all(rows == [("intent",)] for _, rows in checks), checks
    assert 0 < wal_syncs < runs, wal_syncs


async def test_a_durable_flush_syncs_what_an_earlier_commit_left_unsynced(
    tmp_path: Path, vfs: PowerCutVfs
) -> None:
    """A durable flush alone in its transaction (the write it guards committed before,
    unsynced) still makes that write durable; a plain flush does not."""
    db = tmp_path / "workflows.db"
    store = await Store.open(db)
    probe = tmp_path / "probe.db"
    try:
        await store.flush(durable=True)  # the schema, on the disk
        await store.execute(
            "INSERT INTO workflow_due (id, kind, workflow_id, due_at, payload) "
            "VALUES ('d1', 'wait', 'w', 0, '{}')"
        )
        await store.flush()
        PowerCutVfs.restore_to(vfs.cut(), db, probe)
        assert _read(probe, "SELECT id FROM workflow_due") == []  # committed, not synced
        probe.unlink()
        Path(f"{probe}-wal").unlink(missing_ok=True)

        await store.flush(durable=True)
        PowerCutVfs.restore_to(vfs.cut(), db, probe)
        assert _read(probe, "SELECT id FROM workflow_due") == [("d1",)]
        assert store.synced_commits == 2
        # Nothing new since: another durable flush has nothing to sync and writes nothing.
        size = Path(f"{db}-wal").stat().st_size
        await asyncio.gather(*(store.flush(durable=True) for _ in range(5)))
        assert Path(f"{db}-wal").stat().st_size == size
    finally:
        await store.close()
