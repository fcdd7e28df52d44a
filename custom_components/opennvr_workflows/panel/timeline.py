"""A workflow's runs as the panel's timeline shows them: newest first, each with the
decision that chose its path (the first AI step's, else the first question's reply, else
the run's own outcome), filtered by that decision and by Test or On, a page at a time.

The engine's run rows carry the last step's outcome; the decision is in the steps, so a
page reads the detail of the runs it shows, and of the runs it skips only when it filters
by decision. The tries on recent events are not runs of the workflow and never show, nor
does a run that touched a camera the reader may not see (:mod:`..host.read_scope`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..host.permissions import Caller
from ..host.read_scope import may_see_run, visible_run
from ..host.workflows import WorkflowHost
from ..workflow import Workflow, walk_steps
from ..workflow.model import AIStep, AskPersonStep

#: Runs a timeline reads at most (the newest); older ones are out of the panel's reach.
MAX_SCAN: Final = 1000
#: The step kinds whose outcome chooses a run's path.
_DECIDING: Final = ("ai", "ask_person")


def decision_of(detail: Mapping[str, Any]) -> str | None:
    """What chose the run's path (see the module docstring)."""
    for step in detail.get("steps") or ():
        if step.get("kind") in _DECIDING and step.get("outcome"):
            return str(step["outcome"])
    outcome = detail.get("outcome")
    return str(outcome) if outcome else None


def is_trial(row: Mapping[str, Any]) -> bool:
    """Whether a run row is a try on a recent event (:mod:`..host.runs.trial`)."""
    return str(row.get("limit_key") or "").startswith("trial:")


def decisions(workflow: Workflow | None) -> list[str]:
    """The decisions the workflow's first deciding step can take (the filter's choices)."""
    if workflow is None:
        return []
    for _, step in walk_steps(workflow):
        if isinstance(step, AIStep):
            return [*step.decision, "unsure"]
        if isinstance(step, AskPersonStep):
            return [*step.replies, *(() if step.default else ("no_answer",))]
    return []


async def timeline_page(
    host: WorkflowHost,
    caller: Caller,
    workflow_id: str,
    *,
    offset: int,
    limit: int,
    decision: str | None,
    mode: str,
) -> dict[str, Any]:
    """One page: ``{workflow_id, runs, more, decisions, held_back}``."""
    rows = [
        r
        for r in await host.engine.runs(workflow_id, MAX_SCAN)
        if not is_trial(r) and (mode == "all" or bool(r.get("test")) == (mode == "test"))
    ]
    page: list[dict[str, Any]] = []
    skipped = 0
    more = False
    for row in rows:
        detail = await host.engine.run_detail(str(row["id"]))
        if not may_see_run(caller, host, detail):
            continue
        chosen = decision_of(detail)
        if decision is not None and chosen != decision:
            continue
        if skipped < offset:
            skipped += 1
            continue
        if len(page) == limit:
            more = True
            break
        page.append(_row(detail, chosen))
    loaded = host.files.get(workflow_id)
    return {
        "workflow_id": workflow_id,
        "runs": page,
        "more": more,
        "decisions": decisions(loaded.workflow if loaded else None),
        "held_back": await held_back(host, caller, workflow_id),
    }


async def held_back(host: WorkflowHost, caller: Caller, workflow_id: str) -> dict[str, Any] | None:
    """The limit holding the workflow's events back now (``{limit, at, until, run_id,
    test}``, times as timestamps), so the panel says why nothing runs and until when;
    None when none holds. The run it joined is named only to a caller who may see it."""
    held = host.engine.held_back(workflow_id)
    if held is None:
        return None
    shown = held.as_dict()
    if held.run_id is not None and await visible_run(caller, host, held.run_id) is None:
        shown["run_id"] = None
    return shown


def _row(detail: Mapping[str, Any], decision: str | None) -> dict[str, Any]:
    return {
        "run_id": detail.get("id"),
        "status": detail.get("status"),
        "outcome": detail.get("outcome"),
        "decision": decision,
        "test": bool(detail.get("test")),
        "version": detail.get("version"),
        "seen_again": detail.get("seen_again") or 0,
        "started_at": detail.get("started_at"),
        "ended_at": detail.get("ended_at"),
        "error": detail.get("error"),
        "steps": len(detail.get("steps") or ()),
    }
