"""The websocket's durable position against the OpenNVR simulator: saved only once the
events up to it are committed, resumed after a restart, reopened after a failed commit,
and started over from a snapshot (counted) when the server cannot replay that far."""

from __future__ import annotations

import asyncio

import aiohttp
from pyopennvr import OpenNVRClient

from custom_components.opennvr_workflows.nvr.hub import EventHub
from custom_components.opennvr_workflows.nvr.sources.position import (
    MemoryPositionStore,
    Position,
)
from custom_components.opennvr_workflows.nvr.sources.websocket import WebSocketSource
from tests.fakes.opennvr_sim import OpenNVRSimulator

from .conftest import DurableSink, until


async def started(
    sim: OpenNVRSimulator,
    session: aiohttp.ClientSession,
    hub: EventHub,
    positions: MemoryPositionStore,
) -> WebSocketSource:
    source = WebSocketSource(
        OpenNVRClient(sim.url, sim.config.token, session),
        session,
        hub,
        on_auth_failed=lambda: None,
        min_backoff=0.05,
        max_backoff=0.2,
        positions=positions,
    )
    await source.start()
    await until(lambda: hub.connected("websocket"), "the websocket to connect")
    return source


async def test_a_restart_resumes_from_the_saved_position(
    sim: OpenNVRSimulator, http_session: aiohttp.ClientSession
) -> None:
    saved = MemoryPositionStore()  # what outlives the process
    hub = EventHub()
    sink = DurableSink(hub)
    source = await started(sim, http_session, hub, saved)
    first = [(await sim.emit_alert(1))["alert_id"] for _ in range(3)]
    await until(lambda: sink.committed.alert_ids() == first, "the first alerts")
    await until(lambda: saved.position == Position(sim.epoch, sim.seq), "the position")
    await source.stop()

    away = [(await sim.emit_alert(2))["alert_id"] for _ in range(2)]

    # A new process: new hub, new source; only the saved position is carried over.
    hub2 = EventHub()
    sink2 = DurableSink(hub2)
    source2 = await started(sim, http_session, hub2, saved)
    try:
        await until(lambda: sink2.committed.alert_ids() == away, "the alerts raised while away")
        assert sim.ws_resumes[-1] == (str(sim.seq - 2), sim.epoch)
        # Replayed, not started over: no snapshot, no resync, nothing seen twice.
        assert sink2.committed.of("site_mode") == []
        assert hub2.stats["websocket"].resyncs == 0
        await until(lambda: saved.position == Position(sim.epoch, sim.seq), "the position")
    finally:
        await source2.stop()


async def test_the_position_waits_for_the_commit(
    sim: OpenNVRSimulator, http_session: aiohttp.ClientSession
) -> None:
    saved = MemoryPositionStore()
    hub = EventHub()
    sink = DurableSink(hub)
    source = await started(sim, http_session, hub, saved)
    try:
        await until(lambda: saved.position is not None, "the snapshot's position")
        before = saved.position
        sink.hold()
        await sim.emit_alert(1)
        await until(lambda: len(sink.attempts) == 5, "the alert to be taken")  # 3 cams, mode
        await asyncio.sleep(0.1)
        assert saved.position == before
        sink.release()
        await until(lambda: saved.position == Position(sim.epoch, sim.seq), "the commit")
    finally:
        await source.stop()


async def test_a_failed_commit_reopens_from_the_durable_position(
    sim: OpenNVRSimulator, http_session: aiohttp.ClientSession
) -> None:
    saved = MemoryPositionStore()
    hub = EventHub()
    sink = DurableSink(hub)
    source = await started(sim, http_session, hub, saved)
    try:
        await until(lambda: saved.position is not None, "the snapshot's position")
        durable = saved.position
        assert durable is not None
        sink.fail = 1
        row = await sim.emit_alert(2)
        await until(lambda: row["alert_id"] in sink.committed.alert_ids(), "the alert, again")
        assert [e.alert_id for e in sink.attempts if e.alert_id] == [row["alert_id"]] * 2
        assert sim.ws_resumes[-1] == (str(durable.seq), sim.epoch)
        assert hub.stats["websocket"].failed == 1
        await until(lambda: saved.position == Position(sim.epoch, sim.seq), "the position")
    finally:
        await source.stop()


async def test_out_of_the_replay_window_it_resyncs_from_the_snapshot(
    sim: OpenNVRSimulator, http_session: aiohttp.ClientSession
) -> None:
    saved = MemoryPositionStore()
    hub = EventHub()
    DurableSink(hub)  # the engine stand-in, so positions wait for commits
    source = await started(sim, http_session, hub, saved)
    await sim.emit_alert(1)
    await until(lambda: saved.position == Position(sim.epoch, sim.seq), "the position")
    await source.stop()

    await sim.emit_alert(2)  # raised while away, then the window passes
    await sim.set_camera_online(3, False)
    sim.forget_replay()

    hub2 = EventHub()
    sink2 = DurableSink(hub2)
    source2 = await started(sim, http_session, hub2, saved)
    try:
        await until(lambda: hub2.stats["websocket"].resyncs == 1, "the resync")
        # The state is rebuilt from the snapshot (camera 3 is offline, the mode is known),
        # and the position starts over from it.
        await until(lambda: len(sink2.committed.of("site_mode")) == 1, "the snapshot")
        assert [e.camera_id for e in sink2.committed.of("camera_offline")] == ["3"]
        await until(lambda: saved.position == Position(sim.epoch, sim.seq), "the new position")
    finally:
        await source2.stop()


async def test_a_position_of_another_server_process_resyncs(
    sim: OpenNVRSimulator, http_session: aiohttp.ClientSession
) -> None:
    saved = MemoryPositionStore(Position("an-old-epoch", 42))
    hub = EventHub()
    sink = DurableSink(hub)
    source = await started(sim, http_session, hub, saved)
    try:
        await until(lambda: hub.stats["websocket"].resyncs == 1, "the resync")
        assert sim.ws_resumes == [("42", "an-old-epoch")]
        await until(lambda: saved.position == Position(sim.epoch, sim.seq), "the new position")
        assert len(sink.committed.of("site_mode")) == 1
    finally:
        await source.stop()
