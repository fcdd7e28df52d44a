"""Websocket commands behind their doors: each command is registered through
:func:`async_register_gated`, which lets the connection's user through the command's door
(:mod:`.permissions`) before the handler runs, so no command can forget to check.

A refused command answers Home Assistant's own ``unauthorized`` error with the door's
translated sentence.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from homeassistant.components import websocket_api
from homeassistant.core import HomeAssistant, callback

from .permissions import Caller, NotAllowed, allow

#: The user ids a marking door accepts for one message (the approvers of its entry).
Approvers = Callable[[HomeAssistant, dict[str, Any]], Iterable[str]]


def door_of(handler: websocket_api.const.WebSocketCommandHandler) -> str:
    """The door of a command handler: ``ws:<its type>``."""
    command: str = handler._ws_command  # type: ignore[attr-defined]
    return f"ws:{command}"


def gated(
    handler: websocket_api.const.WebSocketCommandHandler, approvers: Approvers | None = None
) -> websocket_api.const.WebSocketCommandHandler:
    """``handler`` behind its door (see the module docstring)."""
    door = door_of(handler)

    @callback
    def check(
        hass: HomeAssistant, connection: websocket_api.ActiveConnection, msg: dict[str, Any]
    ) -> None:
        user = connection.user
        try:
            allow(
                door,
                Caller(user) if user.is_active else None,
                user.id,
                approvers=approvers(hass, msg) if approvers is not None else (),
            )
        except NotAllowed as err:
            connection.send_error(msg["id"], websocket_api.ERR_UNAUTHORIZED, str(err))
            return
        handler(hass, connection, msg)

    check._ws_command = handler._ws_command  # type: ignore[attr-defined]
    check._ws_schema = handler._ws_schema  # type: ignore[attr-defined]
    return check


@callback
def async_register_gated(
    hass: HomeAssistant,
    *handlers: websocket_api.const.WebSocketCommandHandler,
    approvers: Approvers | None = None,
) -> None:
    """Register each command behind its door."""
    for handler in handlers:
        websocket_api.async_register_command(hass, gated(handler, approvers))
