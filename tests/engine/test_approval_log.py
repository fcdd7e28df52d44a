"""The approval log: what happened to a question is part of its run's trace.

The host notes deliveries, refused taps (and why) and answers; the run's detail lists them in
order beside the approval, after a restart too, and retention removes them with the run.
"""

from __future__ import annotations

from custom_components.opennvr_workflows.engine.testing import event

from .conftest import EngineFactory
from .test_ask_paths import only_yes


async def test_notes_are_in_the_runs_trace_in_order_and_survive_a_restart(
    make_engine: EngineFactory,
) -> None:
    engine = make_engine()
    engine.set_workflows({"w": only_yes()})
    await engine.start()
    (run_id,) = engine.submit(event())
    await engine.idle()
    ((approval, _),) = engine.pending_approvals()
    engine.note_approval(approval.approval_id, "delivered", None, "2 phones")
    engine.note_approval(approval.approval_id, "refused", "mallory", "not an addressee")
    await engine.answer_approval(approval.approval_id, "No", "guard-1")
    engine.note_approval(approval.approval_id, "answered", "guard-1", "No")
    await engine.idle()
    assert engine.approval(approval.approval_id) is None  # the run ended
    # A late tap on an ended run is still logged under that run.
    engine.note_approval(approval.approval_id, "refused", "guard-2", "already answered")
    await engine.stop()

    again = make_engine()
    await again.start()
    detail = await again.run_detail(run_id)
    await again.stop()
    assert [(n["event"], n["user"], n["detail"]) for n in detail["approval_log"]] == [
        ("delivered", None, "2 phones"),
        ("refused", "mallory", "not an addressee"),
        ("answered", "guard-1", "No"),
        ("refused", "guard-2", "already answered"),
    ]
    assert {n["approval_id"] for n in detail["approval_log"]} == {approval.approval_id}


async def test_retention_removes_the_log_with_its_run(make_engine: EngineFactory) -> None:
    engine = make_engine()
    engine.set_workflows({"w": only_yes()})
    await engine.start()
    (run_id,) = engine.submit(event())
    await engine.idle()
    ((approval, _),) = engine.pending_approvals()
    engine.note_approval(approval.approval_id, "delivered", None)
    await engine.answer_approval(approval.approval_id, "Yes", "guard-1")
    await engine.idle()
    assert len((await engine.run_detail(run_id))["approval_log"]) == 1
    assert await engine.prune(older_than_days=-1) == 1
    count = await engine.store.submit(
        lambda c: c.execute("SELECT count(*) FROM workflow_approval_log").fetchone()[0]
    )
    await engine.stop()
    assert count == 0
