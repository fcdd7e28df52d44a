"""A run as the panel's run page shows it: :func:`..host.runs.view.run_view` (what every
action shows) with what only a page has room for: each AI step's fields, confidence
source, unsure reason, model, tokens and time; each tool call's arguments and tokens;
the questions the run asked and their log; the mark a person gave it (right or wrong,
by whom, when); and the pictures, as signed links, each made only for a reader who may
see its camera."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from homeassistant.core import HomeAssistant

from ..host.approvals.links import picture_link
from ..host.approvals.people import user_name
from ..host.permissions import Caller
from ..host.read_scope import camera_touched, may_see
from ..host.runs.view import run_view
from ..host.workflows import WorkflowHost
from .evidence import evidence_link

#: Stored AI-step columns shown as they are.
_AI_COLUMNS: Final = (
    "confidence_source",
    "self_reported",
    "unsure_reason",
    "rule",
    "model",
    "ms",
    "started_at",
    "ended_at",
)
#: How long the run page's picture links live.
LINK_S: Final = 3600.0
#: How a run started by name was started, by the stored trigger's source.
_BY_NAME: Final = {"action": "run_workflow", "button": "button", "assist": "message"}


def run_page(
    hass: HomeAssistant, host: WorkflowHost, caller: Caller, detail: Mapping[str, Any]
) -> dict[str, Any]:
    """The run page's data for one stored run (``Engine.run_detail``) that ``caller`` may
    see."""
    view = run_view(detail)
    for shown, stored in zip(view["steps"], detail.get("steps") or (), strict=True):
        shown.update({k: stored.get(k) for k in _AI_COLUMNS if stored.get(k) is not None})
        for column in ("fields", "usage", "result"):
            if (value := _json(stored.get(column))) is not None:
                shown[column] = value
    for shown, stored in zip(view["tool_calls"], detail.get("tool_calls") or (), strict=True):
        shown["args"] = _json(stored.get("args_asked"))
        shown["result"] = _json(shown.get("result"))
        shown.update({k: stored.get(k) for k in ("mode", "started_at", "tokens_in", "tokens_out")})
    view["version"] = detail.get("version")
    view["seen_again"] = detail.get("seen_again") or 0
    view["approvals"] = [_approval(a) for a in detail.get("approvals") or ()]
    view["approval_log"] = [
        {k: row.get(k) for k in ("approval_id", "at", "event", "user", "detail")}
        for row in detail.get("approval_log") or ()
    ]
    view["evidence"] = evidence(
        hass, host, caller, str(detail.get("workflow_id")), str(detail.get("id"))
    )
    view["mark"] = _mark(detail.get("mark"))
    return view


async def started_by(hass: HomeAssistant, detail: Mapping[str, Any]) -> dict[str, Any] | None:
    """How a run started by name was started (``how``: ``run_workflow``, ``button`` or
    ``message``) and by whom (``user``: a name, None when Home Assistant itself called);
    None for a run its trigger started."""
    trigger = _json(detail.get("trigger"))
    if not isinstance(trigger, Mapping) or trigger.get("source") not in _BY_NAME:
        return None
    how = _BY_NAME[trigger["source"]]
    if trigger.get("kind") == "message":
        how = "message"
    payload = trigger.get("payload")
    user = payload.get("user") if isinstance(payload, Mapping) else None
    if user and trigger["source"] == "button":
        # A button press stores the presser's id.
        user = await user_name(hass, str(user))
    return {"how": how, "user": str(user) if user else None}


def _mark(row: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The stored mark as the page shows it: right or wrong, by whom (the name stored
    with it), when; None while nobody marked the run."""
    if row is None:
        return None
    return {"right": bool(row.get("right")), "by": row.get("user"), "at": row.get("at")}


def evidence(
    hass: HomeAssistant, host: WorkflowHost, caller: Caller, workflow_id: str, run_id: str
) -> list[dict[str, str]]:
    """Signed links to the pictures of the run the host keeps: the frame its AI step
    looked at (kept per run, within the options' bounds) and its questions' pictures;
    only those of cameras ``caller`` may see."""
    out: list[dict[str, str]] = []
    held = host.evidence_store.row(run_id)
    if held is not None:
        url = evidence_link(hass, host, caller, run_id, held.camera, LINK_S)
        if url is not None:
            out.append({"kind": "frame", "camera": held.camera or "", "url": url})
    for ticket in host.desk.tickets.by_id.values():
        if ticket.run_id != run_id or not may_see(
            caller, host, camera_touched(host, ticket.camera_id)
        ):
            continue
        if ticket.picture:
            url = picture_link(hass, host.entry_id, ticket.picture, LINK_S)
            out.append({"kind": "question", "camera": ticket.camera_id or "", "url": url})
        elif ticket.image_url:
            out.append(
                {"kind": "question", "camera": ticket.camera_id or "", "url": ticket.image_url}
            )
    return out


def _approval(row: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "approval_id": row.get("id"),
        "step_path": row.get("step_path"),
        "message": row.get("message"),
        "who": _json(row.get("who")) or [],
        "replies": _json(row.get("replies")) or [],
        "default": row.get("default_reply"),
        "status": row.get("status"),
        "reply": row.get("reply"),
        "answered_by": row.get("answered_by"),
        "created_at": row.get("created_at"),
        "expires_at": row.get("expires_at"),
        "answered_at": row.get("answered_at"),
    }


def _json(raw: Any) -> Any:
    """A stored JSON column as data (text that is not JSON stays text)."""
    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw)
    except ValueError:
        return raw
