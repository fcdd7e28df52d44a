"""The direct MQTT source's delivery guarantee against a real mosquitto: a persistent
session keeps what is published while the source is away, and a message is acknowledged
only once its event is durable, so one that was not is sent again."""

from __future__ import annotations

import asyncio

import pytest

from custom_components.opennvr_workflows.nvr.hub import EventHub
from custom_components.opennvr_workflows.nvr.sources.mqtt import DirectMqttSource, MqttSettings
from tests.fakes.brokers import Mosquitto
from tests.fakes.publishers import mqtt_publish as publish
from tests.fakes.publishers import webhook_alert

from .conftest import DurableSink, until

pytestmark = pytest.mark.services

CLIENT_ID = "ha-opennvr-workflows-test-entry"


async def started(broker: Mosquitto, hub: EventHub) -> DirectMqttSource:
    source = DirectMqttSource(
        MqttSettings(use_ha=False, host="127.0.0.1", port=broker.port),
        hub,
        min_backoff=0.05,
        max_backoff=0.3,
        client_id=CLIENT_ID,
    )
    await source.start()
    await until(lambda: hub.connected("mqtt"), "MQTT to connect")
    return source


async def test_alerts_published_while_away_arrive_after_reconnect(mosquitto: Mosquitto) -> None:
    hub = EventHub()
    sink = DurableSink(hub)
    source = await started(mosquitto, hub)
    await publish(mosquitto, [webhook_alert("cam1")])
    await until(lambda: len(sink.committed) == 1, "the first alert")
    await asyncio.sleep(0.3)  # its PUBACK goes out with the client's next loop
    await source.stop()

    await publish(mosquitto, [webhook_alert("cam2"), webhook_alert("cam3")])

    # A new process: a new hub and source with the same client id.
    hub2 = EventHub()
    sink2 = DurableSink(hub2)
    source2 = await started(mosquitto, hub2)
    try:
        await until(lambda: len(sink2.committed) == 2, "the alerts published while away")
        # The acknowledged first alert is not sent again; the two held ones are, in order.
        await asyncio.sleep(0.3)
        assert [e.camera_id for e in sink2.committed] == ["2", "3"]
    finally:
        await source2.stop()


async def test_a_failed_commit_is_not_acknowledged_and_comes_again(mosquitto: Mosquitto) -> None:
    hub = EventHub()
    sink = DurableSink(hub)
    source = await started(mosquitto, hub)
    try:
        sink.fail = 1
        await publish(mosquitto, [webhook_alert("cam2")])
        await until(lambda: len(sink.committed) == 1, "the alert, sent again")
        assert len(sink.attempts) == 2
        assert sink.attempts[0].alert_id == sink.attempts[1].alert_id
        assert hub.stats["mqtt"].failed == 1
        assert hub.stats["mqtt"].duplicates == 0
    finally:
        await source.stop()


async def test_a_process_that_stops_before_its_commit_gets_the_message_again(
    mosquitto: Mosquitto,
) -> None:
    hub = EventHub()
    sink = DurableSink(hub)
    sink.hold()
    source = await started(mosquitto, hub)
    await publish(mosquitto, [webhook_alert("cam1")])
    await until(lambda: len(sink.attempts) == 1, "the alert to be taken")
    await source.stop()  # gone before the commit

    hub2 = EventHub()
    sink2 = DurableSink(hub2)
    source2 = await started(mosquitto, hub2)
    try:
        await until(lambda: len(sink2.committed) == 1, "the alert, sent again")
        assert sink2.committed[0].alert_id == sink.attempts[0].alert_id
    finally:
        await source2.stop()
        sink.release()
        await asyncio.sleep(0.01)
