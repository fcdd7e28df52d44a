"""No false refusals: what the validator accepts runs to completion under the monitor.

Every shipped template, every workflow the safety tests accept (the safe look-alikes beside
each attack in tests/workflow/test_what_happens.py and tests/engine/test_what_happens.py, the
warned corpus), and random workflows the validator accepts (the generator of valid models in
tests/workflow/strategies.py, and the safety rule's own generator in
tests/workflow/test_taint_property.py where the validator accepts what it drew) run On, with
the fake model taking each of its options and each question answered with each reply or
timing out: no step is refused, every run ends done, and the workflow stays On.
"""

from __future__ import annotations

import asyncio
import sqlite3
import tempfile
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from custom_components.opennvr_workflows.engine import AiResult, Engine
from custom_components.opennvr_workflows.engine.testing import FakeAi, ManualClock
from custom_components.opennvr_workflows.workflow import (
    SiteProfile,
    load_template,
    load_workflow,
    template_names,
    validate_workflow,
)
from custom_components.opennvr_workflows.workflow import model as m

from ..workflow import strategies
from ..workflow import test_taint_property as taint_property
from ..workflow import test_what_happens as validator_side
from . import test_what_happens as engine_side
from .locks import AnyList, Start, explore, settle
from .rule_reference import read_trace

WARNED = Path(__file__).parents[1] / "workflow" / "warned"
MODEL_APPS = frozenset({"scene_describer"})


async def explored(workflow: m.Workflow, start: Start) -> None:
    runs = await explore(workflow, start)
    assert runs
    for ran in runs:
        refused = {
            p: r.result.get("error") for p, r in ran.trace.rows.items() if r.status == "refused"
        }
        assert refused == {}
        assert ran.status == "done", (ran.status, ran.trace.rows)


def _start(workflow: m.Workflow) -> Start:
    if isinstance(workflow.when, m.MessageTrigger):
        return Start(message="what happened at the front door?")
    return Start()


@pytest.mark.parametrize("name", template_names())
async def test_every_shipped_template_runs_to_completion_under_the_monitor(name: str) -> None:
    workflow = load_template(name)
    await explored(workflow, _start(workflow))


def _validator_side(body: str, site: SiteProfile | None = None) -> m.Workflow:
    return load_workflow(validator_side.HEAD + textwrap.dedent(body), site=site)


def _engine_side(body: str) -> m.Workflow:
    return load_workflow(engine_side.HEAD + textwrap.dedent(body))


SAFE = {
    "always-decides-on-the-trigger": _validator_side(
        validator_side.ALWAYS.replace("COLLECT", "notes").replace("READ", "confidence")
    ),
    "escaped-braces-are-text": _validator_side(
        validator_side.GATE_DATA.replace("DATA", "{{decision}}")
    ),
    "an-apps-own-alert-decides-severity": _validator_side(
        validator_side.SEVERITY.replace(
            "TRIGGER", "alert: { app: intrusion, cameras: [gate] }"
        ).replace("READ", "title")
    ),
    "a-loop-unlocks-a-named-lock": _validator_side(
        validator_side.HIDDEN.replace("ENTITY", "lock.front")
    ),
    "a-loop-over-named-cameras": _validator_side(
        validator_side.LOOP.replace("ITEMS", "cameras: [garden]")
    ),
    "the-same-people-are-asked": _validator_side(validator_side.WHO.replace("FIRST", "owner")),
    "a-short-wait-after-the-answer": _validator_side(validator_side.STALE.replace("WAIT", "5m")),
    "a-long-wait-asks-again": _validator_side(validator_side.STALE.replace("WAIT", "1d")),
    "a-detector-apps-alert": _validator_side(
        validator_side.MODEL_APP.replace("APP", "intrusion"), SiteProfile(model_apps=MODEL_APPS)
    ),
    "always-with-escaped-reason": _engine_side(
        engine_side.ALWAYS.replace("{reason}", "{{reason}}")
    ),
    "a-high-alert-over-named-cameras": _engine_side(
        engine_side.SEVERITY.replace("ITEMS", "cameras: [gate]").replace("medium", "high")
    ),
    "each-question-says-what-its-replies-do": _engine_side(engine_side.QUESTION),
    "a-missing-value-fails-closed": _engine_side(engine_side.MISSING),
    "an-old-answer-is-asked-again": _engine_side(engine_side.STALE.replace("WAIT", "1h")),
    "a-detector-apps-alert-opens-the-gate": _engine_side(
        engine_side.MODEL_APP.replace("APP", "intrusion")
    ),
}


@pytest.mark.parametrize("name", sorted(SAFE))
async def test_every_safe_look_alike_of_the_safety_tests_runs_to_completion(name: str) -> None:
    workflow = SAFE[name]
    start = _start(workflow)
    if "apps" in name:
        start = Start(variables={"title": "Delivery"}, model_apps=MODEL_APPS)
    await explored(workflow, start)


WARNED_FILES = sorted(WARNED.glob("*.yaml"))


@pytest.mark.parametrize("path", WARNED_FILES, ids=[p.stem for p in WARNED_FILES])
async def test_every_warned_file_runs_to_completion(path: Path) -> None:
    workflow = load_workflow(path.read_text(encoding="utf-8"))
    await explored(workflow, _start(workflow))


# ── random workflows the validator accepts ─────────────────────────────────────────────


async def once(db: Path, workflow: m.Workflow, data: st.DataObject) -> tuple[str, str]:
    """One run, On, the AI's outputs and the answers drawn; the run's id and status."""
    clock = ManualClock()

    def decide(step: m.AIStep, ctx: object) -> AiResult:
        outcome = data.draw(st.sampled_from([*step.decision, "unsure"]), label="decision")
        fields = (
            {n: data.draw(st.sampled_from(v), label=n) for n, v in step.fields.items()}
            if outcome != "unsure"
            else {}
        )
        return AiResult(outcome=outcome, fields=fields, reason="TTS", confidence=0.7)

    engine = Engine(db, AnyList(), FakeAi(decide=decide), clock, retention_interval_s=0)
    on = replace(workflow, state="on", limits=replace(workflow.limits, cooldown_s=0))
    engine.set_workflows({"wf": on})
    await engine.start()
    try:
        message = "hello" if isinstance(workflow.when, m.MessageTrigger) else None
        (run_id,) = engine.start_now("wf", message=message, user="alice").run_ids
        await settle(
            engine,
            clock,
            lambda approval: data.draw(st.sampled_from([*approval.replies, None]), label="reply"),
        )
        state = engine.workflow_status("wf").state
    finally:
        await engine.stop()
    assert state == "on"
    return run_id, state


def _runs_clean(workflow: m.Workflow, data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "wf.db"
        run_id, _ = asyncio.run(once(db, workflow, data))
        conn = sqlite3.connect(db)
        try:
            trace = read_trace(conn, run_id)
            (status,) = conn.execute(
                "SELECT status FROM workflow_runs WHERE id=?", (run_id,)
            ).fetchone()
        finally:
            conn.close()
    refused = {p: r.result.get("error") for p, r in trace.rows.items() if r.status == "refused"}
    assert refused == {}
    assert status == "done", trace.rows


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(workflow=strategies.workflows(), data=st.data())
def test_valid_random_workflows_are_never_refused_at_run_time(
    workflow: m.Workflow, data: st.DataObject
) -> None:
    _runs_clean(workflow, data)


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
    ],
)
@given(
    workflow=taint_property.workflows().filter(lambda w: validate_workflow(w).ok),
    data=st.data(),
)
def test_what_the_safety_rules_generator_draws_and_the_validator_accepts_is_never_refused(
    workflow: m.Workflow, data: st.DataObject
) -> None:
    _runs_clean(workflow, data)
