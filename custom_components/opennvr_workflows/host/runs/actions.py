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
  model and tool call (see :func:`.view.run_view`); with ``run_id``, that run only;
* ``reload`` -> ``{loaded, invalid}`` (the host's summary).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from homeassistant.core import HomeAssistant, ServiceCall, ServiceResponse

from ...engine import Accuracy, UnknownRunError
from ...engine.starting import EVENT_FIELDS
from ..action_support import (
    check_entry_turn_on,
    entry_of,
    host_of,
    loaded_workflow,
    log_change,
    user_name,
)
from ..cases.marks import async_keep_mark, async_prepare_mark
from ..errors import invalid, listed
from ..permissions import Caller, async_caller
from ..read_scope import action_caller, visible_run, visible_workflow
from .ai_mark import start_mark
from .view import run_view

if TYPE_CHECKING:
    from ..workflows import WorkflowHost

#: Runs read at most for someone who may not see every camera (the latest ones they may
#: see are among these).
SCAN_RUNS: Final = 200


async def async_run_workflow(hass: HomeAssistant, call: ServiceCall) -> ServiceResponse:
    """Start a workflow now, as its trigger would have (its state and limits apply).

    The run's ``{user}`` is the caller, never a variable. A person who is not an admin
    may not fill the event's own fields (only ``camera``, a role they may see), and the
    values they pass are marked as theirs (``supplied_by``): the run then moves nothing
    without a person's reply, whatever its conditions read. A call that descends from AI
    output (its context's lineage, or the ``from_context`` it names) starts an AI-derived
    run (:func:`.ai_mark.start_mark`)."""
    host = host_of(hass, call)
    loaded = loaded_workflow(host, call.data["workflow"])
    variables = dict(call.data.get("variables") or {})
    if "user" in variables:
        raise invalid("variable_is_the_caller", variable="user")
    caller = await async_caller(hass, call.context)
    person = caller is not None and not caller.is_admin
    if person and variables:
        assert caller is not None
        _check_own_variables(host, caller, variables)
    also = (call.data["from_context"],) if call.data.get("from_context") else ()
    mark = start_mark(host, loaded.workflow_id, call.context, also)
    started = host.engine.start_now(
        loaded.workflow_id,
        variables,
        message=call.data.get("message"),
        user=await user_name(hass, call.context),
        chain=mark.chain,
        ai_derived=mark.ai_derived,
        ai_origin=mark.ai_origin,
        supplied_by=caller.user_id if person and variables and caller else None,
    )
    return {"run_ids": list(started.run_ids), "joined": started.joined, "reason": started.reason}


def _check_own_variables(host: WorkflowHost, caller: Caller, variables: dict[str, Any]) -> None:
    """A person's variables never fill the event's fields; ``camera`` names a role whose
    camera they may see (a hidden one answers like an unknown one)."""
    fields = sorted(set(variables) & (EVENT_FIELDS - {"camera"}))
    if fields:
        raise invalid("variables_are_event_fields", variables=", ".join(fields))
    role = variables.get("camera")
    if role is None:
        return
    visible = {
        name
        for name, camera_id in host.settings.roles.items()
        if caller.may_see(host.camera_entity(str(camera_id)))
    }
    if str(role) not in visible:
        raise invalid("unknown_camera", camera=str(role), roles=listed(visible))


async def async_set_state(hass: HomeAssistant, call: ServiceCall) -> ServiceResponse:
    """Off, Test or On (an admin's: the door decides, :mod:`..permissions`)."""
    host = host_of(hass, call)
    loaded = loaded_workflow(host, call.data["workflow"])
    workflow, state = loaded.workflow, call.data["state"]
    assert workflow is not None  # loaded_workflow refuses a file without one
    check_entry_turn_on(entry_of(hass, call), loaded.workflow_id, workflow, state)
    before = host.engine.workflow_status(loaded.workflow_id).state
    status = host.engine.set_workflow_state(loaded.workflow_id, state)
    if before != status.state:
        log_change(call, hass, workflow.name, f"was switched from {before} to {status.state}")
    return {"workflow_id": status.workflow_id, "state": status.state}


async def async_mark_run(hass: HomeAssistant, call: ServiceCall) -> ServiceResponse:
    """A person says a run decided right or wrong (admins and approvers: the door
    decides, :mod:`..permissions`)."""
    host = host_of(hass, call)
    context = call.context
    run_id, right = call.data["run_id"], bool(call.data["right"])
    try:
        run = await host.engine.run_detail(run_id)
        case = await async_prepare_mark(hass, call, host, run)  # refuses a wrong correction
        accuracy = await host.engine.mark_run(run_id, right, await user_name(hass, context))
    except UnknownRunError as err:
        raise invalid("unknown_run", run_id=run_id) from err
    workflow_id = str(run["workflow_id"])
    loaded = host.files.get(workflow_id)
    name = loaded.workflow.name if loaded and loaded.workflow else workflow_id
    log_change(call, hass, name, f"run {run_id} was marked {'right' if right else 'wrong'}")
    response: dict[str, Any] = {
        "run_id": run_id,
        "workflow_id": workflow_id,
        "right": right,
        "accuracy": {key: accuracy_data(acc) for key, acc in accuracy.items()},
    }
    if case is not None:  # the home's own case (host/cases/marks.py)
        response["case"] = await async_keep_mark(hass, call, case)
    return response


async def async_get_runs(hass: HomeAssistant, call: ServiceCall) -> ServiceResponse:
    """A workflow's latest runs with every step, or one run by its id: those the caller
    may see (:mod:`..read_scope`; a hidden run or workflow answers like an unknown one)."""
    host = host_of(hass, call)
    caller = await action_caller(hass, call)
    workflow_id = visible_workflow(caller, host, call.data["workflow"]).workflow_id
    if run_id := call.data.get("run_id"):
        detail = await visible_run(caller, host, run_id)
        if detail is None or detail["workflow_id"] != workflow_id:
            raise invalid("unknown_run", run_id=run_id)
        return {"workflow_id": workflow_id, "runs": [run_view(detail)]}
    limit = int(call.data["limit"])
    rows = await host.engine.runs(workflow_id, limit if caller.is_admin else SCAN_RUNS)
    runs: list[Any] = []
    for row in rows:
        if (shown := await visible_run(caller, host, str(row["id"]))) is not None:
            runs.append(run_view(shown))
        if len(runs) == limit:
            break
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
