"""The workflow.v1 contract: read, check, model and write OpenNVR workflow files.

One package holds every rule of the contract, so the engine, Home Assistant's import UI, the
command line and CI refuse the same files for the same reasons. It has no Home Assistant
imports. The stable API:

Reading and checking
    ``load_workflow(text, *, filename="<workflow>", skills=None) -> Workflow``
        The model of a valid file; raises :class:`WorkflowInvalid` (``.problems``) otherwise.
    ``validate_text(text, *, skills=None) -> Report``
        Every problem of a YAML text at once; ``report.workflow`` is the model when valid.
    ``validate_data(data, *, skills=None) -> Report``
        The same for already-parsed data (a service call's JSON); no line numbers.
    ``validate_workflow(workflow, *, skills=None) -> Report``
        The same for a model built in code (a builder, a drafting assistant).
    ``skills`` is the site's registry of skill names; None skips that one check.

Writing
    ``dump_workflow(workflow) -> str``: canonical YAML; reading it back gives an equal model.
    ``workflow_to_data(workflow) -> dict``: the same as plain JSON-ready data.

The contract itself
    ``load_schema() -> dict`` / ``schema_text() -> str``: the JSON Schema (Draft 2020-12).
    ``CONTRACT``: ``"workflow.v1"``. ``CODES``: every stable problem code and its meaning.
    ``template_names()``, ``template_text(name)``, ``load_template(name)``: shipped templates.

Reading a model
    The frozen dataclasses of :mod:`.model` (``Workflow``, ``AIStep``, ``ActionStep``, ...);
    import them from ``custom_components.opennvr_workflows.workflow.model``.
    ``walk_steps(workflow)``: every step with its JSON path, in file order.
    ``is_actuator(step)``: whether an action step moves things.
    ``action_key(step)``: an action step's kind (``"alert"``, ``"home_assistant"``, ...).
    :mod:`.vocabulary`: the tool names, allow-lists and caps the rules use.

Problems
    :class:`Problem` (``code``, ``message``, ``path``, ``line``, ``column``, ``severity``;
    ``format(filename)`` gives ``FILE:LINE:COL CODE message``), :class:`Report` (``problems``,
    ``errors``, ``warnings``, ``ok``, ``workflow``), :class:`WorkflowInvalid`.
"""

from __future__ import annotations

from collections.abc import Mapping

from .dump import dump_workflow, workflow_to_data
from .durations import DurationError, format_duration, parse_duration
from .model import CONTRACT, Workflow
from .parse import parse_workflow
from .problems import CODES, Problem, ProblemSeverity, Report, WorkflowInvalid
from .schema import load_schema, schema_problems, schema_text
from .template_library import load_template, template_names, template_text
from .validate import action_key, check_workflow
from .vocabulary import is_actuator
from .walk import walk_steps
from .yaml_loader import Located, Mark, load_yaml

__all__ = [
    "CODES",
    "CONTRACT",
    "DurationError",
    "Problem",
    "ProblemSeverity",
    "Report",
    "Workflow",
    "WorkflowInvalid",
    "action_key",
    "dump_workflow",
    "format_duration",
    "is_actuator",
    "load_schema",
    "load_template",
    "load_workflow",
    "parse_duration",
    "schema_text",
    "template_names",
    "template_text",
    "validate_data",
    "validate_text",
    "validate_workflow",
    "walk_steps",
    "workflow_to_data",
]


def _contract_problems(located: Located) -> tuple[list[Problem], bool]:
    """Problems with the ``contract`` key, and whether checking may go on as workflow.v1."""
    data = located.data
    assert isinstance(data, dict)
    if "contract" not in data:
        return [
            Problem(
                "WF-CONTRACT-MISSING",
                f"the file does not say which contract it follows; add `contract: {CONTRACT}` "
                "as its first line",
                "$",
                *_line_col(located.locate(())),
            )
        ], True
    if data["contract"] != CONTRACT:
        mark = located.locate(("contract",))
        return [
            Problem(
                "WF-CONTRACT-UNSUPPORTED",
                f"the file follows {data['contract']!r}; this version reads {CONTRACT} only",
                "$.contract",
                mark.line,
                mark.column,
            )
        ], False
    return [], True


def _line_col(mark: Mark) -> tuple[int, int]:
    return mark.line, mark.column


def _validate_located(located: Located, skills: frozenset[str] | None) -> Report:
    contract, go_on = _contract_problems(located)
    if not go_on:
        return Report.of(contract)
    structural = [
        p
        for p in schema_problems(located)
        if not (
            p.path == "$.contract" or (p.code == "WF-MISSING-KEY" and "`contract`" in p.message)
        )
    ]
    if structural:
        return Report.of(contract + structural)
    assert isinstance(located.data, dict)
    workflow = parse_workflow(located.data)
    semantic = check_workflow(workflow, locate=located.locate, skills=skills)
    return Report.of(contract + semantic, workflow)


def validate_text(text: str, *, skills: frozenset[str] | None = None) -> Report:
    """Every problem of a workflow file's text; the model too when there are no errors."""
    located, problems = load_yaml(text)
    if located is None:
        return Report.of(problems)
    return _validate_located(located, skills)


def validate_data(data: object, *, skills: frozenset[str] | None = None) -> Report:
    """Every problem of already-parsed workflow data (positions are 0:0)."""
    if not isinstance(data, Mapping):
        return Report.of([Problem("WF-NOT-A-MAPPING", "a workflow is a mapping of keys to values")])
    return _validate_located(Located(dict(data)), skills)


def validate_workflow(workflow: Workflow, *, skills: frozenset[str] | None = None) -> Report:
    """Every problem of a model built in code, checked exactly as its file would be."""
    try:
        data = workflow_to_data(workflow)
    except ValueError as err:
        return Report.of([Problem("WF-DURATION", f"the model cannot be written: {err}")])
    return validate_data(data, skills=skills)


def load_workflow(
    text: str, *, filename: str = "<workflow>", skills: frozenset[str] | None = None
) -> Workflow:
    """The model of a valid workflow file; raises :class:`WorkflowInvalid` otherwise."""
    report = validate_text(text, skills=skills)
    if report.workflow is None:
        raise WorkflowInvalid(report.problems, filename)
    return report.workflow
