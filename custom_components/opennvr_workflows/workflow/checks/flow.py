"""The walk over a list of steps: nothing after a branching step, caps on steps and nesting.

Paths never join again, so a step after a branching step in the same list could never run as
its author expects. This module is the one place that walks into paths: each step check returns
the paths its step opens (:class:`.scope.Branch`) and the walk checks them in file order.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from ..model import (
    ActionStep,
    AIStep,
    AskPersonStep,
    CallStep,
    ForEachStep,
    IfStep,
    Step,
    WaitAction,
)
from ..paths import PathPart
from ..vocabulary import MAX_NESTING
from .actions import check_action
from .ai_step import check_ai
from .ask_person import check_ask_person, check_call
from .conditions import check_condition
from .context import CheckContext
from .for_each import check_collect, check_for_each
from .scope import Branch, Scope
from .taint import (
    after_ai,
    after_answer,
    after_collect,
    check_collect_shadowing,
    check_shadowing,
    for_each_body,
    if_scope,
)

__all__ = ["check_steps"]


def check_steps(
    ctx: CheckContext, steps: tuple[Step, ...], scope: Scope, parts: tuple[PathPart, ...]
) -> None:
    """Check a list of steps at ``parts`` and every path inside them."""
    for i, step in enumerate(steps):
        here = (*parts, i)
        ctx.steps += 1
        if scope.depth > MAX_NESTING:
            ctx.report(
                "WF-TOO-DEEP",
                f"paths nest more than {MAX_NESTING} deep here; split the workflow, or "
                "move shared steps into `always`",
                here,
            )
            return
        if _branches(step) and i + 1 < len(steps):
            ctx.report(
                "WF-STEP-AFTER-BRANCH",
                f"this step follows {_kind(step)} step in the same list, but paths never "
                "join again: move it into each outcome's path that should run it, or into "
                "`always`",
                (*parts, i + 1),
            )
        scope = _check_step(ctx, step, scope, here)


def _check_step(ctx: CheckContext, step: Step, scope: Scope, parts: tuple[PathPart, ...]) -> Scope:
    """Check one step and its paths; return the scope for the steps after it in the same list."""
    match step:
        case AIStep():
            check_shadowing(ctx, step, scope, parts)
            _walk(ctx, [after_ai(b, step, parts) for b in check_ai(ctx, step, scope, parts)])
        case IfStep(conditions=conditions, paths=paths):
            for i, condition in enumerate(conditions):
                check_condition(ctx, condition, scope, (*parts, "if", i))
            inner = replace(if_scope(conditions, scope, (*parts, "if")), depth=scope.depth + 1)
            check_steps(ctx, paths.get("true", ()), inner, (*parts, "then"))
            check_steps(ctx, paths.get("false", ()), inner, (*parts, "else"))
        case ForEachStep():
            check_collect_shadowing(ctx, step, scope, parts)
            _walk(ctx, [for_each_body(check_for_each(ctx, step, scope, parts), step, parts)])
            return after_collect(check_collect(ctx, step, scope, parts), step, parts)
        case AskPersonStep():
            branches = check_ask_person(ctx, step, scope, parts)
            _walk(ctx, [after_answer(b, step, parts) for b in branches])
        case CallStep():
            _walk(ctx, check_call(ctx, step, scope, parts))
        case ActionStep(action=WaitAction(seconds=seconds)) if scope.asked is not None:
            check_action(ctx, step, scope, parts)
            # The answer ages while the run waits (see .questions).
            asked = replace(scope.asked, waited_s=scope.asked.waited_s + seconds)
            return replace(scope, asked=asked)
        case ActionStep():
            check_action(ctx, step, scope, parts)
    return scope


def _walk(ctx: CheckContext, branches: Iterable[Branch]) -> None:
    for branch in branches:
        check_steps(ctx, branch.steps, branch.scope, branch.parts)


def _branches(step: Step) -> bool:
    return isinstance(step, AIStep | IfStep | AskPersonStep | CallStep)


def _kind(step: Step) -> str:
    """The branching step's kind with its article, as the message reads it."""
    kinds = {AIStep: "an AI", IfStep: "an if", AskPersonStep: "an ask_person", CallStep: "a call"}
    return kinds.get(type(step), "a branching")
