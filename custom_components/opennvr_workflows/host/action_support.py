"""What every workflow action shares: which entry it is for, which workflow it names, who
called it, and the logbook line a change leaves. Its errors are :mod:`.errors`'.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import ATTR_CONFIG_ENTRY_ID
from homeassistant.core import Context, HomeAssistant, ServiceCall
from homeassistant.helpers import service

from ..const import DOMAIN
from ..workflow import Problem
from .approvals.people import user_name as name_of
from .errors import invalid, listed, problem_text
from .folder.files import workflow_id_for

if TYPE_CHECKING:
    from ..coordinator import OpenNVRConfigEntry
    from ..workflow import Workflow
    from .cases.evaluation import HomeEvaluation
    from .workflows import WorkflowFile, WorkflowHost

# ── the entry and the workflow ──────────────────────────────────────────────────────────


def entry_of(hass: HomeAssistant, call: ServiceCall) -> OpenNVRConfigEntry:
    """The entry named by ``config_entry_id``, else the only loaded one."""
    entry_id = call.data.get(ATTR_CONFIG_ENTRY_ID)
    if entry_id:
        entry: OpenNVRConfigEntry = service.async_get_config_entry(hass, DOMAIN, entry_id)
        return entry
    loaded = [
        e for e in hass.config_entries.async_entries(DOMAIN) if e.state is ConfigEntryState.LOADED
    ]
    if not loaded:
        raise invalid("no_loaded_entry")
    if len(loaded) > 1:
        raise invalid("several_entries", entries=listed(e.title for e in loaded))
    return loaded[0]


def host_of(hass: HomeAssistant, call: ServiceCall) -> WorkflowHost:
    """The workflow host of the call's entry."""
    entry = entry_of(hass, call)
    host = entry.runtime_data.workflows
    if host is None:
        raise invalid("no_loaded_entry")
    return host


def evaluation_of(hass: HomeAssistant, call: ServiceCall) -> HomeEvaluation:
    """The home's own evaluation of the call's entry."""
    evaluation = entry_of(hass, call).runtime_data.evaluation
    if evaluation is None:
        raise invalid("no_loaded_entry")
    return evaluation


def check_entry_turn_on(
    entry: OpenNVRConfigEntry, workflow_id: str, workflow: Workflow | None, state: str
) -> None:
    """Refuse turning a workflow with an Investigate step On without its own measured
    bound, when the entry's options require one (every door that switches a workflow
    asks this: the action, the panel, voice, the State select)."""
    evaluation, host = entry.runtime_data.evaluation, entry.runtime_data.workflows
    if evaluation is not None:
        model = host.settings.vision_model if host is not None else ""
        evaluation.check_turn_on(model, workflow_id, workflow, state)


def workflow_file(host: WorkflowHost, name: str) -> WorkflowFile:
    """The file of the workflow ``name`` (its id, or its file name)."""
    loaded = host.files.get(name) or host.files.get(workflow_id_for(name))
    if loaded is None:
        raise invalid("unknown_workflow", workflow=name, workflows=listed(host.files))
    return loaded


def loaded_workflow(host: WorkflowHost, name: str) -> WorkflowFile:
    """The file of a workflow the engine runs (a valid one)."""
    loaded = workflow_file(host, name)
    if loaded.workflow is None:
        first = loaded.errors[0] if loaded.errors else Problem("WF-UNKNOWN", "invalid")
        raise invalid(
            "workflow_not_loaded", workflow=loaded.workflow_id, problem=problem_text(first)
        )
    return loaded


# ── who called ──────────────────────────────────────────────────────────────────────────


async def user_name(hass: HomeAssistant, context: Context | None) -> str | None:
    """The calling user's name (their id when nameless); None when Home Assistant called."""
    if context is None or context.user_id is None:
        return None
    return await name_of(hass, context.user_id)


def log_change(call: ServiceCall, hass: HomeAssistant, name: str, message: str) -> None:
    """A logbook line for a change a person made, attributed to them by the call's
    context (the logbook shows the user and the action)."""
    hass.bus.async_fire(
        "logbook_entry",
        {"name": name, "message": message, "domain": DOMAIN},
        context=call.context,
    )
