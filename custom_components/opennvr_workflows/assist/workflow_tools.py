"""The assistant's tools about the workflows: their states, a run's trace, and the
approvals waiting for the person asking. Each fact carries its ``cite`` marker."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, override

import probatio as vol
from homeassistant.util.json import JsonObjectType

from ..engine import UnknownRunError
from ..host.files import workflow_id_for
from ..host.run_view import run_view
from ..nvr.normalize import MalformedPayload, camera_id_text
from .base import MAX_ROWS, SiteTool, ToolCall, ToolError
from .citations import cite


class ListWorkflowsTool(SiteTool):
    """Every workflow, its state (off, test, on) and its latest run."""

    short_name = "list_workflows"
    description = (
        "List the site's workflows with their state (off, test or on), why one needs "
        "attention, and each one's latest run."
    )

    @override
    async def answer(self, call: ToolCall) -> JsonObjectType:
        host = call.host
        statuses = {s.workflow_id: s for s in host.engine.workflows()}
        rows: list[Any] = []
        for workflow_id, file in sorted(host.files.items()):
            status = statuses.get(workflow_id)
            row: dict[str, Any] = {
                "workflow_id": workflow_id,
                "name": file.workflow.name if file.workflow is not None else workflow_id,
                "state": status.state if status is not None else "invalid",
                "cite": cite("workflow", workflow_id),
            }
            if status is not None and status.reason:
                row["needs_attention"] = status.reason
            if file.workflow is None and file.errors:
                row["problem"] = file.errors[0].message
            if status is not None:
                latest = await host.engine.runs(workflow_id, 1)
                if latest:
                    run = latest[0]
                    row["latest_run"] = {
                        "run_id": run["id"],
                        "status": run.get("status"),
                        "outcome": run.get("outcome"),
                        "started_at": _time(run.get("started_at")),
                        "cite": cite("run", run["id"]),
                    }
            rows.append(row)
        return {"workflows": rows, "found": len(rows)}


class RunTraceTool(SiteTool):
    """One run: its trigger, each step with what it decided, each model and tool call."""

    short_name = "run_trace"
    description = (
        "Show one workflow run step by step (trigger, each step and what it decided and "
        "why, each model and tool call): by its run id, or a workflow's latest run."
    )

    @override
    def fields(self, cameras: list[str] | None) -> dict[Any, Any]:
        return {
            vol.Optional("run_id", description="The run's id"): str,
            vol.Optional("workflow", description="The workflow, for its latest run"): str,
        }

    @override
    async def answer(self, call: ToolCall) -> JsonObjectType:
        host = call.host
        run_id = call.args.get("run_id")
        if not run_id:
            name = call.args.get("workflow")
            if not name:
                raise ToolError("give a run_id or a workflow")
            workflow_id = name if name in host.files else workflow_id_for(name)
            if workflow_id not in host.files:
                raise ToolError(f"no workflow {name!r}; workflows: {', '.join(sorted(host.files))}")
            latest = await host.engine.runs(workflow_id, 1)
            if not latest:
                return {"workflow_id": workflow_id, "runs": [], "found": 0}
            run_id = str(latest[0]["id"])
        try:
            detail = await host.engine.run_detail(run_id)
        except UnknownRunError:
            raise ToolError(f"no run {run_id!r}") from None
        view = run_view(detail)
        if not call.asker.may_see(_trigger_camera(view["trigger"])):
            # A run about a camera the asker may not see reads as a run that does not exist.
            raise ToolError(f"no run {run_id!r}")
        view["started_at"] = _time(view.get("started_at"))
        view["ended_at"] = _time(view.get("ended_at"))
        view["cite"] = cite("run", view["run_id"])
        trigger = view["trigger"]
        if trigger.get("alert_id"):
            trigger["cite"] = cite("alert", trigger["alert_id"])
        return {"run": view, "found": 1}


class PendingApprovalsTool(SiteTool):
    """The questions waiting for the person asking."""

    short_name = "pending_approvals"
    description = (
        "List the approvals (workflow questions) waiting for the person asking, newest "
        "first: what each asks, its possible replies, and when it times out."
    )

    @override
    async def answer(self, call: ToolCall) -> JsonObjectType:
        asker = call.asker
        rows = await call.host.desk.pending_for(asker.user_id, asker.is_admin)
        out: list[Any] = []
        for row in rows:
            try:
                camera = camera_id_text(row.get("camera_id"))
            except MalformedPayload:
                camera = None
            if not asker.may_see(camera):
                continue
            out.append(
                {
                    "approval_id": row["approval_id"],
                    "workflow": row.get("workflow_name"),
                    "question": row.get("message"),
                    "replies": list(row.get("replies") or ()),
                    "may_answer": bool(row.get("may_answer")),
                    "asked": list(row.get("asked") or ()),
                    "expires_at": _time(row.get("expires_at")),
                    "run_id": row.get("run_id"),
                    "cite": cite("run", row.get("run_id")),
                }
            )
            if len(out) >= MAX_ROWS:
                break
        return {"approvals": out, "found": len(out)}


def _trigger_camera(trigger: Any) -> str | None:
    if not isinstance(trigger, dict):
        return None
    try:
        return camera_id_text(trigger.get("camera_id"))
    except MalformedPayload:
        return None


def _time(value: Any) -> Any:
    """A stored timestamp (seconds) as ISO text; text and None as they are."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return datetime.fromtimestamp(float(value), UTC).isoformat()
    if isinstance(value, str):
        try:
            return datetime.fromtimestamp(float(value), UTC).isoformat()
        except ValueError:
            return value
    return value
