"""Plain rules that refer to nothing fail closed: a site list that does not exist or a
camera role no camera is mapped to stops the run with the reason, and the workflow needs
attention; neither path of the rule runs."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

import pytest

from custom_components.opennvr_workflows.engine.testing import FakeEffects, event
from custom_components.opennvr_workflows.workflow import model as m

from .conftest import EngineFactory


def log(text: str) -> m.ActionStep:
    return m.ActionStep(m.LogAction(text))


def gated(condition: m.Condition) -> m.Workflow:
    return m.Workflow(
        name="Gated",
        when=m.AlertTrigger(alert_type="intrusion"),
        conditions=(condition,),
        then=(log("passed"),),
        always=(log("always"),),
        state="on",
    )


def branching(condition: m.Condition) -> m.Workflow:
    return m.Workflow(
        name="Branching",
        when=m.AlertTrigger(alert_type="intrusion"),
        then=(
            m.IfStep(conditions=(condition,), paths={"true": (log("yes"),), "false": (log("no"),)}),
        ),
        state="on",
    )


def looping(items: m.ForEachCameras | m.ForEachList | m.ForEachEvents) -> m.Workflow:
    return m.Workflow(
        name="Loop",
        when=m.AlertTrigger(alert_type="intrusion"),
        then=(m.ForEachStep(items=items, steps=(log("item {it}"),), as_name="it"),),
        state="on",
    )


async def stopped(
    make_engine: EngineFactory,
    effects: FakeEffects,
    open_db: Callable[[], sqlite3.Connection],
    wf: m.Workflow,
    path: str,
    words: str,
) -> None:
    engine = make_engine()
    engine.set_workflows({"wf": wf})
    await engine.start()
    (run_id,) = engine.submit(event(plate="XX666"))
    await engine.idle()
    assert effects.of("log") == []  # no path of the rule ran, nor what follows it
    status = engine.workflow_status("wf")
    assert status.state == "needs_attention"
    assert status.reason is not None
    assert status.reason.startswith(f"step {path}:")
    assert words in status.reason
    run_status, error = (
        open_db()
        .execute("SELECT status, error FROM workflow_runs WHERE id=?", (run_id,))
        .fetchone()
    )
    assert run_status == "failed"
    assert words in error
    (step_status,) = (
        open_db()
        .execute("SELECT status FROM workflow_run_steps WHERE run_id=? AND path=?", (run_id, path))
        .fetchone()
    )
    assert step_status == "failed"


LIST_CONDITIONS = {
    "in": m.ListCondition("plate", "expected"),
    "not_in": m.ListCondition("plate", "blocked", negate=True),
}


@pytest.mark.parametrize("form", ["gate", "step"])
@pytest.mark.parametrize("which", list(LIST_CONDITIONS))
async def test_a_condition_on_a_list_that_does_not_exist_stops_the_run(
    form: str,
    which: str,
    make_engine: EngineFactory,
    effects: FakeEffects,
    open_db: Callable[[], sqlite3.Connection],
) -> None:
    """``not_in`` a missing list would hold for every plate (the blocked plate let in);
    ``in`` would hold for none. Neither evaluates: the run stops and says which list."""
    effects.lists = {"other": ["XX666"]}
    condition = LIST_CONDITIONS[which]
    wf = gated(condition) if form == "gate" else branching(condition)
    path = "if" if form == "gate" else "then.0"
    await stopped(make_engine, effects, open_db, wf, path, repr(condition.list_name))


async def test_an_existing_empty_list_still_evaluates(
    make_engine: EngineFactory, effects: FakeEffects
) -> None:
    """Only a list the site lacks fails closed: an empty list the site has is a list."""
    effects.lists = {"blocked": []}
    engine = make_engine()
    engine.set_workflows({"wf": branching(m.ListCondition("plate", "blocked", negate=True))})
    await engine.start()
    engine.submit(event(plate="XX666"))
    await engine.idle()
    assert [c.request for c in effects.of("log")] == ["yes"]
    assert engine.workflow_status("wf").state == "on"


async def test_a_for_each_over_a_list_that_does_not_exist_stops_the_run(
    make_engine: EngineFactory, effects: FakeEffects, open_db: Callable[[], sqlite3.Connection]
) -> None:
    wf = looping(m.ForEachList("visitors"))
    await stopped(make_engine, effects, open_db, wf, "then.0", "'visitors'")


@pytest.mark.parametrize("form", ["gate", "step"])
async def test_a_camera_condition_on_an_unmapped_role_stops_the_run(
    form: str,
    make_engine: EngineFactory,
    effects: FakeEffects,
    open_db: Callable[[], sqlite3.Connection],
) -> None:
    effects.camera_roles = {"yard", "drive"}
    condition = m.CameraCondition(("yard", "gate"))
    wf = gated(condition) if form == "gate" else branching(condition)
    path = "if" if form == "gate" else "then.0"
    await stopped(make_engine, effects, open_db, wf, path, "'gate'")


@pytest.mark.parametrize(
    "items",
    [m.ForEachCameras(("yard", "gate")), m.ForEachEvents(within_s=600, cameras=("gate",))],
    ids=["cameras", "events"],
)
async def test_a_for_each_on_an_unmapped_role_stops_the_run(
    items: m.ForEachCameras | m.ForEachEvents,
    make_engine: EngineFactory,
    effects: FakeEffects,
    open_db: Callable[[], sqlite3.Connection],
) -> None:
    """An unmapped role would be an item no camera answers, or no events at all."""
    effects.camera_roles = {"yard"}
    await stopped(make_engine, effects, open_db, looping(items), "then.0", "'gate'")


async def test_mapped_roles_evaluate_as_before(
    make_engine: EngineFactory, effects: FakeEffects
) -> None:
    effects.camera_roles = {"yard", "gate"}
    engine = make_engine()
    engine.set_workflows({"wf": branching(m.CameraCondition(("gate",)))})
    await engine.start()
    engine.submit(event())
    await engine.idle()
    assert [c.request for c in effects.of("log")] == ["no"]
    assert engine.workflow_status("wf").state == "on"


class ListsByKey(FakeEffects):
    """A host whose list read lets a missing name through as a KeyError."""

    async def site_list(self, name: str) -> list[str]:
        return list(self.lists[name])


async def test_a_lookup_error_from_the_host_fails_closed_too(
    make_engine: EngineFactory, open_db: Callable[[], sqlite3.Connection]
) -> None:
    effects = ListsByKey()
    wf = branching(m.ListCondition("plate", "blocked", negate=True))
    engine = make_engine(effects=effects)
    engine.set_workflows({"wf": wf})
    await engine.start()
    engine.submit(event(plate="XX666"))
    await engine.idle()
    assert effects.of("log") == []
    assert engine.workflow_status("wf").state == "needs_attention"
