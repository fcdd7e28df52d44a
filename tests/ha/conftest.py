"""Fixtures for tests that run the integration in a real Home Assistant (the ``hass`` fixture)."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import pytest
from homeassistant.const import CONF_TOKEN, CONF_URL
from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.opennvr_workflows.const import (
    CONF_AI_ENABLED,
    CONF_APPROVERS,
    CONF_CAMERA_ROLES,
    CONF_MODEL_GATE,
    CONF_OLLAMA_URL,
    CONF_TRANSPORT,
    CONF_VERIFY_SSL,
    CONF_VISION_MODEL,
    DOMAIN,
    TRANSPORT_WEBSOCKET,
)
from tests.fakes.ollama_server import FakeOllama
from tests.fakes.opennvr_sim import OpenNVRSimulator, SimConfig


@pytest.fixture(autouse=True)
def auto_enable_custom_integrations(enable_custom_integrations: None) -> None:
    """Let Home Assistant load integrations from custom_components/."""


@pytest.fixture
def hass_config_dir(hass_tmp_config_dir: str) -> str:
    """Each test's Home Assistant gets its own config folder (the workflow folder and the
    workflow database live there), never the plugin's shared testing config."""
    return hass_tmp_config_dir


@pytest.fixture
def sim_config() -> SimConfig:
    """Override in a test module (or parametrize) to change the simulated site."""
    return SimConfig()


@pytest.fixture
async def sim(sim_config: SimConfig, socket_enabled: None) -> AsyncGenerator[OpenNVRSimulator]:
    """The OpenNVR simulator on a real loopback port, stopped after the test."""
    simulator = OpenNVRSimulator(sim_config)
    await simulator.start()
    yield simulator
    await simulator.stop()


@pytest.fixture
async def ollama(socket_enabled: None) -> AsyncGenerator[FakeOllama]:
    """The Ollama-API fake on a real loopback port."""
    async with FakeOllama() as server:
        yield server


def entry_data(sim: OpenNVRSimulator) -> dict[str, Any]:
    return {CONF_URL: sim.url, CONF_TOKEN: sim.config.token, CONF_VERIFY_SSL: True}


#: Options of an entry on the events websocket, with AI skipped.
WEBSOCKET_OPTIONS: dict[str, Any] = {
    CONF_TRANSPORT: TRANSPORT_WEBSOCKET,
    CONF_OLLAMA_URL: "http://127.0.0.1:9",
    CONF_AI_ENABLED: False,
}


#: The approver's phone the workflow tests' options name.
PHONE = "mobile_app_alices_phone"


#: A stored evaluation result that opens the gate for the tests' vision model (Investigate
#: steps and Describe it): 22 of 22 look cases right.
PASSED_GATE: dict[str, Any] = {
    "model": "qwen2.5vl:3b",
    "wilson_low": 0.851,
    "wilson_high": 1.0,
    "right": 22,
    "rows": 22,
    "date": "2026-01-15T08:00:00+00:00",
}


def ai_options(ollama: FakeOllama) -> dict[str, Any]:
    """Options of an entry with AI on the Ollama fake, the front door mapped, an
    approver's phone and the evaluation gate passed: what most workflow tests run with."""
    return {
        **WEBSOCKET_OPTIONS,
        CONF_AI_ENABLED: True,
        CONF_OLLAMA_URL: ollama.url,
        CONF_VISION_MODEL: "qwen2.5vl:3b",
        CONF_MODEL_GATE: dict(PASSED_GATE),
        CONF_CAMERA_ROLES: {"front_door": "1"},
        CONF_APPROVERS: {"users": [], "notify": [f"notify.{PHONE}"]},
    }


@pytest.fixture
def entry_options() -> dict[str, Any]:
    """Override to set the entry's options."""
    return dict(WEBSOCKET_OPTIONS)


@pytest.fixture
def config_entry(
    hass: HomeAssistant, sim: OpenNVRSimulator, entry_options: dict[str, Any]
) -> MockConfigEntry:
    """An entry for the simulated site, added to hass but not set up."""
    entry = MockConfigEntry(
        domain=DOMAIN,
        title=sim.config.name,
        unique_id=sim.config.site_id,
        data=entry_data(sim),
        options=entry_options,
    )
    entry.add_to_hass(hass)
    return entry


@pytest.fixture
async def setup_entry(hass: HomeAssistant, config_entry: MockConfigEntry) -> MockConfigEntry:
    """The simulated site's entry, set up."""
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    return config_entry


async def set_up_again(hass: HomeAssistant, entry: MockConfigEntry) -> MockConfigEntry:
    """``entry`` as a restarted Home Assistant (on the same config folder) loads it: the same
    id, data and options, added and set up."""
    again = MockConfigEntry(
        domain=DOMAIN,
        entry_id=entry.entry_id,
        title=entry.title,
        unique_id=entry.unique_id,
        data=dict(entry.data),
        options=dict(entry.options),
    )
    again.add_to_hass(hass)
    assert await hass.config_entries.async_setup(again.entry_id)
    await hass.async_block_till_done()
    return again
