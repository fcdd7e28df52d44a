"""Every step of a workflow with its JSON path, in file order.

The engine persists where a run stands as the step's path (``$.then[0].ai.alert[0]``), the
same path problems name, so a run, a problem and a card in a builder point at the same place.
"""

from __future__ import annotations

from collections.abc import Iterator

from .model import AIStep, AskPersonStep, CallStep, ForEachStep, IfStep, Step, Workflow
from .paths import PathPart, format_path

__all__ = ["step_paths", "walk_steps"]


def _outcome_key(step: Step, outcome: str) -> str:
    if isinstance(step, IfStep):
        return "then" if outcome == "true" else "else"
    return outcome


def step_paths(
    steps: tuple[Step, ...], parts: tuple[PathPart, ...]
) -> Iterator[tuple[tuple[PathPart, ...], Step]]:
    """``(path parts, step)`` for ``steps`` at ``parts`` and everything inside them."""
    for i, step in enumerate(steps):
        here = (*parts, i)
        yield here, step
        match step:
            case AIStep(paths=paths):
                for outcome, path in paths.items():
                    yield from step_paths(path, (*here, "ai", outcome))
            case IfStep(paths=paths) | AskPersonStep(paths=paths) | CallStep(paths=paths):
                for outcome, path in paths.items():
                    yield from step_paths(path, (*here, _outcome_key(step, outcome)))
            case ForEachStep(steps=inner):
                yield from step_paths(inner, (*here, "do"))
            case _:
                pass


def walk_steps(workflow: Workflow) -> Iterator[tuple[str, Step]]:
    """``(JSON path, step)`` for every step of ``then`` and then ``always``."""
    for parts, step in step_paths(workflow.then, ("then",)):
        yield format_path(parts), step
    for parts, step in step_paths(workflow.always, ("always",)):
        yield format_path(parts), step
