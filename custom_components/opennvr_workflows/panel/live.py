"""``opennvr_workflows/workflows/subscribe``: what keeps the panel current without polling.

Every :class:`..engine.EngineUpdate` (a run started, waited, ended, was marked; a question
opened or closed; a state changed) is sent as it happens, and a ``workflows`` event when
the host's folder or a state changed, so the panel reloads only what an event names.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import probatio as vol
from homeassistant.components import websocket_api
from homeassistant.core import HomeAssistant, callback

from ..const import DOMAIN
from ..engine import EngineUpdate
from .hosts import loaded_hosts


@websocket_api.websocket_command({vol.Required("type"): f"{DOMAIN}/workflows/subscribe"})
@callback
def ws_subscribe(
    hass: HomeAssistant, connection: websocket_api.ActiveConnection, msg: dict[str, Any]
) -> None:
    msg_id = msg["id"]

    @callback
    def send(event: dict[str, Any]) -> None:
        connection.send_message(websocket_api.event_message(msg_id, event))

    unsubscribes: list[Callable[[], None]] = []
    for host in loaded_hosts(hass):
        entry_id = host.entry_id

        def on_update(update: EngineUpdate, entry_id: str = entry_id) -> None:
            send(
                {
                    "entry_id": entry_id,
                    "kind": update.kind,
                    "workflow_id": update.workflow_id,
                    "run_id": update.run_id,
                    "detail": update.detail or {},
                }
            )

        def on_change(entry_id: str = entry_id) -> None:
            send({"entry_id": entry_id, "kind": "workflows"})

        unsubscribes.append(host.engine.subscribe(on_update))
        unsubscribes.append(host.subscribe(on_change))

    @callback
    def unsubscribe() -> None:
        for stop in unsubscribes:
            stop()
        unsubscribes.clear()

    connection.subscriptions[msg_id] = unsubscribe
    connection.send_result(msg_id)
