"""Skills: what the workflow uses is listed in ``needs``, and the site has what it uses.

``needs`` lets a site be checked before a shared file is imported. A file that leaves a skill
out of it (the RFC's own example lists none) is still read: the validator knows what each step
uses, so the omission is a warning with the list to write, not a refusal. Against a site (the
caller's :class:`~..site.SiteProfile` with its skills), every skill the file needs or uses
must be there: a missing skill is an error naming it, never a failure at run time.
"""

from __future__ import annotations

from ..paths import PathPart, format_path
from .context import CheckContext

__all__ = ["check_needs"]


def check_needs(ctx: CheckContext) -> None:
    """Check ``needs`` against the skills the steps used, then both against the site's."""
    workflow = ctx.workflow
    declared = set(workflow.needs)
    undeclared = {s: where for s, where in ctx.used_skills.items() if s not in declared}
    if undeclared:
        uses = "; ".join(f"{_user(where)} uses {skill}" for skill, where in undeclared.items())
        complete = ", ".join(sorted(declared | set(undeclared)))
        ctx.report(
            "WF-NEEDS-MISSING",
            f"`needs` does not list every skill the workflow uses ({uses}); write "
            f"`needs: [{complete}]`, so a site can be checked before the workflow is imported",
            ("needs",) if workflow.needs else (),
            severity="warning",
        )
    have = ctx.site.skills
    if have is None:
        return
    for i, skill in enumerate(workflow.needs):
        if skill not in have:
            ctx.report(
                "WF-SKILL-MISSING",
                f"this site does not have the skill {skill!r} the workflow needs; install or "
                "configure it first",
                ("needs", i),
            )
    for skill, where in undeclared.items():
        if skill not in have:
            ctx.report(
                "WF-SKILL-MISSING",
                f"this site does not have the skill {skill!r} {_user(where)} uses; install or "
                "configure it first",
                where,
            )


def _user(where: tuple[PathPart, ...]) -> str:
    """Who uses a skill, in words: the trigger, or the step at its JSON path."""
    return "the trigger" if where[:1] == ("when",) else f"the step at {format_path(where)}"
