"""The trigger: what the schema accepts but the site will never fire, or warns about.

A file can be valid workflow.v1 and still name a trigger the site will never fire (an event no
app publishes, a camera role not mapped to a camera); saying so at import beats a workflow that
silently never runs. The trigger also uses skills: an alert trigger the app that raises it, a
person in a zone the detector whose tracks it watches.
"""

from __future__ import annotations

from ..model import (
    AlertTrigger,
    CameraOfflineTrigger,
    EventTrigger,
    PersonInZoneTrigger,
    ScheduleTrigger,
    Trigger,
)
from ..vocabulary import CONTRACTED_EVENTS
from .context import CheckContext
from .duration_ranges import check_duration

__all__ = ["check_trigger"]


def check_trigger(ctx: CheckContext) -> None:
    """Check the workflow's ``when``: its camera roles, and the skills it uses."""
    trigger = ctx.workflow.when
    key, cameras = _cameras(trigger)
    ctx.camera_roles(cameras, ("when", key, "cameras"))
    match trigger:
        case PersonInZoneTrigger():
            ctx.need("detector", ("when", "detect.person_in_zone"))
        case EventTrigger(event=event) if event not in CONTRACTED_EVENTS:
            known = ", ".join(CONTRACTED_EVENTS)
            ctx.report(
                "WF-EVENT-UNKNOWN",
                f"{event} is not one of OpenNVR's contracted events ({known}); it fires only "
                "if an app publishes it, and only the common placeholders are defined",
                ("when", "event", "type"),
                severity="warning",
            )
        case CameraOfflineTrigger(for_s=for_s):
            check_duration(
                ctx, for_s, "camera_offline", "the offline time", ("when", "camera_offline", "for")
            )
        case ScheduleTrigger(at=at, every_s=every_s):
            if bool(at) == (every_s is not None):
                ctx.report(
                    "WF-SCHEDULE-KIND",
                    "a schedule needs exactly one of `at` (times of day) and `every` (a duration)",
                    ("when", "schedule"),
                )
            if every_s is not None:
                check_duration(
                    ctx, every_s, "schedule_every", "the interval", ("when", "schedule", "every")
                )
        case AlertTrigger(app=app) if app is not None:
            ctx.need(app, ("when", "alert", "app"))
        case _:
            pass


def _cameras(trigger: Trigger) -> tuple[str, tuple[str, ...]]:
    """The trigger's YAML key and the camera roles it names (none, for the others)."""
    match trigger:
        case AlertTrigger(cameras=cameras):
            return "alert", cameras
        case EventTrigger(cameras=cameras):
            return "event", cameras
        case CameraOfflineTrigger(cameras=cameras):
            return "camera_offline", cameras
        case PersonInZoneTrigger(cameras=cameras):
            return "detect.person_in_zone", cameras
        case _:
            return "", ()
