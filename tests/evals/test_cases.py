"""Case files: the shipped starter set loads and covers the templates; bad files are refused
with located, specific problems."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from PIL import Image

from custom_components.opennvr_workflows.evaluation.case_loader import (
    DEFAULT_CASES,
    CaseError,
    load_case,
    load_suite,
)
from custom_components.opennvr_workflows.evaluation.case_model import DraftCase, StepCase
from custom_components.opennvr_workflows.workflow import template_names
from evals.cli import main

WriteCase = Callable[[str, str, str], Path]


def test_the_starter_cases_load_and_cover_every_template() -> None:
    look = load_suite(DEFAULT_CASES, "look")
    investigate = load_suite(DEFAULT_CASES, "investigate")
    draft = load_suite(DEFAULT_CASES, "draft")
    assert len(look) >= 8
    assert len(investigate) >= 8
    step_cases = [c for c in (*look, *investigate) if isinstance(c, StepCase)]
    templates = {c.step_label.split("[")[0] for c in step_cases}
    assert templates == set(template_names())
    drafted = {c.expected_template for c in draft if isinstance(c, DraftCase)}
    assert drafted == set(template_names())
    for case in step_cases:
        assert case.suite == case.step.mode
        assert case.xfail is None or len(case.xfail) > 20


def test_every_starter_picture_is_a_picture_with_its_truth() -> None:
    cases = [c for c in load_suite(DEFAULT_CASES, "look") if isinstance(c, StepCase)]
    pictures = [p for c in cases for pics in c.pictures.values() for p in pics]
    assert pictures
    for picture in pictures:
        assert len(picture.shows) > 20
        with Image.open(picture.path) as img:
            assert img.format == "JPEG"
            assert img.width * img.height <= 640 * 480


def test_check_command_counts_the_suites(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check"]) == 0
    out = capsys.readouterr().out
    assert "look:" in out
    assert "draft: 8 case(s)" in out


TEXT_STEP = """\
id: {id}
suite: look
about: A text question.
step:
  ai: {{ mode: look, prompt: Is it yes?, input: text, text: "{{note}}", decision: [yes, no] }}
event: {{ note: hello }}
expect:
  decision: yes
"""


def problems_of(path: Path, root: Path) -> list[str]:
    with pytest.raises(CaseError) as caught:
        load_case(path, root)
    return [p.format() for p in caught.value.problems]


def test_an_inline_step_case_loads(write_case: WriteCase, cases_root: Path) -> None:
    case = load_case(write_case("look", "ok", TEXT_STEP.format(id="ok")), cases_root)
    assert isinstance(case, StepCase)
    assert case.step.decision == ("yes", "no")
    assert case.values == {"note": "hello"}
    assert case.step_label == "inline"


@pytest.mark.parametrize(
    ("xfail", "words"),
    [
        ("true", "xfail is a reason (text), not a flag"),
        ('""', "xfail needs its reason"),
    ],
)
def test_xfail_needs_a_reason(
    write_case: WriteCase, cases_root: Path, xfail: str, words: str
) -> None:
    path = write_case("look", "x", TEXT_STEP.format(id="x") + f"xfail: {xfail}\n")
    found = problems_of(path, cases_root)
    assert len(found) == 1
    assert words in found[0]
    assert ":9:" in found[0]  # the line of the xfail key's value
    assert "$.xfail" in found[0]


def test_an_expected_decision_the_step_cannot_give_is_located(
    write_case: WriteCase, cases_root: Path
) -> None:
    text = TEXT_STEP.format(id="d").replace("decision: yes\n", "decision: maybe\n")
    found = problems_of(write_case("look", "d", text), cases_root)
    assert found == [
        f"{cases_root / 'look' / 'd.yaml'}:8:13 $.expect.decision: 'maybe' is not an outcome "
        "of the step; outcomes: yes, no, unsure"
    ]


def test_fields_and_tools_the_step_does_not_have(write_case: WriteCase, cases_root: Path) -> None:
    text = """\
    id: inv
    suite: investigate
    about: x
    step:
      template: night_intrusion_triage
    fixtures: { cameras: [garden] }
    expect:
      decision: alert
      fields: { who: burglar, mood: bad }
      tools: [recent_plates]
    """
    found = "\n".join(problems_of(write_case("investigate", "inv", text), cases_root))
    assert "who cannot be 'burglar'; it is one of household, visitor, stranger, unknown" in found
    assert "the step has no field 'mood'" in found
    assert "a needed tool the step does not offer: 'recent_plates'" in found


def test_pictures_must_exist_and_say_what_they_show(
    write_case: WriteCase, cases_root: Path
) -> None:
    text = """\
    id: pic
    suite: look
    about: x
    step: { template: gate_concierge }
    event: { camera: gate, plate: X }
    inputs:
      pictures:
        gate:
          - { file: pictures/missing.jpg, shows: "a van at the gate" }
          - { file: pictures/other.jpg }
    expect: { decision: delivery }
    """
    found = "\n".join(problems_of(write_case("look", "pic", text), cases_root))
    assert "$.inputs.pictures.gate[1]: missing 'shows'" in found
    text = text.replace("          - { file: pictures/other.jpg }\n", "")
    found = "\n".join(problems_of(write_case("look", "pic", text), cases_root))
    assert "no picture file 'pictures/missing.jpg'" in found
    escaping = text.replace("pictures/missing.jpg", "../../etc/x.jpg")
    found = "\n".join(problems_of(write_case("look", "pic", escaping), cases_root))
    assert "is outside the cases folder" in found


def test_a_look_at_a_camera_needs_its_pictures(write_case: WriteCase, cases_root: Path) -> None:
    text = """\
    id: nopic
    suite: look
    about: x
    step: { template: gate_concierge }
    event: { plate: X }
    expect: { decision: delivery }
    """
    found = "\n".join(problems_of(write_case("look", "nopic", text), cases_root))
    assert "a Look at a picture needs a camera: set event.camera" in found


def test_an_invalid_inline_step_is_refused_by_the_contract(
    write_case: WriteCase, cases_root: Path
) -> None:
    text = TEXT_STEP.format(id="bad").replace("input: text,", "input: text, tools: [site_lookup],")
    found = "\n".join(problems_of(write_case("look", "bad", text), cases_root))
    assert "not a valid workflow.v1 AI step" in found
    assert "$.step.ai" in found


def test_a_step_of_the_wrong_mode_and_an_unknown_template(
    write_case: WriteCase, cases_root: Path
) -> None:
    text = TEXT_STEP.format(id="m").replace("suite: look", "suite: investigate")
    found = "\n".join(problems_of(write_case("investigate", "m", text), cases_root))
    assert "the step is a look step; this is a investigate case" in found
    text = """\
    id: t
    suite: look
    about: x
    step: { template: no_such_template }
    expect: { decision: yes }
    """
    found = "\n".join(problems_of(write_case("look", "t", text), cases_root))
    assert "no template named 'no_such_template'" in found
    text = text.replace("no_such_template }", "gate_concierge, index: 3 }")
    found = "\n".join(problems_of(write_case("look", "t", text), cases_root))
    assert "template 'gate_concierge' has 1 AI step(s); index 3 is past them" in found


def test_draft_cases(write_case: WriteCase, cases_root: Path) -> None:
    text = """\
    id: dr
    suite: draft
    about: x
    sentence: Tell me about parcels.
    expect:
      workflow: { template: parcel_at_door }
      match: ["$.when", "$.then[0].ai.decision", "$.then[9]"]
    """
    found = problems_of(write_case("draft", "dr", text), cases_root)
    assert len(found) == 1
    assert "$.expect.match[2]: $.then[9] is not in the expected workflow" in found[0]
    ok = load_case(write_case("draft", "dr", text.replace(', "$.then[9]"', "")), cases_root)
    assert isinstance(ok, DraftCase)
    assert ok.expected.name == "Parcel left at the door"
    stray = text.replace("sentence:", "step: { template: parcel_at_door }\n    sentence:")
    found = "\n".join(problems_of(write_case("draft", "dr", stray), cases_root))
    assert "step does not belong in this suite's cases" in found


def test_a_suite_reports_every_file_and_repeated_ids(
    write_case: WriteCase, cases_root: Path
) -> None:
    write_case("look", "a", TEXT_STEP.format(id="same"))
    write_case("look", "b", TEXT_STEP.format(id="same"))
    write_case("look", "c", "id: [broken\n")
    with pytest.raises(CaseError) as caught:
        load_suite(cases_root, "look")
    text = str(caught.value)
    assert "case id 'same' is also used by" in text
    assert "c.yaml:" in text
    assert "YAML syntax" in text
