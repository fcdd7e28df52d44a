"""The integration's actions: their names, data schemas and response modes, registered
once for the domain (``async_setup``), each acting on the entry named by
``config_entry_id`` or the only loaded one.

The handlers live by topic: :mod:`.model.actions` (look, investigate), :mod:`.runs.actions`
(run_workflow, set_workflow_state, mark_run, get_runs, reload), :mod:`.folder.actions` (validate,
import, export, rollback), :mod:`.runs.trial` (try_workflow), :mod:`.history.action`
(search_history), :mod:`.folder.describe` (describe_workflow) and :mod:`.cases.actions`
(list_cases, delete_case, export_cases, measure_model); each module documents its
responses. The fields, selectors and descriptions are in ``services.yaml`` and
``strings.json``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any, Final

import probatio as vol
from homeassistant.const import ATTR_CONFIG_ENTRY_ID
from homeassistant.core import HomeAssistant, ServiceCall, ServiceResponse, SupportsResponse
from homeassistant.helpers import config_validation as cv

from ..const import DOMAIN
from .action_support import host_of, workflow_file
from .approvals import api as approval_api
from .approvals.views import async_register_views
from .cases.actions import CASE_SERVICES
from .cases.marks import MARK_FIELDS
from .cases.pictures import async_register_case_picture_view
from .folder import actions as file_actions
from .folder import describe
from .history import action as history_action
from .model import actions as ai_actions
from .permissions import DOORS, Rule, async_allow
from .runs import actions as run_actions
from .runs import trial

Handler = Callable[[HomeAssistant, ServiceCall], Awaitable[ServiceResponse]]

#: The most options and fields a decision may have (the contract caps them too).
_OPTIONS: Final = vol.All(cv.ensure_list, [cv.string], vol.Length(min=1, max=12))
_FIELDS: Final = vol.Schema({cv.string: vol.All(cv.ensure_list, [cv.string])})
_BASE: Final[dict[Any, Any]] = {vol.Optional(ATTR_CONFIG_ENTRY_ID): cv.string}
_WORKFLOW: Final[dict[Any, Any]] = {**_BASE, vol.Required("workflow"): cv.string}


def _schema(fields: dict[Any, Any]) -> vol.Schema:
    return vol.Schema({**_BASE, **fields})


SERVICES: Final[dict[str, tuple[Handler, vol.Schema, SupportsResponse]]] = {
    "look": (
        ai_actions.async_look,
        _schema(
            {
                vol.Required("camera"): cv.string,
                vol.Required("prompt"): cv.string,
                vol.Required("decision"): _OPTIONS,
                vol.Optional("fields"): _FIELDS,
                vol.Optional("frames", default=1): vol.All(vol.Coerce(int), vol.Range(1, 8)),
                vol.Optional("model"): cv.string,
            }
        ),
        SupportsResponse.ONLY,
    ),
    "investigate": (
        ai_actions.async_investigate,
        _schema(
            {
                vol.Required("goal"): cv.string,
                vol.Required("tools"): vol.All(cv.ensure_list, [cv.string], vol.Length(min=1)),
                vol.Required("decision"): _OPTIONS,
                vol.Optional("fields"): _FIELDS,
                vol.Optional("camera"): cv.string,
                vol.Optional("instructions"): cv.string,
                vol.Optional("model"): cv.string,
            }
        ),
        SupportsResponse.ONLY,
    ),
    "run_workflow": (
        run_actions.async_run_workflow,
        vol.Schema(
            {
                **_WORKFLOW,
                vol.Optional("variables"): vol.Schema({cv.string: object}),
                vol.Optional("message"): cv.string,
                vol.Optional("from_context"): vol.Any(None, cv.string),
            }
        ),
        SupportsResponse.OPTIONAL,
    ),
    "validate_workflow": (
        file_actions.async_validate,
        _schema({vol.Optional("yaml"): cv.string, vol.Optional("file"): cv.string}),
        SupportsResponse.ONLY,
    ),
    "import_workflow": (
        file_actions.async_import,
        _schema(
            {
                vol.Optional("yaml"): cv.string,
                vol.Optional("template"): cv.string,
                vol.Optional("file_name"): cv.string,
                vol.Optional("overwrite", default=False): cv.boolean,
                vol.Optional("dry_run", default=False): cv.boolean,
            }
        ),
        SupportsResponse.OPTIONAL,
    ),
    "export_workflow": (file_actions.async_export, vol.Schema(_WORKFLOW), SupportsResponse.ONLY),
    "set_workflow_state": (
        run_actions.async_set_state,
        vol.Schema({**_WORKFLOW, vol.Required("state"): vol.In(("off", "test", "on"))}),
        SupportsResponse.OPTIONAL,
    ),
    "rollback_workflow": (
        file_actions.async_rollback,
        vol.Schema({**_WORKFLOW, vol.Required("version"): cv.string}),
        SupportsResponse.OPTIONAL,
    ),
    "mark_run": (
        run_actions.async_mark_run,
        _schema(
            {vol.Required("run_id"): cv.string, vol.Required("right"): cv.boolean, **MARK_FIELDS}
        ),
        SupportsResponse.OPTIONAL,
    ),
    "try_workflow": (
        trial.async_try_workflow,
        vol.Schema(
            {
                **_WORKFLOW,
                vol.Optional("count", default=trial.DEFAULT_EVENTS): vol.All(
                    vol.Coerce(int), vol.Range(1, trial.MAX_EVENTS)
                ),
            }
        ),
        SupportsResponse.ONLY,
    ),
    "get_runs": (
        run_actions.async_get_runs,
        vol.Schema(
            {
                **_WORKFLOW,
                vol.Optional("run_id"): cv.string,
                vol.Optional("limit", default=5): vol.All(vol.Coerce(int), vol.Range(1, 50)),
            }
        ),
        SupportsResponse.ONLY,
    ),
    "answer_approval": (
        approval_api.async_answer_approval,
        _schema({vol.Required("approval_id"): cv.string, vol.Required("reply"): cv.string}),
        SupportsResponse.OPTIONAL,
    ),
    "reload": (run_actions.async_reload, _schema({}), SupportsResponse.OPTIONAL),
    "describe_workflow": (
        describe.async_describe_action,
        _schema(
            {
                vol.Required("sentence"): vol.All(cv.string, vol.Length(min=3, max=1000)),
                vol.Optional("save", default=False): cv.boolean,
                vol.Optional("file_name"): cv.string,
                vol.Optional("overwrite", default=False): cv.boolean,
            }
        ),
        SupportsResponse.OPTIONAL,  # ``save`` writes a file: not a response-only action
    ),
    "search_history": (
        history_action.async_search_history,
        _schema(
            {
                vol.Required("query"): vol.All(cv.string, vol.Length(min=1, max=500)),
                vol.Optional("camera"): cv.string,
                vol.Optional("hours"): vol.All(vol.Coerce(float), vol.Range(0.1, 24 * 366)),
                vol.Optional("limit", default=10): vol.All(vol.Coerce(int), vol.Range(1, 50)),
            }
        ),
        SupportsResponse.ONLY,
    ),
}


def async_setup_services(hass: HomeAssistant) -> None:
    """Register every action of the domain and its websocket commands (once, from
    ``async_setup``)."""
    approval_api.async_register_websocket(hass)
    async_register_views(hass)
    async_register_case_picture_view(hass)
    for name, (handler, schema, response) in {**SERVICES, **CASE_SERVICES}.items():
        hass.services.async_register(
            DOMAIN,
            name,
            partial(_call, name, handler, hass),
            schema=schema,
            supports_response=response,
        )


async def _call(
    name: str, handler: Handler, hass: HomeAssistant, call: ServiceCall
) -> ServiceResponse:
    """Let the caller through the action's door (:mod:`.permissions`), then run
    ``handler``; an action called without wanting its response returns none."""
    await _allow(hass, name, call)
    response = await handler(hass, call)
    return response if call.return_response else None


async def _allow(hass: HomeAssistant, name: str, call: ServiceCall) -> None:
    """The action's door: what it acts on (a workflow's State select for an
    :attr:`~.permissions.Rule.OPERATE` door, the approvers for a marking door) comes
    from the call's own entry."""
    door = f"action:{name}"
    rule = DOORS.get(door)
    entity_id: str | None = None
    approvers: frozenset[str] = frozenset()
    if rule is Rule.OPERATE or rule is Rule.MARK:
        host = host_of(hass, call)
        approvers = host.settings.approvers
        if rule is Rule.OPERATE:
            entity_id = host.workflow_entity(workflow_file(host, call.data["workflow"]).workflow_id)
    await async_allow(hass, door, call.context, entity_id=entity_id, approvers=approvers)
