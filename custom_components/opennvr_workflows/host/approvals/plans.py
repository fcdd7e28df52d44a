"""What each reply of a question does, in words, before the question's own text.

The engine tells the host, with each question that clears an action that moves things, what
every reply will do (:class:`~...engine.ports.ReplyPlan`, read from the steps the reply leads
to). Here that becomes the first lines of the question, on the phone's card, in Home
Assistant's notification, on the answer page and in the Workflows panel: ``“Open”: lock.unlock
Back door (lock.back_door).`` and ``“Keep locked”: moves nothing.``, so the person approves
what will happen, and the workflow's own text (with the AI's words in it, bounded by the
engine) comes after, where it cannot pose as one of them. Voice uses the same plans: "deny"
only ever picks a reply that moves nothing (:func:`moving_replies`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ...engine import PlannedAction, ReplyPlan
from .messages import Texts

__all__ = ["moving_replies", "plan_lines"]

#: The keys of a Home Assistant action's target and data that name what it acts on.
_TARGET_KEYS = ("entity_id", "device_id", "area_id", "floor_id", "label_id")


def moving_replies(plans: Iterable[ReplyPlan]) -> list[str]:
    """The replies whose path moves something (``no_answer`` is not a reply)."""
    return [plan.reply for plan in plans if plan.actions and plan.reply != "no_answer"]


def plan_lines(
    plans: Iterable[ReplyPlan], texts: Texts, entity_name: Callable[[str], str | None]
) -> list[str]:
    """One line per outcome: what it does, or that it moves nothing (a question's
    ``no_answer`` only when it does something); ``entity_name`` names an entity id as
    Home Assistant shows it (None: unknown)."""
    lines: list[str] = []
    for plan in plans:
        said = "; ".join(_describe(action, texts, entity_name) for action in plan.actions)
        if plan.reply == "no_answer":
            if said:
                lines.append(texts("approval_no_answer_does", {"actions": said}))
        elif said:
            lines.append(texts("approval_reply_does", {"reply": plan.reply, "actions": said}))
        else:
            lines.append(texts("approval_reply_moves_nothing", {"reply": plan.reply}))
    return lines


def _describe(action: PlannedAction, texts: Texts, entity_name: Callable[[str], str | None]) -> str:
    if action.kind == "site_mode":
        said = texts("approval_does_site_mode", {"mode": action.action})
    else:
        targets, rest = _targets(action, entity_name)
        said = " ".join(part for part in (action.action, targets, _compact(rest)) if part)
    return texts("approval_does_maybe", {"action": said}) if action.maybe else said


def _targets(
    action: PlannedAction, entity_name: Callable[[str], str | None]
) -> tuple[str, dict[str, Any]]:
    """What a Home Assistant action acts on, named (``Back door (lock.back_door)``), and
    the rest of its data, shown as it is."""
    named: list[str] = []
    rest: dict[str, Any] = dict(action.data)
    for source in (action.target, action.data):
        for key in _TARGET_KEYS:
            if key not in source:
                continue
            rest.pop(key, None)
            values = source[key]
            for value in values if isinstance(values, list | tuple) else [values]:
                text = str(value)
                name = entity_name(text) if key == "entity_id" else None
                named.append(f"{name} ({text})" if name and name != text else text)
    return ", ".join(named), rest


def _compact(data: Mapping[str, Any]) -> str:
    return json.dumps(dict(data), ensure_ascii=False, sort_keys=True) if data else ""
