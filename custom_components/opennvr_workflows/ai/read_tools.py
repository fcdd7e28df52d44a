"""The read tools an Investigate step may call, implemented over the NVR read port.

What the MODEL sees (names, descriptions, argument schemas) comes from the SDK's
``build_tool_definitions`` wherever the SDK has the tool, so a description measured and
fixed there is the one served here; ``camera_health``, ``site_lookup`` and ``ask_person``
are core's tools in the RFC and are defined below in the same style. One description is
this host's own (:data:`HOST_DESCRIPTIONS`): where the SDK's text promises what OpenNVR
cannot do, the model is told what the tool really does.

Handlers return short text for a small model, and a ``ToolResult.failed`` for anything
that went wrong, so the model hears the error (and may try again) and the evidence check
sees that the tool did not work. A handler that raises or hangs is the SDK's to catch.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from opennvr_app_sdk.agent import LLMClient, LLMError, Tool, ToolResult, build_tool_definitions

from .images import DEFAULT_IMAGE_SIZE, ImageError, prepare_image_off_loop
from .ports import (
    LiveDetections,
    NvrReadError,
    NvrReadPort,
    StoredEvent,
    describe_any,
    event_line,
)
from .tool_policy import Mode, tool_kind
from .vision import describe_picture

#: How many cameras one call may cover ("all" on a big site would blow the step's time).
MAX_CAMERAS_PER_CALL = 6
MAX_ROWS = 10
_RESULT_CHARS = 1500
#: search_footage without a window looks at the last week first, as its description says.
FOOTAGE_FIRST_WINDOW = timedelta(days=7)
_MAX_MINUTES = 366 * 24 * 60

#: The model-facing descriptions this host writes itself, with the SDK's argument schemas.
#: The SDK's ``detect_objects`` runs a FRESH detection; OpenNVR's API runs none on request,
#: so here it reads the always-on detector's result for the latest frame, refuses it when
#: it is not current, and says so.
HOST_DESCRIPTIONS: Mapping[str, str] = {
    "detect_objects": (
        "Count the objects (people, cars, packages, animals) a camera's detector sees NOW, "
        "on one camera, several, or all: the always-on detector's result for the latest "
        "frame, with that frame's time. A camera that is offline or whose frames are "
        "stale gives no count, so every count it gives is current. Use for 'is anyone at "
        "the gate right now?'. It never describes appearance: use describe_camera for "
        "colour, clothing or what someone is doing."
    ),
}

Handler = Callable[[dict[str, Any]], Awaitable[ToolResult]]


@dataclass(frozen=True)
class ToolHost:
    """What the handlers read from: the NVR, the vision model, the site's lists."""

    nvr: NvrReadPort
    llm: LLMClient
    site_lists: Mapping[str, Sequence[str]] = field(default_factory=dict)
    image_size: int = DEFAULT_IMAGE_SIZE
    now: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))


def core_tool_definitions(site_lists: Sequence[str]) -> list[dict[str, Any]]:
    """The model-facing definitions of the RFC's core tools the SDK does not carry."""
    lists = list(site_lists) or ["__no_lists_configured__"]
    return [
        _definition(
            "camera_health",
            "Check whether a camera is working: online or offline, when it last sent a "
            "frame, whether it records. Use for 'why is the camera down?', 'is the gate "
            "camera online?'. Set ping to true to also fetch a fresh frame now and time "
            "it. It never describes the scene: use describe_camera for that.",
            {
                "camera_id": {"type": "string", "description": "The camera to check."},
                "ping": {
                    "type": "boolean",
                    "description": "Optional: also fetch a frame now, as a live test.",
                },
            },
            ["camera_id"],
        ),
        _definition(
            "site_lookup",
            "Read one of the site's lists: expected visitors, contractors, staff hours, "
            "watchlist. Use to check whether someone or a plate is expected. Pass the "
            "list name and, optionally, text to look for in it. It never searches footage.",
            {
                "list": {"type": "string", "enum": lists, "description": "Which list."},
                "query": {
                    "type": "string",
                    "description": "Optional: a name, company or plate to find.",
                },
            },
            ["list"],
        ),
        _definition(
            "ask_person",
            "Ask a person on site a short question with reply buttons, and wait for the "
            "answer. Use only when the tools cannot settle it and a person can. It never "
            "opens, locks or moves anything.",
            {
                "question": {"type": "string", "description": "One short question."},
                "replies": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Two to four reply buttons, e.g. ['Yes', 'No'].",
                },
            },
            ["question"],
        ),
    ]


def tool_definitions(
    names: Sequence[str], cameras: Sequence[str], site_lists: Sequence[str] = ()
) -> dict[str, dict[str, Any]]:
    """Definitions by tool name, for the tools among ``names`` this host implements;
    the cameras a model may name are baked into the argument enums."""
    defs = {d["function"]["name"]: d for d in build_tool_definitions(list(cameras))}
    for d in core_tool_definitions(site_lists):
        defs[d["function"]["name"]] = d
    for name, description in HOST_DESCRIPTIONS.items():
        if name in defs:
            defs[name]["function"]["description"] = description
    if "camera_health" in names:
        prop = defs["camera_health"]["function"]["parameters"]["properties"]["camera_id"]
        prop["enum"] = list(cameras) or ["__no_cameras_configured__"]
    return {n: defs[n] for n in names if n in defs and tool_kind(n) is not None}


def build_tools(
    names: Sequence[str], host: ToolHost, modes: Mapping[str, Mode]
) -> tuple[list[Tool], list[str]]:
    """The SDK ``Tool`` for each of ``names``, in each tool's mode for this step.

    Returns ``(tools, refused)``: a name that is not a read or ask tool this host
    implements (an actuator, a typo, a tool from another host) is never built and comes
    back in ``refused`` for the trace."""
    cameras = host.nvr.camera_names()
    defs = tool_definitions(names, cameras, tuple(host.site_lists))
    handlers = _handlers(host)
    tools: list[Tool] = []
    refused: list[str] = []
    for name in names:
        kind = tool_kind(name)
        if kind is None or name not in defs or name not in handlers:
            refused.append(name)
            continue
        mode = modes.get(name, "unavailable")
        if kind == "ask_person" and mode == "auto":
            mode = "ask"
        tools.append(
            Tool.from_definition(defs[name], guard_handler(handlers[name]), mode=mode, effect=kind)
        )
    return tools, refused


def guard_handler(handler: Handler) -> Callable[[dict[str, Any]], Awaitable[ToolResult]]:
    """Read errors become failed results the model hears; text that is an error message
    counts as failed, so the evidence check sees it."""

    async def guarded(args: dict[str, Any]) -> ToolResult:
        try:
            result = await handler(args)
        except (NvrReadError, ImageError, LLMError) as err:
            return ToolResult.failed(str(err) or type(err).__name__)
        if result.ok and result.content.lstrip().upper().startswith("ERROR"):
            return ToolResult(result.content, ok=False)
        if len(result.content) > _RESULT_CHARS:
            return ToolResult(result.content[:_RESULT_CHARS] + " …(more not shown)", ok=result.ok)
        return result

    return guarded


def _handlers(host: ToolHost) -> dict[str, Handler]:
    nvr = host.nvr

    def cameras_of(args: Mapping[str, Any]) -> list[str]:
        known = nvr.camera_names()
        asked: list[str] = []
        ids = args.get("camera_ids")
        if isinstance(ids, list) and ids:
            asked = [str(c) for c in ids]
        elif args.get("camera_id") is not None:
            asked = [str(args["camera_id"])]
        if "all" in asked:
            asked = list(known)
        unknown = [c for c in asked if c not in known]
        if unknown:
            raise NvrReadError(f"unknown camera(s) {unknown}; cameras: {list(known)}")
        if not asked:
            raise NvrReadError("name a camera")
        return list(dict.fromkeys(asked))[:MAX_CAMERAS_PER_CALL]

    def one_camera(value: Any) -> str | None:
        if value in (None, "__any__", "all"):
            return None
        if str(value) not in nvr.camera_names():
            raise NvrReadError(f"unknown camera {value!r}; cameras: {list(nvr.camera_names())}")
        return str(value)

    async def picture(camera: str) -> bytes:
        return await prepare_image_off_loop(await nvr.snapshot(camera), host.image_size)

    async def camera_snapshot(args: dict[str, Any]) -> ToolResult:
        lines = []
        for cam in cameras_of(args):
            counts = await nvr.live_objects(cam)
            seen = ", ".join(f"{n} {label}" for label, n in sorted(counts.items()) if n)
            lines.append(f"{cam}: {seen or 'nothing detected'}")
        return ToolResult("\n".join(lines))

    async def detect_objects(args: dict[str, Any]) -> ToolResult:
        asked = cameras_of(args)
        lines = [_detections_line(await nvr.live_detections(cam)) for cam in asked]
        if all(line.startswith(_NO_CURRENT) for line in lines):
            raise NvrReadError("; ".join(lines))  # nothing current: the call did not work
        return ToolResult("\n".join(lines))

    async def describe_camera(args: dict[str, Any]) -> ToolResult:
        question = args.get("question")
        lines = []
        for cam in cameras_of(args):
            text = await nvr.describe_camera(cam, question)
            if text is None:
                text = await describe_picture(host.llm, await picture(cam), question)
            lines.append(f"{cam}: {text}")
        return ToolResult("\n".join(lines))

    async def recent_events(args: dict[str, Any]) -> ToolResult:
        window = _seconds(args.get("window_seconds"))
        events = await nvr.recent_events(
            one_camera(args.get("camera_id")), host.now() - timedelta(seconds=window), MAX_ROWS
        )
        return ToolResult(_lines(events, f"No events in the last {_ago(window)}."))

    async def recent_plates(args: dict[str, Any]) -> ToolResult:
        window = _seconds(args.get("window_seconds"))
        wanted = str(args.get("plate") or "").replace(" ", "").upper()
        events = await nvr.recent_events(
            one_camera(args.get("camera_id")), host.now() - timedelta(seconds=window), 50
        )
        plates = [e for e in events if e.plate and wanted in e.plate.replace(" ", "").upper()][
            :MAX_ROWS
        ]
        return ToolResult(_lines(plates, f"No plates read in the last {_ago(window)}."))

    async def search_history(args: dict[str, Any]) -> ToolResult:
        attrs = args.get("attr")
        events = await nvr.search(
            query=" ".join(str(a) for a in attrs) if isinstance(attrs, list) and attrs else None,
            label=args.get("label"),
            camera=one_camera(args.get("camera_id")),
            plate=args.get("plate"),
            start=args.get("start_time"),
            end=args.get("end_time"),
            limit=MAX_ROWS,
        )
        return ToolResult(_lines(events, "No matching visits in the NVR's history."))

    async def search_footage(args: dict[str, Any]) -> ToolResult:
        words = args.get("keywords")
        keywords = [str(w).strip() for w in words if str(w).strip()] if words else []
        if not keywords:
            raise NvrReadError("name what to look for, e.g. keywords ['red', 'truck']")
        query = " ".join(keywords)
        camera = one_camera(args.get("camera_id"))

        async def since(window: timedelta | None) -> list[StoredEvent]:
            start = None if window is None else (host.now() - window).isoformat()
            return await nvr.search(query=query, camera=camera, start=start, limit=MAX_ROWS)

        minutes = _minutes(args.get("within_minutes"))
        if minutes is not None:
            found = await since(timedelta(minutes=minutes))
            return ToolResult(
                _lines(found, f"No footage matched {query!r} in the last {_ago(minutes * 60)}.")
            )
        found = await since(FOOTAGE_FIRST_WINDOW)
        if found:
            return ToolResult(_lines(found, ""))
        found = await since(None)  # nothing this week: widen to all history, as promised
        if not found:
            return ToolResult(f"No footage matched {query!r} in all the recorded history.")
        return ToolResult(f"Nothing in the last week; from all history:\n{_lines(found, '')}")

    async def describe_event(args: dict[str, Any]) -> ToolResult:
        event_id = int(args["event_id"])
        jpeg = await prepare_image_off_loop(await nvr.event_image(event_id), host.image_size)
        text = await describe_picture(host.llm, jpeg, args.get("question"))
        return ToolResult(f"[#{event_id}] {text}")

    async def camera_health(args: dict[str, Any]) -> ToolResult:
        cam = one_camera(args.get("camera_id"))
        if cam is None:
            raise NvrReadError("name one camera")
        h = await nvr.camera_health(cam)
        text = (
            f"{cam}: online {describe_any(h.online)}, active {describe_any(h.active)}, "
            f"status {describe_any(h.status)}, recording {describe_any(h.recording_state)}"
            f", last frame {describe_any(h.last_frame_at)}"
            f"{', frames stale' if h.stale else ''}"
        )
        if args.get("ping"):
            t0 = time.perf_counter()
            try:
                size = len(await nvr.snapshot(cam))
                text += (
                    f"; ping: a fresh frame ({size} bytes) in "
                    f"{int((time.perf_counter() - t0) * 1000)} ms"
                )
            except NvrReadError as err:
                text += f"; ping: no frame ({err})"
        return ToolResult(text)

    async def site_lookup(args: dict[str, Any]) -> ToolResult:
        name = str(args.get("list") or "")
        if name not in host.site_lists:
            return ToolResult.failed(
                f"no list {name!r}; lists: {', '.join(host.site_lists) or 'none'}"
            )
        entries = [str(e) for e in host.site_lists[name]]
        query = str(args.get("query") or "").strip().lower()
        if query:
            entries = [e for e in entries if query in e.lower()]
            if not entries:
                return ToolResult(f"{query!r} is not on the {name} list.")
        return ToolResult(
            f"{name}:\n" + "\n".join(f"- {e}" for e in entries[:30])
            if entries
            else f"The {name} list is empty."
        )

    async def ask_person(args: dict[str, Any]) -> ToolResult:
        # Never reached: an ask tool suspends the step and the engine asks the person.
        return ToolResult.failed("asking a person must wait for the person")

    return {
        "camera_snapshot": camera_snapshot,
        "detect_objects": detect_objects,
        "describe_camera": describe_camera,
        "recent_events": recent_events,
        "recent_plates": recent_plates,
        "search_footage": search_footage,
        "search_history": search_history,
        "describe_event": describe_event,
        "camera_health": camera_health,
        "site_lookup": site_lookup,
        "ask_person": ask_person,
    }


def _definition(
    name: str, description: str, properties: dict[str, Any], required: list[str]
) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


_NO_CURRENT = "no current detection"


def _detections_line(d: LiveDetections) -> str:
    """One camera's counts, with the frame's time; or why there are none that are current."""
    why = d.not_current
    if why is not None:
        return f"{_NO_CURRENT} on {d.camera}: {why}"
    seen = ", ".join(f"{n} {label}" for label, n in sorted(d.objects.items()) if n)
    notes = [f"frame at {d.frame_at}"] if d.frame_at else []
    if d.motion:
        notes.append("motion")
    return f"{d.camera}: {seen or 'nothing detected'}" + (f" ({', '.join(notes)})" if notes else "")


def _minutes(value: Any) -> float | None:
    """``within_minutes`` as a window, kept within a year; None when not given."""
    if value is None or isinstance(value, bool):
        return None
    try:
        minutes = float(value)
    except (TypeError, ValueError):
        return None
    return min(max(minutes, 1.0), _MAX_MINUTES)


def _seconds(value: Any) -> float:
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = 3600.0
    return min(max(seconds, 1.0), 7 * 86400.0)


def _ago(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:g} h"
    return f"{seconds / 60:g} min" if seconds >= 60 else f"{seconds:g} s"


def _lines(events: Sequence[StoredEvent], empty: str) -> str:
    return "\n".join(event_line(e) for e in events[:MAX_ROWS]) if events else empty
