"""What every workflow action shares: which entry it is for, which workflow it names, who
called it, its translated errors, and the logbook line a change leaves.

Every refusal is a :class:`ServiceValidationError` (the caller's data is wrong) or a
:class:`HomeAssistantError` (something outside failed) with a translation key of this
integration, so the frontend shows a specific sentence, never a stack trace.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import ATTR_CONFIG_ENTRY_ID
from homeassistant.core import Context, HomeAssistant, ServiceCall
from homeassistant.exceptions import HomeAssistantError, ServiceValidationError
from homeassistant.helpers import service

from ..const import DOMAIN
from ..workflow import Problem
from .approval_people import user_name as name_of
from .files import workflow_id_for

if TYPE_CHECKING:
    from ..runtime import OpenNVRConfigEntry
    from .workflows import WorkflowFile, WorkflowHost

#: How many names an error lists before "...".
_LISTED: Final = 10


def invalid(key: str, **placeholders: Any) -> ServiceValidationError:
    """The caller's data is wrong: a translated, specific error."""
    return ServiceValidationError(
        translation_domain=DOMAIN,
        translation_key=key,
        translation_placeholders={k: str(v) for k, v in placeholders.items()},
    )


def failed(key: str, **placeholders: Any) -> HomeAssistantError:
    """Something outside the caller's data failed (OpenNVR, the disk)."""
    return HomeAssistantError(
        translation_domain=DOMAIN,
        translation_key=key,
        translation_placeholders={k: str(v) for k, v in placeholders.items()},
    )


def listed(names: Any) -> str:
    """Names for an error message: ``a, b, c`` (at most ten), or ``none``."""
    items = sorted(str(n) for n in names)
    if not items:
        return "none"
    more = ", ..." if len(items) > _LISTED else ""
    return ", ".join(items[:_LISTED]) + more


def problem_text(problem: Problem) -> str:
    """One problem as the error shows it: where, then what (``line 4: WF-...: ...``)."""
    where = f"line {problem.line}: " if problem.line else ""
    return f"{where}{problem.code}: {problem.message}"


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
