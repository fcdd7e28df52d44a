"""Questions that clear actions that move things: the person approves what will actually happen.

A person's reply clears an action that moves things only if the person could see what that
reply does, for as long as their answer still speaks for now, and only if the AI did not pick
who answers. Three rules, each about the question an action stands behind (its
:class:`.scope.Asked`):

* **The card can show it.** The engine writes on the question, for each reply, what that
  reply's path will do (the action and its target, filled with the run's values when it
  asks). A value the action reads that is defined only after the question (an item of a
  for_each, a value a ``collect`` or an AI step redefines) cannot be shown, so the action is
  refused where it reads it (``WF-ASK-EFFECT-HIDDEN``).
* **The answer is fresh.** An answer clears an action for a bounded time (the site's
  ``answer_fresh_s``, ten minutes by default). A ``wait`` longer than that between the answer
  and the action is a warning here (``WF-ASK-ANSWER-STALE``); at run time the engine asks again.
* **Who is asked is not the AI's choice.** Questions that clear actions on paths an AI
  decision (an AI step, an ``if`` on AI output, a for_each over events) chose must ask the same
  people on every path it can take; otherwise the AI would pick the approvers
  (``WF-ASK-WHO-AI``).
"""

from __future__ import annotations

from ..durations import format_duration
from ..model import ActionStep
from ..paths import PathPart, format_path
from ..vocabulary import ANSWER_FRESH_S
from .context import CheckContext
from .parameters import actuator_reads
from .scope import Scope

__all__ = ["check_approvers", "check_card"]


def check_card(
    ctx: CheckContext,
    step: ActionStep,
    scope: Scope,
    parts: tuple[PathPart, ...],
    kind: str,
    what: str,
) -> None:
    """Check an action that moves things against the question whose card lists it."""
    asked = scope.asked
    if asked is None:
        return
    if asked.answered:
        ctx.clearing.add(asked.at)
    for where, name in actuator_reads(step, (*parts, kind)):
        origin = scope.origins.get(name)
        if name not in scope.names or (origin is not None and asked.origins.get(name) == origin):
            continue
        ctx.report(
            "WF-ASK-EFFECT-HIDDEN",
            f"{what} follows the reply {asked.reply!r} of the question at {asked.at} and "
            f"reads {{{name}}}, which {origin or 'a later step'} defines after that question "
            "was asked; the question shows, for each reply, what it will do, and cannot show "
            f"this value. Ask after {{{name}}} is defined, or use a value known when the "
            "question is asked",
            where,
        )
    fresh = ctx.site.answer_fresh_s or ANSWER_FRESH_S
    if asked.answered and asked.waited_s > fresh:
        ctx.report(
            "WF-ASK-ANSWER-STALE",
            f"{what} runs at least {format_duration(asked.waited_s)} after the reply to the "
            f"question at {asked.at}, and an answer clears an action that moves things for "
            f"{format_duration(fresh)}: the engine will ask again before it acts. To ask "
            "once, write `ask_person` after the `wait`, with the action on its reply path",
            (*parts, kind),
            key=True,
            severity="warning",
        )


def check_approvers(ctx: CheckContext) -> None:
    """Refuse questions that clear actions and whose people an AI decision chooses.

    For each AI decision above a question (since the last person's answer), every question
    under it whose reply clears an action that moves things must ask the same roles.
    """
    under: dict[str, list[tuple[tuple[PathPart, ...], frozenset[str]]]] = {}
    for parts, step, choosers in ctx.questions:
        if format_path(parts) not in ctx.clearing:
            continue
        for chooser in choosers:
            under.setdefault(chooser, []).append((parts, frozenset(step.roles)))
    reported: set[tuple[PathPart, ...]] = set()
    for chooser, questions in under.items():
        first, roles = questions[0]
        for parts, other in questions[1:]:
            if other == roles or parts in reported:
                continue
            reported.add(parts)
            ctx.report(
                "WF-ASK-WHO-AI",
                f"this question asks {_roles(other)} and the question at {format_path(first)} "
                f"asks {_roles(roles)}; both clear an action that moves things, and which of "
                f"them is asked is chosen by {chooser}, so the AI would choose who approves. "
                "Ask the same people on every path it can take, or ask before it decides",
                (*parts, "ask_person", "who"),
            )


def _roles(roles: frozenset[str]) -> str:
    return ", ".join(f"role:{r}" for r in sorted(roles))
