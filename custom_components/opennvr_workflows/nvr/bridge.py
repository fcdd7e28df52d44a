"""Carries the normalized event stream into Home Assistant's entities.

The hub knows nothing of entities; entities know nothing of transports. This is the one
place that turns an ``NvrEvent`` into entity updates: pushed camera status, the site mode,
and each camera's alerts and contracted events (as a dispatcher signal per camera).
"""

from __future__ import annotations

from collections.abc import Callable

from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers.dispatcher import async_dispatcher_send
from homeassistant.helpers.event import async_call_later

from ..const import DOMAIN
from ..coordinator import OpenNVRConfigEntry
from ..engine.events import NvrEvent


def camera_signal(entry: OpenNVRConfigEntry, camera_id: int) -> str:
    """Dispatcher signal carrying one camera's alerts and events (an ``NvrEvent``)."""
    return f"{DOMAIN}_{entry.entry_id}_camera_{camera_id}"


def site_signal(entry: OpenNVRConfigEntry) -> str:
    """Dispatcher signal for site-level changes: site mode, transport up/down, counters."""
    return f"{DOMAIN}_{entry.entry_id}_site"


def counters_signal(entry: OpenNVRConfigEntry) -> str:
    """Dispatcher signal for the diagnostic counters (at most once per COUNTER_REFRESH)."""
    return f"{DOMAIN}_{entry.entry_id}_counters"


#: Counters move with every payload; their sensors are written at most this often, so a
#: flood of events costs one state write a second, not one per payload.
COUNTER_REFRESH_SECONDS = 1.0


def camera_number(event: NvrEvent) -> int | None:
    """OpenNVR's integer camera id from the event's camera id string, if it has one."""
    try:
        return int(event.camera_id) if event.camera_id is not None else None
    except ValueError:
        return None


@callback
def async_bridge_hub(hass: HomeAssistant, entry: OpenNVRConfigEntry) -> Callable[[], None]:
    """Subscribe the entities' side to the hub; returns the unsubscribe callback."""
    runtime = entry.runtime_data

    @callback
    def _on_event(event: NvrEvent) -> None:
        cid = camera_number(event)
        if event.kind in ("camera_online", "camera_offline") and cid is not None:
            runtime.cameras.async_set_pushed_online(cid, event.kind == "camera_online")
        elif event.kind == "site_mode":
            mode = event.payload.get("mode")
            if isinstance(mode, str) and mode != runtime.site_mode:
                runtime.site_mode = mode
                async_dispatcher_send(hass, site_signal(entry))
        elif event.kind in ("alert", "event") and cid is not None:
            async_dispatcher_send(hass, camera_signal(entry, cid), event)

    pending: list[Callable[[], None]] = []

    @callback
    def _flush_counters(_: object) -> None:
        pending.clear()
        async_dispatcher_send(hass, counters_signal(entry))

    @callback
    def _on_counters() -> None:
        if not pending:
            pending.append(async_call_later(hass, COUNTER_REFRESH_SECONDS, _flush_counters))

    @callback
    def _on_state(source: str, connected: bool) -> None:
        runtime.cameras.async_update_listeners()
        async_dispatcher_send(hass, site_signal(entry))

    unsubscribers = [
        runtime.hub.subscribe(_on_event),
        runtime.hub.subscribe_state(_on_state),
        runtime.hub.subscribe_counters(_on_counters),
    ]

    def _unsubscribe() -> None:
        for unsubscribe in (*unsubscribers, *pending):
            unsubscribe()

    return _unsubscribe
