"""Which evidence pictures a person may see: one decision for the Media panel's listing,
its opened pictures and their thumbnails.

A picture shows what one camera saw, for one run of one workflow (or of the AI Task). It is
shown to someone who may read that camera's entity and, for a workflow's run, who may see
the workflow (every camera it names, as the panel decides, :mod:`..read_scope`); the AI
Task's Looks have no workflow, so their camera alone decides. A workflow whose file is gone
names cameras nobody can tell any more: its pictures are an administrator's.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from ..permissions import Caller
from ..read_scope import camera_touched, may_see, may_see_workflow
from .evidence_store import Kept
from .task_look import AI_TASK_RUNS

if TYPE_CHECKING:
    from ..workflows import WorkflowHost


def visible_evidence(caller: Caller, host: WorkflowHost) -> Iterator[Kept]:
    """The host's pictures (oldest first) ``caller`` may see."""
    workflows: dict[str, bool] = {}
    for row in host.evidence_store.listed():
        if not may_see(caller, host, camera_touched(host, row.camera)):
            continue
        allowed = workflows.get(row.workflow_id)
        if allowed is None:
            allowed = workflows[row.workflow_id] = _may_see_workflow(caller, host, row.workflow_id)
        if allowed:
            yield row


def visible_picture(caller: Caller, host: WorkflowHost, run_id: str) -> Kept | None:
    """The picture of ``run_id`` when ``caller`` may see it; None when it is hidden or
    there is none (the two answer alike)."""
    return next((row for row in visible_evidence(caller, host) if row.run_id == run_id), None)


def _may_see_workflow(caller: Caller, host: WorkflowHost, workflow_id: str) -> bool:
    if workflow_id == AI_TASK_RUNS or caller.is_admin:
        return True
    loaded = host.files.get(workflow_id)
    return loaded is not None and may_see_workflow(caller, host, loaded.workflow)
