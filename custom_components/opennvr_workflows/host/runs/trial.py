"""The ``try_workflow`` action: replay recent stored events through a workflow in Test.

It reads OpenNVR's ``/events`` for the workflow's cameras (its trigger's roles mapped to
camera ids in the options) and, where the trigger names one, its object label (an
alert's type, a contracted event's ``label`` match, a person in a zone), newest first,
keeps only the events the trigger would start on, and runs the workflow on each in Test
whatever its state: nothing is sent, every step is recorded as it would have been, and
the model really looks. A workflow that starts from a button, a schedule, a message or a
camera going offline has no stored events to replay: the try says so (an error naming
the trigger), as it says so when no stored event fits the trigger (``message``).

A trial is sandboxed (see :meth:`...engine.Engine.try_run`): it takes none of the
workflow's limits and pays its AI steps from one allowance of the workflow's
``ai_per_hour``; its waits are skipped (``skipped``, with how long it would have
waited); a run still going when it answers is ended, so no trial goes on later or asks a
model again; no entity, counter or *Last picture* of the workflow changes. Each AI step
looks at the event's own picture, as OpenNVR kept it (:mod:`.trial_picture`), never at
the camera now, and says so when there is none (``picture``). Response::

    {workflow_id, filters: [{camera_id, label}], message?, events: [
        {event: {id, camera_id, camera, label, time}, run_id, status, decision, reason,
         confidence, picture: {event_id, seen, why?} | None,
         trace: [{path, kind, status, outcome, reason, request?, would_have_waited_s?}],
         tool_calls: [{step_path, kind, name, status, ms, result}]}]}

``decision``, ``reason`` and ``confidence`` are the first AI step's (the run's outcome
and no reason for a workflow without one).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Final

from homeassistant.core import HomeAssistant, ServiceCall, ServiceResponse
from pyopennvr import OpenNVRError

from ...engine import Allowance, NvrEvent, trigger_event
from ...engine.index import Candidate, residual_match
from ...workflow import Workflow, model
from ..action_support import host_of, loaded_workflow
from ..errors import failed, invalid, listed
from ..workflows import WorkflowHost
from .view import steps_view, tool_calls_view

MAX_EVENTS: Final = 20
DEFAULT_EVENTS: Final = 10
#: Events read per filter, more than asked for: some may not fit the trigger.
_READ: Final = 50
#: The triggers OpenNVR stores events for; the others (a button, a schedule, a message,
#: a camera going offline) leave nothing to replay.
REPLAYED: Final = (model.AlertTrigger, model.EventTrigger, model.PersonInZoneTrigger)
#: The tool calls that fetch an AI step's picture (:mod:`...ai.inputs`).
_PICTURE_CALLS: Final = frozenset({"picture", "frames"})


async def async_try_workflow(hass: HomeAssistant, call: ServiceCall) -> ServiceResponse:
    host = host_of(hass, call)
    loaded = loaded_workflow(host, call.data["workflow"])
    workflow = loaded.workflow
    assert workflow is not None  # loaded_workflow refuses a file without one
    count = int(call.data.get("count", DEFAULT_EVENTS))
    if not isinstance(workflow.when, REPLAYED):
        raise invalid(
            "try_trigger_not_replayed", workflow=workflow.name, trigger=trigger_name(workflow)
        )
    filters = event_filters(host, workflow)
    events: list[tuple[dict[str, Any], NvrEvent]] = []
    for row in await _recent_events(host, filters):
        event = replay_event(host, loaded.workflow_id, workflow, row)
        if residual_match(Candidate(loaded.workflow_id, workflow.when), event):
            events.append((row, event))
    allowance = Allowance(workflow.limits.ai_per_hour)
    results: list[Any] = []
    for row, event in events[:count]:
        run_id = await host.engine.try_run(loaded.workflow_id, event, allowance)
        results.append(_result(row, event, await host.engine.run_detail(run_id)))
    shown = [{"camera_id": c, "label": label} for c, label in filters]
    response: dict[str, Any] = {
        "workflow_id": loaded.workflow_id,
        "filters": shown,
        "events": results,
    }
    if not results:
        response["message"] = host.desk.texts(
            "try_no_matching_events",
            {"workflow": workflow.name, "filters": _filters_text(filters)},
        )
    return response


def trigger_name(workflow: Workflow) -> str:
    """The trigger as the try's refusal names it: its key in the file, as the author
    wrote it (``button``, ``schedule``, ``message``, ``camera_offline``)."""
    match workflow.when:
        case model.ButtonTrigger():
            return "button"
        case model.ScheduleTrigger():
            return "schedule"
        case model.MessageTrigger():
            return "message"
        case model.CameraOfflineTrigger():
            return "camera_offline"
    return type(workflow.when).__name__


def _filters_text(filters: list[tuple[int | None, str | None]]) -> str:
    parts = [
        " ".join(
            p
            for p in (
                f"camera {camera}" if camera is not None else "any camera",
                f"label {label}" if label else "",
            )
            if p
        )
        for camera, label in filters
    ]
    return "; ".join(parts)


def event_filters(host: WorkflowHost, workflow: Workflow) -> list[tuple[int | None, str | None]]:
    """The ``(camera_id, label)`` pairs to read events for."""
    trigger = workflow.when
    roles: tuple[str, ...] = getattr(trigger, "cameras", ())
    cameras: list[int | None] = [None]
    if roles:
        mapped = [host.settings.roles[r] for r in roles if r in host.settings.roles]
        if not mapped:
            raise invalid("try_no_camera", workflow=workflow.name, roles=listed(roles))
        cameras = list(dict.fromkeys(mapped))
    labels: list[str | None] = [None]
    match trigger:
        case model.AlertTrigger(alert_type=alert_type) if alert_type:
            labels = [alert_type]
        case model.EventTrigger(match=match) if match.get("label"):
            labels = list(match["label"])
        case model.PersonInZoneTrigger():
            labels = ["person"]
    return [(camera, label) for camera in cameras for label in labels]


async def _recent_events(
    host: WorkflowHost, filters: list[tuple[int | None, str | None]]
) -> list[dict[str, Any]]:
    """The newest events matching any filter, each once, newest first."""
    found: dict[Any, dict[str, Any]] = {}
    for camera_id, label in filters:
        try:
            page = await host.client.get_events(camera_id=camera_id, label=label, limit=_READ)
        except OpenNVRError as err:
            raise failed("events_unreadable", error=err) from err
        rows = page.get("events") if isinstance(page, dict) else None
        for row in rows if isinstance(rows, list) else ():
            if isinstance(row, dict) and row.get("id") is not None:
                found.setdefault(row["id"], row)
    return sorted(found.values(), key=lambda r: str(r.get("started_at") or ""), reverse=True)


def replay_event(
    host: WorkflowHost, workflow_id: str, workflow: Workflow, row: dict[str, Any]
) -> NvrEvent:
    """The event the workflow's trigger would have produced for a stored event."""
    camera_id = row.get("camera_id")
    roles: tuple[str, ...] = getattr(workflow.when, "cameras", ())
    played = host.settings.roles_of_camera.get(_int(camera_id), ())
    role = next((r for r in roles if r in played), played[0] if played else None)
    label = row.get("label")
    extra = row.get("payload")
    variables: dict[str, Any] = {
        str(k): v
        for k, v in (extra.items() if isinstance(extra, dict) else ())
        if isinstance(v, str | int | float)
    }
    if isinstance(row.get("has_evidence"), bool):
        # Whether OpenNVR kept the event's picture: a trial looks at nothing else.
        variables["has_evidence"] = row["has_evidence"]
    variables.update(
        camera=role,
        camera_id=camera_id,
        labels=[label] if label else [],
        track=row.get("track_id"),
        plate=row.get("plate_text"),
        event_id=row.get("id"),
        label=label,
    )
    if label:
        variables.setdefault("alert_type", label)
    return trigger_event(
        workflow_id, workflow.when, time=_time(row.get("started_at")), variables=variables
    )


def _result(row: dict[str, Any], event: NvrEvent, run: dict[str, Any]) -> dict[str, Any]:
    steps = run["steps"]
    first_ai = next((s for s in steps if s["kind"] == "ai"), None)
    return {
        "event": {
            "id": row.get("id"),
            "camera_id": row.get("camera_id"),
            "camera": event.camera_role,
            "label": row.get("label"),
            "time": row.get("started_at"),
        },
        "run_id": run["id"],
        "status": run["status"],
        "decision": first_ai["outcome"] if first_ai else run["outcome"],
        "reason": first_ai["reason"] if first_ai else run["error"],
        "confidence": first_ai["confidence"] if first_ai else None,
        "picture": _picture(row, run),
        "trace": steps_view(run),
        "tool_calls": tool_calls_view(run),
    }


def _picture(row: dict[str, Any], run: dict[str, Any]) -> dict[str, Any] | None:
    """Whether the trial's AI steps saw the event's own picture, and why not when they
    did not; None when no step looked at a picture."""
    calls = [
        c
        for c in run.get("tool_calls") or ()
        if c.get("kind") == "tool" and c.get("name") in _PICTURE_CALLS
    ]
    if not calls:
        return None
    if any(c.get("status") == "ok" for c in calls):
        return {"event_id": row.get("id"), "seen": True}
    why = next((str(c["result"]) for c in calls if c.get("result")), None)
    return {"event_id": row.get("id"), "seen": False, "why": why}


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return -1


def _time(value: Any) -> datetime:
    try:
        at = datetime.fromisoformat(str(value))
    except ValueError:
        return datetime.now(UTC)
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)
