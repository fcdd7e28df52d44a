"""AI steps: a path for every option and for ``unsure``, and names that hide nothing.

An AI step decides which path runs, so every outcome must have a visible route (``[]`` to do
nothing), and what it defines on its paths (``{decision}``, its fields, ``reason_as``) must not
shadow another value. Its input and its rules are checked in :mod:`.ai_inputs` and
:mod:`.ai_rules`; the paths it opens carry the step's JSON path, for the safety rule.
"""

from __future__ import annotations

from dataclasses import replace

from ..model import AIStep, LookSpec
from ..paths import PathPart, format_path
from ..suggest import did_you_mean
from ..vocabulary import AI_STEP_KEYS, RESERVED_FIELD_NAMES
from .ai_inputs import check_investigate, check_look
from .ai_rules import check_rules
from .context import CheckContext
from .names import check_names
from .scope import Branch, Scope

__all__ = ["check_ai"]

#: What every AI step defines on its paths.
_AI_NAMES = frozenset({"decision", "reason", "confidence"})


def check_ai(
    ctx: CheckContext, step: AIStep, scope: Scope, parts: tuple[PathPart, ...]
) -> list[Branch]:
    """Check one AI step; return its paths, each chosen by this step's decision."""
    body = (*parts, "ai")
    spec = step.spec
    if isinstance(spec, LookSpec):
        check_look(ctx, spec, scope, body)
    else:
        check_investigate(ctx, spec, scope, body)
    for i, option in enumerate(step.decision):
        if option == "unsure":
            ctx.report(
                "WF-AI-UNSURE-LISTED",
                "`unsure` is always an outcome of an AI step; remove it from `decision` and "
                "give it its path with the `unsure:` key",
                (*body, "decision", i),
            )
        elif option in AI_STEP_KEYS:
            ctx.report(
                "WF-AI-OPTION-RESERVED",
                f"the option {option!r} is also a setting of the AI step, so it cannot have "
                "a path; rename the option",
                (*body, "decision", i),
            )
    check_names(ctx, step.decision, (*body, "decision"), what="decision option")
    for name, values in step.fields.items():
        check_names(ctx, values, (*body, "fields", name), what=f"value of the field {name!r}")
        if name in RESERVED_FIELD_NAMES:
            ctx.report(
                "WF-AI-FIELD-RESERVED",
                f"the field {name!r} would hide the {{{name}}} every AI step or workflow "
                "defines; rename the field",
                (*body, "fields", name),
                key=True,
            )
    if step.reason_as is not None and step.reason_as in RESERVED_FIELD_NAMES | set(step.fields):
        ctx.report(
            "WF-AI-FIELD-RESERVED",
            f"reason_as {step.reason_as!r} would hide another value of the same name; "
            "choose another name",
            (*body, "reason_as"),
        )
    check_rules(ctx, step, body)
    outcomes = step.outcomes
    for outcome in outcomes:
        if outcome not in step.paths and outcome not in AI_STEP_KEYS:
            # An option is located at its own place in `decision` (where a person reads
            # it); `unsure`, listed nowhere, at the step.
            where = (
                (*body, "decision", step.decision.index(outcome))
                if outcome in step.decision
                else body
            )
            ctx.report(
                "WF-AI-PATH-MISSING",
                f"the outcome {outcome!r} has no path; add `{outcome}: [...]` to the AI step "
                "(`[]` to do nothing), so every decision has a visible route",
                where,
            )
    for key in step.paths:
        if key not in outcomes:
            options = ", ".join(outcomes)
            ctx.report(
                "WF-AI-PATH-UNKNOWN",
                f"{key!r} is neither a setting of the AI step nor one of its outcomes "
                f"({options}); fix the spelling, or add it to `decision`"
                + did_you_mean(key, outcomes),
                (*body, key),
                key=True,
            )
    branches: list[Branch] = []
    for outcome, path in step.paths.items():
        names = scope.names | _AI_NAMES
        if step.reason_as is not None:
            names |= {step.reason_as}
        if outcome != "unsure":
            names |= frozenset(step.fields)
        chooser = f"the AI step at {format_path(body)}"
        inner = replace(
            scope,
            names=names,
            ai=format_path(body),
            depth=scope.depth + 1,
            choosers=(*scope.choosers, chooser),
            # What lies past an AI decision is not on an earlier question's card: the AI
            # chose it after the person answered.
            asked=None,
        )
        branches.append(Branch(path, inner, (*body, outcome)))
    return branches
