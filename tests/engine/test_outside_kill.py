"""Durable intake, checked from outside: an engine process is SIGKILLed at random
moments and restarted on the same file, and the source's acknowledgements, the
database and the world's own log must agree (issue: nothing lost, nothing twice).

The long version (hundreds of kills, with timings) is ``scripts/bench_crash.py``.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from custom_components.opennvr_workflows.engine.driver import MAX_DRIVING
from custom_components.opennvr_workflows.engine.errors import StoreError
from custom_components.opennvr_workflows.engine.testing import event
from custom_components.opennvr_workflows.workflow import model as m

from .conftest import EngineFactory
from .kill_child import alert, porch
from .kill_harness import kill_rounds, tally
from .workflows import simple

#: Short enough for the suite (about 20 s on a quiet machine), long enough that kills
#: land in every phase: start-up, restore, the stream, the replay, the drain.
KILLS = 40


@pytest.mark.parametrize(
    ("kills", "max_driving"),
    [
        pytest.param(KILLS, MAX_DRIVING, id="default-bound"),
        # Three runs driven at once: most of each batch waits its turn when a kill lands.
        pytest.param(KILLS // 2, 3, id="runs-waiting-their-turn"),
    ],
)
def test_random_outside_kills_lose_nothing_and_repeat_nothing(
    tmp_path: Path, kills: int, max_driving: int
) -> None:
    rounds = kill_rounds(tmp_path, kills, seed=12, max_driving=max_driving)
    counts = tally(tmp_path, rounds.offered)
    assert counts.problems() == {}, (rounds, counts)
    assert rounds.kills == kills
    # Not vacuous: kills came while the engine was working, not only while it imported.
    assert sum(n for where, n in rounds.landed.items() if where != "starting") > 0, rounds
    assert counts.acked == counts.offered == rounds.offered
    assert counts.runs == counts.actuator_runs == counts.offered
    # Every actuator acted once, or is unknown (and acted at most once, and was alerted).
    assert counts.actuators_done + counts.actuators_unknown == counts.runs
    assert counts.actuator_executions == counts.actuators_done + counts.unknown_that_acted
    assert counts.unknown_alerts == counts.actuators_unknown
    assert counts.unknown_steps_column == counts.unknown_steps_counted


async def test_dispatch_returns_once_the_run_is_committed(
    make_engine: EngineFactory, open_db: Callable[[], sqlite3.Connection]
) -> None:
    engine = make_engine()
    engine.set_workflows({"porch": porch()})
    await engine.start()
    conn = open_db()
    for number in range(20):
        (run_id,) = await engine.dispatch(alert(number))
        # Another connection sees it: committed, not merely queued.
        row = conn.execute("SELECT status FROM workflow_runs WHERE id=?", (run_id,)).fetchone()
        assert row is not None, number


async def test_concurrent_dispatches_share_one_commit_request(
    make_engine: EngineFactory, open_db: Callable[[], sqlite3.Connection]
) -> None:
    """Dispatches of one loop turn wait on one commit request queued behind all their
    runs, not one each: the store writes them as one transaction (group commit)."""
    engine = make_engine()
    engine.set_workflows({"porch": porch()})
    await engine.start()
    await engine.idle()
    store = engine.store
    flushes = 0
    flush = store.flush

    def counted() -> asyncio.Future[object]:
        nonlocal flushes
        flushes += 1
        return flush()

    store.flush = counted  # type: ignore[method-assign]
    results = await asyncio.gather(*(engine.dispatch(alert(n)) for n in range(500)))
    assert flushes == 1
    run_ids = [ids[0] for ids in results]
    assert len(set(run_ids)) == 500
    conn = open_db()
    marks = ",".join("?" * len(run_ids))
    found = conn.execute(f"SELECT count(*) FROM workflow_runs WHERE id IN ({marks})", run_ids)
    assert found.fetchone() == (500,)


async def test_dispatch_of_an_event_nothing_wants_does_not_wait_for_a_commit(
    make_engine: EngineFactory,
) -> None:
    engine = make_engine()
    engine.set_workflows({"yard": simple()})
    await engine.start()
    await engine.idle()
    before = engine.store.commits
    for _ in range(100):
        assert await engine.dispatch(event(type="loitering")) == ()
    assert engine.store.commits == before


async def test_dispatch_of_a_joining_event_waits_for_the_run_it_joined(
    make_engine: EngineFactory, open_db: Callable[[], sqlite3.Connection]
) -> None:
    """The second alert joins a run that was only submitted (accepted, not durable):
    its acknowledgement waits until that run is on disk."""
    engine = make_engine()
    engine.set_workflows({"yard": simple()})
    await engine.start()
    (run_id,) = engine.submit(event())
    assert await engine.dispatch(event()) == (run_id,)
    row = open_db().execute("SELECT id FROM workflow_runs WHERE id=?", (run_id,)).fetchone()
    assert row == (run_id,)


async def test_dispatch_of_a_cooldown_drop_whose_run_is_on_disk_does_not_wait(
    make_engine: EngineFactory, open_db: Callable[[], sqlite3.Connection]
) -> None:
    """Nothing a drop decides needs a commit once the run that began the cooldown is
    on disk: a crash loses only the drop's counter."""
    engine = make_engine()
    engine.set_workflows({"yard": simple()})  # the default limits: a minute's cooldown
    await engine.start()
    (run_id,) = await engine.dispatch(event(track_id="first"))
    await engine.idle()
    before = engine.store.commits
    for n in range(50):
        assert await engine.dispatch(event(track_id=f"t{n}")) == ()
    assert engine.store.commits == before
    assert engine.stats.dropped["cooldown"] == 50
    assert open_db().execute("SELECT id FROM workflow_runs").fetchall() == [(run_id,)]


async def test_dispatch_of_a_cooldown_drop_waits_for_the_row_of_the_run_that_began_it(
    make_engine: EngineFactory, open_db: Callable[[], sqlite3.Connection]
) -> None:
    """The run that began the cooldown was only submitted and has ended in memory,
    its row still queued behind a slow write: the drop's acknowledgement waits until
    that row is on disk (a crash before would lose both the run and the event)."""
    engine = make_engine()
    # The workflow's own condition fails: the run ends without an effect or a flush.
    never = m.ValueCondition(name="severity", is_in=("critical",))
    engine.set_workflows({"yard": simple(conditions=(never,))})
    await engine.start()
    await engine.idle()
    release = asyncio.Event()
    loop = asyncio.get_running_loop()
    engine.store.submit_nowait(
        lambda _: asyncio.run_coroutine_threadsafe(release.wait(), loop).result()
    )
    (run_id,) = engine.submit(event(track_id="first"))
    for _ in range(5):
        await asyncio.sleep(0)
    assert engine.active_runs() == []  # ended in memory; its row waits behind the slow write
    dropped = asyncio.ensure_future(engine.dispatch(event(track_id="second")))
    try:
        for _ in range(5):
            await asyncio.sleep(0)
        waited = not dropped.done()
    finally:
        release.set()  # the writer goes on whatever was asserted
    assert waited
    assert await dropped == ()
    assert engine.stats.dropped["cooldown"] == 1
    row = open_db().execute("SELECT id FROM workflow_runs WHERE id=?", (run_id,)).fetchone()
    assert row == (run_id,)


async def test_dispatch_raises_when_the_run_row_could_not_be_written(
    make_engine: EngineFactory, open_db: Callable[[], sqlite3.Connection]
) -> None:
    """A run row the database refuses (a full disk, here a trigger that aborts) fails
    the dispatch, so the source does not acknowledge the alert; delivered again once
    the database accepts rows, it starts a run that is written."""
    engine = make_engine()
    engine.set_workflows({"porch": porch()})
    await engine.start()
    conn = open_db()
    conn.execute(
        "CREATE TRIGGER full BEFORE INSERT ON workflow_runs "
        "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END"
    )
    conn.commit()
    with pytest.raises(StoreError, match="full"):
        await engine.dispatch(alert(3))
    conn.execute("DROP TRIGGER full")
    conn.commit()
    (run_id,) = await engine.dispatch(alert(3))
    assert conn.execute("SELECT id FROM workflow_runs").fetchall() == [(run_id,)]


async def test_dispatches_sharing_a_commit_each_learn_their_own_row(
    make_engine: EngineFactory, open_db: Callable[[], sqlite3.Connection]
) -> None:
    """Events handed over without a task (``dispatch_nowait``, the event hub's path) in
    one turn share one commit; a run row the database refuses fails only its own event's
    future, and that run is dropped (it must not act), while the other event's run is
    written and its future resolves. An event that matches nothing needs no waiting."""
    engine = make_engine()
    engine.set_workflows({"porch": porch()})
    await engine.start()
    conn = open_db()
    conn.execute(
        "CREATE TRIGGER full BEFORE INSERT ON workflow_runs WHEN NEW.trigger LIKE '%bad%' "
        "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END"
    )
    conn.commit()
    assert engine.dispatch_nowait(replace(alert(1), type="nothing_watches_this")) is None
    good = engine.dispatch_nowait(replace(alert(2), alert_id="good-2"))
    bad = engine.dispatch_nowait(replace(alert(3), alert_id="bad-3"))
    assert good is not None
    assert bad is not None
    await good
    with pytest.raises(StoreError, match="full"):
        await bad
    rows = conn.execute("SELECT trigger FROM workflow_runs").fetchall()
    assert [r for (r,) in rows if "good-2" in r]
    assert not [r for (r,) in rows if "bad-3" in r]
    assert all(run.event.alert_id != "bad-3" for run in engine.active_runs())
    conn.execute("DROP TRIGGER full")
    conn.commit()
    again = engine.dispatch_nowait(replace(alert(3), alert_id="bad-3"))  # delivered again
    assert again is not None
    await again
    assert len(conn.execute("SELECT id FROM workflow_runs").fetchall()) == 2


async def test_dispatch_before_start_refuses(make_engine: EngineFactory) -> None:
    engine = make_engine()
    engine.set_workflows({"porch": porch()})
    with pytest.raises(RuntimeError, match="not started"):
        await engine.dispatch(alert(1))


async def test_a_redelivered_alert_after_a_restart_returns_its_run(
    make_engine: EngineFactory, open_db: Callable[[], sqlite3.Connection]
) -> None:
    """A source that acks after commit delivers again what a crash left unacked, which
    can be an alert whose run was committed (here: already ended, so no limit holds
    the alert back): it gets that run, not a second one."""
    quick = replace(porch(), then=(m.ActionStep(m.AppAction(app="porch", action="light_on")),))
    engine = make_engine()
    engine.set_workflows({"porch": quick})
    await engine.start()
    (first,) = await engine.dispatch(alert(7))
    await engine.idle()
    await engine.stop()
    again = make_engine()
    again.set_workflows({"porch": quick})
    await again.start()
    assert await again.dispatch(alert(7)) == (first,)
    assert await again.dispatch(replace(alert(7), source="nats")) == (first,)
    # Another alert, or the same id raised by a workflow (not a redelivery), starts a run.
    (other,) = await again.dispatch(alert(8))
    (raised,) = await again.dispatch(replace(alert(7), source="engine"))
    assert len({first, other, raised}) == 3
    await again.idle()
    conn = open_db()
    assert conn.execute("SELECT count(*) FROM workflow_runs").fetchone() == (3,)
    opened = conn.execute("SELECT count(*) FROM workflow_run_steps WHERE kind='app_action'")
    assert opened.fetchone() == (3,)
