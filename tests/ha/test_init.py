"""Entry setup, retry and unload against the OpenNVR simulator."""

from __future__ import annotations

from dataclasses import replace

from homeassistant.config_entries import SOURCE_REAUTH, ConfigEntryState
from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.opennvr_workflows.coordinator import OpenNVRRuntime
from tests.fakes.opennvr_sim import OpenNVRSimulator


async def test_setup_and_unload(
    hass: HomeAssistant, sim: OpenNVRSimulator, setup_entry: MockConfigEntry
) -> None:
    assert setup_entry.state is ConfigEntryState.LOADED
    runtime = setup_entry.runtime_data
    assert isinstance(runtime, OpenNVRRuntime)
    assert runtime.info.site_id == sim.config.site_id
    assert set(runtime.cameras.data) == {c.id for c in sim.config.cameras}

    assert await hass.config_entries.async_unload(setup_entry.entry_id)
    await hass.async_block_till_done()
    assert setup_entry.state is ConfigEntryState.NOT_LOADED
    for entity_id in hass.states.async_entity_ids("camera"):
        assert hass.states.get(entity_id).state == "unavailable"


async def test_retries_while_unreachable_then_loads(
    hass: HomeAssistant, sim: OpenNVRSimulator, config_entry: MockConfigEntry
) -> None:
    port = sim.port
    await sim.stop()
    await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    assert config_entry.state is ConfigEntryState.SETUP_RETRY
    assert "Cannot reach OpenNVR" in (config_entry.reason or "")

    await sim.start(port=port)
    await hass.config_entries.async_reload(config_entry.entry_id)
    await hass.async_block_till_done()
    assert config_entry.state is ConfigEntryState.LOADED


async def test_revoked_token_starts_reauth(
    hass: HomeAssistant, sim: OpenNVRSimulator, config_entry: MockConfigEntry
) -> None:
    sim.config = replace(sim.config, token="onvr_rotated0_other")
    await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    assert config_entry.state is ConfigEntryState.SETUP_ERROR
    flows = hass.config_entries.flow.async_progress()
    assert [f["context"]["source"] for f in flows] == [SOURCE_REAUTH]


async def test_lost_scope_starts_reauth(
    hass: HomeAssistant, sim: OpenNVRSimulator, config_entry: MockConfigEntry
) -> None:
    sim.config = replace(sim.config, scopes=("cameras.view", "alerts.view"))
    await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    assert config_entry.state is ConfigEntryState.SETUP_ERROR
    assert hass.config_entries.flow.async_progress()[0]["context"]["source"] == SOURCE_REAUTH


async def test_url_now_reaches_another_site(
    hass: HomeAssistant, sim: OpenNVRSimulator, config_entry: MockConfigEntry
) -> None:
    sim.config = replace(sim.config, site_id="someone-elses-site")
    await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    assert config_entry.state is ConfigEntryState.SETUP_ERROR
    assert "someone-elses-site" in (config_entry.reason or "")
    assert not hass.config_entries.flow.async_progress()


async def test_unsupported_contract_stops_setup(
    hass: HomeAssistant, sim: OpenNVRSimulator, config_entry: MockConfigEntry
) -> None:
    sim.config = replace(sim.config, contract_version="2.0.0")
    await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    assert config_entry.state is ConfigEntryState.SETUP_ERROR
    assert "2.0.0" in (config_entry.reason or "")
