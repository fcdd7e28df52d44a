"""What a run keeps while it waits (a home may have a thousand waiting): the engine lets go of
the task that drove it to its waiting point, and the runs a start rebuilds from the file share
the words a site repeats (workflow, status, step path and kind, the event's type and camera)
and the empty labels and payload, as the runs a source starts do."""

from __future__ import annotations

from dataclasses import replace

from custom_components.opennvr_workflows.engine import Engine
from custom_components.opennvr_workflows.engine.records import ActiveRun
from custom_components.opennvr_workflows.engine.testing import event
from custom_components.opennvr_workflows.workflow import model as m

from .conftest import EngineFactory
from .workflows import ask_flood


def asking() -> m.Workflow:
    """A question on each yard alert, every alert its own run."""
    limits = m.WorkflowLimits(cooldown_s=0, one_at_a_time="track", per_hour=1000)
    return replace(ask_flood(), limits=limits)


async def two_waiting(engine: Engine) -> list[ActiveRun]:
    engine.set_workflows({"ask": asking()})
    await engine.start()
    for n in (1, 2):
        await engine.dispatch(event(alert_id=f"a{n}", track_id=f"t{n}"))
    await engine.idle()
    runs = sorted(engine.active_runs(), key=lambda run: str(run.event.alert_id))
    assert [run.status for run in runs] == ["waiting", "waiting"]
    return runs


async def test_a_waiting_run_holds_no_finished_task(make_engine: EngineFactory) -> None:
    runs = await two_waiting(make_engine())
    assert [run.task for run in runs] == [None, None]


async def test_runs_restored_waiting_share_the_words_of_the_site(
    make_engine: EngineFactory,
) -> None:
    first = make_engine()
    await two_waiting(first)
    await first.stop(grace_s=0.1)
    a, b = await two_waiting_again(make_engine())
    assert a.event.alert_id != b.event.alert_id
    assert a.workflow_id is b.workflow_id
    assert a.status is b.status
    (step_a,), (step_b,) = a.steps.values(), b.steps.values()
    assert step_a.path is step_b.path
    assert step_a.kind is step_b.kind
    assert step_a.status is step_b.status
    for name in ("kind", "source", "type", "camera_id", "camera_role"):
        assert getattr(a.event, name) is getattr(b.event, name), name
    assert a.event.labels is b.event.labels
    assert a.event.payload is b.event.payload


async def two_waiting_again(engine: Engine) -> list[ActiveRun]:
    """The two runs as the next start rebuilds them from the file."""
    engine.set_workflows({"ask": asking()})
    await engine.start()
    await engine.idle()
    runs = sorted(engine.active_runs(), key=lambda run: str(run.event.alert_id))
    assert [run.status for run in runs] == ["waiting", "waiting"]
    return runs
