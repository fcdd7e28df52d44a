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


class DurableSink:
    """A durable consumer for the hub, standing in for the engine: it records each event
    it "committed"; ``fail`` makes the next that many fail (not durable); while ``held``,
    every event waits (a process that stops before its commit) until :meth:`release`."""

    def __init__(self, hub: EventHub) -> None:
        self.committed = Collected()
        self.attempts: list[NvrEvent] = []
        self.fail = 0
        self.held: asyncio.Event | None = None
        self.unsubscribe = hub.subscribe_durable(self)

    async def __call__(self, event: NvrEvent) -> None:
        self.attempts.append(event)
        await asyncio.sleep(0.001)  # a commit is never instant
        if self.held is not None:
            await self.held.wait()
        if self.fail > 0:
            self.fail -= 1
            raise OSError("disk I/O error")
        self.committed.append(event)

    def hold(self) -> None:
        self.held = asyncio.Event()

    def release(self) -> None:
        if self.held is not None:
            self.held.set()
