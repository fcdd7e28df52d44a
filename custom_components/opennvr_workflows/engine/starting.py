"""Starting one named workflow on purpose: an event as if its trigger had fired.

A person or an automation may start a workflow by name (the run_workflow action), and
a person may replay stored events through it (the try_workflow action). Neither comes
through the trigger index, so the event is built here in the shape the workflow's own
trigger would have produced: an alert workflow gets an ``alert`` event, a person-in-zone
workflow a ``person_in_zone`` event with the dwell it asks for, a message workflow a
``message`` with its text and sender. The placeholders its steps read (``{camera}``,
``{alert_type}``, ``{message}``, ...) are then defined exactly as on a real trigger.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from types import MappingProxyType
from typing import Any, Final

from ..workflow import model
from .events import EventSource, NvrEvent, zone_key

#: Variables that are fields of the event rather than payload: ``camera`` is a role.
EVENT_FIELDS: Final = frozenset(
    {"camera", "camera_id", "title", "severity", "app", "alert_id", "track", "plate", "labels"}
)
#: Placeholders only the caller's identity fills, never a variable.
CALLER_ONLY: Final = frozenset({"user"})


@dataclass(frozen=True, slots=True)
class Started:
    """What starting a workflow by name did.

    ``run_ids`` holds the run started (or joined, when ``joined``: a run for the same
    camera was still going). When it is empty, ``reason`` says why: the workflow's state
    (``off``, ``needs_attention``), a limit (``cooldown``, ``per_hour``,
    ``chain_depth``), or ``no_match`` (a message without the words the trigger wants)."""

    run_ids: tuple[str, ...]
    reason: str | None = None
    joined: bool = False


def trigger_event(
    workflow_id: str,
    trigger: model.Trigger,
    *,
    time: datetime,
    variables: Mapping[str, Any] | None = None,
    message: str | None = None,
    user: str | None = None,
    source: EventSource = "action",
    chain: tuple[str, ...] = (),
    ai_derived: bool = False,
    supplied_by: str | None = None,
    ai_origin: str | None = None,
) -> NvrEvent:
    """The event ``trigger`` would have produced, filled from ``variables``.

    ``camera`` names a camera role (default: the trigger's camera when it names exactly
    one); ``camera_id``, ``title``, ``severity``, ``app``, ``alert_id``, ``track``,
    ``plate`` and ``labels`` (a list or a comma-separated text) are event fields; every
    other plain value is a placeholder of the run. ``message`` and ``user`` are the
    message and its sender (a message workflow's ``{message}`` and ``{user}``): ``{user}``
    is always the caller, a ``user`` variable is dropped. ``supplied_by`` marks the values
    as a person's own (``NvrEvent.supplied_by``); ``ai_origin`` says how the host found an
    AI mark (``NvrEvent.ai_origin``)."""
    values = dict(variables or {})
    payload = {
        str(k): v
        for k, v in values.items()
        if k not in EVENT_FIELDS
        and k not in CALLER_ONLY
        and (v is None or isinstance(v, str | int | float | bool))
    }
    if message is not None:
        payload["message"] = message
    if user is not None:
        payload["user"] = user
    kind, type_ = _kind(workflow_id, trigger, payload)
    labels = _labels(values.get("labels"))
    app = _text(values.get("app"))
    severity = _text(values.get("severity"))
    match trigger:
        case model.AlertTrigger():
            app = app or trigger.app
            severity = severity or trigger.min_severity
        case model.PersonInZoneTrigger(min_s=min_s, zone=zone):
            labels |= {"person"}
            payload.setdefault("seconds", min_s)
            payload.setdefault("threshold", min_s)
            payload.setdefault("label", "person")
            if zone is not None:
                payload.setdefault("zone", zone)
        case model.MessageTrigger():
            payload.setdefault("message", "")
    return NvrEvent(
        kind=kind,
        source=source,
        time=time,
        type=type_,
        camera_id=_text(values.get("camera_id")),
        camera_role=_text(values.get("camera")) or _only_camera(trigger),
        alert_id=_text(values.get("alert_id")),
        app=app,
        severity=severity,
        title=_text(values.get("title")),
        labels=frozenset(labels),
        plate=_text(values.get("plate")),
        track_id=_text(values.get("track")),
        chain=chain,
        payload=MappingProxyType(payload),
        ai_derived=ai_derived,
        supplied_by=supplied_by,
        ai_origin=ai_origin if ai_derived else None,
    )


def _kind(
    workflow_id: str, trigger: model.Trigger, payload: Mapping[str, Any]
) -> tuple[str, str | None]:
    """The event kind and type the trigger is filed under (see :mod:`.index`)."""
    match trigger:
        case model.AlertTrigger(alert_type=alert_type):
            return "alert", _text(payload.get("alert_type")) or alert_type
        case model.EventTrigger(event=event):
            return "event", event
        case model.CameraOfflineTrigger():
            return "camera_offline", None
        case model.ScheduleTrigger():
            return "schedule", workflow_id
        case model.ButtonTrigger():
            return "button", workflow_id
        case model.MessageTrigger():
            return "message", workflow_id
        case model.PersonInZoneTrigger(zone=zone):
            return "person_in_zone", zone_key(zone) if zone is not None else None
    return "manual", workflow_id


def _only_camera(trigger: model.Trigger) -> str | None:
    cameras: tuple[str, ...] = getattr(trigger, "cameras", ())
    return cameras[0] if len(cameras) == 1 else None


def _labels(value: Any) -> set[str]:
    if isinstance(value, str):
        return {part.strip() for part in value.split(",") if part.strip()}
    if isinstance(value, list | tuple | set | frozenset):
        return {str(v) for v in value if str(v)}
    return set()


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, bool) or value == "":
        return None
    return str(value) if isinstance(value, str | int | float) else None
