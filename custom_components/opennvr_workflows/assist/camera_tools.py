"""The assistant's tools about the site: a camera now, its events and alerts, its history,
its cameras' health, its facts and lists. Each fact carries its ``cite`` marker."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any, Final, override

import probatio as vol
from homeassistant.const import ATTR_CONFIG_ENTRY_ID, Platform
from homeassistant.helpers import entity_registry as er
from homeassistant.util import dt as dt_util
from homeassistant.util.json import JsonObjectType

from ..ai import PyOpenNvrReadPort
from ..ai.ports import StoredEvent
from ..const import DOMAIN
from ..host.asker import Asker
from ..host.history.alerts import count_unacked_alerts
from ..host.history.nvr import NvrHistorySearch
from ..host.ids import camera_unique_id
from ..host.read_scope import visible_lists
from ..host.workflows import WorkflowHost
from ..nvr.normalize import MalformedPayload, camera_id_text
from .base import MAX_ROWS, SiteTool, ToolCall, ToolError, camera_of
from .citations import cite

#: What a Look answers: the answer is in its reason; "cannot_see" when the picture does
#: not show it (and "unsure", which every Look may answer).
LOOK_OPTIONS: Final = ["answered", "cannot_see"]
DEFAULT_QUESTION: Final = "What do you see? Is anyone there?"
#: The events a Look's answer comes with: this camera's, this recent.
LOOK_EVENTS_WINDOW: Final = timedelta(minutes=15)
_LOOK_EVENTS: Final = 3


def event_fact(event: StoredEvent) -> dict[str, Any]:
    """One OpenNVR event as the model reads it."""
    fact: dict[str, Any] = {
        "event_id": event.id,
        "camera": event.camera,
        "label": event.label,
        "at": event.started_at,
        "cite": cite("event", event.id),
    }
    for key, value in (("caption", event.caption), ("plate", event.plate)):
        if value:
            fact[key] = value
    return fact


def _port(host: WorkflowHost, asker: Asker) -> PyOpenNvrReadPort:
    return PyOpenNvrReadPort(host.client, asker.port_names())


async def _recent(
    host: WorkflowHost, asker: Asker, camera_id: int | None, since: timedelta, limit: int
) -> list[StoredEvent]:
    """The latest events, only on cameras ``asker`` sees (more asked when filtering)."""
    port = _port(host, asker)
    camera = asker.cameras.get(camera_id) if camera_id is not None else None
    asked = limit if asker.sees_all or camera is not None else limit * 5
    events = await port.recent_events(camera, dt_util.utcnow() - since, asked)
    visible = set(asker.cameras.values())
    return [e for e in events if asker.sees_all or e.camera in visible][:limit]


class DescribeCameraTool(SiteTool):
    """A camera now: the local vision model's Look, with a free question."""

    short_name = "describe_camera"
    description = (
        "Look at a camera's live picture now with the local vision model and answer a "
        "question about it (who or what is there, what they are doing). Also returns the "
        "camera's events of the last 15 minutes."
    )

    @override
    def fields(self, cameras: list[str] | None) -> dict[Any, Any]:
        return {
            vol.Required("camera", description="The camera"): self.camera_field(cameras),
            vol.Optional("question", description="What to answer from the picture"): str,
        }

    @override
    async def answer(self, call: ToolCall) -> JsonObjectType:
        asker = call.asker
        camera_id = camera_of(asker, call.args["camera"])
        question = str(call.args.get("question") or DEFAULT_QUESTION)
        response = await call.hass.services.async_call(
            DOMAIN,
            "look",
            {
                ATTR_CONFIG_ENTRY_ID: call.entry.entry_id,
                "camera": _look_camera(call, camera_id),
                "prompt": (
                    f"{question}\nGive the answer in the reason, in one or two plain "
                    "sentences. Choose cannot_see when the picture does not show it."
                ),
                "decision": LOOK_OPTIONS,
            },
            blocking=True,
            return_response=True,
            context=call.llm_context.context,
        )
        look = response if isinstance(response, dict) else {}
        events = await _recent(call.host, asker, camera_id, LOOK_EVENTS_WINDOW, _LOOK_EVENTS)
        return {
            "camera": asker.cameras[camera_id],
            "question": question,
            "answer": str(look.get("reason") or ""),
            "seen": look.get("decision") == "answered",
            "confidence": look.get("confidence"),
            "unsure_reason": look.get("unsure_reason"),
            "at": dt_util.utcnow().isoformat(),
            "cite": cite("look", uuid.uuid4().hex[:12]),
            "recent_events": [event_fact(e) for e in events],
        }


def _look_camera(call: ToolCall, camera_id: int) -> str:
    """What the look action takes for the camera: its entity, else a role it plays."""
    site_id = call.entry.runtime_data.info.site_id
    entity_id = er.async_get(call.hass).async_get_entity_id(
        Platform.CAMERA, DOMAIN, camera_unique_id(site_id, camera_id)
    )
    if entity_id is not None:
        return entity_id
    roles = call.host.settings.roles_of_camera.get(camera_id)
    if roles:
        return roles[0]
    raise ToolError("that camera has no camera entity in Home Assistant")


class RecentEventsTool(SiteTool):
    """The site's latest events and alerts."""

    short_name = "recent_events"
    description = (
        "List the site's recent events (detections: person, car, parcel, ...) and alerts, "
        "newest first, on one camera or all, within the last hours, and how many "
        "unacknowledged alerts wait in all (unacknowledged_alerts: the count to say)."
    )

    @override
    def fields(self, cameras: list[str] | None) -> dict[Any, Any]:
        return {
            vol.Optional("camera", description="Only this camera"): self.camera_field(cameras),
            vol.Optional("hours", default=24, description="How far back, in hours"): vol.All(
                vol.Coerce(float), vol.Range(min=0.1, max=24 * 31)
            ),
            vol.Optional("label", description="Only events of this label"): str,
        }

    @override
    async def answer(self, call: ToolCall) -> JsonObjectType:
        camera_id = call.camera()
        window = timedelta(hours=float(call.args["hours"]))
        events = await _recent(call.host, call.asker, camera_id, window, MAX_ROWS * 3)
        if label := call.args.get("label"):
            events = [e for e in events if e.label.casefold() == str(label).casefold()]
        alerts = await _alerts(call.host, call.asker, camera_id, window)
        waiting = await _waiting(call.host, call.asker, camera_id)
        return {
            "hours": call.args["hours"],
            "events": [event_fact(e) for e in events[:MAX_ROWS]],
            "alerts": alerts,
            "found": len(events[:MAX_ROWS]) + len(alerts),
            # The lists above are a few rows; this is how many alerts wait in all.
            "unacknowledged_alerts": waiting,
        }


async def _alerts(
    host: WorkflowHost, asker: Asker, camera_id: int | None, window: timedelta
) -> list[dict[str, Any]]:
    """The alerts inbox's rows in the window, on cameras the asker sees."""
    data = await host.client.get_alerts(
        camera_id=f"cam{camera_id}" if camera_id is not None else None, limit=MAX_ROWS * 3
    )
    since = dt_util.utcnow() - window
    out: list[dict[str, Any]] = []
    for row in data.get("alerts", []) if isinstance(data, dict) else []:
        if not isinstance(row, dict) or row.get("id") is None:
            continue
        try:
            camera = camera_id_text(row.get("camera_id"))
        except MalformedPayload:
            continue
        fired = dt_util.parse_datetime(str(row.get("fired_at") or ""))
        if fired is not None and fired.tzinfo is None:
            fired = fired.replace(tzinfo=dt_util.UTC)
        if fired is not None and fired < since:
            continue
        if not asker.may_see(camera):
            continue
        ident = row.get("alert_id") or row["id"]
        out.append(
            {
                "alert_id": ident,
                "title": row.get("title"),
                "severity": row.get("severity"),
                "camera": _camera_name(asker, camera),
                "at": row.get("fired_at"),
                "acknowledged": row.get("acknowledged_at") is not None,
                "cite": cite("alert", ident),
            }
        )
        if len(out) >= MAX_ROWS:
            break
    return out


async def _waiting(host: WorkflowHost, asker: Asker, camera_id: int | None) -> dict[str, Any]:
    """How many unacknowledged alerts wait on OpenNVR for the asker (on one camera when one
    was asked): OpenNVR's total, not the length of a page (``at_least``: more were not read)."""

    def sees(row: dict[str, Any]) -> bool:
        try:
            camera = camera_id_text(row.get("camera_id"))
        except MalformedPayload:
            return False
        if camera_id is not None and camera != str(camera_id):
            return False
        return asker.may_see(camera)

    found = await count_unacked_alerts(
        host.client, sees, sees_everything=asker.is_admin and camera_id is None
    )
    return {"count": found.count, "at_least": not found.exact}


def _camera_name(asker: Asker, camera: str | None) -> str | None:
    if camera is None:
        return None
    try:
        return asker.cameras.get(int(camera), camera)
    except ValueError:
        return camera


class SearchHistoryTool(SiteTool):
    """What happened, found by words."""

    short_name = "search_history"
    description = (
        "Search the site's recorded history in plain words ('red car at the gate', 'person "
        "with a parcel last night'), best matches first, each with its event id."
    )

    @override
    def fields(self, cameras: list[str] | None) -> dict[Any, Any]:
        return {
            vol.Required("query", description="What to look for"): vol.All(str, vol.Length(1)),
            vol.Optional("camera", description="Only this camera"): self.camera_field(cameras),
            vol.Optional("hours", description="Only the last hours"): vol.All(
                vol.Coerce(float), vol.Range(min=0.1, max=24 * 366)
            ),
        }

    @override
    async def answer(self, call: ToolCall) -> JsonObjectType:
        asker, args = call.asker, call.args
        camera_id = call.camera()
        start = (
            dt_util.utcnow() - timedelta(hours=float(args["hours"])) if args.get("hours") else None
        )
        local = call.entry.runtime_data.history
        if local is not None:
            # The site's own index (AI decisions by words and meaning) fused with OpenNVR's.
            answer = await local.search(
                asker, args["query"], camera_id=camera_id, since=start, limit=MAX_ROWS
            )
            return {
                "query": args["query"],
                "results": [
                    {
                        **found.as_dict(),
                        "cite": cite("run", found.run_id)
                        if found.run_id
                        else cite("event", found.event_id),
                    }
                    for found in answer.results
                    if found.run_id or found.event_id is not None
                ],
                "found": len(answer.results),
                "searched": dict(answer.searched),
            }
        since = start.isoformat() if start is not None else None
        hits = await NvrHistorySearch(call.host).search(
            asker, args["query"], camera_id=camera_id, since=since, limit=MAX_ROWS
        )
        return {
            "query": args["query"],
            "results": [
                {
                    "event_id": h.event_id,
                    "camera": h.camera,
                    "label": h.label,
                    "at": h.at,
                    **({"caption": h.caption} if h.caption else {}),
                    **({"plate": h.plate} if h.plate else {}),
                    "cite": cite("event", h.event_id),
                }
                for h in hits
            ],
            "found": len(hits),
        }


class CameraHealthTool(SiteTool):
    """Which cameras are online, recording and detecting."""

    short_name = "camera_health"
    description = (
        "Whether the site's cameras are online, turned on, recording and detecting; one "
        "camera or all."
    )

    @override
    def fields(self, cameras: list[str] | None) -> dict[Any, Any]:
        return {vol.Optional("camera", description="Only this camera"): self.camera_field(cameras)}

    @override
    async def answer(self, call: ToolCall) -> JsonObjectType:
        asker = call.asker
        coordinator = call.entry.runtime_data.cameras
        camera_id = call.camera()
        wanted = [camera_id] if camera_id is not None else sorted(asker.cameras)
        rows: list[Any] = []
        for camera_id in wanted:
            camera = (coordinator.data or {}).get(camera_id)
            if camera is None:
                continue
            rows.append(
                {
                    "camera": asker.cameras[camera_id],
                    "online": coordinator.is_online(camera_id),
                    "turned_on": camera.is_active,
                    "recording": camera.recording_state,
                    "detecting": camera.detection_enabled,
                    "status": camera.raw.get("status"),
                    "cite": cite("camera", camera_id),
                }
            )
        return {"cameras": rows, "found": len(rows)}


class SiteLookupTool(SiteTool):
    """The site's facts and lists, as the options hold them: the lists of plates and faces
    for an administrator only (:func:`..host.read_scope.visible_lists`; to anyone else
    such a list reads as one that does not exist), the roles of the cameras the person
    asking may see."""

    short_name = "site_lookup"
    description = (
        "Read the site's facts (written by its administrator), its named lists (known "
        "plates, expected visitors, ...) and which camera plays which role."
    )

    @override
    def fields(self, cameras: list[str] | None) -> dict[Any, Any]:
        return {vol.Optional("list", description="Only this named list"): str}

    @override
    async def answer(self, call: ToolCall) -> JsonObjectType:
        asker, site = call.asker, call.host.settings.site
        lists = visible_lists(asker.caller, call.host) if asker.caller is not None else {}
        if name := call.args.get("list"):
            if name not in lists:
                raise ToolError(f"no list {name!r}; lists: {', '.join(sorted(lists)) or 'none'}")
            lists = {name: lists[name]}
        data: dict[str, Any] = {
            "lists": [
                {"name": n, "items": list(items), "cite": cite("list", _slug(n))}
                for n, items in sorted(lists.items())
            ],
            "camera_roles": [
                {"role": role, "camera": asker.cameras[cid], "cite": cite("camera", cid)}
                for role, cid in sorted(asker.roles.items())
            ],
        }
        if site.facts and not call.args.get("list"):
            data["facts"] = {"text": site.facts, "cite": cite("site", "facts")}
        data["found"] = len(data["lists"]) + len(data["camera_roles"]) + ("facts" in data)
        return data


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() or c in "_.-" else "_" for c in name) or "_"
