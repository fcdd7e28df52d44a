"""Skills: what the workflow uses is listed in ``needs``, and the site has what it needs.

``needs`` lets a site be checked before a shared file is imported, so it must be complete; the
site check runs only when the caller passes the site's skill registry.
"""

from __future__ import annotations

from ..paths import format_path
from .context import CheckContext

__all__ = ["check_needs"]


def check_needs(ctx: CheckContext) -> None:
    """Check ``needs`` against the skills the steps used, then against the site's registry."""
    workflow = ctx.workflow
    declared = set(workflow.needs)
    for skill, where in ctx.used_skills.items():
        if skill not in declared:
            ctx.report(
                "WF-NEEDS-MISSING",
                f"the step at {format_path(where)} uses {skill!r}; add it to `needs`, so "
                "the site can be checked before the workflow is imported",
                ("needs",) if workflow.needs else (),
            )
    if ctx.skills is None:
        return
    for i, skill in enumerate(workflow.needs):
        if skill not in ctx.skills:
            ctx.report(
                "WF-SKILL-MISSING",
                f"this site does not have the skill {skill!r} the workflow needs; install or "
                "configure it first",
                ("needs", i),
            )
