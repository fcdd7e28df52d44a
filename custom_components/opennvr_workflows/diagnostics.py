"""Diagnostics for a support request: what the site said, what arrived, how the workflows
are doing, nothing secret.

Secrets are kept out twice: the fields that hold them are redacted by name, and then every
address anywhere in the dump (a value, a list item, a key, an error text) loses its
``user:password@`` (:func:`.redact.strip_userinfo_deep`), because an address typed with
its credentials (Ollama, NATS, MQTT, a webhook) sits in fields no list of names foresees.

Workflows are summarised, not dumped: each one's state and its file's problems, and its
latest runs as ids, statuses, outcomes, times and step counts. A run's trigger is reduced
to its kind, type and camera; its payload (a message's text, a plate, a person's name)
and the steps' inputs and results stay out.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

from homeassistant.components.diagnostics import async_redact_data
from homeassistant.const import CONF_TOKEN
from homeassistant.core import HomeAssistant

from .assist.turn_guard import citation_stats
from .const import (
    CONF_MQTT_PASSWORD,
    CONF_NATS_PASSWORD,
    CONF_NATS_TOKEN,
    CONF_SITE_FACTS,
    CONF_SITE_LISTS,
    CONF_WEBHOOKS,
)
from .coordinator import OpenNVRConfigEntry
from .redact import strip_userinfo_deep

if TYPE_CHECKING:
    from .engine import Engine
    from .host.workflows import WorkflowHost

#: Credentials, the ticket-bearing URLs and ids a log could leak (a webhook URL often
#: carries its own secret), and what the options say about the household (its facts,
#: its lists of plates and names).
TO_REDACT = {
    CONF_TOKEN,
    CONF_NATS_TOKEN,
    CONF_NATS_PASSWORD,
    CONF_MQTT_PASSWORD,
    CONF_WEBHOOKS,
    CONF_SITE_FACTS,
    CONF_SITE_LISTS,
    "site_id",
}
#: How many of each workflow's latest runs are summarised.
RECENT_RUNS: Final = 5
#: The parts of a run's trigger that are kept: what kind of event, on which camera.
TRIGGER_KEYS: Final = ("kind", "source", "type", "camera_id", "camera_role", "alert_id")


async def async_get_config_entry_diagnostics(
    hass: HomeAssistant, entry: OpenNVRConfigEntry
) -> dict[str, Any]:
    runtime = entry.runtime_data
    info = runtime.info
    dump = {
        "entry": {
            "data": async_redact_data(dict(entry.data), TO_REDACT),
            "options": async_redact_data(dict(entry.options), TO_REDACT),
        },
        "site": {
            "name": info.name,
            "version": info.version,
            "contract_version": info.contract_version,
            "features": list(info.features),
            "token_scopes": sorted(info.scopes or ()),
            "token_expires_at": info.token_expires_at,
            "network": info.network,
        },
        "cameras": {
            str(cid): {
                "name": cam.name,
                "active": cam.is_active,
                "online": runtime.cameras.is_online(cid),
                "status": cam.raw.get("status"),
            }
            for cid, cam in (runtime.cameras.data or {}).items()
        },
        "camera_poll_ok": runtime.cameras.last_update_success,
        "site_mode": runtime.site_mode,
        "event_sources": {
            name: {**asdict(stats), "last_event_at": _iso(stats.last_event_at)}
            for name, stats in runtime.hub.stats.items()
        },
        "workflows": await _workflows(runtime.workflows),
    }
    stripped: dict[str, Any] = strip_userinfo_deep(dump)
    return stripped


async def _workflows(host: WorkflowHost | None) -> dict[str, Any] | None:
    """Each workflow's state, file problems and latest runs; the engine's counters."""
    if host is None:
        return None
    engine = host.engine
    statuses = {s.workflow_id: s for s in engine.workflows()} if engine.started else {}
    workflows: dict[str, Any] = {}
    for workflow_id in sorted(set(host.files) | set(statuses)):
        file = host.files.get(workflow_id)
        status = statuses.get(workflow_id)
        workflows[workflow_id] = {
            "state": status.state if status else None,
            "reason": status.reason if status else None,
            "version": status.version if status else None,
            "file": file.path.name if file else None,
            "loaded": file is not None and file.workflow is not None,
            "problems": [p.as_dict() for p in file.report.problems] if file else [],
            "recent_runs": await _recent_runs(engine, workflow_id) if engine.started else [],
        }
    active = engine.active_runs()
    return {
        "workflows": workflows,
        "engine": {
            "started": engine.started,
            **asdict(engine.stats),
            "runs_running": sum(1 for r in active if r.status == "running"),
            "runs_waiting": sum(1 for r in active if r.status == "waiting"),
            "runs_waiting_their_turn": engine.waiting_turn if engine.started else 0,
            "approvals_pending": len(engine.pending_approvals()),
        },
        "webhooks": {"redirects_refused": host.effects.webhook_redirects},
        "approvals": {
            "questions_waiting": len(host.desk.pending()),
            "refused_by_reason": dict(host.desk.refused),
        },
        # Assist's answers: citations kept, and those no tool returned (stripped).
        "assist_citations": asdict(citation_stats(host.hass)),
        "model": {
            **asdict(host.model_watch.health),
            "checked_at": _iso(host.model_watch.health.checked_at),
        },
    }


async def _recent_runs(engine: Engine, workflow_id: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for run in await engine.runs(workflow_id, RECENT_RUNS):
        detail = await engine.run_detail(run["id"])
        out.append(
            {
                "id": run["id"],
                "status": run["status"],
                "outcome": run["outcome"],
                "test": bool(run["test"]),
                "started_at": _epoch(run["started_at"]),
                "ended_at": _epoch(run["ended_at"]),
                "error": run["error"],
                "steps": len(detail["steps"]),
                "trigger": _trigger(run["trigger"]),
            }
        )
    return out


def _trigger(stored: Any) -> dict[str, Any]:
    """A stored trigger without its payload, title or plate: only what names the event."""
    try:
        data = json.loads(stored) if isinstance(stored, str) else dict(stored or {})
    except ValueError, TypeError:
        return {}
    return {key: data[key] for key in TRIGGER_KEYS if key in data}


def _epoch(value: Any) -> str | None:
    return datetime.fromtimestamp(float(value), UTC).isoformat() if value is not None else None


def _iso(value: Any) -> str | None:
    return value.isoformat() if value is not None else None
