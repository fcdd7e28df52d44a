"""The options flow: every page saves, validates what it must, and reloads the entry."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.opennvr_workflows.const import (
    CONF_AI_ENABLED,
    CONF_APPROVERS,
    CONF_CAMERA_ROLES,
    CONF_DEFAULT_LIMITS,
    CONF_HARDWARE,
    CONF_OLLAMA_URL,
    CONF_SITE_FACTS,
    CONF_SITE_LISTS,
    CONF_TEXT_MODEL,
    CONF_TOOL_POLICY,
    CONF_TRANSPORT,
    CONF_VISION_MODEL,
)
from custom_components.opennvr_workflows.flow_steps import CONF_SKIP_AI
from custom_components.opennvr_workflows.options_flow import parse_site_lists
from tests.fakes.ollama_server import FakeOllama
from tests.fakes.opennvr_sim import OpenNVRSimulator

from .test_entities import wait_for, websocket_connected


async def _open(hass: HomeAssistant, entry: MockConfigEntry, page: str) -> dict[str, Any]:
    result = await hass.config_entries.options.async_init(entry.entry_id)
    assert result["type"] is FlowResultType.MENU
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {"next_step_id": page}
    )
    assert result["step_id"] == page
    return result


async def _saved(hass: HomeAssistant, result: dict[str, Any], entry: MockConfigEntry) -> None:
    assert result["type"] is FlowResultType.CREATE_ENTRY, result.get("errors")
    await hass.async_block_till_done()
    assert entry.state is ConfigEntryState.LOADED  # reloaded with the new options


async def test_camera_roles(
    hass: HomeAssistant, sim: OpenNVRSimulator, setup_entry: MockConfigEntry
) -> None:
    result = await _open(hass, setup_entry, "camera_roles")
    fields = [str(key) for key in result["data_schema"].schema]
    assert fields == ["Front Door (1)", "Driveway (2)", "Back Garden (3)"]

    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {"Front Door (1)": "Door, porch", "Driveway (2)": "Door"}
    )
    assert result["errors"] == {"Driveway (2)": "role_duplicate"}
    assert result["description_placeholders"]["role"] == "door"

    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {"Front Door (1)": "door", "Driveway (2)": "drive way"}
    )
    assert result["errors"] == {"Driveway (2)": "role_invalid"}

    result = await hass.config_entries.options.async_configure(
        result["flow_id"],
        {"Front Door (1)": "door, porch", "Driveway (2)": "gate", "Back Garden (3)": ""},
    )
    await _saved(hass, result, setup_entry)
    assert setup_entry.options[CONF_CAMERA_ROLES] == {"door": "1", "porch": "1", "gate": "2"}
    assert setup_entry.options[CONF_TRANSPORT] == "websocket"  # other options kept


async def test_approvers(
    hass: HomeAssistant,
    sim: OpenNVRSimulator,
    setup_entry: MockConfigEntry,
    hass_admin_user: Any,
) -> None:
    hass.services.async_register("notify", "mobile_app_pixel", lambda call: None)
    result = await _open(hass, setup_entry, "approvers")
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {"users": [hass_admin_user.id], "notify": []}
    )
    assert result["errors"] == {"notify": "approvers_need_phone"}
    result = await hass.config_entries.options.async_configure(
        result["flow_id"],
        {"users": [hass_admin_user.id], "notify": ["notify.mobile_app_pixel"]},
    )
    await _saved(hass, result, setup_entry)
    assert setup_entry.options[CONF_APPROVERS] == {
        "users": [hass_admin_user.id],
        "notify": ["notify.mobile_app_pixel"],
    }


async def test_site_rules(
    hass: HomeAssistant, sim: OpenNVRSimulator, setup_entry: MockConfigEntry
) -> None:
    result = await _open(hass, setup_entry, "site_rules")
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {"facts": "word " * 301, "lists": "family: Ann, Bob\nbad line"}
    )
    assert result["errors"] == {"facts": "facts_too_long", "lists": "lists_invalid"}
    assert result["description_placeholders"]["words"] == "301"
    assert result["description_placeholders"]["problem"].startswith("line 2:")

    result = await hass.config_entries.options.async_configure(
        result["flow_id"],
        {
            "facts": "The cleaner comes on Tuesdays at 9.",
            "lists": "family: Ann, Bob\n# couriers we expect\ncouriers: DHL, UPS",
        },
    )
    await _saved(hass, result, setup_entry)
    assert setup_entry.options[CONF_SITE_FACTS] == "The cleaner comes on Tuesdays at 9."
    assert setup_entry.options[CONF_SITE_LISTS] == {
        "family": ["Ann", "Bob"],
        "couriers": ["DHL", "UPS"],
    }


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("family Ann", "line 1: write it as 'name: item, item'"),
        ("a: x\na: y", "line 2: the list 'a' is already defined"),
        ("Bad Name: x", "line 1: write it as 'name: item, item'"),
    ],
)
def test_site_list_problems_are_located(text: str, problem: str) -> None:
    assert parse_site_lists(text) == ({}, problem)


async def test_tool_policy_and_limits(
    hass: HomeAssistant, sim: OpenNVRSimulator, setup_entry: MockConfigEntry
) -> None:
    result = await _open(hass, setup_entry, "tool_policy")
    defaults = {str(key): key.default() for key in result["data_schema"].schema}
    assert defaults["ask_person"] == "ask"
    assert defaults["recent_events"] == "auto"
    # Only tools this integration can run are offered (faces need a skill it lacks).
    assert "recognize_faces" not in defaults
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {**defaults, "search_history": "unavailable"}
    )
    await _saved(hass, result, setup_entry)
    assert setup_entry.options[CONF_TOOL_POLICY]["search_history"] == "unavailable"

    result = await _open(hass, setup_entry, "limits")
    result = await hass.config_entries.options.async_configure(
        result["flow_id"],
        {"cooldown_seconds": 120, "per_hour": 10, "ai_per_hour": 20, "chain_depth": 2},
    )
    await _saved(hass, result, setup_entry)
    assert setup_entry.options[CONF_DEFAULT_LIMITS] == {
        "cooldown_seconds": 120,
        "per_hour": 10,
        "ai_per_hour": 20,
        "chain_depth": 2,
    }
    assert setup_entry.options[CONF_TOOL_POLICY]["search_history"] == "unavailable"


async def test_ollama_pages(
    hass: HomeAssistant,
    sim: OpenNVRSimulator,
    setup_entry: MockConfigEntry,
    ollama: FakeOllama,
) -> None:
    result = await _open(hass, setup_entry, "ollama")
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {CONF_OLLAMA_URL: ollama.url, CONF_SKIP_AI: False}
    )
    assert result["step_id"] == "models"
    result = await hass.config_entries.options.async_configure(
        result["flow_id"],
        {CONF_VISION_MODEL: "qwen2.5vl:3b", CONF_TEXT_MODEL: "qwen2.5vl:3b", CONF_HARDWARE: "cpu"},
    )
    await _saved(hass, result, setup_entry)
    assert setup_entry.options[CONF_AI_ENABLED] is True
    assert setup_entry.options[CONF_VISION_MODEL] == "qwen2.5vl:3b"

    result = await _open(hass, setup_entry, "ollama")
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {CONF_OLLAMA_URL: ollama.url, CONF_SKIP_AI: True}
    )
    await _saved(hass, result, setup_entry)
    assert setup_entry.options[CONF_AI_ENABLED] is False


async def test_transport_page_websocket(
    hass: HomeAssistant, sim: OpenNVRSimulator, setup_entry: MockConfigEntry
) -> None:
    result = await _open(hass, setup_entry, "transport")
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {CONF_TRANSPORT: "websocket"}
    )
    await _saved(hass, result, setup_entry)
    assert setup_entry.options[CONF_TRANSPORT] == "websocket"


async def test_camera_roles_need_the_site_connected(
    hass: HomeAssistant, sim: OpenNVRSimulator, config_entry: MockConfigEntry
) -> None:
    """An entry that could not be set up has no camera list: the page says so."""
    await sim.stop()
    await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    assert config_entry.state is ConfigEntryState.SETUP_RETRY
    result = await hass.config_entries.options.async_init(config_entry.entry_id)
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {"next_step_id": "camera_roles"}
    )
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "not_loaded"


def _event_source_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    """Warnings of the event hub and its transports."""
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno >= logging.WARNING
        and r.name.startswith("custom_components.opennvr_workflows.nvr")
    ]


async def test_saving_options_is_no_outage_but_a_dropped_connection_is(
    hass: HomeAssistant,
    sim: OpenNVRSimulator,
    setup_entry: MockConfigEntry,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Saving a page reloads the entry, which stops the events websocket on purpose: no
    warning. The site closing the connection is an outage: one warning."""
    await websocket_connected(hass, setup_entry)
    result = await _open(hass, setup_entry, "transport")
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {CONF_TRANSPORT: "websocket"}
    )
    await _saved(hass, result, setup_entry)
    await websocket_connected(hass, setup_entry)
    assert await hass.config_entries.async_reload(setup_entry.entry_id)
    await hass.async_block_till_done()
    await websocket_connected(hass, setup_entry)
    assert _event_source_warnings(caplog) == []

    transitions: list[bool] = []
    setup_entry.runtime_data.hub.subscribe_state(lambda _, up: transitions.append(up))
    await sim.drop_websockets()
    await wait_for(hass, lambda: transitions[-2:] == [False, True], within=15)
    assert _event_source_warnings(caplog) == [
        "OpenNVR events via websocket lost; its entities are unavailable until it reconnects"
    ]

    assert await hass.config_entries.async_unload(setup_entry.entry_id)
    await hass.async_block_till_done()
    assert len(_event_source_warnings(caplog)) == 1
