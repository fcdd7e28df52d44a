"""The assistant's tools about the workflows: their states, a run's trace, and the
approvals waiting for the person asking. Each fact carries its ``cite`` marker.

The person asking hears of the workflows that name only cameras they may see, and of the
runs that touched only such cameras (:mod:`..host.read_scope`); anything else reads as if
it did not exist."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Final, override

import probatio as vol
from homeassistant.util.json import JsonObjectType

from ..host.folder.files import workflow_id_for
from ..host.permissions import Caller
from ..host.read_scope import may_see_run, visible_run, visible_workflows
from ..host.runs.view import run_view
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
        caller = _caller(call)
        statuses = {s.workflow_id: s for s in host.engine.workflows()}
        rows: list[Any] = []
        for workflow_id, file in sorted(visible_workflows(caller, host).items()):
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
                run = await _latest_run(caller, call, workflow_id)
                if run is not None:
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
        caller = _caller(call)
        run_id = call.args.get("run_id")
        detail: dict[str, Any] | None
        if not run_id:
            name = call.args.get("workflow")
            if not name:
                raise ToolError("give a run_id or a workflow")
            workflows = visible_workflows(caller, host)
            workflow_id = name if name in workflows else workflow_id_for(name)
            if workflow_id not in workflows:
                raise ToolError(f"no workflow {name!r}; workflows: {', '.join(sorted(workflows))}")
            detail = await _latest_run(caller, call, workflow_id)
            if detail is None:
                return {"workflow_id": workflow_id, "runs": [], "found": 0}
        else:
            # A run that touched a camera the asker may not see (its trigger's, a Look's,
            # a tool's) reads as a run that does not exist.
            detail = await visible_run(caller, host, str(run_id))
            if detail is None:
                raise ToolError(f"no run {run_id!r}")
        view = run_view(detail)
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


#: Runs a tool reads at most for the latest one the asker may see.
_SCAN: Final = 25


def _caller(call: ToolCall) -> Caller:
    """Who asks (a user who no longer exists or is deactivated is refused)."""
    caller = call.asker.caller
    if caller is None:
        raise ToolError("not allowed for this person")
    return caller


async def _latest_run(caller: Caller, call: ToolCall, workflow_id: str) -> dict[str, Any] | None:
    """The workflow's latest run ``caller`` may see (among the latest few), as stored."""
    host = call.host
    for row in await host.engine.runs(workflow_id, 1 if caller.is_admin else _SCAN):
        detail = await host.engine.run_detail(str(row["id"]))
        if may_see_run(caller, host, detail):
            return detail
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
