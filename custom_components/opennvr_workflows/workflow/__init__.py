"""The workflow.v1 contract: read, check, model and write OpenNVR workflow files.

One package holds every rule of the contract, so the engine, Home Assistant's import UI, the
command line and CI refuse the same files for the same reasons. It has no Home Assistant
imports. The stable API:

Reading and checking
    ``load_workflow(text, *, filename="<workflow>", site=None, skills=None) -> Workflow``
        The model of a valid file; raises :class:`WorkflowInvalid` (``.problems``) otherwise.
    ``validate_text(text, *, site=None, skills=None) -> Report``
        Every problem of a YAML text at once; ``report.workflow`` is the model when valid.
    ``validate_data(data, *, site=None, skills=None) -> Report``
        The same for already-parsed data (a service call's JSON); no line numbers.
    ``validate_workflow(workflow, *, site=None, skills=None) -> Report``
        The same for a model built in code (a builder, a drafting assistant).
    ``site`` is the :class:`SiteProfile` the file must run on: ``skills`` (the skills the site
    has), ``tools`` (the AI tools this host implements), ``camera_roles`` (the roles mapped to
    cameras); a part left None is not checked, and ``site=None`` checks the contract alone.
    ``skills=frozenset(...)`` is short for ``site=SiteProfile(skills=...)`` (not both).

Writing
    ``dump_workflow(workflow) -> str``: canonical YAML; reading it back gives an equal model.
    ``workflow_to_data(workflow) -> dict``: the same as plain JSON-ready data.

The contract itself
    ``load_schema() -> dict`` / ``schema_text() -> str``: the JSON Schema (Draft 2020-12).
    ``CONTRACT``: ``"workflow.v1"``. ``CODES``: every stable problem code and its meaning.
    ``template_names()``, ``template_text(name)``, ``load_template(name, *, site=None)``:
    shipped templates.

Reading a model
    The frozen dataclasses of :mod:`.model` (``Workflow``, ``AIStep``, ``ActionStep``, ...);
    import them from ``custom_components.opennvr_workflows.workflow.model``.
    ``walk_steps(workflow)``: every step with its JSON path, in file order (``ai_steps``:
    only the AI steps).
    ``is_actuator(step)``: whether an action step moves things.
    ``action_key(step)``: an action step's kind (``"alert"``, ``"home_assistant"``, ...).
    :mod:`.vocabulary`: the tool names, allow-lists and caps the rules use.

Problems
    :class:`Problem` (``code``, ``message``, ``path``, ``line``, ``column``, ``severity``;
    ``format(filename)`` gives ``FILE:LINE:COL CODE message``), :class:`Report` (``problems``,
    ``errors``, ``warnings``, ``ok``, ``workflow``), :class:`WorkflowInvalid`.
"""

from __future__ import annotations

from .checks import action_key
from .dump import dump_workflow, workflow_to_data
from .durations import DurationError, format_duration, parse_duration
from .model import CONTRACT, Workflow
from .problems import CODES, Problem, ProblemSeverity, Report, WorkflowInvalid
from .schema import load_schema, schema_text
from .site import SiteProfile
from .template_library import load_template, template_names, template_text
from .validate import load_workflow, validate_data, validate_text, validate_workflow
from .vocabulary import is_actuator
from .walk import ai_steps, walk_steps

__all__ = [
    "CODES",
    "CONTRACT",
    "DurationError",
    "Problem",
    "ProblemSeverity",
    "Report",
    "SiteProfile",
    "Workflow",
    "WorkflowInvalid",
    "action_key",
    "ai_steps",
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
