"""The semantic pass: every check of one workflow, in file order, from one entry point.

Order matters to nobody reading a sorted report, but the skills ``needs`` must list are only
known once every step was seen, so the ``needs`` check runs last.
"""

from __future__ import annotations

from ..model import Workflow
from ..problems import Problem
from ..site import SiteProfile
from ..vocabulary import MAX_STEPS
from .conditions import check_condition
from .constant_ifs import check_constant_ifs
from .context import CheckContext, Locator, no_location
from .duration_ranges import check_duration
from .flow import check_steps
from .questions import check_approvers
from .references import check_list_references
from .skills import check_needs
from .taint import base_scope, check_trigger_taint, if_scope
from .triggers import check_trigger

__all__ = ["check_workflow"]


def check_workflow(
    workflow: Workflow,
    *,
    locate: Locator = no_location,
    site: SiteProfile | None = None,
) -> list[Problem]:
    """Every semantic problem of ``workflow``; ``locate`` turns JSON paths into positions,
    and ``site`` (None: check the contract alone) is what the workflow must find here."""
    ctx = CheckContext(workflow, locate, site if site is not None else SiteProfile())
    base = base_scope(workflow.when, ctx.site.model_apps)
    check_trigger(ctx)
    check_trigger_taint(ctx)
    check_duration(
        ctx, workflow.limits.cooldown_s, "cooldown", "the cooldown", ("limits", "cooldown")
    )
    if workflow.state == "on":
        ctx.report(
            "WF-STATE-ON",
            "this file turns itself on when imported; shared workflows should say "
            "`state: test`, so they run in Test (actions recorded, not performed) first",
            ("state",),
            severity="warning",
        )
    for i, condition in enumerate(workflow.conditions):
        check_condition(ctx, condition, base, ("if", i))
    scope = if_scope(workflow.conditions, base, ("if",)) if workflow.conditions else base
    check_steps(ctx, workflow.then, scope, ("then",))
    check_steps(ctx, workflow.always, scope, ("always",))
    if ctx.steps > MAX_STEPS:
        ctx.report(
            "WF-TOO-MANY-STEPS",
            f"the workflow has {ctx.steps} steps; at most {MAX_STEPS} are allowed (three to "
            "seven read best: split it into several workflows)",
            (),
        )
    check_approvers(ctx)
    check_constant_ifs(ctx)
    check_list_references(ctx)
    check_needs(ctx)
    return ctx.problems
