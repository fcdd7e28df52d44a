"""The editor's errors (issue 23, item 12): each at the line a person fixes, in plain words,
all of them at once, and with the name a person probably meant."""

from __future__ import annotations

from custom_components.opennvr_workflows.workflow import SiteProfile, validate_text
from custom_components.opennvr_workflows.workflow.suggest import did_you_mean, name_form

FILE = """\
contract: workflow.v1
name: Parcel
needs: [detector, vision_model]
when:
  event: { type: detection.observed.v1, cameras: [front_door] }
then:
  - ai:
      mode: look
      prompt: Is there a parcel?
      input: picture
      camera: front_door
      decision:
        - parcel
        - maybe
      parcel: [ log: "{reason}" ]
      unsure: []
"""


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_a_decision_option_without_a_path_is_reported_at_the_option() -> None:
    report = validate_text(FILE)
    (problem,) = report.errors
    assert problem.code == "WF-AI-PATH-MISSING"
    assert problem.line == _line_of(FILE, "- maybe")
    assert problem.path == "$.then[0].ai.decision[1]"


def test_unsure_without_a_path_stays_at_the_step() -> None:
    text = FILE.replace("      unsure: []\n", "").replace("- maybe", "- parcel_gone")
    text = text.replace('parcel: [ log: "{reason}" ]', "parcel: []\n      parcel_gone: []")
    (problem,) = validate_text(text).errors
    assert problem.code == "WF-AI-PATH-MISSING"
    assert problem.line == _line_of(text, "- ai:")


def test_a_missing_bracket_is_reported_where_the_list_opens_in_plain_words() -> None:
    text = FILE.replace("cameras: [front_door] }", "cameras: [front_door }")
    (problem,) = validate_text(text).errors
    assert problem.code == "WF-YAML-SYNTAX"
    assert problem.line == _line_of(text, "cameras: [front_door")
    assert "`[`" in problem.message
    assert "`]`" in problem.message
    for raw in ("did not find expected", "while parsing", "flow sequence"):
        assert raw not in problem.message


def test_a_missing_bracket_at_the_end_of_a_line_names_that_line() -> None:
    text = FILE.replace("needs: [detector, vision_model]", "needs: [detector, vision_model")
    (problem,) = validate_text(text).errors
    assert problem.line == _line_of(text, "needs:")


def test_other_syntax_errors_speak_plainly() -> None:
    tab = validate_text("contract: workflow.v1\nname:\n\tx: 1\n").errors[0]
    assert "tab" in tab.message
    assert tab.line == 3
    quote = validate_text('contract: workflow.v1\nname: "Parcel\nstate: test\n').errors[0]
    assert quote.line == 2
    assert "closing" in quote.message
    indent = validate_text("contract: workflow.v1\nwhen:\n  button: {}\n state: test\n").errors[0]
    assert indent.line == 4
    assert "line up" in indent.message


def test_a_structural_and_a_semantic_error_are_both_reported() -> None:
    text = FILE.replace("cameras: [front_door]", "cameras: [Fence line]")
    report = validate_text(text)
    codes = {(p.code, p.line) for p in report.errors}
    assert codes == {
        ("WF-CAMERA-NOT-ROLE", _line_of(text, "Fence line")),
        ("WF-AI-PATH-MISSING", _line_of(text, "- maybe")),
    }
    assert report.workflow is None


def test_two_structural_errors_are_both_reported() -> None:
    text = FILE.replace("input: picture", "input: pictures")
    text = text.replace("Parcel\n", "Parcel\nstate: of\n")
    codes = [p.code for p in validate_text(text).errors]
    assert codes.count("WF-VALUE") == 2


def test_a_name_written_as_read_gets_its_written_form_suggested() -> None:
    text = FILE.replace("cameras: [front_door]", "cameras: [Fence line]")
    problem = next(p for p in validate_text(text).errors if p.code == "WF-CAMERA-NOT-ROLE")
    assert "did you mean `fence_line`?" in problem.message
    option = FILE.replace("- maybe", "- No parcel")
    problem = next(p for p in validate_text(option).errors if p.code == "WF-FORMAT")
    assert "did you mean `no_parcel`?" in problem.message


def test_an_unmapped_role_suggests_the_mapped_one_it_resembles() -> None:
    text = FILE.replace("[front_door]", "[fence]").replace("camera: front_door", "camera: fence")
    site = SiteProfile(camera_roles=frozenset({"fence_line", "front_door"}))
    problems = validate_text(text, site=site).errors
    unmapped = [p for p in problems if p.code == "WF-CAMERA-ROLE-UNMAPPED"]
    assert unmapped
    assert all("did you mean `fence_line`?" in p.message for p in unmapped)


def test_a_misspelt_key_and_value_get_suggestions() -> None:
    text = FILE.replace("Parcel\n", "Parcel\nlimits: { cooldwon: 2m }\n").replace(
        "input: picture", "input: pictures"
    )
    messages = {p.code: p.message for p in validate_text(text).errors}
    assert "did you mean `cooldown`?" in messages["WF-UNKNOWN-KEY"]
    assert "did you mean `picture`?" in messages["WF-VALUE"]


def test_did_you_mean() -> None:
    assert name_form("  Fence line / North ") == "fence_line_north"
    assert did_you_mean("Front door", ["front_door", "gate"]) == "; did you mean `front_door`?"
    assert did_you_mean("gate", ["front_door", "gate"]) == ""
    assert did_you_mean("zzzz", ["front_door", "gate"]) == ""
    assert did_you_mean(3, ["front_door"]) == ""
