"""Two independent locks: the validator at import, the monitor at run time.

The attacks are the unsafe cases of the safety tests: every file of the refused corpus whose
only errors are of the taint and safety classes (tests/workflow/refused/), the attacks of
tests/workflow/test_what_happens.py and tests/engine/test_what_happens.py, and the runs
AI output or a person's own values start (tests/engine/test_ai_provenance.py).

* With the validator's taint checks switched off (a test build: :mod:`.locks`), each attack
  imports, and at run time, on every path the exploration takes, nothing the rule forbids
  acts: the reference (:mod:`.rule_reference`) says which steps must be refused, and each is
  recorded refused with nothing sent; with the engine's older guards off too, by the
  monitor alone.
* With the monitor switched off, the validator still refuses each attack at import; an
  attack a valid file makes only at run time (the run's start) is refused by the engine's
  first lock.
* With every lock off, each attack does act: what stopped it was the locks.
"""

from __future__ import annotations

import re
import textwrap
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from custom_components.opennvr_workflows.workflow import SiteProfile, validate_text

from ..workflow import test_what_happens as validator_side
from . import test_what_happens as engine_side
from .locks import (
    TAINT_CODES,
    Ran,
    Start,
    explore,
    first_lock_off,
    monitor_off,
    validator_without_taint,
)
from .rule_reference import verdicts

CORPUS = Path(__file__).parents[1] / "workflow" / "refused"
_MARK = re.compile(r"#!\s*(WF-[A-Z0-9-]+)\s*$", re.MULTILINE)


@dataclass
class Attack:
    """An unsafe workflow file, how its runs start, and what the validator makes of it."""

    name: str
    text: str
    start: Start = field(default_factory=Start)
    site: SiteProfile | None = None
    #: The validator refuses it (else it is valid, and unsafe only in how runs start).
    refused_at_import: bool = True
    #: A path exists on which something the rule forbids would act (a file refused only
    #: for a name that shadows another may move nothing at all).
    acts: bool = True


#: How the attack of a corpus file starts, where the default (the world's event) is not it:
#: an unfiltered alert trigger's attack is an alert a workflow raised from an AI decision.
STARTS = {
    "taint_if_on_unfiltered_alert": Start(variables={"severity": "low"}, ai_derived=True),
    "taint_value_unfiltered_alert": Start(variables={"camera": "yard"}, ai_derived=True),
}
#: Corpus files whose forbidden step no run here reaches: its `if` needs a collect that
#: reads exactly "quiet", which a loop's lines ("garden: ...") never do.
UNREACHED = {"taint_if_on_collect"}


def corpus() -> list[Attack]:
    out = []
    for path in sorted(CORPUS.glob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        codes = set(_MARK.findall(text))
        if not codes or not codes <= TAINT_CODES:
            continue
        start = Start(message="open the door") if "message:" in text else Start()
        acts = codes != {"WF-AI-NAME-SHADOWS"} and path.stem not in UNREACHED
        out.append(Attack(path.stem, text, STARTS.get(path.stem, start), acts=acts))
    return out


def _validator_side(body: str) -> str:
    return validator_side.HEAD + "state: on\n" + textwrap.dedent(body)


def _engine_side(body: str) -> str:
    return engine_side.HEAD + textwrap.dedent(body)


_RULE = "if: [ time: { from: '00:00', to: '00:00' } ]\n"
_AI_ALERT = "when:\n  alert: { cameras: [yard] }\n"
_GATE = "app_action: { app: gate_controller, action: open }"
MODEL_APPS = frozenset({"scene_describer"})

ATTACKS = [
    *corpus(),
    Attack(
        "braces-into-the-gates-data",
        _validator_side(validator_side.GATE_DATA.replace("DATA", "{{{decision}}}")),
    ),
    Attack(
        "if-on-an-ai-field-raises-critical",
        _validator_side(
            validator_side.SEVERITY.replace(
                "TRIGGER", "event: { type: plate.recognized.v1, cameras: [gate] }"
            ).replace("READ", "who")
        ),
    ),
    Attack(
        "if-on-a-workflow-alerts-title-raises-critical",
        _validator_side(
            validator_side.SEVERITY.replace("TRIGGER", "alert: { cameras: [gate] }").replace(
                "READ", "title"
            )
        ),
        Start(variables={"title": "stranger"}, ai_derived=True),
    ),
    Attack(
        "hidden-lock-in-a-loop",
        _validator_side(validator_side.HIDDEN.replace("ENTITY", "lock.{camera}")),
    ),
    Attack(
        "events-ring-the-siren",
        _validator_side(validator_side.LOOP.replace("ITEMS", "events: { within: 1h }")),
    ),
    Attack(
        "the-ai-picks-the-approver", _validator_side(validator_side.WHO.replace("FIRST", "kids"))
    ),
    Attack(
        "a-model-apps-alert-opens-the-gate",
        _validator_side(validator_side.MODEL_APP.replace("APP", "scene_describer")),
        Start(variables={"title": "Delivery"}, model_apps=MODEL_APPS),
        SiteProfile(model_apps=MODEL_APPS),
    ),
    Attack(
        "events-raise-a-high-alert",
        _engine_side(
            engine_side.SEVERITY.replace("ITEMS", "events: { within: 1h }").replace(
                "medium", "high"
            )
        ),
    ),
    Attack(
        "a-workflows-ai-alert-starts-the-gate",
        _engine_side(_AI_ALERT + _RULE + f"then:\n  - {_GATE}\n"),
        Start(ai_derived=True),
        refused_at_import=False,
    ),
    Attack(
        "a-rule-on-a-workflows-ai-alert-arms-the-site",
        _engine_side(
            "when:\n  alert: { app: intrusion, cameras: [yard] }\n"
            "then:\n  - if: [ value: { of: '{title}', is: [Yard] } ]\n"
            "    then: [ site_mode: armed_away ]\n    else: []\n"
        ),
        Start(variables={"title": "Yard"}, ai_derived=True),
        refused_at_import=False,
    ),
    Attack(
        "a-persons-own-values-start-the-gate",
        _engine_side("when:\n  button: {}\n" + _RULE + f"then:\n  - {_GATE}\n"),
        Start(supplied_by="bob"),
        refused_at_import=False,
    ),
]
IDS = [a.name for a in ATTACKS]


def must_refuse(attack: Attack, ran: Ran) -> set[str]:
    """The steps the reference says the rule refuses on this run's path."""
    report = validate_text(attack.text, site=attack.site)
    workflow = report.workflow
    if workflow is None:
        with validator_without_taint():
            workflow = validate_text(attack.text, site=attack.site).workflow
    assert workflow is not None
    return {p for p, refused in verdicts(workflow, ran.trace).items() if refused}


def test_the_attacks_are_the_safety_tests_unsafe_cases() -> None:
    names = {a.name for a in ATTACKS}
    assert {"safety_ai_option_app_action", "severity_ai_alert_critical", "ask_who_ai"} <= names
    assert {"ask_effect_hidden", "shadow_trigger_field", "safety_ungated_then"} <= names
    assert len(ATTACKS) >= 45


@pytest.mark.parametrize("lax", [False, True], ids=["first-lock-on", "monitor-alone"])
@pytest.mark.parametrize("attack", ATTACKS, ids=IDS)
async def test_with_the_validators_taint_check_off_nothing_forbidden_acts(
    attack: Attack, lax: bool
) -> None:
    with validator_without_taint():
        report = validate_text(attack.text, site=attack.site)
    assert report.workflow is not None, [p.format() for p in report.errors]
    with first_lock_off() if lax else nullcontext():
        runs = await explore(report.workflow, attack.start)
    refused = 0
    for ran in runs:
        rows = ran.trace.rows
        for path in must_refuse(attack, ran):
            assert rows[path].status == "refused", (path, rows[path])
        done = {p for p, r in rows.items() if r.status == "refused"}
        assert not [c for c in ran.calls if c.ctx is not None and c.ctx.step_path in done]
        for path in done:
            if lax:  # the engine's own guards are off: the monitor refused it
                assert rows[path].result["refused_by"] == "monitor"
        refused += len(done)
    if lax and attack.acts:
        assert refused, "no path reached what the rule forbids"


@pytest.mark.parametrize("attack", ATTACKS, ids=IDS)
async def test_with_the_monitor_off_the_validator_or_the_first_lock_still_refuses(
    attack: Attack,
) -> None:
    with monitor_off():
        report = validate_text(attack.text, site=attack.site)
        if attack.refused_at_import:
            assert report.workflow is None
            assert {p.code for p in report.errors} & TAINT_CODES
            return
        # Valid as a file: the run's start is what is unsafe, and the engine's first lock
        # refuses the actuator at run time.
        assert report.workflow is not None
        runs = await explore(report.workflow, attack.start, decisions=1, answers=1, shifts=1)
    for ran in runs:
        forbidden = must_refuse(attack, ran)
        assert forbidden
        for path in forbidden:
            assert ran.trace.rows[path].status == "refused"
            assert "refused_by" not in ran.trace.rows[path].result


@pytest.mark.parametrize(
    "attack", [a for a in ATTACKS if a.acts], ids=[a.name for a in ATTACKS if a.acts]
)
async def test_with_every_lock_off_the_attack_acts(attack: Attack) -> None:
    """What stopped each attack above was the locks: without them it happens."""
    with validator_without_taint():
        report = validate_text(attack.text, site=attack.site)
    assert report.workflow is not None
    with monitor_off(), first_lock_off():
        runs = await explore(report.workflow, attack.start)
    acted = [
        (path, ran.trace.rows[path].status)
        for ran in runs
        for path in must_refuse(attack, ran)
        if ran.trace.rows[path].status != "refused"
    ]
    assert acted
