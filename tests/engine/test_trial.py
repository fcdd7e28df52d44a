"""Trials (the try_workflow action): a forced Test run of one workflow on one event,
whatever its state and outside its limits, paid from its own AI allowance."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Callable

import pytest

from custom_components.opennvr_workflows.engine import (
    AiResult,
    Allowance,
    UnknownWorkflowError,
)
from custom_components.opennvr_workflows.engine.testing import (
    FakeAi,
    FakeEffects,
    ManualClock,
    event,
)
from custom_components.opennvr_workflows.workflow import model as m

from . import workflows as W
from .conftest import EngineFactory


def look(state: str = "off", ai_per_hour: int = 60, cooldown_s: float = 600) -> m.Workflow:
    """Look at the yard; "intruder" raises an alert, "nobody" logs."""
    return m.Workflow(
        name="Yard look",
        when=m.AlertTrigger(alert_type="intrusion", cameras=("yard",)),
        state=state,  # type: ignore[arg-type]
        limits=m.WorkflowLimits(cooldown_s=cooldown_s, per_hour=1, ai_per_hour=ai_per_hour),
        then=(
            m.AIStep(
                spec=m.LookSpec(prompt="Anyone in the yard?"),
                decision=("intruder", "nobody"),
                paths={
                    "intruder": (m.ActionStep(m.AlertAction("high", "Intruder")),),
                    "nobody": (m.ActionStep(m.LogAction("nobody")),),
                    "unsure": (),
                },
            ),
        ),
    )


async def test_an_off_workflow_is_tried_in_test_and_nothing_is_done(
    make_engine: EngineFactory, effects: FakeEffects, ai: FakeAi
) -> None:
    engine = make_engine()
    engine.set_workflows({"yard": look(state="off")})
    await engine.start()
    run_id = await engine.try_run("yard", event())
    detail = await engine.run_detail(run_id)
    assert (detail["status"], detail["test"], detail["outcome"]) == ("done", 1, "done")
    assert detail["limit_key"] == "trial:camera:cam-1"
    assert [(s["path"], s["status"], s["outcome"]) for s in detail["steps"]] == [
        ("then.0", "done", "intruder"),
        ("then.0.intruder.0", "would_have", "done"),
    ]
    assert [c["name"] for c in detail["tool_calls"]] == ["fake-model"]
    assert effects.calls == []
    assert len(ai.runs) == 1
    assert engine.workflow_status("yard").state == "off"


async def test_trials_take_no_slot_no_cooldown_and_no_hourly_count(
    make_engine: EngineFactory, clock: ManualClock
) -> None:
    """Twenty replays on one camera, then a live event: the live run still starts
    (per_hour is 1 and the cooldown ten minutes)."""
    engine = make_engine()
    engine.set_workflows({"yard": look(state="on")})
    await engine.start()
    tried = [await engine.try_run("yard", event()) for _ in range(20)]
    assert len(set(tried)) == 20
    assert len(engine.submit(event())) == 1
    await engine.idle()
    assert engine.stats.started == 1
    assert engine.stats.dropped == {}
    # ...and a restart does not count the trials against the hour either.
    await engine.stop()
    engine = make_engine()
    engine.set_workflows({"yard": look(state="on")})
    await engine.start()
    assert engine.limiter("yard").runs_last_hour(clock.now().timestamp()) == 1
    assert engine.limiter("yard").ai_remaining(clock.now().timestamp()) == 59
    assert await engine.count_runs("yard", 0) == 1


async def test_a_trial_spends_its_own_allowance_not_the_hourly_one(
    make_engine: EngineFactory, ai: FakeAi, clock: ManualClock
) -> None:
    engine = make_engine()
    engine.set_workflows({"yard": look(state="test", ai_per_hour=5)})
    await engine.start()
    allowance = Allowance(2)
    outcomes = []
    for _ in range(3):
        run_id = await engine.try_run("yard", event(), allowance)
        outcomes.append((await engine.run_detail(run_id))["steps"][0]["outcome"])
    assert outcomes == ["intruder", "intruder", "unsure"]
    assert allowance.remaining() == 0
    assert engine.limiter("yard").ai_remaining(clock.now().timestamp()) == 5


def waits_then_looks(state: str = "off") -> m.Workflow:
    """Look, wait half an hour, look again: the parcel template's shape."""
    return m.Workflow(
        name="Wait",
        when=m.AlertTrigger(cameras=("yard",)),
        state=state,  # type: ignore[arg-type]
        then=(
            m.AIStep(
                spec=m.LookSpec(prompt="A parcel?"),
                decision=("intruder", "nobody"),
                paths={"intruder": (), "nobody": (), "unsure": ()},
            ),
            m.ActionStep(m.WaitAction(1800)),
            m.AIStep(
                spec=m.LookSpec(prompt="Still there?"),
                decision=("intruder", "nobody"),
                paths={"intruder": (m.ActionStep(m.LogAction("later")),), "nobody": ()},
            ),
        ),
    )


async def test_a_trial_skips_its_waits_and_never_goes_on_later(
    make_engine: EngineFactory,
    clock: ManualClock,
    ai: FakeAi,
    open_db: Callable[[], sqlite3.Connection],
) -> None:
    """The wait is skipped and says so; the run has ended when the trial returns, with
    nothing due, and an hour later no model is asked again."""
    engine = make_engine()
    engine.set_workflows({"w": waits_then_looks()})
    await engine.start()
    run_id = await engine.try_run("w", event())
    detail = await engine.run_detail(run_id)
    assert detail["status"] == "done"
    assert [(s["path"], s["kind"], s["status"]) for s in detail["steps"]] == [
        ("then.0", "ai", "done"),
        ("then.1", "wait", "skipped"),
        ("then.2", "ai", "done"),
        ("then.2.intruder.0", "log", "would_have"),
    ]
    assert json.loads(detail["steps"][1]["result"]) == {
        "skipped": "trial",
        "would_have_waited_s": 1800,
    }
    assert engine.active_runs() == []
    assert open_db().execute("SELECT count(*) FROM workflow_due").fetchone() == (0,)
    looked = len(ai.runs)
    await clock.advance(3600)
    await engine.idle()
    assert len(ai.runs) == looked == 2


async def test_a_trial_a_stop_caught_is_ended_at_start_not_resumed(
    make_engine: EngineFactory,
    ai: FakeAi,
    open_db: Callable[[], sqlite3.Connection],
) -> None:
    """A crash in the middle of a trial leaves its row running: the next start ends it
    (cancelled) and never asks the model for it."""
    engine = make_engine()
    engine.set_workflows({"w": waits_then_looks()})
    await engine.start()
    never = asyncio.Event()

    async def hangs(step: m.AIStep, ctx: object) -> AiResult:
        await never.wait()
        raise AssertionError("unreachable")

    ai.decide = hangs
    trial = asyncio.ensure_future(engine.try_run("w", event()))
    for _ in range(50):
        await asyncio.sleep(0)
    assert len(ai.runs) == 1
    trial.cancel()
    await engine.stop()
    ai.decide = None
    looked = len(ai.runs)
    engine = make_engine()
    engine.set_workflows({"w": waits_then_looks()})
    await engine.start()
    await engine.idle()
    assert engine.active_runs() == []
    rows = open_db().execute("SELECT status, error FROM workflow_runs").fetchall()
    assert rows == [("cancelled", "the trial ended before the run did")]
    assert len(ai.runs) == looked


async def test_a_trial_that_loses_a_provider_does_not_park_the_workflow(
    make_engine: EngineFactory, ai: FakeAi
) -> None:
    ai.unavailable = True
    engine = make_engine()
    engine.set_workflows({"yard": look(state="on")})
    await engine.start()
    run_id = await engine.try_run("yard", event())
    detail = await engine.run_detail(run_id)
    assert detail["status"] == "failed"
    assert "provider lost" in detail["error"]
    assert engine.workflow_status("yard").state == "on"


async def test_trying_an_unknown_workflow_is_a_clear_error(
    make_engine: EngineFactory,
    open_db: Callable[[], sqlite3.Connection],
) -> None:
    engine = make_engine()
    engine.set_workflows({"s": W.simple()})
    await engine.start()
    with pytest.raises(UnknownWorkflowError, match="nope"):
        await engine.try_run("nope", event())
    await engine.idle()
    assert open_db().execute("SELECT count(*) FROM workflow_runs").fetchone() == (0,)


def test_an_allowance_pays_until_it_is_spent() -> None:
    allowance = Allowance(3)
    assert allowance.try_draw(2)
    assert not allowance.try_draw(2)
    assert allowance.remaining() == 1
    assert allowance.try_draw()
    assert allowance.remaining() == 0
    with pytest.raises(ValueError, match="negative"):
        Allowance(-1)
