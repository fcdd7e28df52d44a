"""For each: what the loop defines for its steps, and what ``collect`` defines after it.

The loop's steps see the item (``as``) and, for cameras or events, the current camera; the
steps after the loop see only the collected reasons, and collecting needs an AI step to give
them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace

from ..model import (
    AIStep,
    AskPersonStep,
    CallStep,
    ForEachCameras,
    ForEachEvents,
    ForEachStep,
    IfStep,
    Step,
)
from ..paths import PathPart
from .context import CheckContext
from .duration_ranges import check_duration
from .scope import Branch, Scope

__all__ = ["check_collect", "check_for_each"]


def check_for_each(
    ctx: CheckContext, step: ForEachStep, scope: Scope, parts: tuple[PathPart, ...]
) -> Branch:
    """Check the loop's items (their camera roles too); return its body, with the names an
    item defines."""
    body = (*parts, "for_each")
    names = set(scope.names) | {step.as_name}
    items = step.items
    if isinstance(items, ForEachCameras):
        names.add("camera")
        ctx.camera_roles(items.cameras, (*body, "cameras"))
    elif isinstance(items, ForEachEvents):
        names |= {"camera", "event_type", "event_id"}
        ctx.camera_roles(items.cameras, (*body, "events", "cameras"))
        check_duration(
            ctx, items.within_s, "events_within", "the window", (*body, "events", "within")
        )
    inner = replace(scope, names=frozenset(names), depth=scope.depth + 1)
    return Branch(step.steps, inner, (*parts, "do"))


def check_collect(
    ctx: CheckContext, step: ForEachStep, scope: Scope, parts: tuple[PathPart, ...]
) -> Scope:
    """Check ``collect``; return the scope for the steps after the loop."""
    if step.collect is None:
        return scope
    if not any(isinstance(s, AIStep) for s in _all_steps(step.steps)):
        ctx.report(
            "WF-FOREACH-COLLECT-NO-AI",
            f"`collect` gathers the reason of an AI step per item, and no AI step runs "
            f"inside this for_each; add one, or remove `collect: {step.collect}`",
            (*parts, "for_each", "collect"),
        )
    return replace(scope, names=scope.names | {step.collect})


def _all_steps(steps: Iterable[Step]) -> Iterator[Step]:
    for step in steps:
        yield step
        match step:
            case (
                AIStep(paths=paths)
                | IfStep(paths=paths)
                | AskPersonStep(paths=paths)
                | CallStep(paths=paths)
            ):
                for path in paths.values():
                    yield from _all_steps(path)
            case ForEachStep(steps=inner):
                yield from _all_steps(inner)
            case _:
                pass
