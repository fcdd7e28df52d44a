"""file -> model -> YAML -> model is the identity, for generated workflows and the templates."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from custom_components.opennvr_workflows.workflow import (
    dump_workflow,
    load_workflow,
    validate_text,
    validate_workflow,
    workflow_to_data,
)
from custom_components.opennvr_workflows.workflow import model as m

from .strategies import workflows

_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(workflows())
def test_generated_workflows_are_valid_and_round_trip(workflow: m.Workflow) -> None:
    report = validate_workflow(workflow)
    assert report.errors == (), [p.format() for p in report.errors]

    text = dump_workflow(workflow)
    again = load_workflow(text)

    assert again == workflow
    assert dump_workflow(again) == text  # the canonical form is a fixed point


@_SETTINGS
@given(workflows())
def test_data_form_round_trips_too(workflow: m.Workflow) -> None:
    from custom_components.opennvr_workflows.workflow import validate_data

    report = validate_data(workflow_to_data(workflow))
    assert report.workflow == workflow


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_any_text_gets_a_report_never_an_exception(text: str) -> None:
    report = validate_text(text)
    assert report.ok == (report.workflow is not None)
    for problem in report.problems:
        assert problem.line >= 0
        assert problem.column >= 0
