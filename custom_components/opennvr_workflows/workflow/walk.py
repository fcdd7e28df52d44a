"""Every step of a workflow with its JSON path, in file order.

The engine persists where a run stands as the step's path (``$.then[0].ai.alert[0]``), the
same path problems name, so a run, a problem and a card in a builder point at the same place.
"""

from __future__ import annotations

from collections.abc import Iterator

from .model import (
    ActionStep,
    AIStep,
    AskPersonStep,
    CallStep,
    CameraCondition,
    Condition,
    ForEachCameras,
    ForEachEvents,
    ForEachStep,
    IfStep,
    LookSpec,
    PtzPresetAction,
    SaveClipAction,
    Step,
    Workflow,
)
from .paths import PathPart, format_path

__all__ = ["ai_steps", "camera_roles_in", "step_paths", "walk_steps"]


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


def ai_steps(workflow: Workflow) -> list[tuple[str, AIStep]]:
    """``(JSON path, step)`` for every AI step (Look or Investigate), in file order: what a
    workflow's accuracy, its evidence pictures and its cases are about (a workflow without
    one has none of them)."""
    return [(path, step) for path, step in walk_steps(workflow) if isinstance(step, AIStep)]


def camera_roles_in(workflow: Workflow) -> tuple[str, ...]:
    """Every camera role the workflow names, in file order, each once: its trigger's
    cameras, camera conditions, Look cameras, for_each cameras, clips and PTZ presets.

    What the options' Camera roles page offers: the roles the home's workflows wait for,
    rather than made-up examples."""
    found: dict[str, None] = {}

    def add(*roles: str | None) -> None:
        found.update((r, None) for r in roles if r)

    def conditions(items: tuple[Condition, ...]) -> None:
        for condition in items:
            if isinstance(condition, CameraCondition):
                add(*condition.roles)

    add(*getattr(workflow.when, "cameras", ()))
    conditions(workflow.conditions)
    for _, step in walk_steps(workflow):
        match step:
            case AIStep(spec=LookSpec(camera=camera)):
                add(camera)
            case IfStep(conditions=items):
                conditions(items)
            case ForEachStep(items=ForEachCameras(cameras=roles) | ForEachEvents(cameras=roles)):
                add(*roles)
            case ActionStep(action=SaveClipAction(camera=camera) | PtzPresetAction(camera=camera)):
                add(camera)
            case _:
                pass
    return tuple(found)
