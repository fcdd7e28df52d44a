"""Marks, accuracy with its Wilson interval, and the AI severity cap."""

from __future__ import annotations

import pytest

from custom_components.opennvr_workflows.engine import Accuracy, cap_severity, wilson_interval
from custom_components.opennvr_workflows.engine.testing import FakeEffects, event
from custom_components.opennvr_workflows.workflow import model as m

from .conftest import EngineFactory


def test_wilson_interval_known_values() -> None:
    low, high = wilson_interval(16, 20)
    assert low == pytest.approx(0.584, abs=0.001)  # the review's "roughly 58-92 %"
    assert high == pytest.approx(0.919, abs=0.001)
    assert wilson_interval(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError, match="right <= total"):
        wilson_interval(3, 2)


def test_trust_needs_twenty_marks_and_a_lower_bound_of_080() -> None:
    assert not Accuracy(19, 19).trusted  # too few, however right
    assert not Accuracy(18, 20).trusted  # 90 % but the bound is 0.70
    assert Accuracy(20, 20).trusted  # bound 0.839
    assert not Accuracy(33, 36).trusted
    assert Accuracy(46, 49).trusted


def test_cap() -> None:
    assert cap_severity("high", None) == ("medium", "ai_untrusted")
    assert cap_severity("low", None) == ("low", None)
    assert cap_severity("high", Accuracy(20, 20)) == ("high", None)
    assert cap_severity("critical", Accuracy(20, 20)) == ("high", "ai_trusted_max")


def _triage() -> m.Workflow:
    return m.Workflow(
        name="Triage",
        when=m.AlertTrigger(cameras=("yard",)),
        state="on",
        limits=m.WorkflowLimits(cooldown_s=0, per_hour=1000, ai_per_hour=1000),
        then=(
            m.AIStep(
                spec=m.LookSpec(prompt="Threat?"),
                decision=("alert",),
                paths={
                    "alert": (m.ActionStep(m.AlertAction("high", "Intruder on {camera}")),),
                    "unsure": (
                        m.AskPersonStep(
                            roles=("owner",),
                            message="?",
                            replies=("Yes", "No"),
                            # A person's reply is one other than the default (README).
                            default="No",
                            timeout_s=1,
                            paths={
                                "Yes": (m.ActionStep(m.AlertAction("high", "Confirmed")),),
                                "No": (),
                            },
                        ),
                    ),
                },
            ),
        ),
    )


async def test_ai_decided_alert_is_capped_until_marks_earn_high(
    make_engine: EngineFactory, effects: FakeEffects
) -> None:
    engine = make_engine()
    engine.set_workflows({"t": _triage()})
    await engine.start()
    runs: list[str] = []
    for i in range(20):
        runs += engine.submit(event(camera_id=f"c{i}"))
        await engine.idle()
    severities = [c.request.severity for c in effects.of("alert")]
    assert severities == ["medium"] * 20
    assert effects.of("alert")[0].request.capped_by == "ai_untrusted"
    for run_id in runs[:19]:
        await engine.mark_run(run_id, True, "ann")
    accuracy = await engine.mark_run(runs[19], True, "ann")
    (record,) = accuracy.values()
    assert record == Accuracy(20, 20)
    engine.submit(event(camera_id="next"))
    await engine.idle()
    assert effects.of("alert")[-1].request.severity == "high"
    # Marking one wrong again drops the bound under 0.80: capped again.
    await engine.mark_run(runs[0], False, "ann")
    engine.submit(event(camera_id="after"))
    await engine.idle()
    assert effects.of("alert")[-1].request.severity == "medium"


async def test_marks_survive_a_restart(make_engine: EngineFactory) -> None:
    engine = make_engine()
    engine.set_workflows({"t": _triage()})
    await engine.start()
    (run_id,) = engine.submit(event())
    await engine.idle()
    await engine.mark_run(run_id, False, "ann")
    await engine.stop()
    engine = make_engine()
    engine.set_workflows({"t": _triage()})
    await engine.start()
    (record,) = engine.accuracy("t").values()
    assert record == Accuracy(0, 1)


async def test_person_decided_alert_is_not_capped(
    make_engine: EngineFactory, effects: FakeEffects, ai: object
) -> None:
    from custom_components.opennvr_workflows.engine import AiResult
    from custom_components.opennvr_workflows.engine.testing import FakeAi

    assert isinstance(ai, FakeAi)
    ai.decide = lambda step, ctx: AiResult(outcome="unsure")
    engine = make_engine()
    engine.set_workflows({"t": _triage()})
    await engine.start()
    engine.submit(event())
    await engine.idle()
    ((approval, _),) = engine.pending_approvals()
    await engine.answer_approval(approval.approval_id, "Yes", "ann")
    await engine.idle()
    assert [c.request.severity for c in effects.of("alert")] == ["high"]


async def test_an_edited_prompt_starts_a_new_record_and_one_version_keeps_its_own(
    make_engine: EngineFactory,
) -> None:
    """A step's marks follow the step itself: runs of one version add to one record, the
    step with its prompt edited starts another (each keyed by that step's own hash)."""
    from dataclasses import replace

    from custom_components.opennvr_workflows.engine.versions import step_hash

    engine = make_engine()
    first = _triage()
    engine.set_workflows({"t": first})
    await engine.start()
    for camera in ("c1", "c2"):
        (run_id,) = engine.submit(event(camera_id=camera))
        await engine.idle()
        await engine.mark_run(run_id, True, "ann")
    step = first.then[0]
    assert isinstance(step, m.AIStep)
    edited = replace(step, spec=m.LookSpec(prompt="Threat? Look at the gate too."))
    engine.set_workflows({"t": replace(first, then=(edited,))})
    (run_id,) = engine.submit(event(camera_id="c3"))
    await engine.idle()
    await engine.mark_run(run_id, False, "ann")
    assert engine.accuracy("t") == {
        f"t/then.0@{step_hash(step)}": Accuracy(2, 2),
        f"t/then.0@{step_hash(edited)}": Accuracy(0, 1),
    }
