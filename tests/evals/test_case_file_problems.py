"""More ways a case file is wrong, each refused with words its author acts on: a file that
cannot be read or is not a mapping, a case in another suite's folder, a Look at a camera it
has no pictures of, an Investigate case with no camera, a draft whose expected workflow is
not valid, a missing or unknown key."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from custom_components.opennvr_workflows.evaluation.case_loader import (
    CaseError,
    load_case,
    load_suite,
)

from .test_cases import TEXT_STEP

WriteCase = Callable[[str, str, str], Path]


def problems(path: Path, root: Path) -> str:
    with pytest.raises(CaseError) as caught:
        load_case(path, root)
    return "\n".join(p.format() for p in caught.value.problems)


def test_a_file_that_cannot_be_read_or_is_not_a_mapping(
    write_case: WriteCase, cases_root: Path
) -> None:
    binary = cases_root / "look" / "binary.yaml"
    binary.write_bytes(b"\xff\xfe\x00 not text")
    assert "cannot read the file" in problems(binary, cases_root)
    listed = write_case("look", "listed", "- id: a\n- id: b\n")
    assert "the file is a list" in problems(listed, cases_root)


def test_a_case_in_another_suites_folder(write_case: WriteCase, cases_root: Path) -> None:
    write_case("investigate", "lost", TEXT_STEP.format(id="lost"))
    with pytest.raises(CaseError) as caught:
        load_suite(cases_root, "investigate")
    assert "a look case in the investigate folder" in str(caught.value)


def test_a_look_at_a_camera_without_its_pictures(write_case: WriteCase, cases_root: Path) -> None:
    (cases_root / "pictures").mkdir()
    (cases_root / "pictures" / "van.jpg").write_bytes(b"\xff\xd8\xff\xd9")
    text = """\
    id: cam
    suite: look
    about: x
    step: { template: gate_concierge }
    event: { camera: gate, plate: X }
    inputs:
      pictures:
        drive:
          - { file: pictures/van.jpg, shows: "a van" }
    expect: { decision: delivery }
    """
    found = problems(write_case("look", "cam", text), cases_root)
    assert "the step looks at camera 'gate': give its pictures in inputs.pictures.gate" in found


def test_an_investigate_case_names_its_cameras(write_case: WriteCase, cases_root: Path) -> None:
    text = """\
    id: inv
    suite: investigate
    about: x
    step: { template: night_intrusion_triage }
    expect: { decision: alert }
    """
    found = problems(write_case("investigate", "inv", text), cases_root)
    assert "an Investigate case names its cameras (fixtures.cameras)" in found


def test_a_draft_whose_expected_workflow_is_not_valid(
    write_case: WriteCase, cases_root: Path
) -> None:
    text = """\
    id: dr
    suite: draft
    about: x
    sentence: Tell me about parcels.
    expect:
      workflow: { contract: workflow.v1, name: Broken, when: { alert: {} }, then: [] }
      match: ["$.when"]
    """
    found = problems(write_case("draft", "dr", text), cases_root)
    assert "the expected workflow is not valid" in found
    unknown = text.replace(
        "workflow: { contract: workflow.v1, name: Broken, when: { alert: {} }, then: [] }",
        "workflow: { template: no_such_template }",
    )
    found = problems(write_case("draft", "dr", unknown), cases_root)
    assert "no template named 'no_such_template'" in found


def test_a_missing_and_an_unknown_key(write_case: WriteCase, cases_root: Path) -> None:
    missing = TEXT_STEP.format(id="m").replace("about: A text question.\n", "")
    assert "missing 'about'" in problems(write_case("look", "m", missing), cases_root)
    extra = TEXT_STEP.format(id="e") + "colour: blue\n"
    found = problems(write_case("look", "e", extra), cases_root)
    assert "does not belong in this suite's cases" in found
