"""What each reply of a question will do, written on the question itself.

A person approves what will actually happen only if the question says it. Two paths an AI
chose can both ask "Unlock the door?" and unlock different doors; so the engine adds to every
question one of whose outcomes leads to an action that moves things, for each outcome, the
actions its path leads to, rendered with the run's values as they are when it asks (the
action and its resolved target: ``Open: lock.unlock lock.back_door``). It reads the steps the
reply leads to, not the question's words, so a workflow cannot ask one thing and do another.

The walk stops at another question (its own card shows what follows it) and at an AI step
(what follows a new AI decision needs a new question: the validator refuses it otherwise).
An action behind a condition or inside a loop on the reply's path is marked ``maybe``. The
validator refuses an action whose values the card could not show (``WF-ASK-EFFECT-HIDDEN``:
a value defined only after the question), so what is rendered here is what will run.

AI text in the question itself is bounded (:func:`bounded_values`): shown after what the
replies do, and cut to :data:`MAX_AI_TEXT` characters on one line, it can neither push the
real effects off the screen nor pose as one of them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Final

from ..workflow import model
from .moving import moves_here
from .policy import SafetyPolicy
from .ports import PlannedAction, ReplyPlan
from .render import render, render_json

__all__ = ["MAX_AI_TEXT", "bounded_values", "reply_plans"]

#: The most characters of one AI value a question shows (on one line).
MAX_AI_TEXT: Final = 200


def reply_plans(
    step: model.AskPersonStep, values: Mapping[str, Any], policy: SafetyPolicy
) -> tuple[ReplyPlan, ...]:
    """What each outcome of ``step`` does now; empty when none moves anything."""

    def moving(action: model.Action) -> bool:
        return moves_here(action, policy)

    plans = []
    for outcome in step.outcomes:
        scope = dict(values)
        if outcome in step.replies:
            scope["answer"] = outcome
        actions = tuple(_planned(step.paths.get(outcome, ()), scope, moving, maybe=False))
        plans.append(ReplyPlan(outcome, actions))
    if not any(plan.actions for plan in plans):
        return ()
    return tuple(plans)


def _planned(
    steps: Iterable[model.Step],
    values: Mapping[str, Any],
    moving: Callable[[model.Action], bool],
    *,
    maybe: bool,
) -> Iterator[PlannedAction]:
    for step in steps:
        match step:
            case model.ActionStep(action=action) if moving(action):
                yield planned(action, values, maybe=maybe)
            case model.IfStep(paths=paths):
                for path in paths.values():
                    yield from _planned(path, values, moving, maybe=True)
            case model.ForEachStep(steps=inner):
                yield from _planned(inner, values, moving, maybe=True)
            case model.AskPersonStep() | model.AIStep() | model.CallStep():
                return
            case _:
                pass


def planned(action: model.Action, values: Mapping[str, Any], *, maybe: bool) -> PlannedAction:
    """One action that moves things, with its target and data as it would run now."""
    match action:
        case model.SiteModeAction(mode=mode):
            return PlannedAction("site_mode", mode, maybe=maybe)
        case model.AppAction():
            data = render_json(action.data, values)
            return PlannedAction(
                "app_action", f"{action.app}.{action.action}", data=data, maybe=maybe
            )
        case model.HomeAssistantAction():
            return PlannedAction(
                "home_assistant",
                render(action.action, values),
                target=render_json(action.target, values),
                data=render_json(action.data, values),
                maybe=maybe,
            )
        case model.WebhookAction():
            data = render_json(action.data, values)
            return PlannedAction("webhook", action.to, data=data, maybe=maybe)
    return PlannedAction(type(action).__name__, "", maybe=maybe)


def bounded_values(values: Mapping[str, Any], ai: Iterable[str]) -> dict[str, Any]:
    """``values`` with each value named in ``ai`` (AI output) cut to one line of at most
    :data:`MAX_AI_TEXT` characters, for the text of a question."""
    out = dict(values)
    for name in ai:
        value = out.get(name)
        if value is None:
            continue
        text = " ".join(str(value).split())
        out[name] = text if len(text) <= MAX_AI_TEXT else text[: MAX_AI_TEXT - 1] + "…"
    return out
