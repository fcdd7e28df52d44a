"""The demo site's own life over the real events websocket: a parcel at the front door comes
out of the hub as one ``detection.observed.v1``, a person lingers in the back garden's fence
line, and both are stored in the simulator's ``/events`` for replays to find."""

from __future__ import annotations

from collections.abc import AsyncGenerator

import aiohttp
import pytest
from opennvr_app_sdk.geometry import Zone as Shape
from opennvr_app_sdk.geometry import bbox_center
from pyopennvr import OpenNVRClient

from custom_components.opennvr_workflows.nvr.hub import EventHub
from custom_components.opennvr_workflows.nvr.observed import OBSERVED_SCHEMA, link_observed
from custom_components.opennvr_workflows.nvr.sources.websocket import WebSocketSource
from tests.fakes.opennvr_sim import OpenNVRSimulator, SimConfig

from .conftest import Collected, until


@pytest.fixture
async def lively(socket_enabled: None) -> AsyncGenerator[OpenNVRSimulator]:
    """The demo's simulator with its activity on, scenes a fraction of a second apart."""
    simulator = OpenNVRSimulator(
        SimConfig(activity=True, activity_every_s=0.1, parcel_s=0.5, linger_s=0.5)
    )
    await simulator.start()
    yield simulator
    await simulator.stop()


async def test_the_demo_shows_a_parcel_and_a_person_and_stores_both(
    lively: OpenNVRSimulator,
    http_session: aiohttp.ClientSession,
    hub: EventHub,
    collected: Collected,
) -> None:
    client = OpenNVRClient(lively.url, lively.config.token, http_session)
    link_observed(hub)
    source = WebSocketSource(client, http_session, hub, on_auth_failed=lambda: None)
    await source.start()
    try:
        await until(
            lambda: {e.camera_id for e in collected.of("event")} >= {"1", "3"},
            "a parcel at the door and a person at the fence",
        )
    finally:
        await source.stop()

    observed = collected.of("event")
    parcels = [e for e in observed if e.camera_id == "1"]
    people = [e for e in observed if e.camera_id == "3"]
    # Many frames of one parcel, one event; the same for the person.
    assert len({e.track_id for e in parcels}) == len(parcels)
    assert len({e.track_id for e in people}) == len(people)
    parcel, person = parcels[0], people[0]
    assert (parcel.type, parcel.payload["label"]) == (OBSERVED_SCHEMA, "package")
    assert (person.type, person.payload["label"]) == (OBSERVED_SCHEMA, "person")
    frames_1 = [e for e in collected.of("tracks") if e.camera_id == "1"]
    assert len(frames_1) > len(parcels)

    # The person stands inside the Fence line zone as OpenNVR draws it.
    fence = next(z for z in await client.get_zones(3) if z.name == "Fence line")
    shape = Shape.from_config(fence.name, list(fence.polygon))
    assert shape.contains(bbox_center(person.payload["bbox"], 1, 1))

    # Each scene is an OpenNVR event too, with the live track's id and its label.
    stored = {(e["camera_id"], e["label"], str(e["track_id"])) for e in lively.events}
    assert (1, "package", parcel.track_id) in stored
    assert (3, "person", person.track_id) in stored
    page = await client.get_events(camera_id=1, label="package", limit=20)
    assert parcel.track_id in {str(e["track_id"]) for e in page["events"]}
