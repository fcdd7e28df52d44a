"""Tracks no workflow watches stop at the hub: which cameras are watched, and the drop."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import pytest

from custom_components.opennvr_workflows.engine.events import NvrEvent
from custom_components.opennvr_workflows.nvr import hub as hub_module
from custom_components.opennvr_workflows.nvr.hub import EventHub
from custom_components.opennvr_workflows.nvr.normalize import TRACKS_KIND, from_ws_frame
from custom_components.opennvr_workflows.nvr.observed import ObservedDeriver, link_observed
from custom_components.opennvr_workflows.nvr.watch import (
    EVERY_CAMERA,
    OBSERVED_EVENT,
    TrackWatch,
    track_watch,
)
from custom_components.opennvr_workflows.workflow import model

from .conftest import Collected

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
ROLES = {"garden": 3, "front_door": 1, "drive": 2}


def workflow(when: model.Trigger) -> model.Workflow:
    return model.Workflow(name="w", when=when, then=())


def frame(camera: int, track_id: int = 7, label: str = "person") -> list[NvrEvent]:
    ws_frame: dict[str, Any] = {
        "event_type": "tracks",
        "camera_id": camera,
        "task": "tier0",
        "payload": {
            "frame": {"w": 1280, "h": 720},
            "tracks": [{"id": track_id, "label": label, "box": [0.4, 0.4, 0.1, 0.2]}],
        },
    }
    return from_ws_frame(ws_frame, now=NOW)


# ── which cameras are watched ────────────────────────────────────────────


def test_zone_and_detection_triggers_watch_the_cameras_their_roles_map_to() -> None:
    watch = track_watch(
        [
            workflow(model.PersonInZoneTrigger(cameras=("garden",), min_s=20)),
            workflow(model.EventTrigger(event=OBSERVED_EVENT, cameras=("front_door",))),
            # Neither reads tracks: an alert, another contracted event.
            workflow(model.AlertTrigger(cameras=("drive",))),
            workflow(model.EventTrigger(event="plate.recognized.v1", cameras=("drive",))),
        ],
        ROLES,
    )
    assert watch == TrackWatch(zones=frozenset({"3"}), observed=frozenset({"1"}))
    assert watch.wants("3")
    assert watch.wants("1")
    assert not watch.wants("2")
    assert not watch.wants("4")
    assert not watch.wants(None)
    assert watch.in_zones("3")
    assert not watch.in_zones("1")
    assert watch.observes("1")
    assert not watch.observes("3")


def test_a_detection_trigger_naming_no_camera_watches_every_camera() -> None:
    watch = track_watch([workflow(model.EventTrigger(event=OBSERVED_EVENT))], ROLES)
    assert watch.observed is None
    assert watch.wants("4")
    assert watch.observes("4")
    assert not watch.in_zones("4")


def test_a_role_mapped_to_no_camera_watches_nothing() -> None:
    watch = track_watch([workflow(model.PersonInZoneTrigger(cameras=("shed",), min_s=5))], ROLES)
    assert watch == TrackWatch(frozenset(), frozenset())
    assert not watch.wants("3")


def test_no_workflow_watches_nothing_and_the_hub_alone_lets_everything_through() -> None:
    assert not track_watch([], ROLES).wants("1")
    assert EVERY_CAMERA.wants("1")
    assert EventHub().track_watch == EVERY_CAMERA


# ── the drop at the hub ──────────────────────────────────────────────────


def test_the_hub_knows_the_tracks_kind_by_the_readers_name() -> None:
    assert hub_module._TRACKS == TRACKS_KIND


def test_unwatched_tracks_reach_no_listener_and_move_no_counter_listener(
    hub: EventHub, collected: Collected
) -> None:
    moved: list[None] = []
    hub.subscribe_counters(lambda: moved.append(None))
    hub.watch_tracks(TrackWatch(zones=frozenset({"3"}), observed=frozenset()))

    for event in frame(4):
        assert hub.publish(event) is False
    assert collected == []
    assert moved == []
    assert hub.stats["websocket"].tracks_unwatched == 1
    assert hub.stats["websocket"].received == 0

    for event in frame(3):
        assert hub.publish(event) is True
    assert [e.camera_id for e in collected] == ["3"]
    assert hub.stats["websocket"].received == 1
    assert moved


def test_other_events_of_an_unwatched_camera_still_pass(
    hub: EventHub, collected: Collected
) -> None:
    hub.watch_tracks(TrackWatch(frozenset(), frozenset()))
    alert = NvrEvent(kind="alert", source="websocket", time=NOW, alert_id="a1", camera_id="4")
    assert hub.publish(alert) is True
    assert collected == [alert]


async def test_unwatched_tracks_start_no_durable_consumer(hub: EventHub) -> None:
    offered: list[NvrEvent] = []

    async def durable(event: NvrEvent) -> None:
        offered.append(event)

    hub.subscribe_durable(durable)
    hub.watch_tracks(TrackWatch(frozenset({"3"}), frozenset()))
    (unwatched,) = frame(4)
    assert hub.publish_tracked(unwatched) is None
    (watched,) = frame(3)
    hub.publish_tracked(watched)
    await asyncio.sleep(0)
    assert offered == [watched]


def test_a_new_watch_applies_to_the_next_frame(hub: EventHub, collected: Collected) -> None:
    hub.watch_tracks(TrackWatch(frozenset(), frozenset()))
    for event in frame(2):
        hub.publish(event)
    hub.watch_tracks(TrackWatch(frozenset(), frozenset({"2"})))
    for event in frame(2):
        hub.publish(event)
    assert len(collected.of("tracks")) == 1


@pytest.mark.parametrize(
    ("watch", "derived"),
    [
        (TrackWatch(zones=frozenset({"1"}), observed=frozenset()), 0),
        (TrackWatch(zones=frozenset(), observed=frozenset({"1"})), 1),
        (TrackWatch(zones=frozenset(), observed=None), 1),
    ],
)
def test_detections_are_derived_only_where_a_detection_trigger_watches(
    hub: EventHub, collected: Collected, watch: TrackWatch, derived: int
) -> None:
    link_observed(hub, ObservedDeriver())
    hub.watch_tracks(watch)
    for event in frame(1, label="package"):
        hub.publish(event)
    assert len(collected.of("event")) == derived
