"""The presence tracker: tracks and zones in, ``person_in_zone`` events out, on a clock
the test moves by hand."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from pyopennvr import Zone

from custom_components.opennvr_workflows.engine.events import NvrEvent
from custom_components.opennvr_workflows.nvr.normalize import tracks_event
from custom_components.opennvr_workflows.nvr.presence import PRESENCE_KIND, PresenceTracker

NOW = datetime(2026, 11, 5, 2, 14, tzinfo=UTC)
#: The left half of the frame, in fractions; the right half in pixels of a 1280x720 frame.
FENCE = Zone(1, 4, "Fence line", ((0.0, 0.0), (0.5, 0.0), (0.5, 1.0), (0.0, 1.0)), None)
BAY = Zone(2, 4, "Loading bay", ((640, 0), (1280, 0), (1280, 720), (640, 720)), None)
LEFT = {"x": 0.2, "y": 0.4, "w": 0.1, "h": 0.2}  # centre (0.25, 0.5)
RIGHT = {"x": 0.7, "y": 0.4, "w": 0.1, "h": 0.2}  # centre (0.75, 0.5)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def tracker(clock: Clock) -> PresenceTracker:
    tracker = PresenceTracker(clock=clock, absence_s=10.0)
    tracker.set_zones("4", [FENCE, BAY])
    tracker.set_thresholds([5, 30])
    return tracker


def person(track: str = "8812", bbox: dict[str, float] | None = LEFT, **kw: Any) -> dict:
    return {"id": track, "label": kw.get("label", "person"), "score": 0.9, "bbox": bbox}


def frame(*tracks: dict[str, Any], camera: str = "4", size: Any = (1280, 720), **kw: Any):
    [event] = tracks_event(
        list(tracks),
        source="websocket",
        camera=camera,
        producer=kw.get("producer", "tier0"),
        frame={"w": size[0], "h": size[1]} if size else None,
        time=NOW,
    )
    return event


def summary(events: list[NvrEvent]) -> list[tuple[Any, ...]]:
    return sorted(
        (e.type or "", e.track_id, e.payload["zone"], e.payload["threshold"], e.payload["seconds"])
        for e in events
    )


def linger(
    tracker: PresenceTracker, clock: Clock, seconds: float, step: float = 1.0, **kw: Any
) -> list[NvrEvent]:
    """Frames every ``step`` seconds for ``seconds`` seconds; every event they cause."""
    out: list[NvrEvent] = []
    end = clock.now + seconds
    while clock.now <= end + 1e-9:
        out += tracker.observe(frame(*kw.get("tracks", [person()])))
        clock.now += step
    clock.now -= step
    return out


def test_a_person_lingering_fires_each_threshold_once(
    tracker: PresenceTracker, clock: Clock
) -> None:
    assert linger(tracker, clock, 4) == []
    clock.now += 1
    events = tracker.observe(frame(person()))
    # Once anywhere in the camera's zones (untyped) and once for the zone itself.
    assert summary(events) == [
        ("", "8812", "Fence line", 5.0, 5.0),
        ("fence_line", "8812", "Fence line", 5.0, 5.0),
    ]
    first = events[0]
    assert (first.kind, first.camera_id, first.source, first.time) == (
        PRESENCE_KIND,
        "4",
        "websocket",
        NOW,
    )
    assert first.labels == {"person"}
    assert first.payload["label"] == "person"
    # Staying on: nothing more until the next threshold, then that one only.
    assert linger(tracker, clock, 20) == []
    clock.now += 5
    assert [e.payload["threshold"] for e in tracker.observe(frame(person()))] == [30.0, 30.0]
    assert linger(tracker, clock, 60) == []


def test_zones_in_pixels_and_the_zones_own_labels(tracker: PresenceTracker, clock: Clock) -> None:
    events = linger(tracker, clock, 5, tracks=[person(bbox=RIGHT)])
    assert summary(events) == [
        ("", "8812", "Loading bay", 5.0, 5.0),
        ("loading_bay", "8812", "Loading bay", 5.0, 5.0),
    ]
    # A zone drawn for vehicles does not count people.
    tracker.set_zones("4", [Zone(3, 4, "Bay", BAY.polygon, ("car", "truck"))])
    assert linger(tracker, clock, 40, tracks=[person("9", bbox=RIGHT)]) == []


def test_outside_every_zone_and_other_labels_count_nothing(
    tracker: PresenceTracker, clock: Clock
) -> None:
    tracker.set_zones("4", [FENCE])
    assert linger(tracker, clock, 40, tracks=[person(bbox=RIGHT)]) == []
    assert linger(tracker, clock, 40, tracks=[person("7", label="car")]) == []
    assert linger(tracker, clock, 40, tracks=[person("8", bbox=None)]) == []
    assert len(tracker.observe(frame(person("9"), producer="overlay"))) == 0


def test_a_short_gap_is_not_a_departure_a_long_one_is(
    tracker: PresenceTracker, clock: Clock
) -> None:
    tracker.set_zones("4", [FENCE])
    tracker.observe(frame(person()))
    clock.now += 3  # seen outside, then not at all: still the same stay
    assert tracker.observe(frame(person(bbox=RIGHT))) == []
    clock.now += 2
    assert summary(tracker.observe(frame(person()))) == [
        ("", "8812", "Fence line", 5.0, 5.0),
        ("fence_line", "8812", "Fence line", 5.0, 5.0),
    ]
    # Gone for longer than the absence: a return is a new stay, its thresholds fire again.
    clock.now += 11
    assert tracker.observe(frame(person())) == []
    assert len(tracker) == 1
    assert len(linger(tracker, clock, 5)) == 2


def test_walking_from_one_zone_into_the_next_keeps_lingering(
    tracker: PresenceTracker, clock: Clock
) -> None:
    assert linger(tracker, clock, 3) == []
    clock.now += 1
    events = linger(tracker, clock, 3, tracks=[person(bbox=RIGHT)])
    # Anywhere: 5 s since the first frame in the fence zone; the bay on its own: not yet.
    assert summary(events) == [("", "8812", "Loading bay", 5.0, 5.0)]


def test_a_camera_without_zones_counts_its_whole_view(clock: Clock) -> None:
    tracker = PresenceTracker(clock=clock)
    tracker.set_thresholds([5])
    tracker.set_zones("4", [])
    assert summary(linger(tracker, clock, 5, tracks=[person(bbox=RIGHT)])) == [
        ("", "8812", "", 5.0, 5.0)
    ]


def test_nothing_without_zones_known_or_thresholds(clock: Clock) -> None:
    tracker = PresenceTracker(clock=clock)
    tracker.set_zones("4", [FENCE])
    assert linger(tracker, clock, 10) == []  # no workflow asks
    tracker.set_thresholds([5.0, float("nan"), -1, 0])
    assert tracker.thresholds == (5.0,)
    assert tracker.observe(frame(person(), camera="5")) == []  # zones of camera 5 unknown
    assert not tracker.knows("5")
    assert tracker.knows("4")
    tracker.forget_camera("4")
    assert tracker.cameras == frozenset()
    assert linger(tracker, clock, 10) == []


def test_a_threshold_added_later_fires_at_the_next_frame(
    tracker: PresenceTracker, clock: Clock
) -> None:
    tracker.set_thresholds([30])
    assert linger(tracker, clock, 12) == []
    tracker.set_thresholds([30, 10])
    clock.now += 1
    [anywhere, _zone] = tracker.observe(frame(person()))
    assert anywhere.payload == {
        "zone": "Fence line",
        "seconds": 13.0,
        "threshold": 10.0,
        "label": "person",
    }


def test_without_a_frame_size_only_zones_in_fractions_place_a_box(
    tracker: PresenceTracker, clock: Clock
) -> None:
    both = [person("a", bbox=LEFT), person("b", bbox=RIGHT)]
    out: list[NvrEvent] = []
    for _ in range(6):
        out += tracker.observe(frame(*both, size=None))
        clock.now += 1
    assert {(e.track_id, e.payload["zone"]) for e in out} == {("a", "Fence line")}


def test_memory_is_bounded(clock: Clock) -> None:
    tracker = PresenceTracker(clock=clock, absence_s=10.0, max_tracks=50)
    tracker.set_zones("4", [FENCE])
    tracker.set_zones("5", [FENCE])
    tracker.set_thresholds([5])
    for i in range(200):
        tracker.observe(frame(person(str(i))))
    assert len(tracker) == 50
    # Tracks that end (unseen for the absence) are forgotten.
    clock.now += 11
    tracker.observe(frame(person("fresh"), camera="5"))
    assert len(tracker) == 1
    tracker.expire(clock.now + 11)
    assert len(tracker) == 0
    # A camera going offline drops its tracks, and only its own.
    tracker.observe(frame(person("x"), camera="4"))
    tracker.observe(frame(person("y"), camera="5"))
    offline = NvrEvent(kind="camera_offline", source="websocket", time=NOW, camera_id="4")
    assert tracker.observe(offline) == []
    assert len(tracker) == 1


def test_settings_are_checked() -> None:
    with pytest.raises(ValueError):
        PresenceTracker(absence_s=0)
    with pytest.raises(ValueError):
        PresenceTracker(max_tracks=0)


def test_tracks_events_from_elsewhere_that_make_no_sense_are_ignored(
    tracker: PresenceTracker, clock: Clock
) -> None:
    def odd(payload: dict[str, Any]) -> NvrEvent:
        return NvrEvent(kind="tracks", source="nats", time=NOW, camera_id="4", payload=payload)

    assert tracker.observe(odd({"tracks": "junk"})) == []
    out: list[NvrEvent] = []
    for _ in range(6):
        out += tracker.observe(
            odd({"tracks": ["junk", 7, {"id": 5, "label": "person", "bbox": LEFT}]})
        )
        clock.now += 1
    assert {(e.track_id, e.payload["threshold"]) for e in out} == {("5", 5.0)}
