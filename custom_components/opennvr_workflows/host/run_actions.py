"""The actions that start, switch and judge runs: run_workflow, set_workflow_state,
mark_run, reload. Responses:

* ``run_workflow`` -> ``{run_ids, joined, reason}``: the run started (or joined, when a
  run for the same camera was going); with no run, ``reason`` says why (``off``,
  ``needs_attention``, ``cooldown``, ``per_hour``, ``chain_depth``, ``no_match``);
* ``set_workflow_state`` -> ``{workflow_id, state}``;
* ``mark_run`` -> ``{run_id, workflow_id, right, accuracy}``, ``accuracy`` per AI step
  key: ``{right, total, ratio, lower_bound, trusted}``;
* ``get_runs`` -> ``{workflow_id, runs: [run]}``, newest first, each run with its trigger,
  every step (what it decided, or the request it sent or in Test would have sent) and every
  model and tool call (see :func:`.run_view.run_view`); with ``run_id``, that run only;
* ``reload`` -> ``{loaded, invalid}`` (the host's summary).
"""

from __future__ import annotations

from typing import Any

from homeassistant.core import HomeAssistant, ServiceCall, ServiceResponse

from ..engine import Accuracy, UnknownRunError
from .action_support import (
    host_of,
    invalid,
    loaded_workflow,
    log_change,
    user_name,
    workflow_file,
)
from .permissions import is_admin, may_set_state
from .run_view import run_view


async def async_run_workflow(hass: HomeAssistant, call: ServiceCall) -> ServiceResponse:
    """Start a workflow now, as its trigger would have (its state and limits apply)."""
    host = host_of(hass, call)
    loaded = loaded_workflow(host, call.data["workflow"])
    started = host.engine.start_now(
        loaded.workflow_id,
        call.data.get("variables") or {},
        message=call.data.get("message"),
        user=await user_name(hass, call.context),
        chain=host.effects.contexts.chain_of(call.context),
    )
    return {"run_ids": list(started.run_ids), "joined": started.joined, "reason": started.reason}


async def async_set_state(hass: HomeAssistant, call: ServiceCall) -> ServiceResponse:
    """Off, Test or On; turning On a workflow that moves things needs an admin."""
    host = host_of(hass, call)
    loaded = loaded_workflow(host, call.data["workflow"])
    workflow, state = loaded.workflow, call.data["state"]
    assert workflow is not None  # loaded_workflow refuses a file without one
    if not await may_set_state(hass, call.context, workflow, state):
        raise invalid("state_needs_admin", workflow=workflow.name, state=state)
    before = host.engine.workflow_status(loaded.workflow_id).state
    status = host.engine.set_workflow_state(loaded.workflow_id, state)
    if before != status.state:
        log_change(call, hass, workflow.name, f"was switched from {before} to {status.state}")
    return {"workflow_id": status.workflow_id, "state": status.state}


async def async_mark_run(hass: HomeAssistant, call: ServiceCall) -> ServiceResponse:
    """A person says a run decided right or wrong (admins and approvers only)."""
    host = host_of(hass, call)
    context = call.context
    if not (await is_admin(hass, context) or context.user_id in host.settings.approver_users):
        raise invalid("mark_not_allowed")
    run_id, right = call.data["run_id"], bool(call.data["right"])
    try:
        run = await host.engine.run_detail(run_id)
        accuracy = await host.engine.mark_run(run_id, right, await user_name(hass, context))
    except UnknownRunError as err:
        raise invalid("unknown_run", run_id=run_id) from err
    workflow_id = str(run["workflow_id"])
    loaded = host.files.get(workflow_id)
    name = loaded.workflow.name if loaded and loaded.workflow else workflow_id
    log_change(call, hass, name, f"run {run_id} was marked {'right' if right else 'wrong'}")
    return {
        "run_id": run_id,
        "workflow_id": workflow_id,
        "right": right,
        "accuracy": {key: accuracy_data(acc) for key, acc in accuracy.items()},
    }


async def async_get_runs(hass: HomeAssistant, call: ServiceCall) -> ServiceResponse:
    """A workflow's latest runs with every step, or one run by its id."""
    host = host_of(hass, call)
    workflow_id = workflow_file(host, call.data["workflow"]).workflow_id
    if run_id := call.data.get("run_id"):
        try:
            detail = await host.engine.run_detail(run_id)
        except UnknownRunError as err:
            raise invalid("unknown_run", run_id=run_id) from err
        if detail["workflow_id"] != workflow_id:
            raise invalid("unknown_run", run_id=run_id)
        return {"workflow_id": workflow_id, "runs": [run_view(detail)]}
    rows = await host.engine.runs(workflow_id, call.data["limit"])
    runs: list[Any] = [run_view(await host.engine.run_detail(row["id"])) for row in rows]
    return {"workflow_id": workflow_id, "runs": runs}


async def async_reload(hass: HomeAssistant, call: ServiceCall) -> ServiceResponse:
    """Read the workflow folder again."""
    return await host_of(hass, call).async_reload()


def accuracy_data(accuracy: Accuracy) -> dict[str, Any]:
    """One AI step's marked record, with the Wilson lower bound the trust rule reads."""
    return {
        "right": accuracy.right,
        "total": accuracy.total,
        "ratio": accuracy.ratio,
        "lower_bound": round(accuracy.interval[0], 4),
        "trusted": accuracy.trusted,
    }
