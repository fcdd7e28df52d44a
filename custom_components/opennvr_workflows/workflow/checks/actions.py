"""Action steps: the safety rule for those that move things, and what each kind of action reads.

Each kind of action reads different things at run time (a camera for a clip, mapped to a
camera on this site, the message that started the run for a reply, placeholders in titles and
data); each is checked here, where the
file is still open in front of its author.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..model import (
    ActionStep,
    AlertAction,
    AppAction,
    HomeAssistantAction,
    LogAction,
    MessageTrigger,
    NotifyAction,
    PtzPresetAction,
    ReplyAction,
    SaveClipAction,
    SiteModeAction,
    WaitAction,
    WebhookAction,
)
from ..paths import PathPart
from ..vocabulary import is_actuator
from .context import CheckContext
from .duration_ranges import check_duration
from .placeholders import check_json_texts, check_text
from .safety import check_actuator, check_severity
from .scope import Scope

__all__ = ["action_key", "check_action"]

_ACTION_KEYS: dict[type, str] = {
    AlertAction: "alert",
    NotifyAction: "notify",
    LogAction: "log",
    SaveClipAction: "save_clip",
    PtzPresetAction: "ptz_preset",
    WebhookAction: "webhook",
    HomeAssistantAction: "home_assistant",
    SiteModeAction: "site_mode",
    AppAction: "app_action",
    WaitAction: "wait",
    ReplyAction: "reply",
}


def action_key(step: ActionStep) -> str:
    """The YAML key of an action step (``alert``, ``home_assistant``, ...)."""
    return _ACTION_KEYS[type(step.action)]


def check_action(
    ctx: CheckContext, step: ActionStep, scope: Scope, parts: tuple[PathPart, ...]
) -> None:
    """Check one action step: the safety rule first, then what its kind reads."""
    action = step.action
    kind = action_key(step)
    body = (*parts, kind)
    if is_actuator(step):
        check_actuator(ctx, step, scope, parts, kind)
    elif ctx.site.moves_things is not None and (why := ctx.site.moves_things(action)):
        # The host knows what the contract cannot: the integration behind ``notify.x``, or
        # a webhook destination marked as moving things. Such an action is an actuator here.
        check_actuator(ctx, step, scope, parts, kind, why=why)
    match action:
        case AlertAction():
            check_severity(ctx, action.severity, scope, (*body, "severity"), "alert")
            check_text(ctx, action.title, scope, (*body, "title"))
            check_text(ctx, action.message, scope, (*body, "message"))
            _check_attachments(ctx, action.attach, scope, (*body, "attach"))
        case NotifyAction():
            check_severity(ctx, action.severity, scope, (*body, "severity"), "message")
            check_text(ctx, action.title, scope, (*body, "title"))
            check_text(ctx, action.message, scope, (*body, "message"))
            _check_attachments(ctx, action.attach, scope, (*body, "attach"))
        case LogAction() | ReplyAction():
            check_text(ctx, action.message, scope, body)
            if isinstance(action, ReplyAction) and not isinstance(
                ctx.workflow.when, MessageTrigger
            ):
                ctx.report(
                    "WF-REPLY-NOT-MESSAGE",
                    "`reply` answers the message that started the run, and this workflow is "
                    "not started by a message; use notify instead",
                    body,
                    key=True,
                )
        case SaveClipAction():
            if action.camera is not None:
                ctx.camera_role(action.camera, (*body, "camera"))
            elif not scope.camera:
                ctx.report(
                    "WF-NO-CURRENT-CAMERA",
                    "save_clip needs a camera, and there is no current camera on this path; "
                    "add `camera: <role>`",
                    body,
                )
            check_duration(ctx, action.before_s, "clip_margin", "`before`", (*body, "before"))
            check_duration(ctx, action.after_s, "clip_margin", "`after`", (*body, "after"))
        case PtzPresetAction():
            ctx.camera_role(action.camera, (*body, "camera"))
        case WebhookAction():
            check_json_texts(ctx, action.data, scope, (*body, "data"))
        case HomeAssistantAction():
            check_json_texts(ctx, action.data, scope, (*body, "data"))
            check_json_texts(ctx, action.target, scope, (*body, "target"))
            if action.target or "entity_id" in action.data:
                ctx.report(
                    "WF-PORTABILITY-HA-TARGET",
                    "this action names entities of one home; whoever imports the file must "
                    "change them to their own",
                    body,
                    severity="warning",
                )
        case AppAction():
            ctx.need(action.app, (*body, "app"))
            check_json_texts(ctx, action.data, scope, (*body, "data"))
        case WaitAction():
            check_duration(ctx, action.seconds, "wait", "the wait", body)
        case _:
            pass


def _check_attachments(
    ctx: CheckContext, attach: Iterable[str], scope: Scope, parts: tuple[PathPart, ...]
) -> None:
    if attach and not scope.camera:
        ctx.report(
            "WF-NO-CURRENT-CAMERA",
            "attachments come from the current camera, and there is none on this path; "
            "remove `attach`",
            parts,
        )
