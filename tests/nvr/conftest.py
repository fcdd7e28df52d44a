"""Fixtures for the event transport tests: real brokers and a polling helper."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable

import aiohttp
import pytest

from custom_components.opennvr_workflows.engine.events import NvrEvent
from custom_components.opennvr_workflows.nvr.hub import EventHub
from tests.fakes.opennvr_sim import OpenNVRSimulator, SimConfig


async def until(condition: Callable[[], bool], what: str, within: float = 15.0) -> None:
    """Wait for ``condition`` (polled), failing with ``what`` after ``within`` seconds."""
    deadline = asyncio.get_running_loop().time() + within
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


class Collected(list[NvrEvent]):
    """Events a hub published, in order, with handy filters."""

    def of(self, kind: str) -> list[NvrEvent]:
        return [event for event in self if event.kind == kind]

    def alert_ids(self) -> list[str]:
        return [event.alert_id for event in self if event.alert_id is not None]


@pytest.fixture
def hub() -> EventHub:
    return EventHub()


@pytest.fixture
def collected(hub: EventHub) -> Collected:
    events = Collected()
    hub.subscribe(events.append)
    return events


@pytest.fixture
async def sim(socket_enabled: None) -> AsyncGenerator[OpenNVRSimulator]:
    """The OpenNVR simulator on a real loopback port."""
    simulator = OpenNVRSimulator(SimConfig())
    await simulator.start()
    yield simulator
    await simulator.stop()


@pytest.fixture
async def http_session(socket_enabled: None) -> AsyncGenerator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session
