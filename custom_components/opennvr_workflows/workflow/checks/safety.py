"""The safety rule and the severity cap: AI informs, people and plain rules move things.

* An action that moves things (``site_mode``, any ``app_action``, a ``home_assistant`` action
  outside the read/notify allow-list) may only stand after a plain If or a person's answer on
  its own path; and once an AI step has chosen the path, only a person's answer clears it
  again. An If after an AI decision does not: the AI already chose the branch the If sits on,
  so a wrong decision would still move things, and the RFC's promise is that "a wrong decision
  costs a wrong alert, never an open gate". An If that reads AI output is not a plain rule at
  all: it chooses its path as the AI would, and only a person's answer clears it. A reply that
  is also the question's ``default``, and the ``no_answer`` path, are reached without anyone
  answering, so they clear nothing either.
* Such an action whose parameters (entity, target, service data, app-action arguments, site
  mode: any of its values) carry AI output (see :mod:`.taint`) needs, on its path, a person's
  reply to a question whose message shows that same value, so the person approves what will
  actually happen.
* On a path an AI decided, an alert or a message is at most ``medium`` (the engine lifts it once
  the step has earned it); ``critical`` needs an If or a person.

What stands before a step is carried in its :class:`.scope.Scope`; this module only judges it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

from ..model import ActionStep, AppAction, HomeAssistantAction, JsonValue, SiteModeAction
from ..paths import PathPart
from .context import CheckContext
from .scope import Scope

__all__ = ["check_actuator", "check_severity"]


def check_actuator(
    ctx: CheckContext,
    step: ActionStep,
    scope: Scope,
    parts: tuple[PathPart, ...],
    kind: str,
    *,
    why: str | None = None,
) -> None:
    """Refuse an action that moves things where no plain rule or person's answer clears it, or
    that carries AI output no person approved as shown."""
    # ``why``: the site's reason when the host, not the contract, found that it moves things.
    what = why or _describe_actuator(step)
    _check_values(ctx, step, scope, parts, kind, what)
    if scope.ai is not None:
        ctx.report(
            "WF-SAFETY-ACTUATOR-AFTER-AI",
            f"{what} moves things, and this path was chosen by the AI step at {scope.ai} "
            "with no person's answer since; AI informs, people and plain rules move things. "
            "Put an ask_person before it and place it on a reply path (not the default "
            "reply, not no_answer)",
            (*parts, kind),
            key=True,
        )
    elif scope.ai_if is not None:
        ctx.report(
            "WF-SAFETY-ACTUATOR-AFTER-AI-IF",
            f"{what} moves things, and this path was chosen by {scope.ai_if}; an `if` on AI "
            "output is not a plain rule, and no person has answered since. Put an ask_person "
            "before it and place it on a reply path (not the default reply, not no_answer), or "
            "make the `if` read values no AI produced",
            (*parts, kind),
            key=True,
        )
    elif not scope.gated:
        ctx.report(
            "WF-SAFETY-ACTUATOR-UNGATED",
            f"{what} moves things, and nothing stands before it on this path; place it after "
            "an `if` (a plain rule) or on a reply path of an ask_person (not the default "
            "reply, not no_answer)",
            (*parts, kind),
            key=True,
        )


def check_severity(
    ctx: CheckContext, severity: str, scope: Scope, parts: tuple[PathPart, ...], what: str
) -> None:
    """Cap an alert's or a message's severity on a path an AI chose or nothing gates."""
    if scope.ai is not None and severity in ("high", "critical"):
        ctx.report(
            "WF-SEVERITY-AI-CAP",
            f"this {what} is on a path the AI step at {scope.ai} chose, so its severity is "
            f"at most medium (the engine raises it once the step has earned trust); set "
            "`severity: medium`, or put an ask_person before it",
            parts,
        )
    elif severity == "critical" and not scope.gated:
        ctx.report(
            "WF-SEVERITY-CRITICAL-UNGATED",
            f"a critical {what} wakes people; it needs a plain rule (`if`) or a person's "
            "answer before it on its path",
            parts,
        )


#: A placeholder as the engine fills it: any ``{name}``, even inside ``{{name}}``, so a value
#: that would reach the action is never missed here.
_FILLED = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _check_values(
    ctx: CheckContext,
    step: ActionStep,
    scope: Scope,
    parts: tuple[PathPart, ...],
    kind: str,
    what: str,
) -> None:
    """Refuse each AI output (once, where it first appears) in the action's parameters."""
    seen: set[str] = set()
    for where, text in _parameters(step, (*parts, kind)):
        for name in _FILLED.findall(text):
            if name not in scope.tainted or name in seen:
                continue
            seen.add(name)
            ctx.report(
                "WF-SAFETY-ACTUATOR-AI-VALUE",
                f"{what} moves things with {{{name}}}, AI output from {scope.tainted[name]}, "
                "and no person "
                f"has approved that value on this path. Put an ask_person whose message shows "
                f"{{{name}}} before it, and place it on a reply path (not the default reply, "
                "not no_answer), so the person approves what will actually happen",
                where,
            )


def _parameters(
    step: ActionStep, body: tuple[PathPart, ...]
) -> Iterator[tuple[tuple[PathPart, ...], str]]:
    """Every text an actuator's parameters hold, with its path: names, data and target."""
    action = step.action
    if isinstance(action, SiteModeAction):
        yield body, action.mode
    elif isinstance(action, AppAction):
        yield (*body, "app"), action.app
        yield (*body, "action"), action.action
        yield from _texts(action.data, (*body, "data"))
    elif isinstance(action, HomeAssistantAction):
        yield (*body, "action"), action.action
        yield from _texts(action.data, (*body, "data"))
        yield from _texts(action.target, (*body, "target"))


def _texts(
    value: JsonValue, parts: tuple[PathPart, ...]
) -> Iterator[tuple[tuple[PathPart, ...], str]]:
    if isinstance(value, str):
        yield parts, value
    elif isinstance(value, tuple):
        for i, item in enumerate(value):
            yield from _texts(item, (*parts, i))
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _texts(item, (*parts, key))


def _describe_actuator(step: ActionStep) -> str:
    action = step.action
    if isinstance(action, SiteModeAction):
        return f"site_mode {action.mode}"
    if isinstance(action, AppAction):
        return f"the app action {action.app}.{action.action}"
    if isinstance(action, HomeAssistantAction):
        return f"the Home Assistant action {action.action} (outside the read/notify allow-list)"
    return "this action"
