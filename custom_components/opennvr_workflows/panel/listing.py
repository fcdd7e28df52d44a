"""The workflow list as the panel shows it: one row per file of the folder, with the
engine's state (or, as to-dos, why it does not run), the last run and the marked accuracy.

A reader sees the workflows that name only cameras they may see, and as the last run the
latest one that touched only such cameras (:mod:`..host.read_scope`)."""

from __future__ import annotations

from typing import Any

from ..engine import Accuracy, WorkflowStatus
from ..host.permissions import Caller
from ..host.read_scope import may_see_run, visible_workflows
from ..host.runs.actions import accuracy_data
from ..host.workflows import WorkflowFile, WorkflowHost
from .timeline import decision_of, held_back, is_trial
from .todos import todos

#: The state shown for a file the validator refused (the engine does not hold it).
INVALID = "invalid"
#: Runs read for the last one (tries on recent events come between and are not shown).
_RECENT = 25


async def workflow_rows(host: WorkflowHost, caller: Caller) -> list[dict[str, Any]]:
    """Every file of the host's folder ``caller`` may see, sorted by name, as the list
    shows it."""
    statuses = {s.workflow_id: s for s in host.engine.workflows()}
    rows = []
    for workflow_id, loaded in visible_workflows(caller, host).items():
        status = statuses.get(workflow_id)
        recent = await host.engine.runs(workflow_id, _RECENT) if status is not None else []
        detail: dict[str, Any] | None = None
        for row in recent:
            if is_trial(row):
                continue
            shown = await host.engine.run_detail(str(row["id"]))
            if may_see_run(caller, host, shown):
                detail = shown
                break
        row = _row(host, loaded, status, detail)
        # Why nothing runs now, when a limit holds its events back (and until when).
        row["held_back"] = await held_back(host, caller, workflow_id)
        rows.append(row)
    rows.sort(key=lambda r: (str(r["name"]).casefold(), r["workflow_id"]))
    return rows


def _row(
    host: WorkflowHost,
    loaded: WorkflowFile,
    status: WorkflowStatus | None,
    last: dict[str, Any] | None,
) -> dict[str, Any]:
    """One file's row; ``last`` is the detail of its latest run."""
    workflow = loaded.workflow
    accuracy = host.engine.accuracy(loaded.workflow_id) if status is not None else {}
    return {
        "entry_id": host.entry_id,
        "workflow_id": loaded.workflow_id,
        "file": loaded.path.name,
        # A file the validator refused still has the name its author wrote (the file's
        # name only when it has none).
        "name": (status.name if status else None) or loaded.declared_name or loaded.path.name,
        "description": workflow.description if workflow else None,
        "state": status.state if status else INVALID,
        "reason": status.reason if status else None,
        "version": status.version if status else None,
        "problems": [p.as_dict() for p in loaded.errors],
        # What to do before it runs (:mod:`.todos`): empty for a workflow that runs.
        "todos": todos(
            loaded.errors, status.reason if status and status.state == "needs_attention" else None
        ),
        "needs_admin_to_turn_on": host.needs_admin_to_turn_on(workflow) if workflow else False,
        "last_run": _last_run(last),
        "accuracy": summary(accuracy),
    }


def _last_run(row: dict[str, Any] | None) -> dict[str, Any] | None:
    if row is None:
        return None
    return {
        "run_id": row.get("id"),
        "status": row.get("status"),
        "outcome": row.get("outcome"),
        "decision": decision_of(row),
        "test": bool(row.get("test")),
        "started_at": row.get("started_at"),
    }


def summary(accuracy: dict[str, Accuracy]) -> dict[str, Any] | None:
    """The accuracy the list shows: the AI step with the most marks (the one a person
    judges most), with every step's record beside it; None before any mark."""
    if not accuracy:
        return None
    key, most = max(accuracy.items(), key=lambda kv: (kv[1].total, kv[0]))
    return {
        "step": key,
        **accuracy_data(most),
        "steps": {k: accuracy_data(a) for k, a in sorted(accuracy.items())},
    }
