"""The websocket source against the OpenNVR simulator over a real loopback socket."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator

import aiohttp
import pytest
from pyopennvr import OpenNVRClient

from custom_components.opennvr_workflows.nvr.hub import EventHub
from custom_components.opennvr_workflows.nvr.sources.websocket import WebSocketSource
from tests.fakes.brokers import free_port
from tests.fakes.opennvr_sim import OpenNVRSimulator

from .conftest import Collected, until


class AuthFailures:
    def __init__(self) -> None:
        self.count = 0

    def __call__(self) -> None:
        self.count += 1


@pytest.fixture
def auth_failures() -> AuthFailures:
    return AuthFailures()


@pytest.fixture
async def source(
    sim: OpenNVRSimulator,
    http_session: aiohttp.ClientSession,
    hub: EventHub,
    collected: Collected,
    auth_failures: AuthFailures,
) -> AsyncGenerator[WebSocketSource]:
    """A started source; ``collected`` subscribes first, so it sees the snapshot."""
    client = OpenNVRClient(sim.url, sim.config.token, http_session)
    ws = WebSocketSource(
        client, http_session, hub, on_auth_failed=auth_failures, min_backoff=0.05, max_backoff=0.2
    )
    await ws.start()
    await until(lambda: hub.connected("websocket"), "the websocket to connect")
    yield ws
    await ws.stop()


async def test_snapshot_alerts_status_and_site_mode_arrive(
    sim: OpenNVRSimulator, source: WebSocketSource, hub: EventHub, collected: Collected
) -> None:
    # The first connection brings a state snapshot: every camera's state and the mode.
    await until(lambda: len(collected.of("site_mode")) == 1, "the snapshot")
    assert sorted(e.camera_id or "" for e in collected.of("camera_online")) == ["1", "2", "3"]
    assert collected.of("site_mode")[0].payload["mode"] == "disarmed"

    row = await sim.emit_alert(2, "vehicle", severity="critical")
    await sim.set_camera_online(3, False)
    await until(lambda: len(collected.of("camera_offline")) == 1, "camera 3 going offline")
    [alert] = collected.of("alert")
    assert (alert.alert_id, alert.camera_id, alert.type) == (row["alert_id"], "2", "vehicle")
    assert (alert.severity, alert.source, alert.app) == ("critical", "websocket", "intrusion")
    assert collected.of("camera_offline")[0].camera_id == "3"

    client = OpenNVRClient(sim.url, sim.config.token, source._session)
    await client.set_site_mode("armed_away")
    await until(lambda: len(collected.of("site_mode")) == 2, "the site mode change")
    assert collected.of("site_mode")[1].type == "armed_away"
    assert hub.stats["websocket"].dropped == 0


async def test_resumes_after_a_drop_without_loss_or_duplicates(
    sim: OpenNVRSimulator,
    source: WebSocketSource,
    hub: EventHub,
    collected: Collected,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    sent = [(await sim.emit_alert(1))["alert_id"] for _ in range(3)]
    await until(lambda: len(collected.alert_ids()) == 3, "the first alerts")
    await sim.drop_websockets()
    # Raised while the socket is down: the resume (since/epoch) must replay these.
    sent += [(await sim.emit_alert(2))["alert_id"] for _ in range(3)]
    await until(lambda: hub.connected("websocket"), "the reconnect")
    sent += [(await sim.emit_alert(3))["alert_id"] for _ in range(2)]
    await until(lambda: len(collected.alert_ids()) == 8, "every alert")
    assert collected.alert_ids() == sent
    assert hub.stats["websocket"].duplicates == 0
    assert hub.stats["websocket"].received == len(collected)
    # A resume replays, it does not re-send a snapshot.
    assert len(collected.of("site_mode")) == 1
    messages = [r.getMessage() for r in caplog.records if "via websocket" in r.getMessage()]
    assert messages == [
        "OpenNVR events via websocket lost; its entities are unavailable until it reconnects",
        "OpenNVR events via websocket are back",
    ]


async def test_stopping_is_not_an_outage(
    sim: OpenNVRSimulator,
    http_session: aiohttp.ClientSession,
    hub: EventHub,
    caplog: pytest.LogCaptureFixture,
) -> None:
    client = OpenNVRClient(sim.url, sim.config.token, http_session)
    states: list[bool] = []
    hub.subscribe_state(lambda name, up: states.append(up))
    for _ in range(2):  # stopped, then started again and stopped: as a reload does
        ws = WebSocketSource(client, http_session, hub, on_auth_failed=AuthFailures())
        await ws.start()
        await until(lambda: hub.connected("websocket"), "the websocket to connect")
        await ws.stop()
        assert not hub.connected("websocket")
    assert states == [True, False, True, False]
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


async def test_malformed_frames_are_counted(
    sim: OpenNVRSimulator, source: WebSocketSource, hub: EventHub, collected: Collected
) -> None:
    for _ in range(20):
        await sim._broadcast({"event_type": "app_alert", "camera_id": 1, "payload": "junk"})
    await sim._broadcast({"event_type": "camera_status", "camera_id": 1})
    await sim._broadcast({"event_type": "from_a_future_release", "x": 1})
    await sim.emit_alert(1)
    await until(lambda: len(collected.of("alert")) == 1, "the good alert after the bad ones")
    assert hub.stats["websocket"].dropped_by_kind == {"alert": 20, "camera_status": 1}


async def test_a_revoked_token_is_reported_once_and_stops_the_stream(
    sim: OpenNVRSimulator, source: WebSocketSource, hub: EventHub, auth_failures: AuthFailures
) -> None:
    sim.config.token = "onvr_revoked_differentsecret"
    await sim.drop_websockets()
    await until(lambda: auth_failures.count == 1, "the refused token to be reported")
    assert not hub.connected("websocket")
    assert source.stream is not None
    assert source.stream.state == "auth_failed"
    await until(lambda: source._task is not None and source._task.done(), "the stream to end")
    assert auth_failures.count == 1


async def test_an_unreachable_site_is_logged_once(
    socket_enabled: None,
    http_session: aiohttp.ClientSession,
    hub: EventHub,
    caplog: pytest.LogCaptureFixture,
) -> None:
    client = OpenNVRClient(f"http://127.0.0.1:{free_port()}", "onvr_x0000000_secret", http_session)
    ws = WebSocketSource(
        client, http_session, hub, on_auth_failed=AuthFailures(), min_backoff=0.02, max_backoff=0.05
    )
    await ws.start()
    try:
        await asyncio.sleep(0.5)  # many attempts
    finally:
        await ws.stop()
    lines = [r for r in caplog.records if "events websocket" in r.getMessage()]
    assert len(lines) == 1
    assert lines[0].levelno == logging.WARNING
    assert not hub.connected("websocket")
