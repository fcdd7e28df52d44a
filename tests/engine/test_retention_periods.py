"""Marks and workflow versions have their own retention periods: old marks stop counting,
and old versions go unless a workflow runs them or a kept run used them."""

from __future__ import annotations

import datetime as dt

from custom_components.opennvr_workflows.engine.testing import ManualClock, event
from custom_components.opennvr_workflows.workflow import model as m

from .conftest import EngineFactory


def triage(prompt: str = "Threat?") -> m.Workflow:
    return m.Workflow(
        name="Triage",
        when=m.AlertTrigger(cameras=("yard",)),
        state="on",
        limits=m.WorkflowLimits(cooldown_s=0, per_hour=1000, ai_per_hour=1000),
        then=(
            m.AIStep(
                spec=m.LookSpec(prompt=prompt),
                decision=("alert",),
                paths={"alert": (m.ActionStep(m.LogAction("alert")),), "unsure": ()},
            ),
        ),
    )


async def test_marks_older_than_their_period_are_deleted_and_stop_counting(
    make_engine: EngineFactory, clock: ManualClock
) -> None:
    engine = make_engine(marks_days=10, retention_days=1000)
    engine.set_workflows({"t": triage()})
    await engine.start()
    (old,) = engine.submit(event(alert_id="old"))
    await engine.idle()
    await engine.mark_run(old, True, "alice")
    clock.set(clock.now() + dt.timedelta(days=8))
    (new,) = engine.submit(event(alert_id="new"))
    await engine.idle()
    await engine.mark_run(new, False, "alice")
    (key,) = engine.accuracy("t")
    assert engine.accuracy("t")[key].total == 2

    clock.set(clock.now() + dt.timedelta(days=3))  # the first mark is 11 days old
    await engine.prune()
    accuracy = engine.accuracy("t")[key]
    assert (accuracy.right, accuracy.total) == (0, 1)
    marks = await engine.store.submit(
        lambda c: [r[0] for r in c.execute("SELECT run_id FROM workflow_marks").fetchall()]
    )
    assert marks == [new]
    await engine.stop()

    again = make_engine(marks_days=10)
    again.set_workflows({"t": triage()})
    await again.start()
    assert again.accuracy("t")[key].total == 1  # the same after a restart


async def test_old_versions_go_unless_current_or_used_by_a_kept_run(
    make_engine: EngineFactory, clock: ManualClock
) -> None:
    engine = make_engine(versions_days=30, retention_days=60)
    engine.set_workflows({"t": triage("first?")})
    await engine.start()
    first = engine.workflow_status("t").version
    engine.submit(event(alert_id="one"))  # a run of the first version, kept 60 days
    await engine.idle()
    engine.set_workflows({"t": triage("second?")})
    second = engine.workflow_status("t").version
    engine.set_workflows({"t": triage("third?")})  # never ran
    third = engine.workflow_status("t").version
    assert len({first, second, third}) == 3

    clock.set(clock.now() + dt.timedelta(days=31))
    await engine.prune()
    kept = {v["version"] for v in await engine.versions("t")}
    assert kept == {first, third}  # used by a kept run; the current one

    clock.set(clock.now() + dt.timedelta(days=30))  # the run is 61 days old: pruned
    await engine.prune()
    assert {v["version"] for v in await engine.versions("t")} == {third}


async def test_without_periods_marks_and_versions_are_kept(
    make_engine: EngineFactory, clock: ManualClock
) -> None:
    engine = make_engine()
    engine.set_workflows({"t": triage("first?")})
    await engine.start()
    (run_id,) = engine.submit(event())
    await engine.idle()
    await engine.mark_run(run_id, True, "alice")
    engine.set_workflows({"t": triage("second?")})
    clock.set(clock.now() + dt.timedelta(days=3650))
    await engine.prune()
    assert len(await engine.versions("t")) == 2
    (key,) = engine.accuracy("t")
    assert engine.accuracy("t")[key].total == 1
