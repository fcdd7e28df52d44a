"""``detection.observed.v1`` derived from tracks: once per track and label, shaped as the NATS
event, bounded memory, and only when the websocket is an entry's one source."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest

from custom_components.opennvr_workflows.engine.events import NvrEvent
from custom_components.opennvr_workflows.engine.index import Candidate, residual_match
from custom_components.opennvr_workflows.nvr.hub import EventHub
from custom_components.opennvr_workflows.nvr.normalize import from_nats, from_ws_frame, tracks_event
from custom_components.opennvr_workflows.nvr.observed import (
    OBSERVED_SCHEMA,
    ObservedDeriver,
    derives_observed,
    link_observed,
)
from custom_components.opennvr_workflows.workflow.model import EventTrigger

from .conftest import Collected

NOW = datetime(2026, 11, 5, 14, 2, tzinfo=UTC)
BOX = {"x": 0.4, "y": 0.6, "w": 0.1, "h": 0.1}


class Clock:
    def __init__(self) -> None:
        self.now = 500.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def deriver(clock: Clock) -> ObservedDeriver:
    return ObservedDeriver(clock=clock, forget_s=60.0, max_tracks=100)


def track(track_id: Any = "41", label: str = "package", **kw: Any) -> dict[str, Any]:
    return {"id": track_id, "label": label, "score": kw.get("score", 0.83), "bbox": BOX}


def frame(*tracks: dict[str, Any], camera: str = "1", producer: str = "tier0") -> NvrEvent:
    [event] = tracks_event(
        list(tracks),
        source="websocket",
        camera=camera,
        producer=producer,
        frame={"w": 1280, "h": 720},
        time=NOW,
    )
    return event


def test_a_new_track_is_observed_once(deriver: ObservedDeriver) -> None:
    [event] = deriver.observe(frame(track()))
    assert event.kind == "event"
    assert event.type == OBSERVED_SCHEMA
    assert event.source == "websocket"
    assert event.camera_id == "1"
    assert event.track_id == "41"
    assert event.labels == frozenset({"package"})
    assert event.time == NOW
    assert event.payload["label"] == "package"
    assert event.payload["score"] == 0.83
    assert event.payload["track"] == "41"
    assert event.alert_id == "observed:1:tier0:41:package"
    assert deriver.observe(frame(track())) == []
    assert deriver.observe(frame(track(score=0.95))) == []


def test_it_is_the_event_nats_would_carry(deriver: ObservedDeriver) -> None:
    [derived] = deriver.observe(frame(track()))
    envelope = {
        "schema": OBSERVED_SCHEMA,
        "camera_id": 1,
        "ts": NOW.isoformat(),
        "producer": "tier0",
        "payload": dict(derived.payload),
    }
    [carried] = from_nats("opennvr.events.detection.observed.v1.1", json.dumps(envelope))
    assert replace(derived, source="nats", alert_id=None) == carried


def test_a_label_change_is_observed_again_but_a_flicker_back_is_not(
    deriver: ObservedDeriver,
) -> None:
    assert len(deriver.observe(frame(track(label="bag")))) == 1
    [changed] = deriver.observe(frame(track(label="package")))
    assert changed.payload["label"] == "package"
    assert changed.alert_id == "observed:1:tier0:41:package"
    assert deriver.observe(frame(track(label="bag"))) == []


def test_tracks_are_told_apart_by_camera_and_producer(deriver: ObservedDeriver) -> None:
    first = deriver.observe(frame(track("7"), track("8", "person")))
    assert [(e.track_id, e.payload["label"]) for e in first] == [
        ("7", "package"),
        ("8", "person"),
    ]
    other_camera = deriver.observe(frame(track("7"), camera="2"))
    other_producer = deriver.observe(frame(track("7"), producer="yolo"))
    assert [e.alert_id for e in other_camera + other_producer] == [
        "observed:2:tier0:7:package",
        "observed:1:yolo:7:package",
    ]


@pytest.mark.parametrize(
    "raw",
    [
        {"id": None, "label": "package", "score": 0.9, "bbox": BOX},
        {"id": "", "label": "package", "score": 0.9, "bbox": BOX},
        {"id": True, "label": "package", "score": 0.9, "bbox": BOX},
        {"id": "5", "label": "", "score": 0.9, "bbox": BOX},
        {"id": "5", "label": None, "score": 0.9, "bbox": BOX},
        "not a track",
    ],
)
def test_a_track_that_cannot_be_followed_is_left_out(deriver: ObservedDeriver, raw: Any) -> None:
    event = NvrEvent(
        kind="tracks",
        source="websocket",
        time=NOW,
        type="tier0",
        camera_id="1",
        payload={"tracks": [raw, track("6")]},
    )
    assert [e.track_id for e in deriver.observe(event)] == ["6"]


def test_an_integer_track_id_is_read_as_text(deriver: ObservedDeriver) -> None:
    [event] = deriver.observe(frame(track(77)))
    assert event.track_id == "77"


def test_score_and_box_are_left_out_when_unknown(deriver: ObservedDeriver) -> None:
    event = NvrEvent(
        kind="tracks",
        source="websocket",
        time=NOW,
        type="tier0",
        camera_id="1",
        payload={"tracks": [{"id": "3", "label": "car", "score": None, "bbox": None}]},
    )
    [observed] = deriver.observe(event)
    assert dict(observed.payload) == {"label": "car", "track": "3", "track_id": "3"}


@pytest.mark.parametrize(
    "event",
    [
        NvrEvent(kind="alert", source="websocket", time=NOW, camera_id="1", alert_id="a1"),
        NvrEvent(kind="tracks", source="websocket", time=NOW, type="tier0", camera_id="1"),
        NvrEvent(
            kind="tracks",
            source="websocket",
            time=NOW,
            type="tier0",
            camera_id="1",
            payload={"tracks": "nope"},
        ),
        NvrEvent(
            kind="tracks",
            source="websocket",
            time=NOW,
            type="tier0",
            payload={"tracks": [track()]},
        ),
    ],
)
def test_other_events_and_unreadable_tracks_yield_nothing(
    deriver: ObservedDeriver, event: NvrEvent
) -> None:
    assert deriver.observe(event) == []


def test_app_overlays_are_not_detections(deriver: ObservedDeriver) -> None:
    assert deriver.observe(frame(track(), producer="overlay")) == []
    assert len(deriver) == 0


def test_a_track_unseen_for_a_while_is_forgotten(deriver: ObservedDeriver, clock: Clock) -> None:
    assert len(deriver.observe(frame(track("1")))) == 1
    clock.now += 50
    assert deriver.observe(frame(track("1"))) == []  # seen again: kept
    assert len(deriver.observe(frame(track("2")))) == 1
    clock.now += 59
    deriver.expire()
    assert len(deriver) == 2
    clock.now += 2
    deriver.expire()
    assert len(deriver) == 0
    [again] = deriver.observe(frame(track("1")))
    assert again.alert_id == "observed:1:tier0:1:package"  # the hub drops it as a repeat


def test_memory_is_capped_least_recently_seen_first(clock: Clock) -> None:
    deriver = ObservedDeriver(clock=clock, max_tracks=3)
    for n in range(3):
        deriver.observe(frame(track(str(n))))
        clock.now += 1
    deriver.observe(frame(track("0")))  # 0 seen again: 1 is now the oldest
    deriver.observe(frame(track("9")))
    assert len(deriver) == 3
    assert deriver.observe(frame(track("0"))) == []
    assert len(deriver.observe(frame(track("1")))) == 1  # forgotten, so new again


@pytest.mark.parametrize(("forget_s", "max_tracks"), [(0, 10), (-1, 10), (10, 0)])
def test_bad_bounds_are_refused(forget_s: float, max_tracks: int) -> None:
    with pytest.raises(ValueError, match="forget_s"):
        ObservedDeriver(forget_s=forget_s, max_tracks=max_tracks)


def test_the_parcel_trigger_matches_a_derived_package_only(deriver: ObservedDeriver) -> None:
    trigger = EventTrigger(
        event=OBSERVED_SCHEMA, cameras=("front_door",), match={"label": frozenset({"package"})}
    )
    candidate = Candidate("parcel_at_door", trigger)
    events = deriver.observe(frame(track("1"), track("2", "person")))
    assert [residual_match(candidate, e) for e in events] == [True, False]


@pytest.mark.parametrize(
    ("sources", "derives"),
    [
        (["websocket"], True),
        (["websocket", "nats"], False),
        (["websocket", "mqtt"], False),
        ([], False),
    ],
)
def test_only_a_websocket_only_entry_derives(sources: list[str], derives: bool) -> None:
    assert derives_observed(sources) is derives


def test_linked_to_a_hub_each_track_is_published_once(
    hub: EventHub, collected: Collected, clock: Clock
) -> None:
    stop = link_observed(hub, ObservedDeriver(clock=clock, forget_s=60.0))
    ws_frame = {
        "event_type": "tracks",
        "camera_id": 1,
        "task": "tier0",
        "payload": {
            "frame": {"w": 1280, "h": 720},
            "tracks": [{"id": 12, "label": "package", "score": 0.8, "box": [0.4, 0.6, 0.1, 0.1]}],
        },
    }
    for _ in range(3):
        for event in from_ws_frame(ws_frame, now=NOW):
            hub.publish(event)
    observed = collected.of("event")
    assert [(e.type, e.track_id, e.payload["label"]) for e in observed] == [
        (OBSERVED_SCHEMA, "12", "package")
    ]
    assert len(collected.of("tracks")) == 3
    # Forgotten, then seen again: derived again, and the hub drops the repeat.
    clock.now += 120
    for event in from_ws_frame(ws_frame, now=NOW):
        hub.publish(event)
    assert len(collected.of("event")) == 1
    assert hub.stats["websocket"].duplicates == 1
    stop()
    ws_frame["payload"]["tracks"][0]["id"] = 13
    for event in from_ws_frame(ws_frame, now=NOW):
        hub.publish(event)
    assert len(collected.of("event")) == 1
