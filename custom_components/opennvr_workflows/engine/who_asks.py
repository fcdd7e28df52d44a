"""Rule 5 at run time: who is asked is not the AI's choice.

A person's reply clears an action that moves things; if an AI decision chose *which*
question is asked, the AI chose who approves ("the kids" on one path, "the owner" on
another). The README's rule: the questions that clear such actions on the paths one AI
decision chose must ask the same people. A run takes one of those paths, but the file holds
the others, so the monitor reads them there: for each AI decision (an AI step, an ``if`` on
AI output) that chose the path to the question an effect stands behind, with no person's
reply in between, every question under that decision that clears an action that moves
things must ask the same roles.

A question *clears* when one of its replies (not the default) leads, before another
question or an AI step, to an action that moves things (what its card lists:
:mod:`.reply_plans`). Under a decision, the walk goes into every branch, and past a
question only along its default and ``no_answer`` paths: behind a person's reply the AI no
longer chose.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from ..workflow import model
from .policy import SafetyPolicy
from .reply_plans import reply_plans
from .trail import Decision, step_at

__all__ = ["approvers_chosen"]


def approvers_chosen(
    workflow: model.Workflow, trail: Sequence[Decision], policy: SafetyPolicy
) -> tuple[Decision, str] | None:
    """The AI decision that chose who approves the effect at the end of ``trail``, and the
    other question's path, when the questions under it ask different people (None: the
    same people, or no AI decision chose the question)."""
    replies = [i for i, d in enumerate(trail) if d.by == "person"]
    if not replies:
        return None
    last = replies[-1]
    since = replies[-2] + 1 if len(replies) > 1 else 0
    choosers = [d for d in trail[since:last] if d.by == "ai" and d.kind in ("ai", "if")]
    if not choosers:
        return None
    asked = step_at(workflow, trail[last].at)
    if not isinstance(asked, model.AskPersonStep):
        return None
    roles = frozenset(asked.roles)
    for chooser in choosers:
        step = step_at(workflow, chooser.at)
        paths = getattr(step, "paths", None)
        if not paths:
            continue
        for at, question in _clearing(paths.items(), chooser.at, policy):
            if frozenset(question.roles) != roles:
                return chooser, at
    return None


def _clearing(
    branches: Iterable[tuple[str, Sequence[model.Step]]], prefix: str, policy: SafetyPolicy
) -> Iterator[tuple[str, model.AskPersonStep]]:
    """Every question under these branches that clears an action that moves things, with
    its path (a loop's steps are written with item 0), walked as the module says."""
    for outcome, steps in branches:
        for i, step in enumerate(steps):
            at = f"{prefix}.{outcome}.{i}"
            match step:
                case model.AskPersonStep():
                    if _clears(step, policy):
                        yield at, step
                    keep = [
                        (o, p)
                        for o, p in step.paths.items()
                        if o not in step.replies or o == step.default
                    ]
                    yield from _clearing(keep, at, policy)
                case model.ForEachStep(steps=body):
                    yield from _clearing([("0", body)], at, policy)
                case model.IfStep() | model.AIStep() | model.CallStep():
                    yield from _clearing(step.paths.items(), at, policy)
                case _:
                    pass


def _clears(step: model.AskPersonStep, policy: SafetyPolicy) -> bool:
    """Whether a reply of ``step`` (not its default) leads to an action that moves things."""
    return any(
        plan.actions
        for plan in reply_plans(step, {}, policy)
        if plan.reply in step.replies and plan.reply != step.default
    )
