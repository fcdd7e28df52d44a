"""What holds on the path being walked, and the paths a branching step opens.

The safety rule and the severity cap depend on what stands before a step on its own path, not
in the file, so the walk carries a :class:`Scope` down each path and never back up: paths never
join again.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model import Step
from ..paths import PathPart

__all__ = ["Branch", "Scope"]


@dataclass(frozen=True, slots=True)
class Scope:
    """What holds on the path being walked.

    ``gated``: an If or a person's answer stands before, on this path (the workflow's own
    ``if`` counts). ``ai``: the JSON path of the AI step whose decision chose this path, when
    no person has answered since. ``names``: the placeholders defined. ``depth``: nesting.
    """

    names: frozenset[str]
    gated: bool = False
    ai: str | None = None
    depth: int = 0

    @property
    def camera(self) -> bool:
        """Whether the path has a current camera (the trigger's, or a for_each item's)."""
        return "camera" in self.names


@dataclass(frozen=True, slots=True)
class Branch:
    """One path a step opens: its steps, what holds on it, and where it sits in the file.

    Step checks return their branches instead of walking them, so the walk (and with it the
    caps on steps and nesting) lives in one place.
    """

    steps: tuple[Step, ...]
    scope: Scope
    parts: tuple[PathPart, ...]
