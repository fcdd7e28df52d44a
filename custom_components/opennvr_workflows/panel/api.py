"""The Workflows panel's websocket commands.

Who may use each command is its door's rule (:mod:`..host.permissions`; registered
through :mod:`..host.ws_doors`). Reading (any logged-in user, each seeing the cameras they
may see): ``workflows/list``, ``workflows/runs`` (paged, by outcome
and Test or On), ``workflows/run`` (every step, AI decision, tool call and picture),
``workflows/versions``, ``workflows/source`` (the file's text), ``workflows/validate``,
``workflows/templates`` and ``workflows/subscribe`` (:mod:`.live`).

Changing (admins): ``workflows/save`` (lands in Test), ``workflows/set_state``,
``workflows/rollback`` and ``workflows/try``; ``workflows/mark`` is for admins and the
site's approvers. Questions are listed and answered with the existing
``approvals/list`` and ``approvals/answer`` commands (:mod:`..host.approvals.api`).

The changing commands run the integration's own actions (:mod:`..host.folder.actions`,
:mod:`..host.runs.actions`, :mod:`..host.runs.trial`) as the calling user, so the panel gets
the same checks, logbook lines and translated errors as an automation or the developer
tools; an error reaches the panel with its translation key and placeholders.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Final

import probatio as vol
from homeassistant.components import websocket_api
from homeassistant.const import ATTR_CONFIG_ENTRY_ID
from homeassistant.core import Context, HomeAssistant, ServiceCall, ServiceResponse, callback

from ..const import DOMAIN
from ..engine import UnknownVersionError
from ..engine.versions import VersionDecodeError
from ..host.cases.marks import MARK_FIELDS
from ..host.errors import invalid
from ..host.folder import actions as file_actions
from ..host.permissions import Caller, permits
from ..host.read_scope import may_see_workflow, visible_run, visible_workflow
from ..host.runs import actions as run_actions
from ..host.runs import trial
from ..host.ws_doors import async_register_gated, door_of
from ..workflow import Workflow, dump_workflow
from .hosts import host_for, loaded_hosts
from .listing import workflow_rows
from .live import ws_subscribe
from .run_detail import run_page, started_by
from .templates import template_rows
from .timeline import MAX_SCAN, timeline_page

PAGE: Final = 25
_ENTRY: Final[dict[Any, Any]] = {vol.Optional(ATTR_CONFIG_ENTRY_ID): str}
_WORKFLOW: Final[dict[Any, Any]] = {**_ENTRY, vol.Required("workflow"): str}

Action = Callable[[HomeAssistant, ServiceCall], Awaitable[ServiceResponse]]


@callback
def async_register_websocket(hass: HomeAssistant) -> None:
    """Every command behind its door (:mod:`..host.ws_doors`)."""
    async_register_gated(
        hass,
        ws_list,
        ws_runs,
        ws_run,
        ws_versions,
        ws_source,
        ws_validate,
        ws_templates,
        ws_save,
        ws_set_state,
        ws_rollback,
        ws_try,
        ws_mark,
        ws_subscribe,
        approvers=_approvers,
    )


def _approvers(hass: HomeAssistant, msg: dict[str, Any]) -> frozenset[str]:
    """The approvers of the message's entry (nobody when it names none that is loaded)."""
    entry_id = msg.get(ATTR_CONFIG_ENTRY_ID)
    hosts = [h for h in loaded_hosts(hass) if entry_id in (None, h.entry_id)]
    return hosts[0].settings.approvers if len(hosts) == 1 else frozenset()


async def _act(
    hass: HomeAssistant,
    connection: websocket_api.ActiveConnection,
    msg: dict[str, Any],
    service: str,
    action: Action,
) -> None:
    """Run one of the integration's actions as the connection's user and answer with its
    response (its translated error, if it refuses)."""
    data = {k: v for k, v in msg.items() if k not in ("id", "type")}
    call = ServiceCall(
        hass, DOMAIN, service, data, Context(user_id=connection.user.id), return_response=True
    )
    connection.send_result(msg["id"], await action(hass, call))


def _action_command(
    command: str,
    fields: dict[Any, Any],
    service: str,
    action: Action,
    *,
    fixed: dict[str, Any] | None = None,
) -> websocket_api.const.WebSocketCommandHandler:
    """The websocket command ``workflows/<command>`` that runs ``action`` (the action
    ``service``) with the message's fields and ``fixed`` (:func:`_act`); who may is the
    command's own door (:mod:`..host.permissions`)."""

    async def handler(
        hass: HomeAssistant, connection: websocket_api.ActiveConnection, msg: dict[str, Any]
    ) -> None:
        await _act(hass, connection, {**msg, **(fixed or {})}, service, action)

    handle = websocket_api.async_response(handler)
    schema = {vol.Required("type"): f"{DOMAIN}/workflows/{command}", **fields}
    return websocket_api.websocket_command(schema)(handle)


# ── reading ─────────────────────────────────────────────────────────────────────────────


@websocket_api.websocket_command({vol.Required("type"): f"{DOMAIN}/workflows/list"})
@websocket_api.async_response
async def ws_list(
    hass: HomeAssistant, connection: websocket_api.ActiveConnection, msg: dict[str, Any]
) -> None:
    """Every workflow the user may see (:mod:`.listing`)."""
    caller = Caller(connection.user)
    rows: list[dict[str, Any]] = []
    for host in loaded_hosts(hass):
        rows.extend(await workflow_rows(host, caller))
    may_mark = any(
        permits(door_of(ws_mark), caller, approvers=host.settings.approvers)
        for host in loaded_hosts(hass)
    )
    connection.send_result(
        msg["id"],
        {"workflows": rows, "is_admin": connection.user.is_admin, "may_mark": may_mark},
    )


@websocket_api.websocket_command(
    {
        vol.Required("type"): f"{DOMAIN}/workflows/runs",
        **_WORKFLOW,
        vol.Optional("offset", default=0): vol.All(int, vol.Range(min=0, max=MAX_SCAN)),
        vol.Optional("limit", default=PAGE): vol.All(int, vol.Range(min=1, max=100)),
        vol.Optional("decision"): str,
        vol.Optional("mode", default="all"): vol.In(("all", "test", "on")),
    }
)
@websocket_api.async_response
async def ws_runs(
    hass: HomeAssistant, connection: websocket_api.ActiveConnection, msg: dict[str, Any]
) -> None:
    """A page of the workflow's runs the user may see (:mod:`.timeline`)."""
    host = host_for(hass, msg.get(ATTR_CONFIG_ENTRY_ID))
    caller = Caller(connection.user)
    workflow_id = visible_workflow(caller, host, msg["workflow"]).workflow_id
    page = await timeline_page(
        host,
        caller,
        workflow_id,
        offset=msg["offset"],
        limit=msg["limit"],
        decision=msg.get("decision"),
        mode=msg["mode"],
    )
    connection.send_result(msg["id"], page)


@websocket_api.websocket_command(
    {vol.Required("type"): f"{DOMAIN}/workflows/run", **_ENTRY, vol.Required("run_id"): str}
)
@websocket_api.async_response
async def ws_run(
    hass: HomeAssistant, connection: websocket_api.ActiveConnection, msg: dict[str, Any]
) -> None:
    """One run's page, when the user may see every camera it touched (a hidden run
    answers like an unknown one, :mod:`..host.read_scope`)."""
    host = host_for(hass, msg.get(ATTR_CONFIG_ENTRY_ID))
    caller = Caller(connection.user)
    detail = await visible_run(caller, host, msg["run_id"])
    if detail is None:
        raise invalid("unknown_run", run_id=msg["run_id"])
    page = run_page(hass, host, caller, detail)
    page["started_by"] = await started_by(hass, detail)
    connection.send_result(msg["id"], page)


@websocket_api.websocket_command(
    {vol.Required("type"): f"{DOMAIN}/workflows/versions", **_WORKFLOW}
)
@websocket_api.async_response
async def ws_versions(
    hass: HomeAssistant, connection: websocket_api.ActiveConnection, msg: dict[str, Any]
) -> None:
    """Every recorded version, newest first, with the current one marked and each one's
    text (the panel diffs two of them); for a user who may see the workflow, the versions
    that name only cameras they may see."""
    host = host_for(hass, msg.get(ATTR_CONFIG_ENTRY_ID))
    caller = Caller(connection.user)
    workflow_id = visible_workflow(caller, host, msg["workflow"]).workflow_id
    versions = await host.engine.versions(workflow_id)
    current = next(
        (s.version for s in host.engine.workflows() if s.workflow_id == workflow_id), None
    )
    out = []
    for row in versions:
        old: Workflow | None = None
        error: str | None = None
        try:
            old = await host.engine.version_workflow(workflow_id, row["version"])
        except (UnknownVersionError, VersionDecodeError) as err:  # pruned, or older code's
            error = str(err)
        if not may_see_workflow(caller, host, old):
            continue
        text = dump_workflow(old) if old is not None else None
        out.append({**row, "current": row["version"] == current, "yaml": text, "error": error})
    connection.send_result(msg["id"], {"workflow_id": workflow_id, "versions": out})


#: The workflow file's text as it is on disk (the editor opens it).
ws_source = _action_command("source", _WORKFLOW, "export_workflow", file_actions.async_export)


#: Every problem of the text against this site, each at its line and column.
ws_validate = _action_command(
    "validate",
    {**_ENTRY, vol.Required("yaml"): str},
    "validate_workflow",
    file_actions.async_validate,
)


@websocket_api.websocket_command({vol.Required("type"): f"{DOMAIN}/workflows/templates", **_ENTRY})
@websocket_api.async_response
async def ws_templates(
    hass: HomeAssistant, connection: websocket_api.ActiveConnection, msg: dict[str, Any]
) -> None:
    """The templates, each with what this site lacks for it and whether it is installed."""
    host = host_for(hass, msg.get(ATTR_CONFIG_ENTRY_ID))
    rows = await hass.async_add_executor_job(template_rows, host, frozenset(host.files))
    connection.send_result(msg["id"], {"templates": rows})


# ── changing ────────────────────────────────────────────────────────────────────────────


#: Write the text (or a template) into the folder, in Test; refused while the validator
#: finds an error. ``overwrite`` replaces the named file (an edit).
ws_save = _action_command(
    "save",
    {
        **_ENTRY,
        vol.Exclusive("yaml", "source"): str,
        vol.Exclusive("template", "source"): str,
        vol.Optional("file_name"): str,
        vol.Optional("overwrite", default=False): bool,
    },
    "import_workflow",
    file_actions.async_import,
    fixed={"dry_run": False},
)
ws_set_state = _action_command(
    "set_state",
    {**_WORKFLOW, vol.Required("state"): vol.In(("off", "test", "on"))},
    "set_workflow_state",
    run_actions.async_set_state,
)
ws_rollback = _action_command(
    "rollback",
    {**_WORKFLOW, vol.Required("version"): str},
    "rollback_workflow",
    file_actions.async_rollback,
)
#: Replay recent events through the workflow in Test and answer with each decision.
ws_try = _action_command(
    "try",
    {
        **_WORKFLOW,
        vol.Optional("count", default=trial.DEFAULT_EVENTS): vol.All(
            int, vol.Range(min=1, max=trial.MAX_EVENTS)
        ),
    },
    "try_workflow",
    trial.async_try_workflow,
)
#: Right or wrong (admins and approvers: the action checks), with what was right.
ws_mark = _action_command(
    "mark",
    {**_ENTRY, vol.Required("run_id"): str, vol.Required("right"): bool, **MARK_FIELDS},
    "mark_run",
    run_actions.async_mark_run,
)
