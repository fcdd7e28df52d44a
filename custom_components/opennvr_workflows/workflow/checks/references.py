"""Site lists a workflow names must exist on the site it is imported into.

A plain rule on a list that does not exist would not be a rule: read as empty, ``not_in``
it holds for every value, so the rule meant to keep blocked plates out lets them in, and
``in`` it holds for none. With the site's list names known (``SiteProfile.lists``), every
list a condition (the workflow's ``if`` or an If step) or a ``for_each`` names is checked
here, each refusal located at the list's name. At run time the engine fails closed as
well, for a list removed after the import.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..model import Condition, ForEachList, ForEachStep, IfStep, ListCondition
from ..paths import PathPart
from ..suggest import did_you_mean
from ..walk import step_paths
from .context import CheckContext

__all__ = ["check_list_references"]


def check_list_references(ctx: CheckContext) -> None:
    """Refuse every reference to a site list this site does not have (when it is known)."""
    known = ctx.site.lists
    if known is None:
        return
    workflow = ctx.workflow
    _conditions(ctx, known, workflow.conditions, ("if",))
    for root in ("then", "always"):
        for parts, step in step_paths(getattr(workflow, root), (root,)):
            if isinstance(step, IfStep):
                _conditions(ctx, known, step.conditions, (*parts, "if"))
            elif isinstance(step, ForEachStep) and isinstance(step.items, ForEachList):
                _check(ctx, known, step.items.list_name, (*parts, "for_each", "list"))


def _conditions(
    ctx: CheckContext,
    known: frozenset[str],
    conditions: Iterable[Condition],
    parts: tuple[PathPart, ...],
) -> None:
    for i, condition in enumerate(conditions):
        if isinstance(condition, ListCondition):
            key = "not_in" if condition.negate else "in"
            _check(ctx, known, condition.list_name, (*parts, i, "list", key))


def _check(
    ctx: CheckContext, known: frozenset[str], name: str, parts: tuple[PathPart, ...]
) -> None:
    if name in known:
        return
    have = ", ".join(sorted(known)) if known else "none yet"
    ctx.report(
        "WF-SITE-LIST-UNKNOWN",
        f"the site list {name!r} does not exist on this site (its lists: {have}); a rule on "
        "a missing list would read it as empty, so `not_in` would hold for everything. Add "
        "the list in the integration's options (Site rules), or name an existing one"
        + did_you_mean(name, sorted(known)),
        parts,
    )
