"""normalize.py: every OpenNVR payload shape, and every way one can be unreadable."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from opennvr_app_sdk.alerts import Alert, AlertSource, alert_subject
from opennvr_app_sdk.domain_events import domain_envelope, domain_subject

from custom_components.opennvr_workflows.nvr.normalize import (
    MalformedPayload,
    camera_id_text,
    from_mqtt,
    from_nats,
    from_ws_frame,
    normalise_severity,
    parse_time,
)

NOW = datetime(2026, 11, 5, 12, 0, tzinfo=UTC)
#: OpenNVR's own payloads, copied into the repository so the tests run anywhere.
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def app_alert_frame(**payload_changes: Any) -> dict[str, Any]:
    """An ``app_alert`` frame as the events websocket v2 sends it."""
    payload: dict[str, Any] = {
        "severity": "high",
        "alert_type": "person",
        "title": "Person at the Back Garden",
        "alert_id": "alrt_0123456789ab",
        "source": {"kind": "app", "name": "intrusion"},
        "correlation_id": "c0ffee",
        "images": [],
    }
    payload.update(payload_changes)
    return {
        "v": 2,
        "seq": 7,
        "ts": "2026-11-05T11:59:00+00:00",
        "event_type": "app_alert",
        "camera_id": 3,
        "task": "intrusion",
        "payload": payload,
    }


def malformed(kind: str, call: Any, *args: Any) -> MalformedPayload:
    with pytest.raises(MalformedPayload) as info:
        call(*args)
    assert info.value.kind == kind, info.value
    return info.value


# ── field readers ────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (3, "3"),
        ("3", "3"),
        ("cam3", "3"),
        ("cam-3", "3"),
        ("camera_03", "3"),
        ("CAM12", "12"),
        (4.0, "4"),
        ("cam-front-door", "cam-front-door"),
        (None, None),
        ("  ", None),
    ],
)
def test_camera_id_text_maps_handles_to_the_integer_id(raw: Any, expected: str | None) -> None:
    assert camera_id_text(raw) == expected


@pytest.mark.parametrize("raw", [True, -1, ["3"], {"id": 3}, 2.5])
def test_camera_id_text_rejects_what_names_no_camera(raw: Any) -> None:
    malformed("camera_id", camera_id_text, raw)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("info", "low"),
        ("INFO", "low"),
        ("low", "low"),
        ("medium", "medium"),
        ("warning", "medium"),
        ("high", "high"),
        ("error", "high"),
        ("critical", "critical"),
        ("catastrophic", None),
        (5, None),
        (None, None),
    ],
)
def test_severity_is_normalised_to_the_four_levels(raw: Any, expected: str | None) -> None:
    assert normalise_severity(raw) == expected


def test_parse_time_reads_iso_and_epoch_and_falls_back() -> None:
    assert parse_time("2026-11-05T10:00:00Z", NOW) == datetime(2026, 11, 5, 10, tzinfo=UTC)
    naive = parse_time("2026-11-05T10:00:00", NOW)
    assert naive.tzinfo is not None
    assert naive == datetime(2026, 11, 5, 10, tzinfo=UTC)
    assert parse_time(0, NOW) == datetime(1970, 1, 1, tzinfo=UTC)
    assert parse_time("yesterday", NOW) is NOW
    assert parse_time(True, NOW) is NOW
    assert parse_time(None, NOW) is NOW
    assert parse_time(1e20, NOW) is NOW


# ── websocket frames ─────────────────────────────────────────────────────────


def test_app_alert_frame_becomes_an_alert() -> None:
    frame = app_alert_frame()
    [event] = from_ws_frame(frame, now=NOW)
    assert event.kind == "alert"
    assert event.source == "websocket"
    assert event.type == "person"
    assert event.camera_id == "3"
    assert event.alert_id == "alrt_0123456789ab"
    assert event.severity == "high"
    assert event.title == "Person at the Back Garden"
    assert event.app == "intrusion"
    assert event.correlation_id == "c0ffee"
    assert event.labels == frozenset({"person"})
    assert event.time == datetime(2026, 11, 5, 11, 59, tzinfo=UTC)
    assert dict(event.payload) == frame["payload"]


def test_app_alert_tolerates_additions_and_falls_back_sensibly() -> None:
    frame = app_alert_frame(severity="info", source=None, new_field={"x": 1})
    del frame["payload"]["alert_type"]
    frame["new_top_level"] = True
    [event] = from_ws_frame(frame, now=NOW)
    assert event.severity == "low"
    assert event.app == "intrusion"  # from the frame's task
    assert event.type == "alert"  # no alert type anywhere: the generic one
    assert event.payload["new_field"] == {"x": 1}


@pytest.mark.parametrize(
    "change",
    [
        lambda f: f.pop("payload"),
        lambda f: f.update(payload="person"),
        lambda f: f["payload"].pop("alert_id"),
        lambda f: f["payload"].update(alert_id=""),
        lambda f: f["payload"].update(alert_id=17),
        lambda f: f.update(camera_id=True),
    ],
)
def test_unreadable_app_alerts_are_malformed(change: Any) -> None:
    frame = app_alert_frame()
    change(frame)
    malformed("alert", from_ws_frame, frame)


def test_camera_status_frames() -> None:
    online = {"event_type": "camera_status", "camera_id": 2, "online": True, "status": "online"}
    offline = {"event_type": "camera_status", "camera_id": "cam2", "status": "offline"}
    nested = {"event_type": "camera_status", "payload": {"camera_id": 5, "online": False}}
    assert [(e.kind, e.camera_id) for e in from_ws_frame(online)] == [("camera_online", "2")]
    assert [(e.kind, e.camera_id) for e in from_ws_frame(offline)] == [("camera_offline", "2")]
    assert [(e.kind, e.camera_id) for e in from_ws_frame(nested)] == [("camera_offline", "5")]


@pytest.mark.parametrize(
    "frame",
    [
        {"event_type": "camera_status", "online": True},
        {"event_type": "camera_status", "camera_id": 2},
        {"event_type": "camera_status", "camera_id": 2, "status": "rebooting"},
        {"event_type": "camera_status", "camera_id": [2], "online": True},
    ],
)
def test_unreadable_camera_status_is_malformed(frame: dict[str, Any]) -> None:
    malformed("camera_status", from_ws_frame, frame)


def test_site_mode_frames_flat_and_nested() -> None:
    flat = {"event_type": "site_mode", "mode": "armed_away", "changed_by": "token:x"}
    nested = {"event_type": "site_mode", "payload": {"mode": "disarmed"}}
    [a] = from_ws_frame(flat)
    [b] = from_ws_frame(nested)
    assert (a.kind, a.type, dict(a.payload)) == (
        "site_mode",
        "armed_away",
        {"mode": "armed_away", "changed_by": "token:x"},
    )
    assert (b.kind, b.payload["mode"]) == ("site_mode", "disarmed")
    malformed("site_mode", from_ws_frame, {"event_type": "site_mode", "mode": None})


def test_state_snapshot_fixture_gives_camera_states_and_site_mode() -> None:
    frame = json.loads((FIXTURES / "ws_state_snapshot.json").read_text())
    events = from_ws_frame(frame, now=NOW)
    assert [(e.kind, e.camera_id, e.type) for e in events] == [
        ("camera_online", "1", None),
        ("site_mode", None, "armed_away"),
    ]
    assert events[1].payload["mode"] == "armed_away"


def test_state_snapshot_skips_unknown_or_unreadable_cameras() -> None:
    frame = {
        "event_type": "state_snapshot",
        "cameras": [
            {"camera_id": 1, "online": False},
            {"camera_id": 2, "online": None},  # unknown: no event rather than a guess
            {"camera_id": True, "online": True},
            "cam4",
            {"camera_id": 5, "status": "online"},
        ],
        "site_mode": "armed_home",
    }
    events = from_ws_frame(frame)
    assert [(e.kind, e.camera_id) for e in events] == [
        ("camera_offline", "1"),
        ("camera_online", "5"),
        ("site_mode", None),
    ]
    malformed("state_snapshot", from_ws_frame, {"event_type": "state_snapshot", "cameras": {}})


@pytest.mark.parametrize(
    "frame",
    [
        {"event_type": "subscribed", "epoch": "e", "seq": 1},
        {"event_type": "heartbeat", "seq": 3},
        {"event_type": "lagged"},
        {"event_type": "inference_result", "camera_id": 1, "payload": {"caption": "a cat"}},
        {"event_type": "brand_new_frame_type", "anything": [1, 2]},
        {"no_event_type": True},
        {"event_type": 12},
    ],
)
def test_control_and_unknown_frames_yield_nothing(frame: dict[str, Any]) -> None:
    assert from_ws_frame(frame) == []


# ── NATS ─────────────────────────────────────────────────────────────────────


def sdk_alert(**changes: Any) -> Alert:
    fields: dict[str, Any] = {
        "title": "Loitering by the shed",
        "description": "someone stayed 3 minutes",
        "camera_id": "cam3",
        "severity": "info",
        "source": AlertSource(kind="app", name="loitering-detection", version="1.0.0"),
        "correlation_id": "corr-1",
        "tags": ["loitering", "night"],
        "fired_at": "2026-11-05T10:00:00+00:00",
    }
    fields.update(changes)
    return Alert(**fields)


def test_nats_alert_from_the_app_sdk() -> None:
    alert = sdk_alert()
    [event] = from_nats(alert_subject(alert), json.dumps(alert.to_wire()).encode(), now=NOW)
    assert event.kind == "alert"
    assert event.source == "nats"
    assert event.alert_id == alert.alert_id
    assert event.camera_id == "3"
    assert event.severity == "low"
    assert event.type == "loitering"  # no alert_type: the first tag
    assert event.labels == frozenset({"loitering", "night"})
    assert event.app == "loitering-detection"
    assert event.title == "Loitering by the shed"
    assert event.correlation_id == "corr-1"
    assert event.time == datetime(2026, 11, 5, 10, tzinfo=UTC)
    assert event.payload["description"] == "someone stayed 3 minutes"


def test_nats_alert_type_and_subject_fallbacks() -> None:
    alert = sdk_alert(alert_type="package_taken")
    wire = alert.to_wire()
    wire.pop("camera_id")
    wire.pop("source")
    [event] = from_nats("opennvr.alerts.app.parcel-watch.cam7", json.dumps(wire))
    assert event.type == "package_taken"
    assert event.camera_id == "7"  # from the subject
    assert event.app == "parcel-watch"  # from the subject


def test_nats_contracted_event() -> None:
    payload = {"plate_text": "AB12CDE", "confidence": 0.93, "vehicle_label": "car", "event_id": 41}
    envelope = domain_envelope(
        "plate.recognized.v1", camera_id="cam2", payload=payload, producer="anpr"
    )
    subject = domain_subject("plate.recognized.v1", "cam2")
    [event] = from_nats(subject, json.dumps(envelope).encode())
    assert event.kind == "event"
    assert event.type == "plate.recognized.v1"
    assert event.camera_id == "2"
    assert event.plate == "AB12CDE"
    assert event.labels == frozenset({"car"})
    assert event.app == "anpr"
    assert event.alert_id is None
    assert dict(event.payload) == payload


def test_nats_event_schema_from_subject_and_track_labels() -> None:
    envelope = {
        "id": "evt_1",
        "camera_id": "cam1",
        "payload": {"frame": {"w": 1, "h": 1}, "tracks": [{"label": "person"}, {"label": "dog"}]},
    }
    [event] = from_nats("opennvr.events.detection.observed.v1.cam1", json.dumps(envelope))
    assert event.type == "detection.observed.v1"
    assert event.labels == frozenset({"person", "dog"})


@pytest.mark.parametrize(
    ("subject", "data", "kind"),
    [
        ("opennvr.alerts.app.x.cam1", b"{not json", "alert"),
        ("opennvr.alerts.app.x.cam1", b"\xff\xfe", "alert"),
        ("opennvr.alerts.app.x.cam1", b"[1, 2]", "alert"),
        ("opennvr.alerts.app.x.cam1", b'{"title": "no id"}', "alert"),
        ("opennvr.events.plate.recognized.v1.cam2", b"null", "event"),
        ("opennvr.events.plate.recognized.v1.cam2", b'{"schema": "plate.recognized.v1"}', "event"),
        ("opennvr.events.x", b'{"payload": {}}', "event"),
    ],
)
def test_nats_malformed_payloads(subject: str, data: bytes, kind: str) -> None:
    malformed(kind, from_nats, subject, data)


def test_nats_other_subjects_yield_nothing() -> None:
    assert from_nats("opennvr.inference.yolo.cam1.completed", b"{}") == []


# ── MQTT ─────────────────────────────────────────────────────────────────────


def test_mqtt_alerts_topic_in_the_webhook_shape() -> None:
    body = {"subject": "Person at the door", "message": "front door", **sdk_alert().to_wire()}
    [event] = from_mqtt("opennvr/alerts", json.dumps(body).encode())
    assert event.kind == "alert"
    assert event.source == "mqtt"
    assert event.camera_id == "3"
    assert event.title == "Loitering by the shed"
    assert dict(event.payload) == body


def test_mqtt_alerts_topic_wrapped_in_a_cloudevent_or_nested() -> None:
    wire = sdk_alert().to_wire()
    cloud = {"specversion": "1.0", "id": "1", "time": "2026-11-05T09:00:00Z", "data": wire}
    [a] = from_mqtt("opennvr/alerts", json.dumps(cloud))
    [b] = from_mqtt("opennvr/alerts", json.dumps({"subject": "s", "alert": wire}))
    assert a.alert_id == b.alert_id == wire["alert_id"]


def cloud_event(key: str, data: Any, **extra: Any) -> str:
    """OpenNVR's CloudEvents 1.0 envelope for an entity event."""
    return json.dumps(
        {
            "specversion": "1.0",
            "id": "9f",
            "source": f"/opennvr/site/entities/{key}",
            "type": f"com.opennvr.{key.split('.')[-1]}",
            "subject": "alert",
            "time": "2026-11-05T08:00:00+00:00",
            "datacontenttype": "application/json",
            "data": data,
            **extra,
        }
    )


def test_mqtt_cloudevent_alert_on_a_camera_alerts_key() -> None:
    data = {"event_type": "alert", "alert_id": "alrt_aaaaaaaaaaaa", "severity": "critical"}
    [event] = from_mqtt(
        "opennvr/0755a9401ff5/camera.4.alerts/event", cloud_event("camera.4.alerts", data)
    )
    assert event.kind == "alert"
    assert event.camera_id == "4"
    assert event.severity == "critical"
    assert event.type == "alert"
    assert event.time == datetime(2026, 11, 5, 8, tzinfo=UTC)


def test_mqtt_cloudevent_detection() -> None:
    data = {"event_type": "person", "score": 0.9, "track_id": 12}
    [event] = from_mqtt(
        "opennvr/site/camera.2.detections/event", cloud_event("camera.2.detections", data)
    )
    assert (event.kind, event.type, event.camera_id) == ("event", "person", "2")
    assert event.labels == frozenset({"person"})
    assert event.track_id == "12"


def test_mqtt_cloudevent_carrying_a_contracted_event_and_string_data() -> None:
    envelope = domain_envelope(
        "occupancy.changed.v1", camera_id="cam6", payload={"count": 3}, producer="occ"
    )
    [event] = from_mqtt(
        "opennvr/site/app.occ.level/event", cloud_event("app.occ.level", json.dumps(envelope))
    )
    assert (event.kind, event.type, event.camera_id) == ("event", "occupancy.changed.v1", "6")


@pytest.mark.parametrize(
    ("topic", "payload"),
    [
        ("opennvr/site/camera.1.detections/event", b"not json"),
        ("opennvr/site/camera.1.detections/event", b'"a string"'),
        ("opennvr/site/camera.1.detections/event", b'{"specversion": "1.0"}'),
        ("opennvr/site/camera.1.detections/event", b'{"data": "{broken"}'),
        ("opennvr/site/camera.1.detections/event", b'{"data": {"score": 1}}'),
        (
            "opennvr/site/camera.1.detections/event",
            b'{"data": {"event_type": "x", "camera_id": true}}',
        ),
    ],
)
def test_mqtt_malformed_cloudevents(topic: str, payload: bytes) -> None:
    malformed("cloudevent", from_mqtt, topic, payload)


def test_mqtt_malformed_alerts_and_ignored_topics() -> None:
    malformed("alert", from_mqtt, "opennvr/alerts", b"{")
    malformed("alert", from_mqtt, "opennvr/alerts", b'{"title": "no id"}')
    malformed(
        "alert", from_mqtt, "opennvr/site/camera.1.alerts/event", cloud_event("camera.1.alerts", {})
    )
    assert from_mqtt("opennvr/site/status", b"online") == []
    assert from_mqtt("opennvr/site/camera.1.online/state", b"ON") == []


def test_event_time_defaults_to_now() -> None:
    before = datetime.now(UTC)
    [event] = from_ws_frame({"event_type": "camera_status", "camera_id": 1, "online": True})
    assert before - timedelta(seconds=1) <= event.time <= datetime.now(UTC)
