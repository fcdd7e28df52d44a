"""The ``try_workflow`` action: replay recent stored events through a workflow in Test.

It reads OpenNVR's ``/events`` for the workflow's cameras (its trigger's roles mapped to
camera ids in the options) and, where the trigger names one, its object label (an
alert's type, a contracted event's ``label`` match, a person in a zone), newest first,
and runs the workflow on each in Test whatever its state: nothing is sent, every step is
recorded as it would have been, and the model really looks. The trial does not touch
the workflow's limits and pays its AI steps from one allowance of the workflow's
``ai_per_hour``. Response::

    {workflow_id, filters: [{camera_id, label}], events: [
        {event: {id, camera_id, camera, label, time}, run_id, status, decision, reason,
         confidence, trace: [{path, kind, status, outcome, reason, request?}],
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
from ...workflow import Workflow, model
from ..action_support import host_of, loaded_workflow
from ..errors import failed, invalid, listed
from ..workflows import WorkflowHost
from .view import steps_view, tool_calls_view

MAX_EVENTS: Final = 20
DEFAULT_EVENTS: Final = 10


async def async_try_workflow(hass: HomeAssistant, call: ServiceCall) -> ServiceResponse:
    host = host_of(hass, call)
    loaded = loaded_workflow(host, call.data["workflow"])
    workflow = loaded.workflow
    assert workflow is not None  # loaded_workflow refuses a file without one
    count = int(call.data.get("count", DEFAULT_EVENTS))
    filters = event_filters(host, workflow)
    rows = await _recent_events(host, filters, count)
    allowance = Allowance(workflow.limits.ai_per_hour)
    results: list[Any] = []
    for row in rows:
        event = replay_event(host, loaded.workflow_id, workflow, row)
        run_id = await host.engine.try_run(loaded.workflow_id, event, allowance)
        results.append(_result(row, event, await host.engine.run_detail(run_id)))
    return {
        "workflow_id": loaded.workflow_id,
        "filters": [{"camera_id": c, "label": label} for c, label in filters],
        "events": results,
    }


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
    host: WorkflowHost, filters: list[tuple[int | None, str | None]], count: int
) -> list[dict[str, Any]]:
    """The ``count`` newest events matching any filter, each once."""
    found: dict[Any, dict[str, Any]] = {}
    for camera_id, label in filters:
        try:
            page = await host.client.get_events(camera_id=camera_id, label=label, limit=count)
        except OpenNVRError as err:
            raise failed("events_unreadable", error=err) from err
        rows = page.get("events") if isinstance(page, dict) else None
        for row in rows if isinstance(rows, list) else ():
            if isinstance(row, dict) and row.get("id") is not None:
                found.setdefault(row["id"], row)
    newest = sorted(found.values(), key=lambda r: str(r.get("started_at") or ""), reverse=True)
    return newest[:count]


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
        "trace": steps_view(run),
        "tool_calls": tool_calls_view(run),
    }


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
