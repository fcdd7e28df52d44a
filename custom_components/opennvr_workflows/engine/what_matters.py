"""Which effects the run-time monitor judges, and what each one does.

An effect matters when it can move something or wake someone:

* an action that moves things: the contract's (a site mode change, an app action, a Home
  Assistant action outside the read/notify allow-list) and what the site judges moving
  (:func:`.moving.moves_here`: a notify service behind a speaker, a webhook an admin marked);
* a Home Assistant notification whose message or data the phone takes as a command (the
  README's "A notification never becomes a command": such a notify action moves things,
  and follows the rule for actuators). Judged on the values the run holds now, since a
  model's words can make a message a command;
* an urgency above the AI cap: an alert's severity, a notify step's, and the most a Home
  Assistant notification may ask the phone for.

Anything else (a log line, a clip, a medium alert, a plain message) informs, and the rule
lets AI output inform freely.

The card (what a question showed each reply would do) and an effect are written here in
one shape, ``[kind, action, target, data]``, so the monitor can tell whether a question
showed the effect about to run.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from typing import Any, Final

from ..workflow import model
from .ports import SEVERITIES, ActionRequest, AlertRequest, ReplyPlan, Severity
from .render import render, render_json

__all__ = ["card_entry", "cards", "phone_command", "urgency"]

#: Whole messages the companion app takes as commands, not text for a person: Android's
#: ``command_*``, ``TTS`` (the phone speaks), ``request_location_update``, ``remove_channel``.
PHONE_COMMANDS: Final = ("command_*", "tts", "request_location_update", "remove_channel")
#: Keys of a notification's data through which the phone acts rather than shows: text to
#: speak, a stream to play, a command, an intent to launch.
PHONE_ACTING_KEYS: Final = frozenset({"tts_text", "media_stream", "command", "intent_action"})


def phone_command(action: model.Action, request: AlertRequest | ActionRequest) -> str | None:
    """Why a Home Assistant notify action, as it is about to be sent, makes a phone act
    (None: it only shows text)."""
    if not isinstance(action, model.HomeAssistantAction) or not action.action.startswith("notify."):
        return None
    data = request.params.get("data") if isinstance(request, ActionRequest) else None
    if not isinstance(data, Mapping):
        return None
    message = data.get("message")
    word = str(message or "").strip().casefold()
    if any(fnmatch.fnmatchcase(word, pattern) for pattern in PHONE_COMMANDS):
        return f"its message {str(message).strip()!r} is a command to the phone"
    inner = data.get("data")
    if isinstance(inner, Mapping):
        for key in sorted(PHONE_ACTING_KEYS & {str(k) for k in inner}):
            return f"its data key {key!r} makes the phone act, not show"
    return None


def urgency(action: model.Action, request: AlertRequest | ActionRequest) -> Severity | None:
    """How urgent the effect is as it will be sent (None: it has no urgency): an alert's
    severity, a notify step's, the most a Home Assistant notification may ask for."""
    if isinstance(request, AlertRequest):
        return request.severity
    found: Any = None
    if isinstance(action, model.NotifyAction):
        found = request.params.get("severity")
    elif isinstance(action, model.HomeAssistantAction) and action.action.startswith("notify."):
        found = request.params.get("max_severity")
    return found if found in SEVERITIES else None


def card_entry(action: model.Action, values: Mapping[str, Any]) -> list[Any]:
    """The effect of ``action`` with ``values`` filled in, as a question's card shows one."""
    if isinstance(action, model.HomeAssistantAction):
        target = render_json(action.target, values)
        return ["home_assistant", render(action.action, values), target, _data(action, values)]
    if isinstance(action, model.AppAction):
        return ["app_action", f"{action.app}.{action.action}", {}, _data(action, values)]
    if isinstance(action, model.SiteModeAction):
        return ["site_mode", action.mode, {}, {}]
    if isinstance(action, model.WebhookAction):
        return ["webhook", action.to, {}, _data(action, values)]
    return [type(action).__name__, "", {}, {}]


def _data(
    action: model.HomeAssistantAction | model.AppAction | model.WebhookAction,
    values: Mapping[str, Any],
) -> Any:
    return render_json(action.data, values)


def cards(plans: tuple[ReplyPlan, ...]) -> dict[str, list[list[Any]]]:
    """What a question's card showed each outcome would do, for its record."""
    return {
        plan.reply: [[a.kind, a.action, dict(a.target), dict(a.data)] for a in plan.actions]
        for plan in plans
    }
