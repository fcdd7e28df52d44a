"""Starting a named workflow now (the run_workflow action): the event its trigger would
have produced, filled from variables; the workflow's state and limits still apply."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable

import pytest

from custom_components.opennvr_workflows.engine import (
    Started,
    UnknownWorkflowError,
    trigger_event,
)
from custom_components.opennvr_workflows.engine.testing import FakeEffects, ManualClock
from custom_components.opennvr_workflows.workflow import model as m

from .conftest import EngineFactory


def logger(when: m.Trigger, message: str, **kw: object) -> m.Workflow:
    """One log step, so a run's placeholders can be read from what it logged."""
    return m.Workflow(
        name="Logger",
        when=when,
        state=kw.pop("state", "on"),  # type: ignore[arg-type]
        limits=kw.pop("limits", m.WorkflowLimits(cooldown_s=60, per_hour=100)),  # type: ignore[arg-type]
        then=(m.ActionStep(m.LogAction(message)),),
    )


async def test_an_alert_workflow_starts_with_its_trigger_kind_and_the_variables(
    make_engine: EngineFactory,
    effects: FakeEffects,
    open_db: Callable[[], sqlite3.Connection],
) -> None:
    wf = logger(
        m.AlertTrigger(alert_type="intrusion", cameras=("yard",)),
        "{alert_type} on {camera} by {who} ({severity})",
    )
    engine = make_engine()
    engine.set_workflows({"w": wf})
    await engine.start()
    started = engine.start_now("w", {"who": "Alice", "severity": "high"})
    await engine.idle()
    assert started.reason is None
    assert not started.joined
    (run_id,) = started.run_ids
    assert [c.request for c in effects.of("log")] == ["intrusion on yard by Alice (high)"]
    trigger = json.loads(
        open_db().execute("SELECT trigger FROM workflow_runs WHERE id=?", (run_id,)).fetchone()[0]
    )
    assert (trigger["kind"], trigger["source"], trigger["type"], trigger["camera_role"]) == (
        "alert",
        "action",
        "intrusion",
        "yard",
    )
    assert trigger["payload"] == {"who": "Alice"}


async def test_a_message_workflow_gets_the_message_and_its_words_are_checked(
    make_engine: EngineFactory, effects: FakeEffects
) -> None:
    wf = logger(
        m.MessageTrigger(contains=("what happened",)),
        "{user} asked: {message}",
        limits=m.WorkflowLimits(cooldown_s=0),
    )
    engine = make_engine()
    engine.set_workflows({"ask": wf})
    await engine.start()
    refused = engine.start_now("ask", message="hello there", user="alice")
    assert refused == Started((), "no_match")
    started = engine.start_now("ask", message="What happened at the gate?", user="alice")
    await engine.idle()
    assert len(started.run_ids) == 1
    assert [c.request for c in effects.of("log")] == ["alice asked: What happened at the gate?"]


async def test_state_decides_off_does_not_start_and_test_runs_in_test(
    make_engine: EngineFactory, effects: FakeEffects
) -> None:
    wf = logger(m.ButtonTrigger(), "pressed", state="off", limits=m.WorkflowLimits(cooldown_s=0))
    engine = make_engine()
    engine.set_workflows({"b": wf})
    await engine.start()
    assert engine.start_now("b") == Started((), "off")
    engine.set_workflow_state("b", "test")
    (run_id,) = engine.start_now("b").run_ids
    await engine.idle()
    detail = await engine.run_detail(run_id)
    assert detail["test"] == 1
    assert [s["status"] for s in detail["steps"]] == ["would_have"]
    assert effects.calls == []


async def test_limits_apply_a_cooldown_drops_and_a_going_run_is_joined(
    make_engine: EngineFactory, effects: FakeEffects, clock: ManualClock
) -> None:
    slow = m.Workflow(
        name="Slow",
        when=m.AlertTrigger(cameras=("yard",)),
        state="on",
        limits=m.WorkflowLimits(cooldown_s=60, per_hour=100),
        then=(m.ActionStep(m.WaitAction(30)), m.ActionStep(m.LogAction("done"))),
    )
    engine = make_engine()
    engine.set_workflows({"slow": slow})
    await engine.start()
    first = engine.start_now("slow")
    await engine.idle()
    again = engine.start_now("slow")
    assert again == Started(first.run_ids, joined=True)
    await clock.advance(31)
    await engine.idle()
    assert [c.request for c in effects.of("log")] == ["done"]
    assert engine.start_now("slow") == Started((), "cooldown")
    await clock.advance(30)
    assert len(engine.start_now("slow").run_ids) == 1
    assert engine.stats.dropped == {"cooldown": 1}


async def test_a_workflow_that_starts_itself_stops_at_the_depth_limit(
    make_engine: EngineFactory,
) -> None:
    wf = logger(m.ButtonTrigger(), "x", limits=m.WorkflowLimits(cooldown_s=0))
    engine = make_engine(max_chain_depth=2)
    engine.set_workflows({"b": wf})
    await engine.start()
    assert len(engine.start_now("b", chain=("b/r1",)).run_ids) == 1
    assert engine.start_now("b", chain=("b/r1", "b/r2")) == Started((), "chain_depth")


async def test_an_unknown_workflow_is_a_clear_error(make_engine: EngineFactory) -> None:
    engine = make_engine()
    await engine.start()
    with pytest.raises(UnknownWorkflowError, match="nope"):
        engine.start_now("nope")


def test_events_take_the_shape_of_each_trigger(clock: ManualClock) -> None:
    now = clock.now()
    zone = trigger_event(
        "z", m.PersonInZoneTrigger(cameras=("porch",), min_s=20, zone="Loading bay"), time=now
    )
    assert (zone.kind, zone.type, zone.camera_role, zone.labels) == (
        "person_in_zone",
        "loading_bay",
        "porch",
        frozenset({"person"}),
    )
    assert dict(zone.payload) == {
        "seconds": 20,
        "threshold": 20,
        "label": "person",
        "zone": "Loading bay",
    }
    plate = trigger_event(
        "g",
        m.EventTrigger(event="plate.recognized.v1", cameras=("gate", "drive")),
        time=now,
        variables={"plate": "AB123", "camera": "drive", "camera_id": 2, "labels": "car, van"},
    )
    assert (plate.kind, plate.type, plate.camera_role, plate.camera_id, plate.plate) == (
        "event",
        "plate.recognized.v1",
        "drive",
        "2",
        "AB123",
    )
    assert plate.labels == frozenset({"car", "van"})
    assert dict(plate.payload) == {}
    # Two cameras and none named: the run has no current camera rather than a guessed one.
    assert (
        trigger_event("g", m.EventTrigger(event="x", cameras=("a", "b")), time=now).camera_role
        is None
    )
    sched = trigger_event("s", m.ScheduleTrigger(every_s=60), time=now, variables={"n": [1]})
    assert (sched.kind, sched.type, dict(sched.payload)) == ("schedule", "s", {})
