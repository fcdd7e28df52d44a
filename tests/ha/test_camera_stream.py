"""The camera's live stream: offered only when it opens, a repair when OpenNVR advertises one
that does not, and no stream token in any log line (ours or Home Assistant's stream worker's).

Real parts: the simulator hands out stream URLs and tokens, a real RTSPS server
(``tests/fakes/rtsp_server.py``) answers them as OpenNVR's MediaMTX does, and the last test
runs Home Assistant's own stream worker (PyAV) against it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator
from datetime import timedelta
from typing import Any

import pytest
from homeassistant.components.camera import (
    CameraEntityFeature,
    async_get_image,
    async_get_stream_source,
)
from homeassistant.components.camera.helper import get_camera_from_entity_id
from homeassistant.const import ATTR_SUPPORTED_FEATURES, CONF_TOKEN, CONF_URL
from homeassistant.core import HomeAssistant
from homeassistant.helpers import entity_registry as er
from homeassistant.helpers import issue_registry as ir
from homeassistant.setup import async_setup_component
from homeassistant.util import dt as dt_util
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_fire_time_changed

from custom_components.opennvr_workflows.camera_stream import STREAM_RECHECK, stream_issue_id
from custom_components.opennvr_workflows.const import CONF_VERIFY_SSL, DOMAIN
from tests.fakes.opennvr_sim import OpenNVRSimulator, SimConfig
from tests.fakes.rtsp_server import FakeStreamServer
from tests.fakes.tls import self_signed_context

STREAM = int(CameraEntityFeature.STREAM)


def camera_entity(hass: HomeAssistant, sim: OpenNVRSimulator, camera_id: int) -> str:
    found = er.async_get(hass).async_get_entity_id(
        "camera", DOMAIN, f"{sim.config.site_id}_{camera_id}_camera"
    )
    assert found is not None
    return found


def features(hass: HomeAssistant, entity_id: str) -> int:
    return int(hass.states.get(entity_id).attributes[ATTR_SUPPORTED_FEATURES])


def stream_issue(hass: HomeAssistant, entry: MockConfigEntry, camera_id: int) -> Any:
    return ir.async_get(hass).async_get_issue(DOMAIN, stream_issue_id(entry.entry_id, camera_id))


@pytest.fixture
def sim_config() -> SimConfig:
    return SimConfig(rtsps_exposed=True)


@pytest.fixture
def verify_ssl() -> bool:
    """OpenNVR's stream server has a self-signed certificate, as on a default install; the
    site is set up without verification unless a test says otherwise."""
    return False


@pytest.fixture
def config_entry(
    hass: HomeAssistant, sim: OpenNVRSimulator, entry_options: dict[str, Any], verify_ssl: bool
) -> MockConfigEntry:
    entry = MockConfigEntry(
        domain=DOMAIN,
        title=sim.config.name,
        unique_id=sim.config.site_id,
        data={CONF_URL: sim.url, CONF_TOKEN: sim.config.token, CONF_VERIFY_SSL: verify_ssl},
        options=entry_options,
    )
    entry.add_to_hass(hass)
    return entry


@pytest.fixture
def published() -> set[str]:
    return {"cam1", "cam2", "cam3"}


@pytest.fixture
async def stream_server(
    sim: OpenNVRSimulator, published: set[str], socket_enabled: None
) -> AsyncGenerator[FakeStreamServer]:
    """OpenNVR's stream server: reads with the tokens the site handed out, on the port
    the site advertises."""
    server = FakeStreamServer(
        ssl_context=self_signed_context(),
        published=published,
        accepts=lambda path, token: sim.stream_tokens.get(token or "") == path,
    )
    await server.start()
    sim.config.rtsps_port = server.port
    yield server
    await server.stop()


async def setup(hass: HomeAssistant, entry: MockConfigEntry) -> None:
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()


async def recheck(hass: HomeAssistant) -> None:
    """Let the periodic stream check run, as its timer would."""
    async_fire_time_changed(hass, dt_util.utcnow() + STREAM_RECHECK + timedelta(seconds=1))
    await hass.async_block_till_done()


@pytest.mark.parametrize("sim_config", [SimConfig()])
async def test_a_site_without_streams_shows_still_pictures(
    hass: HomeAssistant, sim: OpenNVRSimulator, setup_entry: MockConfigEntry
) -> None:
    """The demo site advertises no stream: no player, no repair, pictures still come."""
    entity_id = camera_entity(hass, sim, 2)
    assert ("GET", "/api/v1/streams/2/info") in sim.requests  # it was asked
    assert features(hass, entity_id) & STREAM == 0
    assert await async_get_stream_source(hass, entity_id) is None
    assert stream_issue(hass, setup_entry, 2) is None
    assert (await async_get_image(hass, entity_id)).content_type == "image/jpeg"


async def test_a_stream_that_opens_is_offered(
    hass: HomeAssistant,
    sim: OpenNVRSimulator,
    stream_server: FakeStreamServer,
    config_entry: MockConfigEntry,
) -> None:
    await setup(hass, config_entry)
    entity_id = camera_entity(hass, sim, 2)
    assert features(hass, entity_id) & STREAM
    assert stream_issue(hass, config_entry, 2) is None
    # The check asked the stream server with a token the site handed out for cam2.
    asked = [r for r in stream_server.requests if "/cam2?" in r]
    assert asked
    assert asked[0].startswith(f"DESCRIBE rtsps://127.0.0.1:{stream_server.port}/cam2?token=")

    source = await async_get_stream_source(hass, entity_id)
    assert source is not None
    assert source.startswith(f"rtsps://127.0.0.1:{stream_server.port}/cam2?token=")
    token = source.split("token=", 1)[1]
    assert sim.stream_tokens[token] == "cam2"  # a fresh one, from the site


async def test_a_stream_that_cannot_be_opened_is_a_repair_until_it_opens(
    hass: HomeAssistant,
    sim: OpenNVRSimulator,
    stream_server: FakeStreamServer,
    config_entry: MockConfigEntry,
    caplog: pytest.LogCaptureFixture,
) -> None:
    port = stream_server.port
    await stream_server.stop()  # advertised, but nothing listens there
    caplog.set_level(logging.DEBUG, logger="custom_components.opennvr_workflows")
    await setup(hass, config_entry)

    entity_id = camera_entity(hass, sim, 2)
    assert features(hass, entity_id) & STREAM == 0
    assert await async_get_stream_source(hass, entity_id) is None
    issue = stream_issue(hass, config_entry, 2)
    assert issue is not None
    assert issue.translation_key == "camera_stream_unreachable"
    assert issue.severity is ir.IssueSeverity.WARNING
    assert issue.translation_placeholders == {
        "camera": "Driveway",
        "address": f"127.0.0.1:{port}",
        "detail": "Connection refused",
    }
    assert f"Camera Driveway: its stream at 127.0.0.1:{port} cannot be opened" in caplog.text
    assert sim.stream_tokens  # tokens were handed out, and none was logged
    for token in sim.stream_tokens:
        assert token not in caplog.text

    # Still no stream at the next check: one warning per change, not one per check.
    await recheck(hass)
    assert caplog.text.count("Camera Driveway: its stream") == 1

    # The stream server comes up: the next check offers the stream and clears the repair.
    await stream_server.start(port=port)
    await recheck(hass)
    assert features(hass, entity_id) & STREAM
    assert stream_issue(hass, config_entry, 2) is None
    assert await async_get_stream_source(hass, entity_id) is not None


@pytest.mark.parametrize("verify_ssl", [True])
async def test_an_untrusted_stream_certificate_is_named(
    hass: HomeAssistant,
    sim: OpenNVRSimulator,
    stream_server: FakeStreamServer,
    config_entry: MockConfigEntry,
) -> None:
    await setup(hass, config_entry)
    issue = stream_issue(hass, config_entry, 1)
    assert issue is not None
    assert issue.translation_key == "camera_stream_tls"
    assert issue.translation_placeholders["detail"] == "CERTIFICATE_VERIFY_FAILED"
    assert features(hass, camera_entity(hass, sim, 1)) & STREAM == 0


@pytest.mark.parametrize("published", [{"cam1", "cam2"}])
async def test_a_camera_not_publishing_is_named_alone(
    hass: HomeAssistant,
    sim: OpenNVRSimulator,
    stream_server: FakeStreamServer,
    config_entry: MockConfigEntry,
) -> None:
    await setup(hass, config_entry)
    issue = stream_issue(hass, config_entry, 3)
    assert issue is not None
    assert issue.translation_key == "camera_stream_not_found"
    assert issue.translation_placeholders["camera"] == "Back Garden"
    assert stream_issue(hass, config_entry, 1) is None
    assert features(hass, camera_entity(hass, sim, 1)) & STREAM
    assert features(hass, camera_entity(hass, sim, 3)) & STREAM == 0


async def test_a_refused_token_is_named(
    hass: HomeAssistant,
    sim: OpenNVRSimulator,
    stream_server: FakeStreamServer,
    config_entry: MockConfigEntry,
) -> None:
    stream_server.accepts = lambda path, token: False
    await setup(hass, config_entry)
    issue = stream_issue(hass, config_entry, 2)
    assert issue is not None
    assert issue.translation_key == "camera_stream_refused"
    assert issue.translation_placeholders["detail"] == "401 Unauthorized"


async def test_an_offline_camera_is_checked_once_it_is_back(
    hass: HomeAssistant,
    sim: OpenNVRSimulator,
    stream_server: FakeStreamServer,
    config_entry: MockConfigEntry,
) -> None:
    sim.config.cameras[2].online = False  # camera 3
    await setup(hass, config_entry)
    assert ("GET", "/api/v1/streams/3/info") not in sim.requests
    assert stream_issue(hass, config_entry, 3) is None

    await sim.set_camera_online(3, True)
    await config_entry.runtime_data.cameras.async_refresh()
    await hass.async_block_till_done()
    assert ("GET", "/api/v1/streams/3/info") in sim.requests
    assert features(hass, camera_entity(hass, sim, 3)) & STREAM


async def test_site_unreachable_at_a_check_keeps_what_was_known(
    hass: HomeAssistant,
    sim: OpenNVRSimulator,
    stream_server: FakeStreamServer,
    config_entry: MockConfigEntry,
) -> None:
    await setup(hass, config_entry)
    entity_id = camera_entity(hass, sim, 1)
    assert features(hass, entity_id) & STREAM
    sim.config.scopes = tuple(s for s in sim.config.scopes if s != "live.view")  # 403 now
    await recheck(hass)
    assert features(hass, entity_id) & STREAM
    assert stream_issue(hass, config_entry, 1) is None


async def test_removing_the_camera_clears_its_repair(
    hass: HomeAssistant,
    sim: OpenNVRSimulator,
    stream_server: FakeStreamServer,
    config_entry: MockConfigEntry,
) -> None:
    await stream_server.stop()
    await setup(hass, config_entry)
    assert stream_issue(hass, config_entry, 3) is not None
    sim.config.cameras = [c for c in sim.config.cameras if c.id != 3]
    await config_entry.runtime_data.cameras.async_refresh()
    await hass.async_block_till_done()
    assert stream_issue(hass, config_entry, 3) is None
    assert stream_issue(hass, config_entry, 1) is not None  # the others stay


async def test_stream_worker_errors_do_not_log_the_token(
    hass: HomeAssistant,
    sim: OpenNVRSimulator,
    stream_server: FakeStreamServer,
    config_entry: MockConfigEntry,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Home Assistant's own stream worker, opening the stream after it went away, logs its
    error with the URL: the token in it is redacted."""
    assert await async_setup_component(hass, "stream", {})
    await setup(hass, config_entry)
    entity_id = camera_entity(hass, sim, 2)
    assert features(hass, entity_id) & STREAM
    stream_server.published = set()  # the camera stops publishing: DESCRIBE answers 404

    camera = get_camera_from_entity_id(hass, entity_id)
    stream = await camera.async_create_stream()
    assert stream is not None
    worker_log = f"homeassistant.components.stream.stream.{entity_id}"
    caplog.set_level(logging.DEBUG, logger=worker_log)
    failed = asyncio.Event()
    seen = _ErrorSeen(hass, failed)
    logging.getLogger(worker_log).addHandler(seen)
    await stream.start()
    try:
        async with asyncio.timeout(15):
            await failed.wait()
    finally:
        logging.getLogger(worker_log).removeHandler(seen)
        await stream._stop()  # the worker thread ends before the test does
    errors = [r.getMessage() for r in caplog.records if r.name == worker_log]
    assert any("token=****" in message for message in errors), errors
    for token in sim.stream_tokens:
        assert token not in caplog.text


class _ErrorSeen(logging.Handler):
    """Sets ``event`` (on the event loop: the worker logs from its own thread) at the first
    error record."""

    def __init__(self, hass: HomeAssistant, event: asyncio.Event) -> None:
        super().__init__(logging.ERROR)
        self.hass = hass
        self.event = event

    def emit(self, record: logging.LogRecord) -> None:
        self.hass.loop.call_soon_threadsafe(self.event.set)
