"""Detector tracks in every wrapping (websocket ``tracks`` / ``inference_result``, NATS
Tier-0 and adapter results) normalised into ``tracks`` events; unreadable ones refused."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from opennvr_app_sdk.testing import detection, inference_event, tier0_event, tier0_track

from custom_components.opennvr_workflows.nvr.normalize import (
    TRACKS_KIND,
    MalformedPayload,
    from_nats,
    from_ws_frame,
)
from custom_components.opennvr_workflows.nvr.tracks import (
    detection_tracks,
    frame_size,
    overlay_tracks,
    tier0_tracks,
)

NOW = datetime(2026, 11, 5, 12, 0, tzinfo=UTC)
TIER0 = "opennvr.inference.tier0.cam4.completed"


def tracks_frame(*tracks: dict[str, Any], camera_id: Any = 4, task: str = "tier0") -> dict:
    """A ``tracks`` frame as core's overlay bridge publishes it (boxes ``[x, y, w, h]``)."""
    return {
        "v": 2,
        "seq": 12,
        "ts": "2026-11-05T11:59:59+00:00",
        "event_type": "tracks",
        "camera_id": camera_id,
        "task": task,
        "payload": {
            "schema": "opennvr.overlay.tracks.v1",
            "seq": 881,
            "calibrating": False,
            "frame": {"w": 1280, "h": 720},
            "tracks": list(tracks),
        },
    }


def overlay_track(track_id: Any = 8812, label: str = "person", box: Any = None) -> dict:
    box = box if box is not None else [0.4, 0.5, 0.1, 0.3]
    return {"id": track_id, "label": label, "score": 0.91, "box": box, "stationary": False}


def test_websocket_tracks_frame() -> None:
    frame = tracks_frame(overlay_track(), overlay_track(31, "car", [0.0, 0.0, 0.2, 0.1]))
    [event] = from_ws_frame(frame, now=NOW)
    assert (event.kind, event.type, event.camera_id, event.source) == (
        TRACKS_KIND,
        "tier0",
        "4",
        "websocket",
    )
    assert event.time == datetime(2026, 11, 5, 11, 59, 59, tzinfo=UTC)
    assert event.labels == {"person", "car"}
    assert event.payload["frame"] == {"w": 1280, "h": 720}
    person, car = event.payload["tracks"]
    assert person == {
        "id": "8812",
        "label": "person",
        "score": 0.91,
        "bbox": {"x": 0.4, "y": 0.5, "w": 0.1, "h": pytest.approx(0.3)},
    }
    assert (car["id"], car["bbox"]["w"]) == ("31", 0.2)


def test_websocket_tracks_skip_unreadable_tracks_and_keep_the_rest() -> None:
    frame = tracks_frame(
        overlay_track(),
        {"id": 2, "box": [0.1, 0.1, 0.1, 0.1]},  # no label
        "not a track",
        overlay_track(3, box=[0.1, 0.1, -0.1, 0.2]),  # no area: kept, without a box
        overlay_track(4, box=[300, 200, 50, 80]),  # pixels where fractions are due
        overlay_track(5, box=[0.95, 0.5, 0.2, 0.2]),  # past the edge: clamped
    )
    [event] = from_ws_frame(frame, now=NOW)
    tracks = {t["id"]: t for t in event.payload["tracks"]}
    assert sorted(tracks) == ["3", "4", "5", "8812"]
    assert tracks["3"]["bbox"] is None
    assert tracks["4"]["bbox"] is None
    assert tracks["5"]["bbox"]["x"] == 0.95
    assert tracks["5"]["bbox"]["w"] == pytest.approx(0.05)


def test_websocket_tracks_without_tracks_and_app_overlays() -> None:
    assert from_ws_frame(tracks_frame(), now=NOW) == []
    [overlay] = from_ws_frame(tracks_frame(overlay_track(label="plate"), task="overlay"))
    assert overlay.type == "overlay"


@pytest.mark.parametrize(
    "frame",
    [
        {**tracks_frame(overlay_track()), "payload": "boxes"},
        {**tracks_frame(overlay_track()), "payload": {"tracks": {"id": 1}}},
        tracks_frame(overlay_track(), camera_id=None),
        tracks_frame(overlay_track(), camera_id=True),
        {"event_type": "inference_result", "camera_id": 2, "payload": [1]},
        {"event_type": "inference_result", "camera_id": 2, "payload": {"detections": "x"}},
    ],
)
def test_unreadable_tracks_are_malformed(frame: dict[str, Any]) -> None:
    with pytest.raises(MalformedPayload) as info:
        from_ws_frame(frame, now=NOW)
    assert info.value.kind == TRACKS_KIND


def test_websocket_inference_result_detections() -> None:
    result = inference_event(
        detection("person", x=0.2, y=0.3, track_id="t7"),
        detection("dog", confidence=0.4),
        camera_id="cam2",
        adapter="yolov8",
    )
    frame = {"event_type": "inference_result", "camera_id": 2, "task": "yolov8", "payload": result}
    [event] = from_ws_frame(frame, now=NOW)
    assert (event.kind, event.type, event.camera_id) == (TRACKS_KIND, "yolov8", "2")
    person, dog = event.payload["tracks"]
    assert person["id"] == "t7"
    assert person["bbox"] == {"x": 0.2, "y": 0.3, "w": 0.1, "h": 0.1}
    assert (dog["id"], dog["score"]) == (None, 0.4)
    assert event.payload["frame"] is None


def test_websocket_camera_event() -> None:
    frame = {
        "event_type": "camera_event",
        "camera_id": 3,
        "task": "motion",
        "payload": {"event_type": "motion", "event_state": "start", "occurred_at": None},
    }
    [event] = from_ws_frame(frame, now=NOW)
    assert (event.kind, event.type, event.camera_id, event.time) == (
        "camera_event",
        "motion",
        "3",
        NOW,
    )
    assert event.payload["event_state"] == "start"
    with pytest.raises(MalformedPayload) as info:
        from_ws_frame({"event_type": "camera_event", "task": "motion"}, now=NOW)
    assert info.value.kind == "camera_event"


def test_nats_tier0_tracks_in_pixels_become_fractions() -> None:
    body = tier0_event(
        tier0_track(track_id="t1", bbox=(640, 360, 768, 648)),
        tier0_track("car", track_id="t2", bbox=(0, 0, 128, 72)),
        camera_id="cam4",
        frame=(1280, 720),
    )
    [event] = from_nats(TIER0, json.dumps(body).encode(), now=NOW)
    assert (event.kind, event.type, event.camera_id, event.source) == (
        TRACKS_KIND,
        "tier0",
        "4",
        "nats",
    )
    person, car = event.payload["tracks"]
    assert person["id"] == "t1"
    assert person["bbox"] == {"x": 0.5, "y": 0.5, "w": 0.1, "h": pytest.approx(0.4)}
    assert car["bbox"] == {"x": 0.0, "y": 0.0, "w": 0.1, "h": 0.1}
    assert event.payload["frame"] == {"w": 1280, "h": 720}


def test_nats_tier0_leaves_out_the_tracks_it_only_coasts() -> None:
    body = tier0_event(
        tier0_track(track_id="seen"),
        tier0_track(track_id="missed", matched=False, misses=2),
        tier0_track(track_id="phantom", matched=False, misses=0, since_match_s=140.0),
        tier0_track(track_id="recent", matched=False, misses=0, since_match_s=2.5),
        tier0_track(track_id="parked", matched=False, misses=0, stationary=True),
        camera_id="cam4",
    )
    [event] = from_nats(TIER0, json.dumps(body), now=NOW)
    assert [t["id"] for t in event.payload["tracks"]] == ["seen", "recent", "parked"]


def test_nats_tier0_camera_from_the_subject_and_time_only_when_believable() -> None:
    body = tier0_event(tier0_track(), camera_id="", ts="2026-11-05T11:59:58Z")
    [event] = from_nats("opennvr.inference.tier0.cam9.completed", json.dumps(body), now=NOW)
    assert event.camera_id == "9"
    assert event.time == datetime(2026, 11, 5, 11, 59, 58, tzinfo=UTC)
    # A pipeline clock that is not wall time (seconds since it started) is not believed.
    body = tier0_event(tier0_track(), camera_id="cam4", ts=5123.25)
    [event] = from_nats(TIER0, json.dumps(body), now=NOW)
    assert event.time == NOW


def test_nats_adapter_detections_and_other_results() -> None:
    result = inference_event(detection("person", track_id=3), camera_id="cam1", adapter="yolov8")
    [event] = from_nats("opennvr.inference.yolov8.cam1.completed", json.dumps(result), now=NOW)
    assert (event.type, event.camera_id, event.payload["tracks"][0]["id"]) == ("yolov8", "1", "3")
    caption = {**result, "result": {"caption": "a quiet porch"}}
    assert from_nats("opennvr.inference.blip.cam1.completed", json.dumps(caption)) == []
    assert from_nats("opennvr.inference.tier0.cam1.started", json.dumps(result)) == []


@pytest.mark.parametrize(
    ("subject", "data"),
    [
        (TIER0, b"not json"),
        (TIER0, b"[1, 2]"),
        (TIER0, json.dumps({"camera_id": "cam4", "tracks": "none"}).encode()),
        ("opennvr.inference.tier0.completed", json.dumps(tier0_event(camera_id="")).encode()),
        (
            "opennvr.inference.yolov8.cam1.completed",
            json.dumps({"camera_id": "cam1", "result": {"detections": {"a": 1}}}).encode(),
        ),
    ],
)
def test_nats_unreadable_tracks_are_malformed(subject: str, data: bytes) -> None:
    with pytest.raises(MalformedPayload) as info:
        from_nats(subject, data, now=NOW)
    assert info.value.kind == TRACKS_KIND


# ── what cannot be read is skipped, each way it can fail ────────────────────────────────


def test_a_frame_size_that_is_not_one() -> None:
    assert frame_size(None) is None
    assert frame_size({"w": 640}) is None
    assert frame_size({"w": 0.2, "h": 480}) is None
    assert frame_size({"w": 640.4, "h": 359.6}) == (640, 360)


def test_boxes_and_labels_that_cannot_be_read_are_skipped() -> None:
    tracks = overlay_tracks(
        {
            "tracks": [
                "not a track",
                {"id": 1, "label": "  ", "box": [0.1, 0.1, 0.2, 0.2]},
                {"id": 2, "label": 7, "box": [0.1, 0.1, 0.2, 0.2]},
                {"id": True, "label": "person", "score": True, "box": [0.1, 0.1, 0.2]},
                {"id": 3, "label": "car", "box": [0.1, 0.1, 0.0, 0.2]},
                {"id": 4, "label": "dog", "box": [1.2, 0.1, 0.2, 0.2]},
                {"id": 5, "label": "cat", "box": [0.1, float("nan"), 0.2, 0.2]},
            ]
        }
    )
    assert [(t["id"], t["label"], t["score"], t["bbox"]) for t in tracks] == [
        (None, "person", None, None),
        ("3", "car", None, None),
        ("4", "dog", None, None),
        ("5", "cat", None, None),
    ]
    bad = detection_tracks([{"label": "van", "bbox": {"x": 0.1, "y": 0.1, "w": "a", "h": 1}}])
    assert bad[0]["bbox"] is None


def test_which_tier0_tracks_are_present() -> None:
    frame = {"w": 100, "h": 100}
    body = {
        "frame": frame,
        "tracks": [
            "not a track",
            {"id": 1, "label": "person", "bbox": [0, 0, 10, 10], "matched": False, "misses": 2},
            {"id": 2, "label": "person", "bbox": [0, 0, 10, 10], "matched": False},
            {
                "id": 3,
                "label": "car",
                "bbox": [0, 0, 10, 10],
                "matched": False,
                "misses": 0,
                "stationary": True,
            },
            {
                "id": 4,
                "label": "car",
                "bbox": [0, 0, 10, 10],
                "matched": False,
                "misses": 0,
                "since_match_s": "recently",
            },
        ],
    }
    assert [t["id"] for t in tier0_tracks(body)] == ["3"]
