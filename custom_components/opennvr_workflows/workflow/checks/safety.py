"""The safety rule and the severity cap: AI informs, people and plain rules move things.

* An action that moves things (``site_mode``, any ``app_action``, a ``home_assistant`` action
  outside the read/notify allow-list) may only stand after an If or a person's answer on its own
  path; and once an AI step has chosen the path, only a person's answer clears it again. An If
  after an AI decision does not: the AI already chose the branch the If sits on, so a wrong
  decision would still move things, and the RFC's promise is that "a wrong decision costs a
  wrong alert, never an open gate". A reply that is also the question's ``default``, and the
  ``no_answer`` path, are reached without anyone answering, so they clear nothing either.
* On a path an AI decided, an alert or a message is at most ``medium`` (the engine lifts it once
  the step has earned it); ``critical`` needs an If or a person.

What stands before a step is carried in its :class:`.scope.Scope`; this module only judges it.
"""

from __future__ import annotations

from ..model import ActionStep, AppAction, HomeAssistantAction, SiteModeAction
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
    """Refuse an action that moves things where no plain rule or person's answer clears it."""
    # ``why``: the site's reason when the host, not the contract, found that it moves things.
    what = why or _describe_actuator(step)
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


def _describe_actuator(step: ActionStep) -> str:
    action = step.action
    if isinstance(action, SiteModeAction):
        return f"site_mode {action.mode}"
    if isinstance(action, AppAction):
        return f"the app action {action.app}.{action.action}"
    if isinstance(action, HomeAssistantAction):
        return f"the Home Assistant action {action.action} (outside the read/notify allow-list)"
    return "this action"
