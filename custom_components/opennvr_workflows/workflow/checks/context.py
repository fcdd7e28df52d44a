"""What one validation collects while it walks a workflow: problems, skills used, steps seen.

Every check reports through one :class:`CheckContext`, so each problem is located the same way
(a JSON path of the file's canonical form, turned into a line by the caller's locator) and the
skills steps use are gathered in file order, for the ``needs`` check that runs last. The
context also holds the :class:`~..site.SiteProfile` the file is checked against, and answers
the site questions every kind of step asks (is this camera role mapped here?) in one place.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..model import AskPersonStep, Workflow
from ..paths import PathPart, format_path
from ..problems import Problem, ProblemSeverity
from ..site import SiteProfile
from ..suggest import did_you_mean
from ..yaml_loader import Mark

__all__ = ["CheckContext", "Locator", "no_location"]

#: Turns a path into a position: ``(parts, key=...) -> Mark``.
type Locator = Callable[..., Mark]


def no_location(parts: tuple[PathPart, ...], *, key: bool = False) -> Mark:
    """The locator for a model with no file behind it: every problem sits at 0:0."""
    return Mark(0, 0)


class CheckContext:
    """One validation of one workflow: the problems found so far, in the order found."""

    def __init__(self, workflow: Workflow, locate: Locator, site: SiteProfile):
        self.workflow = workflow
        self.locate = locate
        #: What the site has; a part that is None is not checked.
        self.site = site
        self.problems: list[Problem] = []
        #: Steps seen so far, for the cap on steps.
        self.steps = 0
        #: Each skill a step uses, with the path of the first step that uses it.
        self.used_skills: dict[str, tuple[PathPart, ...]] = {}
        #: Every question, with the AI decisions that chose its path since the last answer.
        self.questions: list[tuple[tuple[PathPart, ...], AskPersonStep, tuple[str, ...]]] = []
        #: The JSON paths of the questions one of whose outcomes leads to an action that
        #: moves things (their people clear it).
        self.clearing: set[str] = set()

    def report(
        self,
        code: str,
        message: str,
        parts: tuple[PathPart, ...],
        *,
        key: bool = False,
        severity: ProblemSeverity = "error",
    ) -> None:
        """Record a problem at ``parts``; ``key`` points at the key rather than its value."""
        mark = self.locate(parts, key=key)
        self.problems.append(
            Problem(code, message, format_path(parts), mark.line, mark.column, severity)
        )

    def need(self, skill: str, parts: tuple[PathPart, ...]) -> None:
        """Note that the step at ``parts`` uses ``skill`` (the first user is the one named)."""
        self.used_skills.setdefault(skill, parts)

    def camera_roles(self, roles: Iterable[str], parts: tuple[PathPart, ...]) -> None:
        """Check that each camera role at ``parts`` (a list, item by item) is mapped here."""
        for i, role in enumerate(roles):
            self.camera_role(role, (*parts, i))

    def camera_role(self, role: str, parts: tuple[PathPart, ...]) -> None:
        """Check that the camera role at ``parts`` is mapped to a camera on this site."""
        mapped = self.site.camera_roles
        if mapped is None or role in mapped:
            return
        known = ", ".join(sorted(mapped)) if mapped else "none yet"
        self.report(
            "WF-CAMERA-ROLE-UNMAPPED",
            f"the camera role {role!r} is not mapped to a camera on this site; map it in the "
            f"integration's options (Camera roles page), or use a mapped role ({known})"
            + did_you_mean(role, sorted(mapped)),
            parts,
        )
