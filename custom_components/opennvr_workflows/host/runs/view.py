"""A run as a person reads it: its trigger, each step with what it decided or would have
sent, and each model and tool call. One shape for every action that shows runs
(``get_runs``, ``try_workflow``), taken from the engine's stored rows."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

#: The trigger fields worth showing; payloads can carry personal data and stay out.
_TRIGGER_FIELDS = (
    "kind",
    "source",
    "time",
    "type",
    "camera_id",
    "camera_role",
    "alert_id",
    "ai_derived",
    "supplied_by",
)


def steps_view(run: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every step of a stored run, in order: what it was, how it ended, why."""
    return [
        {k: step.get(k) for k in ("path", "kind", "status", "outcome", "reason")}
        | ({"confidence": step["confidence"]} if step.get("confidence") is not None else {})
        | _request(step)
        | _skipped(step)
        for step in run.get("steps") or ()
    ]


def tool_calls_view(run: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every model and tool call of a stored run (its trace)."""
    return [
        {k: call.get(k) for k in ("step_path", "kind", "name", "status", "ms", "result")}
        for call in run.get("tool_calls") or ()
    ]


def run_view(run: Mapping[str, Any]) -> dict[str, Any]:
    """A stored run (``Engine.run_detail``) for an action's response."""
    return {
        "run_id": run.get("id"),
        "workflow_id": run.get("workflow_id"),
        "status": run.get("status"),
        "outcome": run.get("outcome"),
        "test": bool(run.get("test")),
        "started_at": run.get("started_at"),
        "ended_at": run.get("ended_at"),
        "error": run.get("error"),
        "trigger": _trigger(run.get("trigger")),
        "steps": steps_view(run),
        "tool_calls": tool_calls_view(run),
    }


def _trigger(raw: Any) -> dict[str, Any]:
    try:
        data = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return {}
    if not isinstance(data, Mapping):
        return {}
    return {k: data[k] for k in _TRIGGER_FIELDS if k in data}


def _skipped(step: Mapping[str, Any]) -> dict[str, Any]:
    """A wait a trial skipped: how long the run would have waited (``skipped`` status)."""
    if step.get("kind") != "wait" or step.get("status") != "skipped":
        return {}
    try:
        result = json.loads(step.get("result") or "{}")
    except (TypeError, ValueError):
        return {}
    waited = result.get("would_have_waited_s") if isinstance(result, Mapping) else None
    return {"would_have_waited_s": waited} if isinstance(waited, int | float) else {}


def _request(step: Mapping[str, Any]) -> dict[str, Any]:
    """What an action step sent, or in Test would have sent (its request)."""
    if step.get("kind") == "ai" or not step.get("inputs"):
        return {}
    try:
        return {"request": json.loads(step["inputs"])}
    except (TypeError, ValueError):
        return {}
