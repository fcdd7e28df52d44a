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

from ..model import ActionStep, AppAction, HomeAssistantAction, SiteModeAction
from ..paths import PathPart
from .context import CheckContext
from .parameters import actuator_reads
from .questions import check_card
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
    check_card(ctx, step, scope, parts, kind, what)
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
            f"{what} moves things, and this path was chosen by {scope.ai_if}; a decision on "
            "AI output is not a plain rule, and no person has answered since. Put an "
            "ask_person before it and place it on a reply path (not the default reply, not "
            "no_answer), or decide on values no AI produced",
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
    """Cap an alert's or a message's severity on a path an AI chose or nothing gates.

    The cap follows the rule for actuators: the path that chose the severity must be a plain
    rule or a person's answer. An AI step's decision, an ``if`` on AI output (an AI field, a
    value an alert trigger may take from an AI-raised alert, one re-read after an answer that
    did not show it) and a for_each over events all choose it as the AI would.
    """
    if scope.ai is not None and severity in ("high", "critical"):
        ctx.report(
            "WF-SEVERITY-AI-CAP",
            f"this {what} is on a path the AI step at {scope.ai} chose, so its severity is "
            f"at most medium (the engine raises it once the step has earned trust); set "
            "`severity: medium`, or put an ask_person before it",
            parts,
        )
    elif scope.ai_if is not None and severity in ("high", "critical"):
        ctx.report(
            "WF-SEVERITY-AI-CAP",
            f"this {what} is on a path chosen by {scope.ai_if}; that is a decision on AI "
            "output, so its severity is at most medium; set `severity: medium`, put an "
            "ask_person whose message shows the value before it, or decide on values no AI "
            "produced",
            parts,
        )
    elif severity == "critical" and not scope.gated:
        ctx.report(
            "WF-SEVERITY-CRITICAL-UNGATED",
            f"a critical {what} wakes people; it needs a plain rule (`if`) or a person's "
            "answer before it on its path",
            parts,
        )


def _check_values(
    ctx: CheckContext,
    step: ActionStep,
    scope: Scope,
    parts: tuple[PathPart, ...],
    kind: str,
    what: str,
) -> None:
    """Refuse each AI output (once, where it first appears) in the action's parameters."""
    for where, name in actuator_reads(step, (*parts, kind)):
        if name not in scope.tainted:
            continue
        ctx.report(
            "WF-SAFETY-ACTUATOR-AI-VALUE",
            f"{what} moves things with {{{name}}}, AI output from {scope.tainted[name]}, "
            "and no person "
            f"has approved that value on this path. Put an ask_person whose message shows "
            f"{{{name}}} before it, and place it on a reply path (not the default reply, "
            "not no_answer), so the person approves what will actually happen",
            where,
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
