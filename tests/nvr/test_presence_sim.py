"""A person lingering in a zone of the simulator, over the real events websocket, comes out
of the presence tracker and the hub as a ``person_in_zone`` event: first with the tracker
on a clock the test moves, then hosted by Home Assistant (``async_start_presence``)."""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator

import aiohttp
import pytest
from homeassistant.core import HomeAssistant
from pyopennvr import OpenNVRClient

from custom_components.opennvr_workflows.engine.events import NvrEvent
from custom_components.opennvr_workflows.nvr.hub import EventHub
from custom_components.opennvr_workflows.nvr.presence import PRESENCE_KIND, PresenceTracker
from custom_components.opennvr_workflows.nvr.presence_ha import async_start_presence
from custom_components.opennvr_workflows.nvr.sources.websocket import WebSocketSource
from custom_components.opennvr_workflows.nvr.watch import TrackWatch
from tests.fakes.opennvr_sim import OpenNVRSimulator, SimCamera, person_track, rectangle

from .conftest import Collected, until


@pytest.fixture
def client(sim: OpenNVRSimulator, http_session: aiohttp.ClientSession) -> OpenNVRClient:
    return OpenNVRClient(sim.url, sim.config.token, http_session)


@pytest.fixture
async def source(
    client: OpenNVRClient, http_session: aiohttp.ClientSession, hub: EventHub
) -> AsyncGenerator[WebSocketSource]:
    ws = WebSocketSource(client, http_session, hub, on_auth_failed=lambda: None)
    await ws.start()
    await until(lambda: hub.connected("websocket"), "the websocket to connect")
    yield ws
    await ws.stop()


def lingered(collected: Collected) -> list[tuple[str | None, str | None, str | None, float]]:
    return sorted(
        (e.camera_id, e.type or "", e.track_id, e.payload["threshold"])
        for e in collected.of(PRESENCE_KIND)
    )


async def test_a_lingering_person_through_the_websocket_with_a_moved_clock(
    sim: OpenNVRSimulator,
    client: OpenNVRClient,
    source: WebSocketSource,
    hub: EventHub,
    collected: Collected,
) -> None:
    now = [0.0]
    tracker = PresenceTracker(clock=lambda: now[0])
    tracker.set_thresholds([5, 30])
    for camera in await client.get_cameras():
        tracker.set_zones(str(camera.id), await client.get_zones(camera.id))
    assert [z.name for z in await client.get_zones(3)] == ["Fence line", "Patio"]

    def feed(event: NvrEvent) -> None:
        for out in tracker.observe(event):
            hub.publish(out)

    hub.subscribe(feed)
    seen = [0]

    async def paced(seconds: float) -> None:
        # The next frame is sent once the last one has reached the tracker, seconds later.
        seen[0] += 1
        await until(lambda: len(collected.of("tracks")) >= seen[0], "a tracks frame")
        now[0] += seconds

    sent = await sim.linger(3, "fence line", 6, track_id=8812, sleep=paced)
    await until(lambda: len(collected.of("tracks")) == sent, "every tracks frame")
    assert lingered(collected) == [("3", "", "8812", 5.0), ("3", "fence_line", "8812", 5.0)]
    event = collected.of(PRESENCE_KIND)[0]
    assert (event.source, event.labels, event.payload["zone"]) == (
        "websocket",
        {"person"},
        "Fence line",
    )
    assert event.payload["seconds"] >= 5.0
    # A car parked in the same zone is not a person.
    await sim.linger(3, "Fence line", 6, track_id=31, label="car", sleep=paced)
    await until(lambda: len(collected.of("tracks")) == seen[0] + 1, "the car's frames")
    assert len(collected.of(PRESENCE_KIND)) == 2
    assert hub.stats["websocket"].dropped == 0


async def test_hosted_in_home_assistant(
    hass: HomeAssistant,
    sim: OpenNVRSimulator,
    client: OpenNVRClient,
    source: WebSocketSource,
    hub: EventHub,
    collected: Collected,
) -> None:
    wanted: set[float] = {1.0}
    link = await async_start_presence(hass, client, hub, lambda: wanted)
    # With a threshold to watch for, every camera's zones are read at once.
    await until(lambda: link.tracker.cameras == {"1", "2", "3"}, "the zones to be read")
    await sim.linger(2, "Gate", 1.4, track_id="t1")
    await until(lambda: len(collected.of(PRESENCE_KIND)) == 2, "the person at the gate")
    assert lingered(collected) == [("2", "", "t1", 1.0), ("2", "gate", "t1", 1.0)]

    # A camera added since: its zones are read when its first tracks arrive.
    sim.config.cameras.append(
        SimCamera(9, "Shed", "shed", zones=[rectangle("Door", 0.0, 0.0, 0.5, 0.5)])
    )
    await sim.emit_tracks(9, [person_track("s1", (0.25, 0.25))])
    await until(lambda: link.tracker.knows("9"), "the new camera's zones")
    await sim.linger(9, "Door", 1.4, track_id="s1")
    await until(lambda: len(collected.of(PRESENCE_KIND)) == 4, "the person at the shed")

    # A zone redrawn in OpenNVR is followed on the next read.
    sim.set_zones(2, [rectangle("Lawn", 0.0, 0.0, 0.3, 0.3)])
    await link.async_refresh_zones()
    await sim.linger(2, "Lawn", 1.4, track_id="t2")
    await until(lambda: len(collected.of(PRESENCE_KIND)) == 6, "the person on the lawn")
    assert ("2", "lawn", "t2", 1.0) in lingered(collected)

    # No workflow asks any more: tracks are not even looked at.
    wanted.clear()
    link.refresh_thresholds()
    await sim.linger(2, "Lawn", 1.4, track_id="t3")
    await until(lambda: collected.of("tracks")[-1].payload["tracks"][0]["id"] == "t3", "t3")
    assert len(collected.of(PRESENCE_KIND)) == 6

    link()
    wanted.add(1.0)
    await sim.linger(2, "Lawn", 1.4, track_id="t4")
    await until(lambda: collected.of("tracks")[-1].payload["tracks"][0]["id"] == "t4", "t4")
    assert len(collected.of(PRESENCE_KIND)) == 6
    await hass.async_block_till_done()


async def test_zones_that_cannot_be_read_hold_the_camera_back(
    hass: HomeAssistant,
    sim: OpenNVRSimulator,
    client: OpenNVRClient,
    source: WebSocketSource,
    hub: EventHub,
    collected: Collected,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # A token without cameras.view: zones are refused (403), so no camera is taken as
    # having none (its whole view would count); one warning, and nothing published.
    sim.config.scopes = tuple(s for s in sim.config.scopes if s != "cameras.view")
    link = await async_start_presence(hass, client, hub, lambda: {1.0})
    for track in ("a", "b"):
        await sim.linger(3, "Patio", 1.2, track_id=track, fps=8)
    await until(lambda: len(collected.of("tracks")) >= 20, "the frames")
    assert link.tracker.cameras == frozenset()
    assert collected.of(PRESENCE_KIND) == []
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1
    assert "Cannot read the camera list from OpenNVR" in warnings[0]
    link.stop()
    await hass.async_block_till_done()


async def test_malformed_tracks_frames_are_counted(
    sim: OpenNVRSimulator, source: WebSocketSource, hub: EventHub, collected: Collected
) -> None:
    for _ in range(5):
        await sim._broadcast({"event_type": "tracks", "camera_id": 3, "payload": []})
    await sim._broadcast({"event_type": "tracks", "payload": {"tracks": []}})
    await sim.emit_tracks(3, [person_track(1, (0.5, 0.5))])
    await until(lambda: len(collected.of("tracks")) == 1, "the good frame after the bad ones")
    assert hub.stats["websocket"].dropped_by_kind == {"tracks": 6}


async def test_only_the_cameras_a_zone_trigger_names_are_read_and_matched(
    hass: HomeAssistant,
    sim: OpenNVRSimulator,
    client: OpenNVRClient,
    source: WebSocketSource,
    hub: EventHub,
    collected: Collected,
) -> None:
    # Camera 2 is watched for its detections only, camera 3 for its zones.
    hub.watch_tracks(TrackWatch(zones=frozenset({"3"}), observed=frozenset({"2"})))
    link = await async_start_presence(hass, client, hub, lambda: {1.0})
    await until(lambda: link.tracker.cameras == {"3"}, "the watched camera's zones")
    await sim.linger(2, "Gate", 1.4, track_id="t1")
    await until(lambda: len(collected.of("tracks")) >= 2, "the gate's tracks")
    await sim.linger(3, "Fence line", 1.4, track_id="t2")
    await until(lambda: len(collected.of(PRESENCE_KIND)) == 2, "the person at the fence")
    assert lingered(collected) == [("3", "", "t2", 1.0), ("3", "fence_line", "t2", 1.0)]
    # The gate's camera is never asked for its zones, even with its tracks arriving.
    assert link.tracker.cameras == {"3"}
    link()
