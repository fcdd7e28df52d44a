"""The workflow hosts a panel command may act on: every loaded entry's, or the one it names."""

from __future__ import annotations

from homeassistant.core import HomeAssistant

from ..const import DOMAIN
from ..coordinator import OpenNVRConfigEntry
from ..host.errors import invalid
from ..host.workflows import WorkflowHost


def loaded_hosts(hass: HomeAssistant) -> list[WorkflowHost]:
    """The hosts of the loaded entries, in the entries' order."""
    entries: list[OpenNVRConfigEntry] = hass.config_entries.async_loaded_entries(DOMAIN)
    return [host for entry in entries if (host := entry.runtime_data.workflows) is not None]


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
