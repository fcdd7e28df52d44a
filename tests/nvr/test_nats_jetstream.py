"""The NATS source's delivery guarantee against a real nats-server: with JetStream, what
is published while the source is away arrives when it comes back, and a message is
acknowledged only once its event is durable; without JetStream, at most once."""

from __future__ import annotations

import asyncio
from collections.abc import Generator
from pathlib import Path

import nats
import pytest

from custom_components.opennvr_workflows.nvr.hub import EventHub
from custom_components.opennvr_workflows.nvr.sources.nats import (
    STREAM,
    NatsSettings,
    NatsSource,
)
from tests.fakes.brokers import NatsServer
from tests.fakes.publishers import nats_publish, sdk_alert

from .conftest import DurableSink, until

pytestmark = pytest.mark.services


@pytest.fixture
def jetstream(socket_enabled: None, tmp_path: Path) -> Generator[NatsServer]:
    server = NatsServer(tmp_path / "nats-js", jetstream=True)
    server.start()
    yield server
    server.stop()


async def started(server: NatsServer, hub: EventHub, *, ack_wait_s: float = 30.0) -> NatsSource:
    source = NatsSource(
        NatsSettings(url=server.url),
        hub,
        min_backoff=0.05,
        max_backoff=0.3,
        consumer="test_entry",
        ack_wait_s=ack_wait_s,
    )
    await source.start()
    await until(lambda: hub.connected("nats"), "NATS to connect")
    return source


async def acked(server: NatsServer) -> tuple[int, int]:
    """(stream seq below which all is acknowledged, messages awaiting acknowledgement)
    of the alerts consumer, as the broker sees them."""
    nc = await nats.connect(server.url)
    try:
        info = await nc.jetstream().consumer_info(STREAM, "test_entry_alerts")
        return info.ack_floor.stream_seq or 0, info.num_ack_pending or 0
    finally:
        await nc.close()


async def until_acked(server: NatsServer, expected: tuple[int, int]) -> None:
    for _ in range(200):
        if await acked(server) == expected:
            return
        await asyncio.sleep(0.05)
    assert await acked(server) == expected


async def test_alerts_published_while_away_arrive_after_reconnect(
    jetstream: NatsServer,
) -> None:
    hub = EventHub()
    sink = DurableSink(hub)
    source = await started(jetstream, hub)
    assert source.durable
    await nats_publish(jetstream, [sdk_alert("cam1")])
    await until(lambda: len(sink.committed) == 1, "the first alert")
    await until_acked(jetstream, (1, 0))
    await source.stop()

    await nats_publish(jetstream, [sdk_alert("cam2"), sdk_alert("cam3")])

    # A new process: a new hub and source, nothing carried over but the broker's state.
    hub2 = EventHub()
    sink2 = DurableSink(hub2)
    source2 = await started(jetstream, hub2)
    try:
        await until(lambda: len(sink2.committed) == 2, "the alerts published while away")
        assert sorted(e.camera_id or "" for e in sink2.committed) == ["2", "3"]
        await until_acked(jetstream, (3, 0))
    finally:
        await source2.stop()


async def test_a_failed_commit_is_not_acknowledged_and_comes_again(
    jetstream: NatsServer,
) -> None:
    hub = EventHub()
    sink = DurableSink(hub)
    sink.fail = 1
    source = await started(jetstream, hub)
    try:
        subject, data = sdk_alert("cam2")
        await nats_publish(jetstream, [(subject, data)])
        await until(lambda: len(sink.committed) == 1, "the redelivered alert")
        # Tried twice, the same alert both times; the hub did not take the second
        # attempt for a duplicate of the failed one.
        assert len(sink.attempts) == 2
        assert sink.attempts[0].alert_id == sink.attempts[1].alert_id
        assert hub.stats["nats"].failed == 1
        assert hub.stats["nats"].duplicates == 0
        await until_acked(jetstream, (1, 0))
    finally:
        await source.stop()


async def test_a_process_that_stops_before_its_commit_gets_the_message_again(
    jetstream: NatsServer,
) -> None:
    hub = EventHub()
    sink = DurableSink(hub)
    sink.hold()
    source = await started(jetstream, hub, ack_wait_s=1.0)
    await nats_publish(jetstream, [sdk_alert("cam1")])
    await until(lambda: len(sink.attempts) == 1, "the alert to be taken")
    assert await acked(jetstream) == (0, 1)
    await source.stop()  # gone before the commit

    hub2 = EventHub()
    sink2 = DurableSink(hub2)
    source2 = await started(jetstream, hub2, ack_wait_s=1.0)
    try:
        await until(lambda: len(sink2.committed) == 1, "the alert, sent again")
        assert sink2.committed[0].alert_id == sink.attempts[0].alert_id
        await until_acked(jetstream, (1, 0))
    finally:
        await source2.stop()
        sink.release()
        await asyncio.sleep(0.01)


async def test_without_jetstream_it_is_a_plain_subscription(nats_server: NatsServer) -> None:
    hub = EventHub()
    sink = DurableSink(hub)
    source = await started(nats_server, hub)
    assert not source.durable
    await nats_publish(nats_server, [sdk_alert("cam1")])
    await until(lambda: len(sink.committed) == 1, "the alert")
    await source.stop()
    # At most once: what is published while the source is away is gone.
    await nats_publish(nats_server, [sdk_alert("cam2")])
    source = await started(nats_server, hub)
    try:
        await nats_publish(nats_server, [sdk_alert("cam3")])
        await until(lambda: len(sink.committed) == 2, "the next alert")
        assert [e.camera_id for e in sink.committed] == ["1", "3"]
    finally:
        await source.stop()
