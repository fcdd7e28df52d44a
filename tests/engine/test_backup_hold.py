"""Holding the writes for a backup: the database file alone holds every commit made before
the hold, nothing changes on disk while it holds, and what came meanwhile is committed at
the release (a dispatch returns only then, so its source is told "delivered" after it)."""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
from pathlib import Path

from custom_components.opennvr_workflows.engine.testing import event
from custom_components.opennvr_workflows.workflow import model as m

from .conftest import EngineFactory


def logs() -> m.Workflow:
    return m.Workflow(
        name="Log",
        when=m.AlertTrigger(cameras=("yard",)),
        state="on",
        limits=m.WorkflowLimits(cooldown_s=0, per_hour=100_000),
        then=(m.ActionStep(m.LogAction("seen {alert_id}")),),
    )


def runs_in(path: Path) -> set[str]:
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = conn.execute("SELECT trigger FROM workflow_runs").fetchall()
    finally:
        conn.close()
    return {row[0] for row in rows}


async def test_a_copy_taken_while_held_is_whole_and_misses_only_the_unacknowledged(
    make_engine: EngineFactory, db: Path, tmp_path: Path
) -> None:
    engine = make_engine()
    engine.set_workflows({"log": logs()})
    await engine.start()
    for i in range(50):
        await engine.dispatch(event(alert_id=f"before-{i}"))

    await engine.hold_writes()
    assert engine.store.holding
    wal = db.with_name(db.name + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0  # folded into the database
    size = db.stat().st_size
    during = asyncio.ensure_future(engine.dispatch(event(alert_id="during")))
    await asyncio.sleep(0.2)
    assert not during.done()  # not acknowledged while the file is held
    copy = tmp_path / "copy.db"
    await asyncio.to_thread(shutil.copyfile, db, copy)  # the database file alone
    assert db.stat().st_size == size

    engine.release_writes()
    assert len(await during) == 1
    await engine.idle()

    in_copy = runs_in(copy)
    assert len(in_copy) == 50
    assert all("before-" in trigger for trigger in in_copy)
    assert len(runs_in(db)) == 51


async def test_a_stop_while_held_lets_go_and_writes_everything(
    make_engine: EngineFactory, db: Path
) -> None:
    engine = make_engine()
    engine.set_workflows({"log": logs()})
    await engine.start()
    await engine.hold_writes()
    engine.submit(event(alert_id="late"))
    await engine.stop(grace_s=1.0)  # Home Assistant stops in the middle of a backup
    assert len(runs_in(db)) == 1
