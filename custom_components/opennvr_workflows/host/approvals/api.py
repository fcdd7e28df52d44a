"""Answering and listing questions from Home Assistant itself: the ``answer_approval``
action and the websocket commands the Workflows panel and dashboard cards use.

Both answer as the calling user and go through the same checks as a tap on a phone
(:meth:`.desk.ApprovalDesk.answer`): an automation (no user) cannot answer, nor can a
person who is not asked. Listing shows a person the questions they are asked; an admin
sees every open question, marked whether they may answer it.

* ``opennvr_workflows/approvals/list`` -> ``{approvals: [...]}`` (no tokens, ever);
* ``opennvr_workflows/approvals/answer`` ``{approval_id, reply, source?}`` -> ``{approval_id,
  reply}``, or an error whose code is the refusal (``not_addressee``, ``closed``, ...).
  ``source`` is where the person answered: ``panel`` (the default) or ``card`` (the
  dashboard card), so the logbook and the question's trace say which.
* ``answer_approval`` (action) -> the same, or a translated validation error.
"""

from __future__ import annotations

from typing import Any, Final

import probatio as vol
from homeassistant.components import websocket_api
from homeassistant.core import HomeAssistant, ServiceCall, ServiceResponse, callback

from ...const import DOMAIN
from ..errors import invalid
from ..ws_doors import async_register_gated
from .desk import ApprovalDesk, Outcome, serving_desks
from .people import user_name

#: Where a websocket answer was given, as the logbook and the trace name it.
WS_SOURCES: Final = {"panel": "panel", "card": "dashboard card"}


def desks(hass: HomeAssistant) -> list[ApprovalDesk]:
    """The desks of the loaded entries."""
    return serving_desks(hass)


def desk_of(hass: HomeAssistant, approval_id: str) -> ApprovalDesk | None:
    """The desk that asked ``approval_id``."""
    return next((d for d in desks(hass) if approval_id in d.tickets.by_id), None)


async def async_answer_approval(hass: HomeAssistant, call: ServiceCall) -> ServiceResponse:
    """The ``answer_approval`` action, as the calling user."""
    approval_id, reply = call.data["approval_id"], call.data["reply"]
    done = await _answer(hass, approval_id, reply, call.context.user_id, "action")
    if not done.ok:
        raise invalid(done.reason, **await _placeholders(hass, approval_id, call.context.user_id))
    return {"approval_id": approval_id, "reply": reply}


async def _answer(
    hass: HomeAssistant, approval_id: str, reply: str, user_id: str | None, via: str
) -> Outcome:
    desk = desk_of(hass, approval_id)
    if desk is None:
        first = next(iter(desks(hass)), None)
        if first is None:
            return Outcome(False, "approval_refused_unknown", approval_id)
        return await first.answer(approval_id, reply, user_id, via)
    return await desk.answer(approval_id, reply, user_id, via)


async def _placeholders(
    hass: HomeAssistant, approval_id: str, user_id: str | None
) -> dict[str, Any]:
    desk = desk_of(hass, approval_id)
    ticket = desk.tickets.by_id.get(approval_id) if desk else None
    return {
        "name": await user_name(hass, user_id) or "?",
        "by": "",
        "replies": ", ".join(ticket.replies) if ticket else "",
    }


@callback
def async_register_websocket(hass: HomeAssistant) -> None:
    async_register_gated(hass, ws_list, ws_answer)


@websocket_api.websocket_command({vol.Required("type"): f"{DOMAIN}/approvals/list"})
@websocket_api.async_response
async def ws_list(
    hass: HomeAssistant, connection: websocket_api.ActiveConnection, msg: dict[str, Any]
) -> None:
    user = connection.user
    rows: list[dict[str, Any]] = []
    for desk in desks(hass):
        rows.extend(await desk.pending_for(user.id, user.is_admin))
    connection.send_result(msg["id"], {"approvals": rows})


@websocket_api.websocket_command(
    {
        vol.Required("type"): f"{DOMAIN}/approvals/answer",
        vol.Required("approval_id"): str,
        vol.Required("reply"): str,
        vol.Optional("source", default="panel"): vol.In(tuple(WS_SOURCES)),
    }
)
@websocket_api.async_response
async def ws_answer(
    hass: HomeAssistant, connection: websocket_api.ActiveConnection, msg: dict[str, Any]
) -> None:
    via = WS_SOURCES[msg["source"]]
    done = await _answer(hass, msg["approval_id"], msg["reply"], connection.user.id, via)
    if not done.ok:
        code = done.reason.removeprefix("approval_refused_")
        connection.send_error(msg["id"], code, done.text or code)
        return
    connection.send_result(msg["id"], {"approval_id": msg["approval_id"], "reply": done.reply})
