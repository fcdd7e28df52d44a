"""The NVR read port over the real pyopennvr client, against the OpenNVR simulator on loopback."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import aiohttp
import pytest
from pyopennvr import OpenNVRClient

from custom_components.opennvr_workflows.ai import (
    NvrReadError,
    NvrReadPort,
    PyOpenNvrReadPort,
    prepare_image,
)
from tests.fakes.opennvr_sim import DEMO_TOKEN, OpenNVRSimulator, SimConfig

ROLES = {"front_door": 1, "drive": 2, "garden": 3}


@pytest.fixture
async def sim() -> AsyncIterator[OpenNVRSimulator]:
    simulator = OpenNVRSimulator(SimConfig())
    await simulator.start()
    yield simulator
    await simulator.stop()


@pytest.fixture
async def port(sim: OpenNVRSimulator) -> AsyncIterator[PyOpenNvrReadPort]:
    async with aiohttp.ClientSession() as session:
        client = OpenNVRClient(sim.url, DEMO_TOKEN, session, request_timeout=5)
        yield PyOpenNvrReadPort(client, ROLES, correlation_id="run-1")


def test_is_an_nvr_read_port(port: PyOpenNvrReadPort) -> None:
    assert isinstance(port, NvrReadPort)
    assert port.camera_names() == ("front_door", "drive", "garden")


async def test_snapshot_is_a_picture(port: PyOpenNvrReadPort) -> None:
    data = await port.snapshot("drive")
    assert data[:2] == b"\xff\xd8"
    assert prepare_image(data, 320)[:2] == b"\xff\xd8"


async def test_offline_camera_snapshot_is_a_read_error(
    sim: OpenNVRSimulator, port: PyOpenNvrReadPort
) -> None:
    await sim.set_camera_online(2, False)
    with pytest.raises(NvrReadError, match="snapshot of drive"):
        await port.snapshot("drive")
    health = await port.camera_health("drive")
    assert (health.online, health.status, health.stale) == (False, "offline", True)


async def test_unknown_camera_is_a_read_error(port: PyOpenNvrReadPort) -> None:
    with pytest.raises(NvrReadError, match="unknown camera 'garage'"):
        await port.snapshot("garage")


async def test_describe_uses_the_nvrs_caption(port: PyOpenNvrReadPort) -> None:
    assert await port.describe_camera("front_door", "anyone there?") == "A quiet view of the porch."


async def test_events_search_and_event_pictures(
    sim: OpenNVRSimulator, port: PyOpenNvrReadPort
) -> None:
    sim.add_event(2, "car", plate="KA01AB1234")
    sim.add_event(1, "person")
    since = datetime.now(UTC) - timedelta(hours=1)
    recent = await port.recent_events(None, since, 10)
    assert [(e.camera, e.label, e.plate) for e in recent] == [
        ("front_door", "person", None),
        ("drive", "car", "KA01AB1234"),
    ]
    only_drive = await port.recent_events("drive", since, 10)
    assert [e.id for e in only_drive] == [1]
    found = await port.search(label="car", limit=5)
    assert [(e.id, e.caption) for e in found] == [(1, "a car at the Driveway")]
    assert (await port.event_image(1))[:2] == b"\xff\xd8"
    with pytest.raises(NvrReadError, match="event #99"):
        await port.event_image(99)


async def test_live_objects_and_health(port: PyOpenNvrReadPort) -> None:
    assert await port.live_objects("garden") == {}
    health = await port.camera_health("garden")
    assert (health.online, health.active, health.recording_state) == (True, True, "recording")


async def test_live_detections_say_how_current_they_are(
    sim: OpenNVRSimulator, port: PyOpenNvrReadPort
) -> None:
    live = await port.live_detections("garden")
    assert (dict(live.objects), live.online, live.stale) == ({}, True, False)
    assert live.not_current is None
    await sim.set_camera_online(3, False)
    off = await port.live_detections("garden")
    assert (off.online, off.stale, off.not_current) == (False, True, "the camera is offline")
    with pytest.raises(NvrReadError, match="unknown camera 'garage'"):
        await port.live_detections("garage")


async def test_footage_search_sends_the_words_and_the_window(
    sim: OpenNVRSimulator, port: PyOpenNvrReadPort
) -> None:
    sim.add_event(2, "car", plate="KA01AB1234")
    since = (datetime.now(UTC) - timedelta(days=7)).isoformat()
    found = await port.search(query="white car", camera="drive", start=since, limit=5)
    assert [(e.id, e.camera, e.caption) for e in found] == [(1, "drive", "a car at the Driveway")]
    assert ("GET", "/api/v1/search") in sim.requests


async def test_a_revoked_token_is_a_read_error(sim: OpenNVRSimulator) -> None:
    async with aiohttp.ClientSession() as session:
        port = PyOpenNvrReadPort(OpenNVRClient(sim.url, "onvr_wrong", session), ROLES)
        with pytest.raises(NvrReadError, match="OpenNVRAuthError"):
            await port.live_objects("drive")


async def test_nvr_down_is_a_read_error() -> None:
    sim = OpenNVRSimulator()
    await sim.start()
    url = sim.url
    await sim.stop()
    async with aiohttp.ClientSession() as session:
        port = PyOpenNvrReadPort(OpenNVRClient(url, DEMO_TOKEN, session, request_timeout=2), ROLES)
        with pytest.raises(NvrReadError, match="OpenNVRConnectionError"):
            await port.recent_events(None, datetime.now(UTC), 5)
