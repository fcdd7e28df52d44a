"""What a run keeps while it waits (a home may have a thousand waiting): the engine lets go of
the task that drove it to its waiting point, and the runs a start rebuilds from the file share
the words a site repeats (workflow, status, step path and kind, the event's type and camera)
and the empty labels and payload, as the runs a source starts do; what else a start keeps of
a run (its question, its due time, the alert that started it) holds the run's own id."""

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
    _engine, (a, b) = await restarted(make_engine)
    assert a.event.alert_id != b.event.alert_id
    assert a.workflow_id is b.workflow_id
    assert a.status is b.status
    (step_a,), (step_b,) = a.steps.values(), b.steps.values()
    assert step_a.path is step_b.path
    assert step_a.kind is step_b.kind
    assert step_a.status is step_b.status
    assert [*step_a.result] == [*step_b.result]
    for key_a, key_b in zip(step_a.result, step_b.result, strict=True):
        assert key_a is key_b
    assert a.chain[-1] is a.correlation_id
    for name in ("kind", "source", "type", "camera_id", "camera_role"):
        assert getattr(a.event, name) is getattr(b.event, name), name
    assert a.event.labels is b.event.labels
    assert a.event.payload is b.event.payload


async def test_what_a_start_keeps_of_a_waiting_run_holds_its_own_id(
    make_engine: EngineFactory,
) -> None:
    engine, restored = await restarted(make_engine)
    runs = {run.run_id: run for run in restored}
    approvals = list(engine.approvals.values())
    dues = [due for due in engine._due.rows.values() if due.run_id in runs]
    delivered = engine._admission.delivered._runs
    assert len(approvals) == 2
    assert len(dues) == 2
    assert len(delivered) == 2
    for approval in approvals:
        assert approval.run_id is runs[approval.run_id].run_id
        assert approval.workflow_id is runs[approval.run_id].workflow_id
    for due in dues:
        assert due.run_id is runs[due.run_id].run_id
        assert due.workflow_id is runs[due.run_id].workflow_id
    for (workflow_id, _alert), (run_id, _at) in delivered.items():
        assert run_id is runs[run_id].run_id
        assert workflow_id is runs[run_id].workflow_id


async def restarted(make_engine: EngineFactory) -> tuple[Engine, list[ActiveRun]]:
    """Two runs left waiting by one engine, as the next engine on the file rebuilds them."""
    first = make_engine()
    await two_waiting(first)
    await first.stop(grace_s=0.1)
    engine = make_engine()
    return engine, await two_waiting_again(engine)


async def two_waiting_again(engine: Engine) -> list[ActiveRun]:
    """The two runs as the next start rebuilds them from the file."""
    engine.set_workflows({"ask": asking()})
    await engine.start()
    await engine.idle()
    runs = sorted(engine.active_runs(), key=lambda run: str(run.event.alert_id))
    assert [run.status for run in runs] == ["waiting", "waiting"]
    return runs
