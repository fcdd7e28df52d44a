"""At most ``max_driving`` runs are driven at once; the rest wait their turn, durable.

A run waiting its turn has its row written (the event may be acknowledged), starts in
arrival order when a driven run ends or parks, is resumed by the next start when the
engine stops first, is held like any run while the site is paused; a trial never waits
its turn (a person waits on its answer), and a run driven too long gives its slot back."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

import pytest

from custom_components.opennvr_workflows.engine import Engine, driver
from custom_components.opennvr_workflows.engine.ports import RunContext, loop_task
from custom_components.opennvr_workflows.engine.testing import FakeEffects, event
from custom_components.opennvr_workflows.workflow import model as m

from .conftest import EngineFactory
from .workflows import simple


@dataclass
class SlowLog(FakeEffects):
    """A logbook that takes as long as the test wants: each ``log`` waits for ``gate``."""

    gate: asyncio.Event = field(default_factory=asyncio.Event)
    started: list[str] = field(default_factory=list)

    async def log(self, ctx: RunContext, message: str) -> None:
        self.started.append(ctx.trigger.alert_id or "")
        await self.gate.wait()
        await super().log(ctx, message)


def one_per_track() -> m.Workflow:
    """Every alert its own run (one at a time per track, no cooldown)."""
    return simple(limits=m.WorkflowLimits(cooldown_s=0, one_at_a_time="track", per_hour=1000))


def alert(n: int) -> object:
    return event(alert_id=f"a{n}", track_id=f"t{n}")


async def settle() -> None:
    for _ in range(10):
        await asyncio.sleep(0)


async def started_engine(
    make_engine: EngineFactory, effects: SlowLog, max_driving: int, alerts: int = 0
) -> Engine:
    """An engine on the yard workflow driving ``max_driving`` runs at once, started, with
    ``alerts`` alerts dispatched (a0, a1, ...) and their runs as far as they go."""
    engine = make_engine(effects=effects, max_driving=max_driving)
    engine.set_workflows({"yard": one_per_track()})
    await engine.start()
    for n in range(alerts):
        await engine.dispatch(alert(n))  # type: ignore[arg-type]
    await settle()
    return engine


def statuses(open_db: Callable[[], sqlite3.Connection]) -> dict[str, int]:
    return dict(open_db().execute("SELECT status, count(*) FROM workflow_runs GROUP BY status"))


async def test_runs_past_the_bound_wait_their_turn_in_arrival_order(
    make_engine: EngineFactory, open_db: Callable[[], sqlite3.Connection]
) -> None:
    effects = SlowLog()
    engine = await started_engine(make_engine, effects, 2, 5)
    # Every run's row is written (its event may be acknowledged); two are driven.
    assert statuses(open_db) == {"running": 5}
    assert effects.started == ["a0", "a1"]
    assert len(engine.active_runs()) == 5
    assert engine.waiting_turn == 3  # what the diagnostics show
    effects.gate.set()
    await engine.idle()
    assert effects.started == ["a0", "a1", "a2", "a3", "a4"]
    assert engine.waiting_turn == 0
    assert [c.ctx.trigger.alert_id for c in effects.of("log") if c.ctx] == [
        "a0",
        "a1",
        "a2",
        "a3",
        "a4",
    ]
    assert statuses(open_db) == {"done": 5}


async def test_runs_waiting_their_turn_at_a_stop_are_resumed_by_the_next_start(
    make_engine: EngineFactory, open_db: Callable[[], sqlite3.Connection]
) -> None:
    effects = SlowLog()
    engine = await started_engine(make_engine, effects, 1, 3)
    assert effects.started == ["a0"]
    await engine.stop(grace_s=0.05)  # a0 cancelled at its step, a1 and a2 never began
    assert effects.started == ["a0"]
    assert statuses(open_db) == {"running": 3}
    again = SlowLog()
    again.gate.set()
    restarted = await started_engine(make_engine, again, 1)
    await restarted.idle()
    assert statuses(open_db) == {"done": 3}
    # Each of the three logged exactly once, the one cut short included (its step was
    # cancelled before it recorded anything, so it is done again, not twice).
    assert sorted(c.ctx.trigger.alert_id for c in again.of("log") if c.ctx) == ["a0", "a1", "a2"]


async def test_a_trial_never_waits_its_turn(
    make_engine: EngineFactory, open_db: Callable[[], sqlite3.Connection]
) -> None:
    effects = SlowLog()
    engine = await started_engine(make_engine, effects, 1, 2)
    assert effects.started == ["a0"]  # the one slot is taken, a1 waits its turn
    # A trial does nothing to the world, so it logs nothing; it runs to its end at once.
    run_id = await asyncio.wait_for(engine.try_run("yard", alert(9)), 5)  # type: ignore[arg-type]
    (status,) = open_db().execute("SELECT status FROM workflow_runs WHERE id=?", (run_id,))
    assert status == ("done",)
    assert effects.started == ["a0"]
    effects.gate.set()
    await engine.idle()
    assert effects.started == ["a0", "a1"]


async def test_a_turn_that_comes_while_the_site_is_paused_is_held(
    make_engine: EngineFactory, open_db: Callable[[], sqlite3.Connection]
) -> None:
    effects = SlowLog()
    engine = await started_engine(make_engine, effects, 1, 2)
    engine.pause()
    effects.gate.set()
    await engine.idle()
    assert effects.started == ["a0"]  # a1's turn came while paused: held, not driven
    assert statuses(open_db) == {"done": 1, "running": 1}
    engine.resume()
    await engine.idle()
    assert effects.started == ["a0", "a1"]
    assert statuses(open_db) == {"done": 2}


async def test_a_run_driven_too_long_gives_its_slot_back(
    make_engine: EngineFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run stuck at a slow step (a model's answer, a service that hangs) must not hold
    back the runs behind it (a siren's): after ``SLOW_S`` its slot goes to the next in turn,
    and it still finishes when its step does."""
    monkeypatch.setattr(driver, "SLOW_S", 0.2)
    loop = asyncio.get_running_loop()
    driven_at: list[float] = []  # when each run's task started, by the loop's clock

    def spawn(coro: Coroutine[Any, Any, None], name: str) -> asyncio.Task[None]:
        if name.endswith(" run"):
            driven_at.append(loop.time())
        return loop_task(coro, name)

    effects = SlowLog()
    engine = make_engine(effects=effects, max_driving=1, spawn=spawn)
    engine.set_workflows({"yard": one_per_track()})
    await engine.start()
    for n in range(3):
        await engine.dispatch(alert(n))  # type: ignore[arg-type]
    await settle()
    assert effects.started == ["a0"]

    while len(effects.started) < 3:
        assert loop.time() - driven_at[0] < 5, effects.started
        await asyncio.sleep(0.01)
    # Each was driven once the one before had held the slot SLOW_S, still at its step.
    assert effects.started == ["a0", "a1", "a2"]
    assert len(driven_at) == 3
    assert driven_at[1] - driven_at[0] >= 0.2
    assert driven_at[2] - driven_at[1] >= 0.2
    effects.gate.set()
    await engine.idle()
    assert len(effects.of("log")) == 3
