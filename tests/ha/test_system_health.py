"""System health: the site, the model, the event stream, waiting runs and workflow files,
as Home Assistant's System information page reads them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_mock_service,
    get_system_health_info,
)

from custom_components.opennvr_workflows.const import (
    CONF_AI_ENABLED,
    CONF_APPROVERS,
    CONF_OLLAMA_URL,
    CONF_VISION_MODEL,
    DOMAIN,
)
from custom_components.opennvr_workflows.host.workflows import WorkflowHost
from tests.fakes.ollama_server import FakeOllama
from tests.fakes.opennvr_sim import OpenNVRSimulator, SimConfig
from tests.nvr.conftest import until

from .conftest import WEBSOCKET_OPTIONS, entry_data
from .test_repairs import BROKEN
from .workflow_files import REMIND, write_workflow

PHONE = "mobile_app_alices_phone"
STRINGS = Path(__file__).parents[2] / "custom_components" / DOMAIN / "strings.json"


def host_of(entry: MockConfigEntry) -> WorkflowHost:
    host = entry.runtime_data.workflows
    assert host is not None
    return host


async def health(hass: HomeAssistant) -> dict[str, Any]:
    assert await async_setup_component(hass, "system_health", {})
    return await get_system_health_info(hass, DOMAIN)


async def test_health_of_a_working_site_with_ai_off(
    hass: HomeAssistant, config_entry: MockConfigEntry, sim: OpenNVRSimulator
) -> None:
    hass.config_entries.async_update_entry(
        config_entry,
        options={**config_entry.options, CONF_APPROVERS: {"notify": [f"notify.{PHONE}"]}},
    )
    async_mock_service(hass, "notify", PHONE)
    write_workflow(hass, "broken", BROKEN)
    write_workflow(hass, "remind", REMIND)
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    host = host_of(config_entry)
    await until(lambda: config_entry.runtime_data.hub.connected("websocket"), "connected")
    host.engine.run_now("remind")
    await host.engine.idle()

    info = await health(hass)
    assert info["nvr_reachable"] is True
    assert info["model_reachable"] == "AI off"
    assert info["event_sources"] == "websocket connected"
    assert info["runs_waiting"] == 1
    summary = host.summary()
    assert "remind" in summary["loaded"]
    assert info["workflows_loaded"] == len(summary["loaded"])
    # The broken file is an error; the templates wait for camera roles to be mapped.
    assert info["workflows_invalid"] == 1
    assert info["workflows_waiting_for_site"] == len(summary["invalid"]) - 1
    assert info["workflows_waiting_for_site"] > 0

    # Every value has its label in strings.json.
    labels = json.loads(STRINGS.read_text())["system_health"]["info"]
    assert set(info) <= set(labels)


async def test_health_says_when_the_site_is_gone(
    hass: HomeAssistant, setup_entry: MockConfigEntry, sim: OpenNVRSimulator
) -> None:
    await until(lambda: setup_entry.runtime_data.hub.connected("websocket"), "connected")
    await sim.stop()
    await setup_entry.runtime_data.cameras.async_refresh()
    await until(lambda: not setup_entry.runtime_data.hub.connected("websocket"), "disconnected")

    info = await health(hass)
    assert info["nvr_reachable"] is False
    assert info["event_sources"] == "websocket disconnected"


async def setup_with_ai(
    hass: HomeAssistant, entry: MockConfigEntry, ollama: FakeOllama
) -> MockConfigEntry:
    options = {
        CONF_AI_ENABLED: True,
        CONF_OLLAMA_URL: ollama.url,
        CONF_VISION_MODEL: "qwen2.5vl:3b",
    }
    hass.config_entries.async_update_entry(entry, options={**entry.options, **options})
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    return entry


async def test_health_reads_the_model_watch(
    hass: HomeAssistant, config_entry: MockConfigEntry, ollama: FakeOllama
) -> None:
    setup_entry = await setup_with_ai(hass, config_entry, ollama)
    watch = host_of(setup_entry).model_watch
    await watch.async_settled()
    assert (await health(hass))["model_reachable"] is True

    await ollama.stop()
    await watch.async_check()
    assert (await health(hass))["model_reachable"] is False


async def test_health_names_each_site_when_there_are_several(
    hass: HomeAssistant, config_entry: MockConfigEntry, ollama: FakeOllama
) -> None:
    """Two sites: each value names its site, so the one that is down is plain to see."""
    setup_entry = await setup_with_ai(hass, config_entry, ollama)
    other = OpenNVRSimulator(SimConfig(site_id="site-b", name="Warehouse"))
    await other.start()
    try:
        second = MockConfigEntry(
            domain=DOMAIN,
            title="Warehouse",
            unique_id="site-b",
            data=entry_data(other),
            options={**WEBSOCKET_OPTIONS},
        )
        second.add_to_hass(hass)
        assert await hass.config_entries.async_setup(second.entry_id)
        await hass.async_block_till_done()
        await host_of(setup_entry).model_watch.async_settled()
        await other.stop()
        await second.runtime_data.cameras.async_refresh()

        info = await health(hass)
        title = setup_entry.title
        assert info["nvr_reachable"] == f"{title}: yes; Warehouse: no"
        assert info["model_reachable"] == f"{title}: yes; Warehouse: AI off"
        assert info["runs_waiting"] == f"{title}: 0; Warehouse: 0"
        assert await hass.config_entries.async_unload(second.entry_id)
    finally:
        await other.stop()
