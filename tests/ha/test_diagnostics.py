"""Diagnostics carry what support needs and none of the secrets."""

from __future__ import annotations

import json

from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.opennvr_workflows.const import CONF_NATS_PASSWORD, CONF_NATS_URL
from custom_components.opennvr_workflows.diagnostics import async_get_config_entry_diagnostics
from tests.fakes.opennvr_sim import OpenNVRSimulator

from .test_entities import wait_for


async def test_diagnostics_redact_secrets(
    hass: HomeAssistant, sim: OpenNVRSimulator, setup_entry: MockConfigEntry
) -> None:
    hass.config_entries.async_update_entry(
        setup_entry,
        options={
            **setup_entry.options,
            CONF_NATS_URL: "nats://nvr:4222",
            CONF_NATS_PASSWORD: "hunter2",
        },
    )
    await hass.async_block_till_done()
    await wait_for(hass, lambda: setup_entry.runtime_data.hub.connected("websocket"))
    await sim.emit_alert(1, "person")
    await wait_for(hass, lambda: setup_entry.runtime_data.hub.stats["websocket"].received >= 1)

    diag = await async_get_config_entry_diagnostics(hass, setup_entry)
    text = json.dumps(diag)
    assert sim.config.token not in text
    assert "hunter2" not in text
    assert sim.config.site_id not in text
    assert diag["entry"]["data"]["token"] == "**REDACTED**"
    assert diag["entry"]["options"][CONF_NATS_URL] == "nats://nvr:4222"
    assert diag["site"]["contract_version"] == sim.config.contract_version
    assert diag["cameras"]["1"] == {
        "name": "Front Door",
        "active": True,
        "online": True,
        "status": "online",
    }
    assert diag["event_sources"]["websocket"]["received"] >= 1
    assert diag["event_sources"]["websocket"]["connected"] is True
