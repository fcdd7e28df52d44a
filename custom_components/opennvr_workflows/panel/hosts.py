"""The workflow hosts a panel command may act on: every loaded entry's, or the one it names."""

from __future__ import annotations

from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import HomeAssistant

from ..const import DOMAIN
from ..host.action_support import invalid
from ..host.workflows import WorkflowHost


def loaded_hosts(hass: HomeAssistant) -> list[WorkflowHost]:
    """The hosts of the loaded entries, in the entries' order."""
    out: list[WorkflowHost] = []
    for entry in hass.config_entries.async_entries(DOMAIN):
        if entry.state is not ConfigEntryState.LOADED:
            continue
        host = getattr(entry.runtime_data, "workflows", None)
        if host is not None:
            out.append(host)
    return out


def host_for(hass: HomeAssistant, entry_id: str | None) -> WorkflowHost:
    """The host of ``entry_id``, else the only loaded one (a translated error otherwise)."""
    hosts = loaded_hosts(hass)
    if entry_id is not None:
        for host in hosts:
            if host.entry_id == entry_id:
                return host
        raise invalid("no_loaded_entry")
    if not hosts:
        raise invalid("no_loaded_entry")
    if len(hosts) > 1:
        raise invalid("several_entries", entries=", ".join(h.entry_id for h in hosts))
    return hosts[0]
