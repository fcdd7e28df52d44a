"""The shipped templates: the RFC's six adapted to a home, and the homeowner ones."""

from __future__ import annotations

import pytest
from jsonschema import Draft202012Validator

from custom_components.opennvr_workflows.workflow import (
    WorkflowInvalid,
    dump_workflow,
    load_schema,
    load_template,
    load_workflow,
    template_names,
    template_text,
    validate_text,
)
from custom_components.opennvr_workflows.workflow.yaml_loader import load_yaml

RFC_SIX = {
    "night_intrusion_triage",
    "gate_concierge",
    "safety_gear_check",
    "camera_offline_triage",
    "morning_site_report",
    "investigate_on_request",
}
HOMEOWNER = {"parcel_at_door", "unknown_person_night_away"}


def test_the_expected_templates_ship() -> None:
    assert set(template_names()) >= RFC_SIX | HOMEOWNER


@pytest.mark.parametrize("name", template_names())
def test_template_is_valid_without_warnings(name: str) -> None:
    report = validate_text(template_text(name))
    assert report.problems == (), [p.format(name) for p in report.problems]
    workflow = report.workflow
    assert workflow is not None
    assert workflow.needs, "a template lists what it needs"
    assert workflow.state == "test", "templates start in Test"


@pytest.mark.parametrize("name", template_names())
def test_template_round_trips(name: str) -> None:
    workflow = load_template(name)
    assert load_workflow(dump_workflow(workflow)) == workflow


@pytest.mark.parametrize("name", template_names())
def test_template_fits_the_published_schema_with_any_validator(name: str) -> None:
    located, problems = load_yaml(template_text(name))
    assert located is not None, problems
    errors = list(Draft202012Validator(load_schema()).iter_errors(located.data))
    assert errors == []


def test_template_checked_against_a_site_without_its_skills() -> None:
    with pytest.raises(WorkflowInvalid, match="WF-SKILL-MISSING") as caught:
        load_template("gate_concierge", skills=frozenset({"vision_model"}))
    missing = {p.message for p in caught.value.problems if p.code == "WF-SKILL-MISSING"}
    assert any("gate_controller" in m for m in missing)
    assert any("plate_recognition" in m for m in missing)


def test_unknown_template_name() -> None:
    with pytest.raises(KeyError, match="no template named"):
        template_text("nope")
