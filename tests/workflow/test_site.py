"""Checking a workflow against a site: the SiteProfile, and what each of its parts refuses."""

from __future__ import annotations

import textwrap

import pytest

from custom_components.opennvr_workflows.workflow import (
    SiteProfile,
    WorkflowInvalid,
    load_template,
    load_workflow,
    validate_data,
    validate_text,
    validate_workflow,
)

TEXT = textwrap.dedent("""\
    contract: workflow.v1
    name: Site
    needs: [intrusion, language_model, vision_model, semantic_search]
    when:
      alert: { app: intrusion, cameras: [front_door] }
    then:
      - ai:
          mode: investigate
          goal: Who is it?
          tools: [describe_camera, search_footage, descibe_window]
          decision: [known]
          known: [ save_clip: { camera: porch } ]
          unsure: []
    """)


#: A site's model skills, the evaluation gate passed (its Investigate steps may run).
GATED = frozenset({"language_model", "vision_model", "investigate_model"})


def codes(site: SiteProfile | None) -> list[str]:
    return [p.code for p in validate_text(TEXT, site=site).errors]


def test_an_empty_profile_checks_nothing_beyond_the_contract() -> None:
    assert codes(SiteProfile()) == codes(None) == ["WF-AI-TOOL-UNKNOWN"]


def test_each_part_is_checked_only_when_given() -> None:
    tools = SiteProfile(tools=frozenset({"describe_camera"}))
    assert codes(tools) == ["WF-TOOL-NOT-HERE", "WF-AI-TOOL-UNKNOWN"]
    roles = SiteProfile(camera_roles=frozenset({"front_door"}))
    assert codes(roles) == ["WF-AI-TOOL-UNKNOWN", "WF-CAMERA-ROLE-UNMAPPED"]
    skills = SiteProfile(skills=GATED | {"intrusion"})
    assert codes(skills) == ["WF-SKILL-MISSING", "WF-AI-TOOL-UNKNOWN"]


def test_a_misspelt_tool_is_unknown_not_missing_here() -> None:
    site = SiteProfile(tools=frozenset({"describe_camera", "search_footage"}))
    (problem,) = validate_text(TEXT, site=site).errors
    assert problem.code == "WF-AI-TOOL-UNKNOWN"
    assert "describe_window" in problem.message


def test_a_tool_missing_here_is_named_with_the_tools_the_site_has() -> None:
    site = SiteProfile(tools=frozenset({"describe_camera", "ask_person", "not_a_tool"}))
    (problem,) = [p for p in validate_text(TEXT, site=site).errors if p.code == "WF-TOOL-NOT-HERE"]
    assert problem.message.startswith("search_footage ")
    assert "(ask_person, describe_camera)" in problem.message
    assert (problem.path, problem.line) == ("$.then[0].ai.tools[1]", 10)


def test_an_unmapped_role_says_where_to_map_it() -> None:
    site = SiteProfile(camera_roles=frozenset())
    errors = validate_text(TEXT, site=site).errors
    unmapped = [p for p in errors if p.code == "WF-CAMERA-ROLE-UNMAPPED"]
    assert [(p.path, p.line) for p in unmapped] == [
        ("$.when.alert.cameras[0]", 5),
        ("$.then[0].ai.known[0].save_clip.camera", 12),
    ]
    assert "'front_door'" in unmapped[0].message
    assert "options (Camera roles page)" in unmapped[0].message
    assert "none yet" in unmapped[0].message


def test_a_skill_used_but_not_listed_is_refused_where_it_is_used() -> None:
    text = TEXT.replace("needs: [intrusion, language_model, vision_model, semantic_search]", "")
    site = SiteProfile(skills=GATED | {"intrusion"})
    report = validate_text(text, site=site)
    missing = [p for p in report.errors if p.code == "WF-SKILL-MISSING"]
    assert [p.path for p in missing] == ["$.then[0].ai.tools[1]"]
    assert "'semantic_search'" in missing[0].message
    assert [p.code for p in report.warnings] == ["WF-NEEDS-MISSING"]


def test_skills_is_short_for_a_profile_with_skills() -> None:
    skills = frozenset({"intrusion"})
    assert validate_text(TEXT, skills=skills) == validate_text(
        TEXT, site=SiteProfile(skills=skills)
    )
    with pytest.raises(TypeError, match="SiteProfile"):
        validate_text(TEXT, site=SiteProfile(), skills=skills)


def test_every_entry_point_takes_the_site() -> None:
    site = SiteProfile(camera_roles=frozenset({"porch"}))
    fixed = TEXT.replace("descibe_window", "describe_event")
    workflow = load_workflow(fixed)
    assert not validate_workflow(workflow, site=site).ok
    report = validate_data(
        {"contract": "workflow.v1", "name": "D", "when": {"button": {}}, "then": [{"log": "x"}]},
        site=site,
    )
    assert report.ok
    with pytest.raises(WorkflowInvalid, match="WF-CAMERA-ROLE-UNMAPPED"):
        load_workflow(fixed, site=site)
    with pytest.raises(WorkflowInvalid, match="WF-CAMERA-ROLE-UNMAPPED"):
        load_template("parcel_at_door", site=site)


def test_a_profile_holds_sets_of_names_only() -> None:
    with pytest.raises(TypeError, match="camera_roles"):
        SiteProfile(camera_roles="front_door")  # type: ignore[arg-type]
    profile = SiteProfile(tools=frozenset({"describe_camera"}))
    assert profile == SiteProfile(tools=frozenset({"describe_camera"}))
    assert hash(profile) == hash(SiteProfile(tools=frozenset({"describe_camera"})))


def test_an_investigate_step_waits_for_a_model_that_passed_the_gate() -> None:
    """A site that knows its skills but whose model has not passed the evaluation refuses
    an Investigate step at its mode, saying what to do; a Look step is not gated."""
    fixed = TEXT.replace(", descibe_window", "").replace("search_footage", "describe_window")
    have = frozenset({"intrusion", "language_model", "vision_model", "semantic_search"})
    errors = validate_text(fixed, site=SiteProfile(skills=have)).errors
    (gate,) = errors
    assert (gate.code, gate.path, gate.line) == ("WF-SKILL-MISSING", "$.then[0].ai.mode", 8)
    assert "'investigate_model'" in gate.message
    assert "0.80" in gate.message
    assert "options (the Ollama page)" in gate.message
    passed = SiteProfile(skills=have | {"investigate_model"})
    assert validate_text(fixed, site=passed).ok
    assert validate_text(fixed, site=None).ok  # the contract alone knows no gate
    look = load_template("parcel_at_door")
    assert validate_workflow(look, site=SiteProfile(skills=frozenset(look.needs))).ok
