"""OpenNVR payloads, from any transport, turned into :class:`NvrEvent`.

The same alert reaches Home Assistant in several wrappings: an ``app_alert`` frame on the
events websocket, the app SDK's alert JSON on NATS (``opennvr.alerts.>``), the webhook shape
on MQTT ``opennvr/alerts``, or a CloudEvents 1.0 envelope on ``opennvr/<site>/<key>/event``.
Normalising all of them here, with no Home Assistant import, keeps every source a thin pipe
and lets the hub deduplicate by ``alert_id`` whichever way an alert came.

Tolerance rules, because OpenNVR's payloads grow between releases:

* unknown fields are ignored (kept in ``payload``), unknown frame types and topics yield no
  event, and an unknown severity becomes ``None`` rather than an error;
* only a payload that cannot mean anything (not JSON, not an object, an alert without the
  ``alert_id`` it is deduplicated by, a camera status without a camera) raises
  :class:`MalformedPayload`, whose ``kind`` names the payload family so a flood of one
  broken kind is logged once and counted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from types import MappingProxyType
from typing import Any, Final

from opennvr_app_sdk.tier0 import TIER0_ADAPTER

from ..engine.events import EventSource, NvrEvent
from .tracks import BadTracks, Track, detection_tracks, frame_size, overlay_tracks, tier0_tracks

#: Severities OpenNVR and its apps use, mapped onto the four the inbox knows.
_SEVERITIES: Final[Mapping[str, str]] = MappingProxyType(
    {
        "low": "low",
        "info": "low",
        "debug": "low",
        "medium": "medium",
        "moderate": "medium",
        "warning": "medium",
        "warn": "medium",
        "high": "high",
        "error": "high",
        "critical": "critical",
        "fatal": "critical",
    }
)
#: ``cam3``, ``cam-3``, ``camera_3``, ``3``: OpenNVR's text handles for camera 3.
_CAMERA_HANDLE: Final = re.compile(r"^(?:cam(?:era)?[-_ ]?)?0*(\d+)$", re.IGNORECASE)
#: An MQTT entity key such as ``camera.3.alerts``.
_CAMERA_KEY: Final = re.compile(r"(?:^|/)camera\.(\d+)(?:\.|$)")

ALERTS_TOPIC: Final = "opennvr/alerts"
ALERTS_SUBJECT_PREFIX: Final = "opennvr.alerts."
EVENTS_SUBJECT_PREFIX: Final = "opennvr.events."
#: ``opennvr.inference.{adapter}.{camera_id}.completed`` (Tier-0's adapter is ``tier0``).
INFERENCE_SUBJECT_PREFIX: Final = "opennvr.inference."
#: The kind of the events that carry a detector's tracks for one camera and frame.
TRACKS_KIND: Final = "tracks"
#: How far a producer's own timestamp may be from ours before it is not believed (a
#: pipeline clock that is not wall time, a camera with a wrong clock).
_TIME_TRUST: Final = timedelta(hours=1)
#: Websocket frames that carry no event (the stream itself uses them).
_CONTROL_FRAMES: Final = frozenset({"subscribed", "heartbeat", "lagged"})


class MalformedPayload(ValueError):
    """A payload of a known type that cannot be read.

    ``kind`` is the payload family ("json", "alert", "event", "camera_status", ...): the
    hub counts drops per kind and logs each kind once. ``detail`` says what was wrong.
    """

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail


# ── small field readers ─────────────────────────────────────────────────────


def camera_id_text(value: Any) -> str | None:
    """OpenNVR's integer camera id as text (``3``, ``"3"``, ``"cam3"`` -> ``"3"``).

    A handle that names no number (``"cam-front-door"``) is kept as it is: a workflow can
    still match it even though no camera entity will. ``None``/empty means "no camera".
    """
    if value is None:
        return None
    if isinstance(value, bool):
        raise MalformedPayload("camera_id", f"camera_id is a boolean ({value!r})")
    if isinstance(value, int):
        if value < 0:
            raise MalformedPayload("camera_id", f"camera_id is negative ({value})")
        return str(value)
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return str(int(value))
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        match = _CAMERA_HANDLE.fullmatch(text)
        return str(int(match.group(1))) if match else text
    raise MalformedPayload("camera_id", f"camera_id is a {type(value).__name__}")


def normalise_severity(value: Any) -> str | None:
    """low/medium/high/critical (``info`` is low); anything unknown is ``None``."""
    if not isinstance(value, str):
        return None
    return _SEVERITIES.get(value.strip().lower())


def parse_time(value: Any, fallback: datetime) -> datetime:
    """An ISO 8601 time or epoch seconds, as an aware datetime; ``fallback`` when absent
    or unreadable (a bad timestamp is not worth losing the event for)."""
    if isinstance(value, bool):
        return fallback
    if isinstance(value, int | float):
        try:
            return datetime.fromtimestamp(float(value), UTC)
        except OverflowError, OSError, ValueError:
            return fallback
    if isinstance(value, str) and value:
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return fallback
        return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)
    return fallback


def parse_json(raw: bytes | bytearray | str, kind: str = "json") -> Any:
    """Decode a JSON message body or raise :class:`MalformedPayload` of ``kind``."""
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes | bytearray) else raw
        return json.loads(text)
    except UnicodeDecodeError as err:
        raise MalformedPayload(kind, f"not UTF-8 ({err.reason})") from err
    except ValueError as err:
        raise MalformedPayload(kind, f"not JSON ({err})") from err


def _text(value: Any) -> str | None:
    if isinstance(value, str):
        stripped = value.strip()
        return stripped or None
    return None


def _object(value: Any, kind: str, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise MalformedPayload(kind, f"{what} is not an object ({type(value).__name__})")
    return value


def _frozen(data: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(data))


def _now(now: datetime | None) -> datetime:
    return now if now is not None else datetime.now(UTC)


# ── alerts ──────────────────────────────────────────────────────────────────


def alert_event(
    data: Mapping[str, Any],
    *,
    source: EventSource,
    camera_hint: Any = None,
    app_hint: str | None = None,
    time_hint: Any = None,
    raw: Mapping[str, Any] | None = None,
    now: datetime | None = None,
) -> NvrEvent:
    """One alert in the SDK's §11.5 wire shape (also the inbox row and the webhook body).

    ``camera_hint``/``app_hint``/``time_hint`` come from the wrapping (subject, frame) and
    are used when the alert itself does not say. ``raw`` is kept as the event's payload
    (the whole message as received); it defaults to ``data``.
    """
    alert_id = _text(data.get("alert_id"))
    if alert_id is None:
        raise MalformedPayload("alert", "no alert_id (the key alerts are deduplicated by)")
    src = data.get("source")
    app = _text(src.get("name")) if isinstance(src, Mapping) else _text(src)
    app = app or _text(data.get("source_name")) or app_hint
    raw_camera = data.get("camera_id")
    try:
        camera_id = camera_id_text(raw_camera if raw_camera is not None else camera_hint)
    except MalformedPayload as err:
        raise MalformedPayload("alert", err.detail) from err
    tags = data.get("tags")
    tag_texts = [t for t in (_text(x) for x in tags) if t] if isinstance(tags, list) else []
    event_type = _text(data.get("event_type"))
    alert_type = (
        _text(data.get("alert_type"))
        or _text(data.get("kind"))
        or (event_type if event_type not in (None, "alert") else None)
        or (tag_texts[0] if tag_texts else None)
        or "alert"
    )
    labels = frozenset(tag_texts) | ({alert_type} if alert_type != "alert" else frozenset())
    fired = data.get("fired_at", data.get("ts", time_hint))
    return NvrEvent(
        kind="alert",
        source=source,
        time=parse_time(fired, _now(now)),
        type=alert_type,
        camera_id=camera_id,
        alert_id=alert_id,
        app=app,
        severity=normalise_severity(data.get("severity")),
        title=_text(data.get("title")) or _text(data.get("subject")),
        labels=labels,
        track_id=_text(data.get("track_id")),
        correlation_id=_text(data.get("correlation_id")),
        payload=_frozen(raw if raw is not None else data),
    )


# ── contracted events (``opennvr.events.*`` envelopes) ──────────────────────


def domain_event(
    envelope: Mapping[str, Any],
    *,
    source: EventSource,
    schema_hint: str | None = None,
    camera_hint: Any = None,
    now: datetime | None = None,
) -> NvrEvent:
    """A contracted event envelope ``{id, schema, correlation_id, camera_id, ts, producer,
    payload}``; the event's ``payload`` holds the contracted fields."""
    schema = _text(envelope.get("schema")) or schema_hint
    if schema is None:
        raise MalformedPayload("event", "no schema")
    fields = _object(envelope.get("payload"), "event", f"{schema} payload")
    raw_camera = envelope.get("camera_id")
    try:
        camera_id = camera_id_text(raw_camera if raw_camera is not None else camera_hint)
    except MalformedPayload as err:
        raise MalformedPayload("event", err.detail) from err
    labels = {
        label for label in (_text(fields.get("label")), _text(fields.get("vehicle_label"))) if label
    }
    tracks = fields.get("tracks")
    if isinstance(tracks, list):
        labels.update(
            label for t in tracks if isinstance(t, Mapping) and (label := _text(t.get("label")))
        )
    track = fields.get("track_id")
    return NvrEvent(
        kind="event",
        source=source,
        time=parse_time(envelope.get("ts"), _now(now)),
        type=schema,
        camera_id=camera_id,
        app=_text(envelope.get("producer")),
        labels=frozenset(labels),
        plate=_text(fields.get("plate_text")),
        track_id=str(track) if isinstance(track, int | str) and str(track) else None,
        correlation_id=_text(envelope.get("correlation_id")),
        payload=_frozen(fields),
    )


# ── the events websocket (v2 frames) ────────────────────────────────────────


def _camera_state_event(
    camera_id: str, online: bool, time: datetime, payload: Mapping[str, Any]
) -> NvrEvent:
    return NvrEvent(
        kind="camera_online" if online else "camera_offline",
        source="websocket",
        time=time,
        camera_id=camera_id,
        payload=_frozen(payload),
    )


def _site_mode_event(
    mode: Any, extra: Mapping[str, Any], source: EventSource, time: datetime
) -> NvrEvent:
    text = _text(mode)
    if text is None:
        raise MalformedPayload("site_mode", f"mode is {mode!r}")
    payload: dict[str, Any] = {"mode": text}
    for key in ("changed_at", "changed_by", "reason"):
        if key in extra:
            payload[key] = extra[key]
    return NvrEvent(kind="site_mode", source=source, time=time, type=text, payload=_frozen(payload))


def _online(value: Any, status: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    text = _text(status)
    if text is not None and text.lower() in ("online", "offline"):
        return text.lower() == "online"
    return None


def from_ws_frame(frame: Mapping[str, Any], *, now: datetime | None = None) -> list[NvrEvent]:
    """The events (zero or more) one websocket frame carries.

    ``app_alert`` -> an alert; ``camera_status`` -> camera_online/offline; ``site_mode`` ->
    site_mode; ``state_snapshot`` -> one camera_online/offline per camera whose state is
    known plus the site mode; ``tracks`` and ``inference_result`` -> tracks (when they
    carry any); ``camera_event`` -> camera_event (a camera's own motion or tamper alarm).
    Control frames and types not listed here yield nothing.
    """
    frame_type = frame.get("event_type")
    if not isinstance(frame_type, str) or frame_type in _CONTROL_FRAMES:
        return []
    time = parse_time(frame.get("ts"), _now(now))
    if frame_type == "app_alert":
        payload = _object(frame.get("payload"), "alert", "app_alert payload")
        return [
            alert_event(
                payload,
                source="websocket",
                camera_hint=frame.get("camera_id"),
                app_hint=_text(frame.get("task")),
                time_hint=frame.get("ts"),
                now=time,
            )
        ]
    if frame_type == "camera_status":
        inner = frame.get("payload")
        body: Mapping[str, Any] = inner if isinstance(inner, Mapping) else frame
        raw_camera = frame.get("camera_id", body.get("camera_id"))
        try:
            camera_id = camera_id_text(raw_camera)
        except MalformedPayload as err:
            raise MalformedPayload("camera_status", err.detail) from err
        if camera_id is None:
            raise MalformedPayload("camera_status", "no camera_id")
        online = _online(body.get("online"), body.get("status"))
        if online is None:
            raise MalformedPayload("camera_status", f"camera {camera_id}: no online state")
        return [_camera_state_event(camera_id, online, time, body)]
    if frame_type == "site_mode":
        inner = frame.get("payload")
        body = inner if isinstance(inner, Mapping) and "mode" in inner else frame
        return [_site_mode_event(body.get("mode"), body, "websocket", time)]
    if frame_type == "state_snapshot":
        return _snapshot_events(frame, time)
    if frame_type == "tracks":
        return _ws_tracks(frame, time)
    if frame_type == "inference_result":
        return _ws_inference(frame, time)
    if frame_type == "camera_event":
        return [_ws_camera_event(frame, time)]
    return []


def _snapshot_events(frame: Mapping[str, Any], time: datetime) -> list[NvrEvent]:
    cameras = frame.get("cameras", [])
    if not isinstance(cameras, list):
        raise MalformedPayload("state_snapshot", "cameras is not a list")
    events: list[NvrEvent] = []
    for entry in cameras:
        # One unreadable camera must not hide the others: skip it, keep the rest.
        if not isinstance(entry, Mapping):
            continue
        try:
            camera_id = camera_id_text(entry.get("camera_id"))
        except MalformedPayload:
            continue
        online = _online(entry.get("online"), entry.get("status"))
        if camera_id is not None and online is not None:
            events.append(_camera_state_event(camera_id, online, time, entry))
    mode = frame.get("site_mode")
    if isinstance(mode, Mapping) and _text(mode.get("mode")):
        events.append(_site_mode_event(mode.get("mode"), mode, "websocket", time))
    elif _text(mode):
        events.append(_site_mode_event(mode, {}, "websocket", time))
    return events


# ── detector tracks ─────────────────────────────────────────────────────────


def tracks_event(
    tracks: list[Track],
    *,
    source: EventSource,
    camera: Any,
    producer: str,
    frame: Any,
    time: datetime,
) -> list[NvrEvent]:
    """One camera's tracks in one frame: ``type`` is the producer (``tier0``, an adapter,
    ``overlay`` for an app's own boxes), ``payload`` ``{frame, tracks}`` with each track
    ``{id, label, score, bbox}`` (see :mod:`.tracks`). A frame with no track yields none."""
    try:
        camera_id = camera_id_text(camera)
    except MalformedPayload as err:
        raise MalformedPayload(TRACKS_KIND, err.detail) from err
    if camera_id is None:
        raise MalformedPayload(TRACKS_KIND, f"{producer} tracks without a camera")
    if not tracks:
        return []
    size = frame_size(frame)
    return [
        NvrEvent(
            kind=TRACKS_KIND,
            source=source,
            time=time,
            type=producer,
            camera_id=camera_id,
            labels=frozenset(t["label"] for t in tracks),
            payload=_frozen(
                {"frame": {"w": size[0], "h": size[1]} if size else None, "tracks": tracks}
            ),
        )
    ]


def _read_tracks(read: Any, body: Mapping[str, Any]) -> list[Track]:
    try:
        tracks: list[Track] = read(body)
    except BadTracks as err:
        raise MalformedPayload(TRACKS_KIND, str(err)) from err
    return tracks


def _ws_tracks(frame: Mapping[str, Any], time: datetime) -> list[NvrEvent]:
    payload = _object(frame.get("payload"), TRACKS_KIND, "tracks payload")
    return tracks_event(
        _read_tracks(overlay_tracks, payload),
        source="websocket",
        camera=frame.get("camera_id"),
        producer=_text(frame.get("task")) or TIER0_ADAPTER,
        frame=payload.get("frame"),
        time=time,
    )


def _ws_inference(frame: Mapping[str, Any], time: datetime) -> list[NvrEvent]:
    """An ``inference_result``: the adapter's result; only detections become tracks (a
    caption or a count is not a box)."""
    payload = _object(frame.get("payload"), TRACKS_KIND, "inference_result payload")
    result = payload.get("result")
    body = result if isinstance(result, Mapping) else payload
    if "detections" not in body:
        return []
    return tracks_event(
        _read_tracks(lambda b: detection_tracks(b.get("detections")), body),
        source="websocket",
        camera=frame.get("camera_id", payload.get("camera_id")),
        producer=_text(frame.get("task")) or _text(payload.get("adapter")) or "inference",
        frame=payload.get("frame"),
        time=time,
    )


def _ws_camera_event(frame: Mapping[str, Any], time: datetime) -> NvrEvent:
    inner = frame.get("payload")
    body: Mapping[str, Any] = inner if isinstance(inner, Mapping) else {}
    try:
        camera_id = camera_id_text(frame.get("camera_id", body.get("camera_id")))
    except MalformedPayload as err:
        raise MalformedPayload("camera_event", err.detail) from err
    if camera_id is None:
        raise MalformedPayload("camera_event", "no camera_id")
    return NvrEvent(
        kind="camera_event",
        source="websocket",
        time=parse_time(body.get("occurred_at"), time),
        type=_text(frame.get("task")) or _text(body.get("event_type")),
        camera_id=camera_id,
        payload=_frozen(body),
    )


def _inference_events(
    tokens: list[str], data: bytes | bytearray | str, now: datetime | None
) -> list[NvrEvent]:
    """``opennvr.inference.{adapter}.{camera}.completed``: Tier-0's tracks or an adapter's
    detections."""
    body = _object(parse_json(data, TRACKS_KIND), TRACKS_KIND, "inference message")
    adapter = tokens[2] if len(tokens) > 3 else None
    camera_hint = tokens[3] if len(tokens) > 4 else None
    at = _now(now)
    if adapter == TIER0_ADAPTER or body.get("schema") == "opennvr.tier0.v1":
        stamp = body.get("wall_ts", body.get("ts"))
        return tracks_event(
            _read_tracks(tier0_tracks, body),
            source="nats",
            camera=body.get("camera_id") or camera_hint,
            producer=TIER0_ADAPTER,
            frame=body.get("frame"),
            time=_trusted_time(stamp, at),
        )
    result = body.get("result")
    if not isinstance(result, Mapping) or "detections" not in result:
        return []
    return tracks_event(
        _read_tracks(lambda b: detection_tracks(b.get("detections")), result),
        source="nats",
        camera=body.get("camera_id") or camera_hint,
        producer=_text(body.get("adapter")) or adapter or "inference",
        frame=body.get("frame"),
        time=_trusted_time(body.get("completed_at"), at),
    )


def _trusted_time(value: Any, now: datetime) -> datetime:
    parsed = parse_time(value, now)
    return parsed if abs(parsed - now) <= _TIME_TRUST else now


# ── NATS ────────────────────────────────────────────────────────────────────


def from_nats(
    subject: str, data: bytes | bytearray | str, *, now: datetime | None = None
) -> list[NvrEvent]:
    """An alert (``opennvr.alerts.{kind}.{name}.{camera}``), a contracted event
    (``opennvr.events.<domain>.<event>.v<N>.<camera>``) or a detector's tracks
    (``opennvr.inference.{adapter}.{camera}.completed``); other subjects yield nothing."""
    tokens = subject.split(".")
    if subject.startswith(ALERTS_SUBJECT_PREFIX):
        body = _object(parse_json(data, "alert"), "alert", "alert message")
        return [
            alert_event(
                body,
                source="nats",
                camera_hint=tokens[4] if len(tokens) > 4 else None,
                app_hint=tokens[3] if len(tokens) > 3 else None,
                now=now,
            )
        ]
    if subject.startswith(EVENTS_SUBJECT_PREFIX):
        envelope = _object(parse_json(data, "event"), "event", "event envelope")
        return [
            domain_event(
                envelope,
                source="nats",
                schema_hint=".".join(tokens[2:5]) if len(tokens) > 4 else None,
                camera_hint=tokens[5] if len(tokens) > 5 else None,
                now=now,
            )
        ]
    if subject.startswith(INFERENCE_SUBJECT_PREFIX) and tokens[-1] == "completed":
        return _inference_events(tokens, data, now)
    return []


# ── MQTT ────────────────────────────────────────────────────────────────────


def from_mqtt(
    topic: str, payload: bytes | bytearray | str, *, now: datetime | None = None
) -> list[NvrEvent]:
    """``opennvr/alerts`` (every alert, webhook shape) or ``opennvr/<site>/<key>/event``
    (CloudEvents 1.0, structured JSON, the event in ``data``); other topics yield nothing."""
    if topic == ALERTS_TOPIC:
        body = _object(parse_json(payload, "alert"), "alert", "alert message")
        inner = body.get("data") if "specversion" in body else body.get("alert")
        alert = inner if isinstance(inner, Mapping) else body
        time_hint = body.get("time") if "specversion" in body else None
        return [alert_event(alert, source="mqtt", time_hint=time_hint, raw=body, now=now)]
    parts = topic.split("/")
    if len(parts) == 4 and parts[0] == "opennvr" and parts[3] == "event":
        return [_cloud_event(parts[2], payload, now)]
    return []


def _cloud_event(key: str, payload: bytes | bytearray | str, now: datetime | None) -> NvrEvent:
    envelope = _object(parse_json(payload, "cloudevent"), "cloudevent", "CloudEvent")
    data: Any = envelope.get("data")
    if isinstance(data, str):
        data = parse_json(data, "cloudevent")
    body = _object(data, "cloudevent", f"{key} data")
    match = _CAMERA_KEY.search(key) or _CAMERA_KEY.search(str(envelope.get("source", "")))
    camera_hint = match.group(1) if match else None
    time = parse_time(envelope.get("time"), _now(now))
    if "alert_id" in body or key.endswith(".alerts"):
        return alert_event(
            body,
            source="mqtt",
            camera_hint=camera_hint,
            time_hint=envelope.get("time"),
            raw=body,
            now=time,
        )
    if isinstance(body.get("schema"), str) and "payload" in body:
        return domain_event(body, source="mqtt", camera_hint=camera_hint, now=time)
    event_type = (
        _text(body.get("event_type"))
        or _text(envelope.get("subject"))
        or _text(envelope.get("type"))
    )
    if event_type is None:
        raise MalformedPayload("cloudevent", f"{key}: no event type")
    raw_camera = body.get("camera_id")
    try:
        camera_id = camera_id_text(raw_camera if raw_camera is not None else camera_hint)
    except MalformedPayload as err:
        raise MalformedPayload("cloudevent", err.detail) from err
    label = _text(body.get("label")) or (event_type if key.endswith(".detections") else None)
    track = body.get("track_id")
    return NvrEvent(
        kind="event",
        source="mqtt",
        time=time,
        type=event_type,
        camera_id=camera_id,
        labels=frozenset({label}) if label else frozenset(),
        plate=_text(body.get("plate_text")),
        track_id=str(track) if isinstance(track, int | str) and str(track) else None,
        correlation_id=_text(body.get("correlation_id")),
        payload=_frozen(body),
    )
