"""The database file: corrupt and locked files give a clear error, migrations,
retention."""

from __future__ import annotations

import _sqlite3
import ctypes
import datetime as dt
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from custom_components.opennvr_workflows.engine import (
    StoreCorruptError,
    StoreLockedError,
    StoreVersionError,
)
from custom_components.opennvr_workflows.engine.schema import SCHEMA_VERSION
from custom_components.opennvr_workflows.engine.store import PAGE_CACHE_KIB, Store
from custom_components.opennvr_workflows.engine.testing import FakeEffects, ManualClock, event

from . import workflows as W
from .conftest import EngineFactory


async def test_new_file_is_migrated_and_in_wal(
    db: Path, open_db: Callable[[], sqlite3.Connection]
) -> None:
    store = await Store.open(db)
    await store.close()
    conn = open_db()
    assert conn.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {
        "workflows",
        "workflow_versions",
        "workflow_runs",
        "workflow_run_steps",
        "workflow_tool_calls",
        "workflow_approvals",
        "workflow_marks",
        "workflow_due",
        "workflow_limit_counters",
    } <= tables


async def test_garbage_file_is_refused_and_kept(make_engine: EngineFactory, db: Path) -> None:
    db.write_bytes(b"this is not a database at all" * 100)
    engine = make_engine()
    with pytest.raises(StoreCorruptError, match=str(db)):
        await engine.start()
    assert db.read_bytes().startswith(b"this is not a database")  # nothing overwritten


async def test_damaged_pages_are_refused(make_engine: EngineFactory, db: Path) -> None:
    engine = make_engine()
    engine.set_workflows({"s": W.simple()})
    await engine.start()
    for i in range(50):
        engine.submit(event(camera_id=f"c{i}"))
    await engine.idle()
    await engine.stop()
    data = bytearray(db.read_bytes())
    assert len(data) > 3 * 4096
    # Scribble over the b-tree header of every page after the first: unlike bytes in a
    # page's free space (where a scribble may go unnoticed), a broken header always shows.
    for offset in range(4096, len(data), 4096):
        data[offset : offset + 16] = b"\xa5" * 16
    db.write_bytes(bytes(data))
    with pytest.raises(StoreCorruptError, match="damaged"):
        await make_engine().start()


async def test_locked_file_is_refused(make_engine: EngineFactory, db: Path) -> None:
    holder = sqlite3.connect(db)
    holder.execute("CREATE TABLE x (a)")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(StoreLockedError, match="in use by another process"):
            await make_engine(lock_timeout_s=0.1).start()
    finally:
        holder.rollback()
        holder.close()


async def test_second_engine_on_the_same_file_is_refused(make_engine: EngineFactory) -> None:
    first = make_engine()
    await first.start()
    with pytest.raises(StoreLockedError):
        await make_engine(lock_timeout_s=0.1).start()


async def test_newer_schema_is_refused(db: Path) -> None:
    conn = sqlite3.connect(db)
    conn.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(StoreVersionError, match="newer"):
        await Store.open(db)


async def test_failed_operation_fails_alone(db: Path) -> None:
    store = await Store.open(db)
    ok = store.execute("INSERT INTO workflow_marks VALUES ('r1','w',1,NULL,0,'[]')")
    bad = store.execute("INSERT INTO no_such_table VALUES (1)")
    also_ok = store.execute("INSERT INTO workflow_marks VALUES ('r2','w',1,NULL,0,'[]')")
    assert await ok == 1
    with pytest.raises(Exception, match="no_such_table"):
        await bad
    assert await also_ok == 1
    count = await store.submit(
        lambda c: c.execute("SELECT count(*) FROM workflow_marks").fetchone()
    )
    assert count == (2,)
    await store.close()


async def test_one_commit_settles_each_waiter_with_its_own_value(db: Path) -> None:
    """Operations queued in one turn commit as one batch; each future gets its own
    operation's value, a kept row no error, and every write counts as settled."""
    store = await Store.open(db)
    before = store.settled
    store.execute_nowait("INSERT INTO workflow_marks VALUES ('r1','w',1,NULL,0,'[]')")
    kept = store.execute_kept(
        "INSERT INTO workflow_marks VALUES ('r2','w',1,NULL,0,'[]')", (), "r2"
    )
    counted = store.execute("UPDATE workflow_marks SET workflow_id='v' WHERE run_id IN ('r1','r2')")
    read = store.submit(lambda c: c.execute("SELECT count(*) FROM workflow_marks").fetchone())
    durable = store.flush(durable=True)
    assert await counted == 2
    assert await read == (2,)
    assert await durable is None
    assert kept.error is None
    assert store.settled - before == 5
    await store.close()


def _sqlite_memory_used() -> int:
    """Bytes the SQLite library holds in this process (its page caches among them)."""
    used = ctypes.CDLL(_sqlite3.__file__).sqlite3_memory_used
    used.restype = ctypes.c_int64
    return int(used())


async def test_the_writers_page_cache_stays_within_its_bound(db: Path) -> None:
    """A file of some 8 MB read through whole (as a start reads it) leaves SQLite holding
    about the bound, not its default of about 2 MB a connection."""
    store = await Store.open(db)
    await store.close()
    conn = sqlite3.connect(db)
    rows = [(f"r{n}", "w", 1, None, 0, "x" * 4000) for n in range(2000)]
    conn.executemany("INSERT INTO workflow_marks VALUES (?,?,?,?,?,?)", rows)
    conn.commit()
    conn.close()
    before = _sqlite_memory_used()
    store = await Store.open(db)
    total = await store.submit(
        lambda c: c.execute("SELECT sum(length(ai_steps)) FROM workflow_marks").fetchone()
    )
    grown = _sqlite_memory_used() - before
    await store.close()
    assert total == (8_000_000,)
    assert PAGE_CACHE_KIB <= 512
    assert grown < 1024 * 1024, grown  # SQLite's default would hold over 2 MB here


async def test_retention_prunes_old_runs_but_keeps_marks(
    make_engine: EngineFactory,
    clock: ManualClock,
    db: Path,
    effects: FakeEffects,
    open_db: Callable[[], sqlite3.Connection],
) -> None:
    engine = make_engine(retention_days=30)
    engine.set_workflows({"s": W.simple()})
    await engine.start()
    old = engine.submit(event(camera_id="old"))[0]
    await engine.idle()
    await engine.mark_run(old, True, "ann")
    await clock.advance(dt.timedelta(days=31).total_seconds())
    engine.submit(event(camera_id="new"))
    await engine.idle()
    assert await engine.prune() == 1
    conn = open_db()
    await engine.stop()
    assert conn.execute("SELECT count(*) FROM workflow_runs").fetchone() == (1,)
    assert conn.execute(
        "SELECT count(*) FROM workflow_run_steps WHERE run_id=?", (old,)
    ).fetchone() == (0,)
    assert conn.execute("SELECT count(*) FROM workflow_marks").fetchone() == (1,)
