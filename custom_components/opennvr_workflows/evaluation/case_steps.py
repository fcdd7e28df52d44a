"""The AI step a case runs: a shipped template's own step, or one written in the case.

A template's step is taken from the template as it ships (its ``index``-th AI step in file
order), so a case measures exactly the question the template asks. A step written in the
case is a workflow.v1 ``ai`` step, checked by the contract's own validator inside a
one-step workflow, so a case can never run a step the product would refuse.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ..workflow import (
    ai_steps,
    load_template,
    template_names,
    validate_data,
)
from ..workflow.model import AIStep, InvestigateSpec
from ..workflow.parse import parse_step
from ..workflow.vocabulary import AI_TOOL_NAMES

#: Problems a case settles itself: its ``event`` gives the values a trigger would, and the
#: camera a Look at a picture looks at (the loader checks the case has its pictures).
_CASE_DEFINES = frozenset({"WF-PLACEHOLDER-UNDEFINED", "WF-NO-CURRENT-CAMERA"})


class StepError(ValueError):
    """The case's step cannot be built; ``str(err)`` says why, ``path`` where."""

    def __init__(self, message: str, path: str = "$.step") -> None:
        super().__init__(message)
        self.path = path


def template_ai_steps(name: str) -> list[tuple[str, AIStep]]:
    """Every AI step of the shipped template ``name`` with its JSON path, in file order."""
    if name not in template_names():
        raise StepError(
            f"no template named {name!r}; templates: {', '.join(template_names())}",
            "$.step.template",
        )
    workflow = load_template(name)
    return ai_steps(workflow)


def resolve_step(data: Mapping[str, Any]) -> tuple[AIStep, str, str | None]:
    """``(step, label, template)`` for a case's ``step`` mapping (already schema-checked):
    the step, a label for reports, and the template it came from (None when inline)."""
    if "template" in data:
        name = str(data["template"])
        index = int(data.get("index", 0))
        steps = template_ai_steps(name)
        if index >= len(steps):
            raise StepError(
                f"template {name!r} has {len(steps)} AI step(s); index {index} is past them",
                "$.step.index",
            )
        path, step = steps[index]
        label, template = f"{name}[{index}] ({path})", name
    else:
        step, label, template = inline_step(data["ai"]), "inline", None
    tools = data.get("tools")
    if tools is not None:
        step = with_tools(step, tuple(str(t) for t in tools))
    return step, label, template


def inline_step(ai: Mapping[str, Any]) -> AIStep:
    """The model of a workflow.v1 ``ai`` step written in a case. Outcomes without a path
    get an empty one (a case runs the step, never its paths)."""
    body = dict(ai)
    options = body.get("decision")
    if isinstance(options, list):
        for outcome in [*options, "unsure"]:
            if isinstance(outcome, str):
                body.setdefault(outcome, [])
    data = {
        "contract": "workflow.v1",
        "name": "Eval case step",
        "when": {"button": {}},
        "then": [{"ai": body}],
    }
    report = validate_data(data)
    # The case's event defines the step's placeholders and camera, not a trigger.
    errors = [p for p in report.errors if p.code not in _CASE_DEFINES]
    if errors:
        problems = "; ".join(
            f"{p.path.replace('$.then[0]', '$.step')}: {p.message}" for p in errors
        )
        raise StepError(f"not a valid workflow.v1 AI step: {problems}", "$.step.ai")
    # Refused for placeholders only: the step itself is sound, so it is parsed regardless.
    step = parse_step({"ai": body}) if report.workflow is None else report.workflow.then[0]
    assert isinstance(step, AIStep)
    return step


def with_tools(step: AIStep, tools: tuple[str, ...]) -> AIStep:
    """``step`` offering ``tools`` instead of its own (an Investigate step only)."""
    if not isinstance(step.spec, InvestigateSpec):
        raise StepError("only an Investigate step has tools", "$.step.tools")
    unknown = [t for t in tools if t not in AI_TOOL_NAMES]
    if unknown:
        raise StepError(
            f"not a tool an AI step can have: {', '.join(unknown)}; tools: "
            f"{', '.join(sorted(AI_TOOL_NAMES))}",
            "$.step.tools",
        )
    return replace(step, spec=replace(step.spec, tools=tools))
