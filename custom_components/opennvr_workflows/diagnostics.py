"""Diagnostics for a support request: what the site said, what arrived, nothing secret."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from homeassistant.components.diagnostics import async_redact_data
from homeassistant.const import CONF_TOKEN
from homeassistant.core import HomeAssistant

from .const import CONF_MQTT_PASSWORD, CONF_NATS_PASSWORD, CONF_NATS_TOKEN
from .runtime import OpenNVRConfigEntry

#: Credentials, and the ticket-bearing URLs and ids a log could leak.
TO_REDACT = {CONF_TOKEN, CONF_NATS_TOKEN, CONF_NATS_PASSWORD, CONF_MQTT_PASSWORD, "site_id"}


async def async_get_config_entry_diagnostics(
    hass: HomeAssistant, entry: OpenNVRConfigEntry
) -> dict[str, Any]:
    runtime = entry.runtime_data
    info = runtime.info
    return {
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
    }


def _iso(value: Any) -> str | None:
    return value.isoformat() if value is not None else None
