"""The trigger: what the schema accepts but this integration cannot start a run on, or warns about.

A file can be valid workflow.v1 and still name a trigger the site will never fire (an event no
app publishes, a trigger not supported yet); saying so at import beats a workflow that silently
never runs.
"""

from __future__ import annotations

from ..model import (
    AlertTrigger,
    CameraOfflineTrigger,
    EventTrigger,
    PersonInZoneTrigger,
    ScheduleTrigger,
)
from ..vocabulary import CONTRACTED_EVENTS
from .context import CheckContext
from .duration_ranges import check_duration

__all__ = ["check_trigger"]


def check_trigger(ctx: CheckContext) -> None:
    """Check the workflow's ``when``, and note the app an alert trigger needs."""
    trigger = ctx.workflow.when
    match trigger:
        case PersonInZoneTrigger():
            ctx.report(
                "WF-TRIGGER-UNSUPPORTED",
                "detect.person_in_zone is not supported by this integration yet; use the "
                "intrusion or loitering app's alert instead, e.g. "
                "`when: {alert: {app: intrusion, cameras: [...]}}`",
                ("when", "detect.person_in_zone"),
                key=True,
            )
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
