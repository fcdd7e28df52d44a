"""The zones person-in-zone reads from OpenNVR, when reading them goes wrong: an OpenNVR
without a zones route (the camera's whole view is its zone), a read that fails then
recovers (one warning, one line when it is back), a camera handle that is no number, and
a thresholds function that fails (the last thresholds stay)."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from homeassistant.core import HomeAssistant
from pyopennvr import OpenNVRClient, OpenNVRConnectionError, OpenNVRNotFoundError

from custom_components.opennvr_workflows.nvr.hub import EventHub
from custom_components.opennvr_workflows.nvr.presence_ha import async_start_presence

from .conftest import until
from .test_presence_sim import client  # noqa: F401


async def test_zones_that_cannot_be_read_and_then_can(
    hass: HomeAssistant,
    client: OpenNVRClient,  # noqa: F811
    hub: EventHub,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    real = client.get_zones
    failing = {"2"}

    async def get_zones(camera_id: int) -> Any:
        if camera_id == 1:
            raise OpenNVRNotFoundError("no zones route")
        if str(camera_id) in failing:
            raise OpenNVRConnectionError("refused")
        return await real(camera_id)

    monkeypatch.setattr(client, "get_zones", get_zones)
    with caplog.at_level(logging.INFO):
        link = await async_start_presence(hass, client, hub, lambda: {1.0})
        await until(lambda: {"1", "3"} <= link.tracker.cameras, "the readable zones")
        assert "Cannot read the zones of camera 2 from OpenNVR" in caplog.text
        assert not link.tracker.knows("2")

        failing.clear()
        link._retry_at.clear()
        await link.async_refresh_zones()
        await until(lambda: link.tracker.knows("2"), "camera 2's zones once readable")
        assert "OpenNVR's zones can be read again" in caplog.text

        await link._read_zones("gate-cam")
        assert link.tracker.knows("gate-cam"), "a handle that is no number has no zones"
    link.stop()
    link.stop()
    await hass.async_block_till_done()


async def test_thresholds_that_cannot_be_read_keep_the_last(
    hass: HomeAssistant,
    client: OpenNVRClient,  # noqa: F811
    hub: EventHub,
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls = {"n": 0}

    def thresholds() -> set[float]:
        calls["n"] += 1
        if calls["n"] > 1:
            raise RuntimeError("a workflow file changed under us")
        return {2.0}

    link = await async_start_presence(hass, client, hub, thresholds)
    link.refresh_thresholds()
    assert "Reading the person-in-zone thresholds failed" in caplog.text
    assert link.tracker.thresholds
    link()
    await hass.async_block_till_done()
