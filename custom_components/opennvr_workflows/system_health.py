"""System health: is the site reachable, the model usable, the event stream up, and how
many runs wait and workflows load, for Home Assistant's System information page.

Everything here is read from what the entry already knows (the camera poll, the model
watch, the event hub, the engine, the workflow folder): opening the page sends no request
to OpenNVR or Ollama. With several sites, each value names its site.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from homeassistant.components import system_health
from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import HomeAssistant, callback

from .const import DOMAIN
from .coordinator import OpenNVRConfigEntry, OpenNVRRuntime
from .host.workflows import SITE_CODES, WorkflowFile


@callback
def async_register(hass: HomeAssistant, register: system_health.SystemHealthRegistration) -> None:
    register.async_register_info(system_health_info, "/config/integrations/integration/" + DOMAIN)


async def system_health_info(hass: HomeAssistant) -> dict[str, Any]:
    entries: list[OpenNVRConfigEntry] = [
        entry
        for entry in hass.config_entries.async_entries(DOMAIN)
        if entry.state is ConfigEntryState.LOADED
    ]
    if not entries:
        return {}
    return {
        key: _per_site(entries, read)
        for key, read in (
            ("nvr_reachable", _nvr_reachable),
            ("model_reachable", _model_reachable),
            ("event_sources", _event_sources),
            ("runs_waiting", _runs_waiting),
            ("workflows_loaded", _workflows_loaded),
            ("workflows_invalid", _workflows_invalid),
            ("workflows_waiting_for_site", _workflows_waiting_for_site),
        )
    }


def _per_site(entries: list[OpenNVRConfigEntry], read: Callable[[OpenNVRRuntime], Any]) -> Any:
    """One site: its value as is (a boolean shows as a tick). Several: each named."""
    if len(entries) == 1:
        return read(entries[0].runtime_data)
    return "; ".join(f"{e.title}: {_text(read(e.runtime_data))}" for e in entries)


def _text(value: Any) -> str:
    if value is True:
        return "yes"
    if value is False:
        return "no"
    return str(value)


def _nvr_reachable(runtime: OpenNVRRuntime) -> bool:
    """The last camera poll reached the site."""
    return runtime.cameras.last_update_success


def _model_reachable(runtime: OpenNVRRuntime) -> bool | str:
    host = runtime.workflows
    if host is None or not host.settings.ai_enabled:
        return "AI off"
    health = host.model_watch.health
    if health.reachable is None:
        return "not checked yet"
    if health.reachable and health.missing:
        return f"answers, without {', '.join(health.missing)}"
    return health.reachable


def _event_sources(runtime: OpenNVRRuntime) -> str:
    stats = runtime.hub.stats
    if not stats:
        return "none"
    return ", ".join(
        f"{name} {'connected' if s.connected else 'disconnected'}" for name, s in stats.items()
    )


def _runs_waiting(runtime: OpenNVRRuntime) -> int:
    host = runtime.workflows
    if host is None or not host.engine.started:
        return 0
    return sum(1 for run in host.engine.active_runs() if run.status == "waiting")


def _workflows_loaded(runtime: OpenNVRRuntime) -> int:
    host = runtime.workflows
    return 0 if host is None else sum(1 for f in host.files.values() if f.workflow is not None)


def _workflows_invalid(runtime: OpenNVRRuntime) -> int:
    """Files refused for what they say (a repair issue each)."""
    return sum(1 for f in _not_loaded(runtime) if not _waits_for_site(f))


def _workflows_waiting_for_site(runtime: OpenNVRRuntime) -> int:
    """Files that are fine but need this site first (a camera role, a skill)."""
    return sum(1 for f in _not_loaded(runtime) if _waits_for_site(f))


def _not_loaded(runtime: OpenNVRRuntime) -> list[WorkflowFile]:
    host = runtime.workflows
    return [] if host is None else [f for f in host.files.values() if f.workflow is None]


def _waits_for_site(file: WorkflowFile) -> bool:
    return bool(file.errors) and all(p.code in SITE_CODES for p in file.errors)
