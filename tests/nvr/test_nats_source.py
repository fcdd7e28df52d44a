"""The NATS source against a real nats-server, fed by a real nats-py publisher."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncGenerator, Mapping
from pathlib import Path
from typing import Any

import pytest
from opennvr_app_sdk.domain_events import domain_envelope, domain_subject

from custom_components.opennvr_workflows.const import (
    CONF_NATS_PASSWORD,
    CONF_NATS_TLS_VERIFY,
    CONF_NATS_TOKEN,
    CONF_NATS_URL,
    CONF_NATS_USER,
)
from custom_components.opennvr_workflows.nvr.hub import EventHub
from custom_components.opennvr_workflows.nvr.sources.factory import (
    TransportTestError,
    async_test_nats,
)
from custom_components.opennvr_workflows.nvr.sources.nats import NatsSettings, NatsSource
from tests.fakes.brokers import NatsServer, free_port, running
from tests.fakes.publishers import nats_publish, sdk_alert, tier0_person

from .conftest import Collected, until

pytestmark = pytest.mark.services


def settings_for(server: NatsServer, **extra: Any) -> dict[str, Any]:
    return {CONF_NATS_URL: server.url, **extra}


async def start_source(settings: Mapping[str, Any], hub: EventHub) -> NatsSource:
    source = NatsSource(NatsSettings.from_mapping(settings), hub, min_backoff=0.05, max_backoff=0.3)
    await source.start()
    return source


@pytest.fixture
async def source(nats_server: NatsServer, hub: EventHub) -> AsyncGenerator[NatsSource]:
    source = await start_source(settings_for(nats_server), hub)
    await until(lambda: hub.connected("nats"), "NATS to connect")
    yield source
    await source.stop()


async def test_alerts_and_contracted_events_arrive(
    nats_server: NatsServer, source: NatsSource, hub: EventHub, collected: Collected
) -> None:
    subject, data = sdk_alert("cam2")
    envelope = domain_envelope(
        "plate.recognized.v1",
        camera_id="cam1",
        payload={"plate_text": "AB12CDE", "confidence": 0.9},
        producer="anpr",
    )
    event_msg = (domain_subject("plate.recognized.v1", "cam1"), json.dumps(envelope).encode())
    await nats_publish(
        nats_server, [(subject, data), event_msg, ("opennvr.inference.x.cam1.completed", b"{}")]
    )
    await until(lambda: len(collected) == 2, "the alert and the event")
    alert, event = collected
    assert (alert.kind, alert.source, alert.camera_id, alert.type) == (
        "alert",
        "nats",
        "2",
        "person",
    )
    assert (event.kind, event.type, event.plate, event.camera_id) == (
        "event",
        "plate.recognized.v1",
        "AB12CDE",
        "1",
    )
    assert hub.stats["nats"].received == 2


async def test_tier0_tracks_arrive_and_unreadable_ones_are_counted(
    nats_server: NatsServer, source: NatsSource, hub: EventHub, collected: Collected
) -> None:
    await nats_publish(
        nats_server,
        [
            ("opennvr.inference.tier0.cam3.completed", b"{not json"),
            ("opennvr.inference.tier0.cam3.completed", b'{"tracks": {"id": 1}}'),
            tier0_person("cam3", "t1", matched=False, misses=3),  # coasting: left out
            tier0_person("cam3", "t2"),
        ],
    )
    await until(lambda: len(collected.of("tracks")) == 1, "the frame with a person seen")
    [event] = collected.of("tracks")
    assert (event.type, event.camera_id, event.source) == ("tier0", "3", "nats")
    [track] = event.payload["tracks"]
    assert track["id"] == "t2"
    assert track["bbox"]["x"] == pytest.approx(0.12)
    await until(lambda: hub.stats["nats"].dropped == 2, "both unreadable frames counted")
    assert hub.stats["nats"].dropped_by_kind == {"tracks": 2}


async def test_broker_restart_mid_stream(
    nats_server: NatsServer,
    source: NatsSource,
    hub: EventHub,
    collected: Collected,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    before = [sdk_alert(f"cam{n}") for n in range(3)]
    await nats_publish(nats_server, before)
    await until(lambda: len(collected) == 3, "the alerts before the restart")

    states: list[bool] = []
    hub.subscribe_state(lambda name, up: states.append(up))
    await asyncio.to_thread(nats_server.restart)
    await until(lambda: states[-2:] == [False, True], "NATS to go down and come back")

    after = [sdk_alert(f"cam{n}") for n in range(3)]
    await nats_publish(nats_server, after)
    await until(lambda: len(collected) == 6, "the alerts after the restart")
    sent = [json.loads(data)["alert_id"] for _, data in before + after]
    assert collected.alert_ids() == sent
    assert hub.stats["nats"].duplicates == 0
    lines = [r.getMessage() for r in caplog.records if "nats" in r.getMessage().lower()]
    assert lines == [
        "OpenNVR events via nats lost; its entities are unavailable until it reconnects",
        "OpenNVR events via nats are back",
    ]


async def test_malformed_flood_is_counted_and_logged_once_per_kind(
    nats_server: NatsServer,
    source: NatsSource,
    hub: EventHub,
    collected: Collected,
    caplog: pytest.LogCaptureFixture,
) -> None:
    flood = [("opennvr.alerts.app.x.cam1", b"{not json")] * 200
    flood += [("opennvr.alerts.app.x.cam1", b'{"title": "no alert_id"}')] * 50
    flood += [
        ("opennvr.events.plate.recognized.v1.cam2", b'{"schema": "plate.recognized.v1"}')
    ] * 30
    good = sdk_alert("cam3")
    await nats_publish(nats_server, [*flood, good])
    await until(lambda: len(collected) == 1, "the good alert behind the flood")
    await until(lambda: hub.stats["nats"].dropped == 280, "every drop to be counted")
    assert hub.stats["nats"].dropped_by_kind == {"alert": 250, "event": 30}
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 2
    assert all("Malformed" in r.getMessage() for r in warnings)
    assert hub.connected("nats")


async def test_stopping_is_not_an_outage(
    nats_server: NatsServer, hub: EventHub, caplog: pytest.LogCaptureFixture
) -> None:
    states: list[bool] = []
    hub.subscribe_state(lambda name, up: states.append(up))
    for _ in range(2):  # stopped, then started again and stopped: as a reload does
        source = await start_source(settings_for(nats_server), hub)
        await until(lambda: hub.connected("nats"), "NATS to connect")
        await source.stop()
        assert not hub.connected("nats")
    assert states == [True, False, True, False]
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


async def test_starting_while_the_broker_is_down_logs_once_then_connects(
    socket_enabled: None, tmp_path: Path, hub: EventHub, caplog: pytest.LogCaptureFixture
) -> None:
    server = NatsServer(tmp_path)
    source = await start_source(settings_for(server), hub)
    try:
        await asyncio.sleep(1.0)  # several retries with the short test backoff
        cannot = [r for r in caplog.records if "Cannot connect to NATS" in r.getMessage()]
        assert len(cannot) == 1
        assert cannot[0].levelno == logging.WARNING
        await asyncio.to_thread(server.start)
        await until(lambda: hub.connected("nats"), "NATS to connect once the broker is up")
    finally:
        await source.stop()
        await asyncio.to_thread(server.stop)
    assert not hub.connected("nats")


async def test_token_and_password_logins(
    socket_enabled: None, tmp_path: Path, hub: EventHub, collected: Collected
) -> None:
    with running(NatsServer(tmp_path / "t", token="s3cret")) as token_server:
        assert isinstance(token_server, NatsServer)
        source = await start_source(settings_for(token_server, **{CONF_NATS_TOKEN: "s3cret"}), hub)
        try:
            await until(lambda: hub.connected("nats"), "a token login")
            await nats_publish(token_server, [sdk_alert()], token="s3cret")
            await until(lambda: len(collected) == 1, "an alert over the token login")
        finally:
            await source.stop()
        await async_test_nats(settings_for(token_server, **{CONF_NATS_TOKEN: "s3cret"}))
        with pytest.raises(TransportTestError) as info:
            await async_test_nats(settings_for(token_server, **{CONF_NATS_TOKEN: "wrong"}))
        assert info.value.key == "nats_auth"

    with running(NatsServer(tmp_path / "u", user="ha", password="pw")) as user_server:
        assert isinstance(user_server, NatsServer)
        good = {CONF_NATS_USER: "ha", CONF_NATS_PASSWORD: "pw"}
        await async_test_nats(settings_for(user_server, **good))
        with pytest.raises(TransportTestError) as info:
            await async_test_nats(settings_for(user_server, **{**good, CONF_NATS_PASSWORD: "no"}))
        assert info.value.key == "nats_auth"


async def test_tls_with_and_without_verification(
    socket_enabled: None, tmp_path: Path, hub: EventHub, collected: Collected
) -> None:
    with running(NatsServer(tmp_path, tls=True)) as server:
        assert isinstance(server, NatsServer)
        assert server.url.startswith("tls://")
        # The certificate is self-signed: refused when verified, used when not.
        with pytest.raises(TransportTestError) as info:
            await async_test_nats(settings_for(server))
        assert info.value.key == "nats_cannot_connect"
        insecure = settings_for(server, **{CONF_NATS_TLS_VERIFY: False})
        await async_test_nats(insecure)
        source = await start_source(insecure, hub)
        try:
            await until(lambda: hub.connected("nats"), "a TLS connection")
            await nats_publish(server, [sdk_alert()])
            await until(lambda: len(collected) == 1, "an alert over TLS")
        finally:
            await source.stop()


async def test_connection_test_without_a_broker(socket_enabled: None) -> None:
    with pytest.raises(TransportTestError) as info:
        await async_test_nats({CONF_NATS_URL: f"nats://127.0.0.1:{free_port()}"})
    assert info.value.key == "nats_cannot_connect"
    with pytest.raises(TransportTestError) as info:
        await async_test_nats({CONF_NATS_URL: ""})
    assert info.value.key == "nats_cannot_connect"
