"""Plain conditions (the workflow's ``if`` and If steps): what they read must exist on the path.

A condition on the current camera where there is none, on a camera role the site has not
mapped, or on a value nothing defines, would be false forever at run time; the file is refused
instead.
"""

from __future__ import annotations

from ..model import CameraCondition, Condition, ListCondition, ValueCondition
from ..paths import PathPart
from .context import CheckContext
from .placeholders import undefined_message
from .scope import Scope

__all__ = ["check_condition"]


def check_condition(
    ctx: CheckContext, condition: Condition, scope: Scope, parts: tuple[PathPart, ...]
) -> None:
    """Check one condition against the camera and the names defined on its path."""
    match condition:
        case CameraCondition(roles=roles):
            ctx.camera_roles(roles, (*parts, "camera"))
            if not scope.camera:
                ctx.report(
                    "WF-NO-CURRENT-CAMERA",
                    "a camera condition needs a current camera, and this trigger has none; use "
                    "it with an alert, event, camera_offline or detect.person_in_zone trigger, "
                    "or inside for_each cameras",
                    (*parts, "camera"),
                )
        case ValueCondition(name=name) if name not in scope.names:
            ctx.report(
                "WF-PLACEHOLDER-UNDEFINED",
                undefined_message(name, scope),
                (*parts, "value", "of"),
            )
        case ListCondition(name=name) if name not in scope.names:
            ctx.report(
                "WF-PLACEHOLDER-UNDEFINED",
                undefined_message(name, scope),
                (*parts, "list", "value"),
            )
        case _:
            pass
