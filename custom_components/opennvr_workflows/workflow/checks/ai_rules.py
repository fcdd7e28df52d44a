"""An AI step's rule table: rules name declared fields, their values, and declared outcomes.

The rules turn the model's fields into the step's decision in plain code; a rule that reads a
field the model never fills, or decides an outcome with no path, would silently never match, so
it is refused. A rule after a catch-all can never match either, which is worth a warning.
"""

from __future__ import annotations

from ..model import AIStep
from ..paths import PathPart
from .context import CheckContext
from .names import check_name_characters

__all__ = ["check_rules"]


def check_rules(ctx: CheckContext, step: AIStep, body: tuple[PathPart, ...]) -> None:
    """Check every rule of ``step`` against its fields and outcomes, in order."""
    catch_all: int | None = None
    for i, rule in enumerate(step.rules):
        here = (*body, "rules", i)
        if catch_all is not None:
            ctx.report(
                "WF-AI-RULE-UNREACHABLE",
                f"rule {i + 1} can never match: rule {catch_all + 1} has no `when` and "
                "matches everything; move the catch-all last",
                here,
                severity="warning",
            )
        if not rule.when and catch_all is None:
            catch_all = i
        for name, values in rule.when.items():
            allowed = step.fields.get(name)
            if allowed is None:
                declared = ", ".join(step.fields) or "none"
                ctx.report(
                    "WF-AI-RULE-FIELD-UNKNOWN",
                    f"the rule reads the field {name!r}, which the step does not declare "
                    f"(declared fields: {declared}); add it to `fields`",
                    (*here, "when", name),
                    key=True,
                )
                continue
            for j, value in enumerate(values):
                if not check_name_characters(ctx, value, (*here, "when", name, j)):
                    continue
                if value not in allowed:
                    ctx.report(
                        "WF-AI-RULE-VALUE-UNKNOWN",
                        f"the field {name!r} cannot be {value!r}; its values are: "
                        + ", ".join(allowed),
                        (*here, "when", name),
                    )
        if rule.then not in step.outcomes:
            ctx.report(
                "WF-AI-RULE-OUTCOME-UNKNOWN",
                f"the rule decides {rule.then!r}, which is not an outcome of the step; use "
                "one of: " + ", ".join(step.outcomes),
                (*here, "then"),
            )
