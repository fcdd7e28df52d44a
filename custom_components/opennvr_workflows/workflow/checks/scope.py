"""What holds on the path being walked, and the paths a branching step opens.

The safety rule and the severity cap depend on what stands before a step on its own path, not
in the file, so the walk carries a :class:`Scope` down each path and never back up: paths never
join again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from ..model import Step
from ..paths import PathPart

__all__ = ["Asked", "Branch", "Scope"]


@dataclass(frozen=True, slots=True)
class Asked:
    """The question whose card lists what this path does: the path is one of its replies.

    ``at``: the question's JSON path; ``reply``: the reply this path follows; ``answered``:
    whether a person's reply chose it (not the question's default, which is also taken when
    nobody answers). ``origins`` says where each name was defined when the question was asked
    (and ``{answer}``, ``{answered_by}`` as the reply defines them): a value the card shows
    is one defined there and not defined again since. ``waited_s``: the seconds of ``wait``
    on this path since the answer.
    """

    at: str
    reply: str
    answered: bool
    origins: Mapping[str, str]
    waited_s: float = 0.0


@dataclass(frozen=True, slots=True)
class Scope:
    """What holds on the path being walked.

    ``gated``: a plain If (one that reads no AI output) or a person's answer stands before, on
    this path (the workflow's own ``if`` counts). ``ai``: the JSON path of the AI step whose
    decision chose this path, when no person has answered since. ``names``: the placeholders
    defined. ``depth``: nesting.

    The taint of AI output (see :mod:`.taint`): ``tainted`` maps each name whose value an AI
    produced, or was derived from AI output, and that no person has approved as shown since,
    to where that output came from (``"the AI step at $.then[0].ai"``); ``origins`` says where
    each name on the path was last defined (``"the trigger"``), for messages that name both
    sides of a problem;
    ``ai_if`` says which If chose this path by reading AI output (or which for_each runs its
    steps over items AI output may be among), when no person has answered since: such an If
    is not a plain rule but an AI decision in disguise, and only a person's answer clears it,
    as for ``ai``. ``choosers`` lists every such AI decision above this path since the last
    person's answer, outermost first (who is asked must not be one of their choices).

    ``asked`` is the question whose card shows what this path will do (see :class:`Asked`).
    """

    names: frozenset[str]
    gated: bool = False
    ai: str | None = None
    depth: int = 0
    tainted: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    origins: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    ai_if: str | None = None
    choosers: tuple[str, ...] = ()
    asked: Asked | None = None

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
