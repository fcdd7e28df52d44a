"""Conditions: the workflow's ``if`` gate and ``if`` steps (RFC section 2: a
plain rule over a time window, the site mode, the camera, a value from an
earlier step, or membership of a site list), each with the path it takes."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import pytest

from custom_components.opennvr_workflows.engine import AiResult, ProviderUnavailable
from custom_components.opennvr_workflows.engine.testing import (
    FakeAi,
    FakeEffects,
    ManualClock,
    event,
)
from custom_components.opennvr_workflows.workflow import model as m

from .conftest import EngineFactory

Form = Literal["gate", "step"]
UTC = dt.UTC
#: 2026-01-05 is a Monday.
MONDAY = dt.date(2026, 1, 5)


def at(day: dt.date, hour: int, minute: int = 0, tz: dt.tzinfo = UTC) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(hour, minute), tzinfo=tz)


def steps_of(conn: sqlite3.Connection) -> list[tuple[str, str, str, str | None]]:
    return conn.execute(
        "SELECT path, kind, status, outcome FROM workflow_run_steps ORDER BY seq"
    ).fetchall()


@dataclass
class Case:
    """One condition, the world it is checked in, and whether it should hold."""

    condition: m.Condition
    holds: bool
    now: dt.datetime = field(default_factory=lambda: at(MONDAY, 12))
    site_mode: str | None = "disarmed"
    lists: dict[str, list[str]] = field(default_factory=dict)
    event: dict[str, Any] = field(default_factory=dict)
    tz: dt.tzinfo | None = None


def _time(start: str, end: str, days: tuple[m.Weekday, ...] = ()) -> m.TimeCondition:
    return m.TimeCondition(dt.time.fromisoformat(start), dt.time.fromisoformat(end), days)


NIGHT = _time("22:00", "06:00")
PLUS_2 = dt.timezone(dt.timedelta(hours=2))

CASES: dict[str, Case] = {
    # Time windows: [start, end), the day is the day the window started.
    "time-inside-day-window": Case(_time("08:00", "18:00"), True, now=at(MONDAY, 12)),
    "time-after-day-window": Case(_time("08:00", "18:00"), False, now=at(MONDAY, 19)),
    "time-at-start-is-inside": Case(_time("08:00", "18:00"), True, now=at(MONDAY, 8)),
    "time-at-end-is-outside": Case(_time("08:00", "18:00"), False, now=at(MONDAY, 18)),
    "night-before-midnight": Case(NIGHT, True, now=at(MONDAY, 23, 30)),
    "night-after-midnight": Case(NIGHT, True, now=at(MONDAY, 2)),
    "night-at-its-end": Case(NIGHT, False, now=at(MONDAY, 6)),
    "night-at-noon": Case(NIGHT, False, now=at(MONDAY, 12)),
    # Tuesday 02:00 is in Monday's night; Monday 02:00 is in Sunday's.
    "night-started-on-a-listed-day": Case(
        _time("22:00", "06:00", ("mon",)), True, now=at(MONDAY + dt.timedelta(days=1), 2)
    ),
    "night-started-on-another-day": Case(
        _time("22:00", "06:00", ("mon",)), False, now=at(MONDAY, 2)
    ),
    "day-window-on-an-unlisted-day": Case(
        _time("08:00", "18:00", ("sat", "sun")), False, now=at(MONDAY, 12)
    ),
    # The window is in the site's time: 20:30 UTC is 22:30 at UTC+2.
    "night-in-the-site-time-zone": Case(NIGHT, True, now=at(MONDAY, 20, 30), tz=PLUS_2),
    "night-not-yet-in-utc": Case(NIGHT, False, now=at(MONDAY, 20, 30)),
    # Site mode.
    "site-armed": Case(
        m.SiteModeCondition(("armed_home", "armed_away")), True, site_mode="armed_away"
    ),
    "site-disarmed": Case(
        m.SiteModeCondition(("armed_home", "armed_away")), False, site_mode="disarmed"
    ),
    "site-mode-unknown": Case(m.SiteModeCondition(("armed_home",)), False, site_mode=None),
    # The camera is the trigger's role (or its id when it has no role).
    "camera-role-listed": Case(m.CameraCondition(("yard", "drive")), True),
    "camera-role-not-listed": Case(
        m.CameraCondition(("drive",)), False, event={"camera_role": "garage"}
    ),
    "camera-without-role-uses-its-id": Case(
        m.CameraCondition(("cam-7",)), True, event={"camera_role": None, "camera_id": "cam-7"}
    ),
    # A value from the trigger.
    "value-is-in": Case(
        m.ValueCondition("plate", is_in=("AB123", "CD456")), True, event={"plate": "CD456"}
    ),
    "value-is-not-in-the-list": Case(
        m.ValueCondition("plate", is_in=("AB123",)), False, event={"plate": "ZZ999"}
    ),
    "value-is-excluded": Case(
        m.ValueCondition("severity", is_not_in=("low",)), False, event={"severity": "low"}
    ),
    "value-is-not-excluded": Case(
        m.ValueCondition("severity", is_not_in=("low",)), True, event={"severity": "high"}
    ),
    "value-above": Case(m.ValueCondition("count", above=2), True, event={"payload": {"count": 3}}),
    "value-not-above": Case(
        m.ValueCondition("count", above=3), False, event={"payload": {"count": 3}}
    ),
    "value-between": Case(
        m.ValueCondition("count", above=1, below=5), True, event={"payload": {"count": "4"}}
    ),
    "value-not-below": Case(
        m.ValueCondition("count", below=5), False, event={"payload": {"count": 5}}
    ),
    "value-not-a-number": Case(
        m.ValueCondition("count", above=1), False, event={"payload": {"count": "many"}}
    ),
    "value-missing": Case(m.ValueCondition("plate", is_in=("AB123",)), False),
    # Membership of a site list (case does not matter), and its negation.
    "list-member": Case(
        m.ListCondition("plate", "expected"),
        True,
        lists={"expected": ["ab123", "CD456"]},
        event={"plate": "AB123"},
    ),
    "list-not-a-member": Case(
        m.ListCondition("plate", "expected"),
        False,
        lists={"expected": ["CD456"]},
        event={"plate": "AB123"},
    ),
    "list-value-missing": Case(
        m.ListCondition("plate", "expected"), False, lists={"expected": ["None", ""]}
    ),
    "not-in-list-holds-for-a-stranger": Case(
        m.ListCondition("plate", "banned", negate=True),
        True,
        lists={"banned": ["XX666"]},
        event={"plate": "AB123"},
    ),
    "not-in-list-fails-for-a-member": Case(
        m.ListCondition("plate", "banned", negate=True),
        False,
        lists={"banned": ["xx666"]},
        event={"plate": "XX666"},
    ),
}


def gated(*conditions: m.Condition, state: str = "on") -> m.Workflow:
    """The conditions gate the whole run: ``then`` and ``always`` only when they hold."""
    return m.Workflow(
        name="Gated",
        when=m.AlertTrigger(),
        state=state,  # type: ignore[arg-type]
        limits=m.WorkflowLimits(cooldown_s=0, per_hour=1000),
        conditions=conditions,
        then=(m.ActionStep(m.LogAction("ran on {camera}")),),
        always=(m.ActionStep(m.LogAction("always")),),
    )


def branching(*conditions: m.Condition, state: str = "on") -> m.Workflow:
    """An If step: one log line on each path."""
    return m.Workflow(
        name="Branching",
        when=m.AlertTrigger(),
        state=state,  # type: ignore[arg-type]
        limits=m.WorkflowLimits(cooldown_s=0, per_hour=1000),
        then=(
            m.IfStep(
                conditions,
                paths={
                    "true": (m.ActionStep(m.LogAction("yes")),),
                    "false": (m.ActionStep(m.LogAction("no")),),
                },
            ),
        ),
    )


def logs(effects: FakeEffects) -> list[str]:
    return [c.request for c in effects.of("log")]


@pytest.mark.parametrize("form", ["gate", "step"])
@pytest.mark.parametrize("name", list(CASES))
async def test_condition_takes_the_path_it_should(
    name: str,
    form: Form,
    make_engine: EngineFactory,
    effects: FakeEffects,
    clock: ManualClock,
    open_db: Callable[[], sqlite3.Connection],
) -> None:
    case = CASES[name]
    clock.set(case.now)
    effects.site_mode_value = case.site_mode
    effects.lists = case.lists
    engine = make_engine(tz=case.tz) if case.tz else make_engine()
    wf = gated(case.condition) if form == "gate" else branching(case.condition)
    engine.set_workflows({"wf": wf})
    await engine.start()
    (run_id,) = engine.submit(event(time=case.now, **case.event))
    await engine.idle()
    conn = open_db()
    expected = "true" if case.holds else "false"
    if form == "gate":
        camera = case.event.get("camera_role", "yard") or case.event.get("camera_id")
        assert logs(effects) == ([f"ran on {camera}", "always"] if case.holds else [])
        gate_row = ("if", "if", "done", expected)
        rest = [("then.0", "log", "done", "done"), ("always.0", "log", "done", "done")]
        assert steps_of(conn) == [gate_row, *(rest if case.holds else [])]
        (result,) = conn.execute("SELECT result FROM workflow_run_steps WHERE path='if'").fetchone()
    else:
        assert logs(effects) == (["yes"] if case.holds else ["no"])
        assert steps_of(conn) == [
            ("then.0", "if", "done", expected),
            (f"then.0.{expected}.0", "log", "done", "done"),
        ]
        (result,) = conn.execute(
            "SELECT result FROM workflow_run_steps WHERE path='then.0'"
        ).fetchone()
    recorded = json.loads(result)
    assert recorded["conditions"] == [case.holds]
    # What it read came from the world (the event, the clock, the site): a plain rule.
    assert recorded["by"] == "rule"
    assert set(recorded.get("read", {}).values()) <= {"world"}
    status, outcome = conn.execute(
        "SELECT status, outcome FROM workflow_runs WHERE id=?", (run_id,)
    ).fetchone()
    assert status == "done"
    assert outcome == ("false" if form == "gate" and not case.holds else "done")


@pytest.mark.parametrize("form", ["gate", "step"])
async def test_every_condition_must_hold(
    form: Form,
    make_engine: EngineFactory,
    effects: FakeEffects,
    clock: ManualClock,
    open_db: Callable[[], sqlite3.Connection],
) -> None:
    """The RFC's example: site armed AND 22:00 to 06:00; armed at noon is not enough."""
    conditions = (m.SiteModeCondition(("armed_home", "armed_away")), NIGHT)
    effects.site_mode_value = "armed_home"
    clock.set(at(MONDAY, 12))
    engine = make_engine()
    engine.set_workflows({"wf": gated(*conditions) if form == "gate" else branching(*conditions)})
    await engine.start()
    engine.submit(event())
    await engine.idle()
    clock.set(at(MONDAY, 23))
    engine.submit(event(camera_id="cam-2"))
    await engine.idle()
    conn = open_db()
    path = "if" if form == "gate" else "then.0"
    results = [
        (outcome, json.loads(result))
        for outcome, result in conn.execute(
            "SELECT outcome, result FROM workflow_run_steps WHERE path=? ORDER BY started_at",
            (path,),
        )
    ]
    assert results == [
        ("false", {"conditions": [True, False], "by": "rule"}),
        ("true", {"conditions": [True, True], "by": "rule"}),
    ]
    assert logs(effects) == (["ran on yard", "always"] if form == "gate" else ["no", "yes"])


async def test_a_value_from_an_earlier_ai_step_picks_the_path(
    make_engine: EngineFactory,
    effects: FakeEffects,
    ai: FakeAi,
    open_db: Callable[[], sqlite3.Connection],
) -> None:
    """The If step reads the AI step's field and confidence, not the trigger's."""
    answers = iter(
        [
            AiResult(outcome="person", fields={"who": "staff"}, confidence=0.9, reason="badge"),
            AiResult(outcome="person", fields={"who": "unknown"}, confidence=0.9, reason="?"),
            AiResult(outcome="person", fields={"who": "staff"}, confidence=0.4, reason="blurry"),
        ]
    )
    ai.decide = lambda step, ctx: next(answers)
    wf = m.Workflow(
        name="Staff or not",
        when=m.AlertTrigger(),
        state="on",
        limits=m.WorkflowLimits(cooldown_s=0, per_hour=1000),
        then=(
            m.AIStep(
                spec=m.LookSpec(prompt="Who is it?"),
                decision=("person",),
                fields={"who": ("staff", "unknown")},
                paths={
                    "person": (
                        m.IfStep(
                            (
                                m.ValueCondition("who", is_in=("staff",)),
                                m.ValueCondition("confidence", above=0.8),
                            ),
                            paths={
                                "true": (m.ActionStep(m.LogAction("staff: {reason}")),),
                                "false": (m.ActionStep(m.AlertAction("medium", "{who}")),),
                            },
                        ),
                    ),
                    "unsure": (),
                },
            ),
        ),
    )
    engine = make_engine()
    engine.set_workflows({"wf": wf})
    await engine.start()
    for cam in ("c1", "c2", "c3"):
        engine.submit(event(camera_id=cam))
        await engine.idle()
    assert logs(effects) == ["staff: badge"]
    assert [c.request.title for c in effects.of("alert")] == ["unknown", "staff"]
    conn = open_db()
    rows = conn.execute(
        "SELECT outcome, result FROM workflow_run_steps WHERE path='then.0.person.0'"
    ).fetchall()
    assert sorted((o, json.loads(r)["conditions"]) for o, r in rows) == [
        ("false", [False, True]),
        ("false", [True, False]),
        ("true", [True, True]),
    ]


async def test_a_persons_answer_is_a_value_a_later_if_reads(
    make_engine: EngineFactory, effects: FakeEffects
) -> None:
    wf = m.Workflow(
        name="Ask then decide",
        when=m.AlertTrigger(),
        state="on",
        then=(
            m.AskPersonStep(
                roles=("owner",),
                message="Known?",
                replies=("Known", "Stranger"),
                paths={
                    "Known": (),
                    "Stranger": (
                        m.IfStep(
                            (m.ValueCondition("answered_by", is_in=("alice",)),),
                            paths={
                                "true": (m.ActionStep(m.LogAction("{answer} by alice")),),
                                "false": (m.ActionStep(m.LogAction("not alice")),),
                            },
                        ),
                    ),
                    "no_answer": (),
                },
            ),
        ),
    )
    engine = make_engine()
    engine.set_workflows({"wf": wf})
    await engine.start()
    engine.submit(event())
    await engine.idle()
    ((approval, _),) = engine.pending_approvals()
    await engine.answer_approval(approval.approval_id, "Stranger", "alice")
    await engine.idle()
    assert logs(effects) == ["Stranger by alice"]


async def test_false_gate_ends_the_run_without_always(
    make_engine: EngineFactory,
    effects: FakeEffects,
    open_db: Callable[[], sqlite3.Connection],
) -> None:
    effects.site_mode_value = "disarmed"
    engine = make_engine()
    engine.set_workflows({"wf": gated(m.SiteModeCondition(("armed_away",)))})
    await engine.start()
    (run_id,) = engine.submit(event())
    await engine.idle()
    assert effects.calls == []
    assert engine.active_runs() == []
    detail = await engine.run_detail(run_id)
    assert (detail["status"], detail["outcome"], detail["error"]) == ("done", "false", None)
    assert [s["path"] for s in detail["steps"]] == ["if"]


@pytest.mark.parametrize("holds", [True, False])
async def test_conditions_are_evaluated_in_test_mode_and_nothing_is_performed(
    holds: bool,
    make_engine: EngineFactory,
    effects: FakeEffects,
    open_db: Callable[[], sqlite3.Connection],
) -> None:
    """Test runs everything but the effects: the rule decides for real, and the
    path it picked records what it would have done."""
    effects.site_mode_value = "armed_away" if holds else "disarmed"
    mode = m.SiteModeCondition(("armed_away",))
    engine = make_engine()
    engine.set_workflows({"gate": gated(mode, state="test"), "step": branching(mode, state="test")})
    await engine.start()
    assert len(engine.submit(event())) == 2
    await engine.idle()
    assert effects.calls == []
    conn = open_db()
    rows = conn.execute(
        "SELECT w.workflow_id, w.test, s.path, s.kind, s.status, s.outcome "
        "FROM workflow_run_steps s JOIN workflow_runs w ON w.id = s.run_id "
        "ORDER BY w.workflow_id, s.seq"
    ).fetchall()
    expected = "true" if holds else "false"
    gate_rows = [("gate", 1, "if", "if", "done", expected)]
    if holds:
        gate_rows += [
            ("gate", 1, "then.0", "log", "would_have", "done"),
            ("gate", 1, "always.0", "log", "would_have", "done"),
        ]
    assert rows == [
        *gate_rows,
        ("step", 1, "then.0", "if", "done", expected),
        ("step", 1, f"then.0.{expected}.0", "log", "would_have", "done"),
    ]
    inputs = conn.execute(
        "SELECT inputs FROM workflow_run_steps WHERE path=?", (f"then.0.{expected}.0",)
    ).fetchone()[0]
    assert ("yes" if holds else "no") in inputs


async def test_a_replay_keeps_the_branch_taken_even_if_the_world_changed(
    make_engine: EngineFactory,
    effects: FakeEffects,
    clock: ManualClock,
    open_db: Callable[[], sqlite3.Connection],
) -> None:
    """The gate and the If step were true at 23:00 with the site armed; the run
    then waited for a person across a restart, and by the answer it is day and
    the site is disarmed. The run still goes on down the true path, once."""
    conditions: tuple[m.Condition, ...] = (m.SiteModeCondition(("armed_away",)), NIGHT)
    wf = m.Workflow(
        name="Night check",
        when=m.AlertTrigger(cameras=("yard",)),
        state="on",
        conditions=conditions,
        then=(
            m.IfStep(
                conditions,
                paths={
                    "true": (
                        m.AskPersonStep(
                            roles=("guard",),
                            message="Threat?",
                            replies=("Yes", "No"),
                            timeout_s=12 * 3600,
                            paths={
                                "Yes": (m.ActionStep(m.AlertAction("high", "Intruder")),),
                                "No": (),
                                "no_answer": (),
                            },
                        ),
                    ),
                    "false": (m.ActionStep(m.LogAction("day or disarmed")),),
                },
            ),
        ),
        always=(m.ActionStep(m.LogAction("done")),),
    )
    clock.set(at(MONDAY, 23))
    effects.site_mode_value = "armed_away"
    engine = make_engine()
    engine.set_workflows({"night": wf})
    await engine.start()
    (run_id,) = engine.submit(event(time=clock.now()))
    await engine.idle()
    await engine.stop()
    clock.set(at(MONDAY + dt.timedelta(days=1), 9))
    effects.site_mode_value = "disarmed"
    engine = make_engine()
    await engine.start()  # the run resumes on its stored version
    ((approval, _),) = engine.pending_approvals()
    await engine.answer_approval(approval.approval_id, "Yes", "bob")
    await engine.idle()
    assert [c.request.title for c in effects.of("alert")] == ["Intruder"]
    assert logs(effects) == ["done"]
    conn = open_db()
    assert steps_of(conn) == [
        ("if", "if", "done", "true"),
        ("then.0", "if", "done", "true"),
        ("then.0.true.0", "ask_person", "done", "Yes"),
        ("then.0.true.0.Yes.0", "alert", "done", "done"),
        ("always.0", "log", "done", "done"),
    ]
    assert conn.execute("SELECT status FROM workflow_runs WHERE id=?", (run_id,)).fetchone() == (
        "done",
    )


async def test_camera_condition_reads_the_current_camera_of_a_for_each(
    make_engine: EngineFactory,
    effects: FakeEffects,
    open_db: Callable[[], sqlite3.Connection],
) -> None:
    """Inside a For each over cameras, "the camera" is the item, not the trigger's."""
    wf = m.Workflow(
        name="Sweep",
        when=m.ButtonTrigger(),
        state="on",
        then=(
            m.ForEachStep(
                items=m.ForEachCameras(("yard", "drive", "porch")),
                as_name="camera",
                steps=(
                    m.IfStep(
                        (m.CameraCondition(("drive", "porch")),),
                        paths={
                            "true": (m.ActionStep(m.LogAction("front {camera}")),),
                            "false": (),
                        },
                    ),
                ),
            ),
        ),
    )
    engine = make_engine()
    engine.set_workflows({"sweep": wf})
    await engine.start()
    engine.run_now("sweep", "ann")
    await engine.idle()
    assert logs(effects) == ["front drive", "front porch"]
    conn = open_db()
    assert conn.execute(
        "SELECT path, outcome FROM workflow_run_steps WHERE kind='if' ORDER BY seq"
    ).fetchall() == [("then.0.0.0", "false"), ("then.0.1.0", "true"), ("then.0.2.0", "true")]


#: An If that reads the first AI step's reason, kept as ``{why}``.
CHECK_WHY = m.IfStep(
    (m.ValueCondition("why", is_in=("badge seen",)),),
    paths={
        "true": (m.ActionStep(m.LogAction("staff ({why}, then {reason})")),),
        "false": (m.ActionStep(m.LogAction("unknown")),),
    },
)


async def test_a_reason_kept_under_its_own_name_is_a_value_a_later_if_reads(
    make_engine: EngineFactory,
    effects: FakeEffects,
    ai: FakeAi,
    open_db: Callable[[], sqlite3.Connection],
) -> None:
    """``reason_as`` keeps the first AI step's reason as ``{why}``, so the second
    step's ``{reason}`` does not hide it; an If step after both reads it, also
    when the run resumes after a restart."""
    reasons = iter(["badge seen", "walking away"])
    ai.decide = lambda step, ctx: AiResult(outcome="ok", reason=next(reasons))
    wf = m.Workflow(
        name="Two looks",
        when=m.AlertTrigger(cameras=("yard",)),
        state="on",
        then=(
            m.AIStep(
                spec=m.LookSpec(prompt="Who?"),
                decision=("ok",),
                reason_as="why",
                paths={
                    "ok": (
                        m.AIStep(
                            spec=m.LookSpec(prompt="Where to?"),
                            decision=("ok",),
                            paths={
                                "ok": (
                                    m.AskPersonStep(
                                        roles=("owner",),
                                        message="{why}; {reason}. Fine?",
                                        replies=("Fine",),
                                        paths={"Fine": (CHECK_WHY,), "no_answer": ()},
                                    ),
                                ),
                                "unsure": (),
                            },
                        ),
                    ),
                    "unsure": (),
                },
            ),
        ),
    )
    engine = make_engine()
    engine.set_workflows({"wf": wf})
    await engine.start()
    engine.submit(event())
    await engine.idle()
    assert [c.request.message for c in effects.of("ask_person")] == [
        "badge seen; walking away. Fine?"
    ]
    await engine.stop()
    engine = make_engine()
    await engine.start()
    ((approval, _),) = engine.pending_approvals()
    await engine.answer_approval(approval.approval_id, "Fine", "al")
    await engine.idle()
    assert logs(effects) == ["staff (badge seen, then walking away)"]
    assert open_db().execute(
        "SELECT outcome FROM workflow_run_steps WHERE path='then.0.ok.0.ok.0.Fine.0'"
    ).fetchone() == ("true",)


@dataclass
class SiteDown(FakeEffects):
    """The site's reads are gone (OpenNVR's alarm and Site rules unreachable)."""

    async def site_mode(self) -> str | None:
        raise ProviderUnavailable("the site mode is not available")

    async def site_list(self, name: str) -> list[str]:
        raise ProviderUnavailable(f"site list {name!r} is not available")


@pytest.mark.parametrize("form", ["gate", "step"])
@pytest.mark.parametrize(
    "condition",
    [m.SiteModeCondition(("armed_away",)), m.ListCondition("plate", "expected")],
    ids=["site_mode", "list"],
)
async def test_a_lost_condition_source_puts_the_workflow_in_needs_attention(
    form: Form,
    condition: m.Condition,
    make_engine: EngineFactory,
    open_db: Callable[[], sqlite3.Connection],
) -> None:
    """A read that raises ProviderUnavailable is a lost provider, as for any
    other port method: the run fails with the step named, the workflow stops
    starting runs, and neither path runs."""
    effects = SiteDown()
    engine = make_engine(effects=effects)
    engine.set_workflows({"wf": gated(condition) if form == "gate" else branching(condition)})
    await engine.start()
    (run_id,) = engine.submit(event(plate="AB123"))
    await engine.idle()
    path = "if" if form == "gate" else "then.0"
    status = engine.workflow_status("wf")
    assert status.state == "needs_attention"
    assert status.reason is not None
    assert status.reason.startswith(f"step {path}:")
    assert effects.calls == []
    conn = open_db()
    run_status, error = conn.execute(
        "SELECT status, error FROM workflow_runs WHERE id=?", (run_id,)
    ).fetchone()
    assert run_status == "failed"
    assert error.startswith(f"provider lost: step {path}:")
    assert steps_of(conn) == [(path, "if", "failed", "false")]
    assert engine.submit(event(camera_id="cam-2")) == ()
