"""The history search when a list cannot answer: the index refuses a read, OpenNVR's search
is down. Each list that fails is left out and said so in ``searched``; the others still
answer, and a hidden camera's name is asked about as one that does not exist."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import ServiceValidationError
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.opennvr_workflows.host.history import search as history_search
from custom_components.opennvr_workflows.host.history.nvr import NvrHistorySearch
from tests.fakes.ollama_server import FakeOllama
from tests.fakes.opennvr_sim import OpenNVRSimulator
from tests.nvr.conftest import until

from .test_history_search import LOOK_ANYWHERE, decide, host_of, options, search
from .workflow_files import write_workflow


@pytest.fixture
def entry_options(ollama: FakeOllama) -> dict[str, Any]:
    return options(ollama)


@pytest.fixture
async def site(
    hass: HomeAssistant, config_entry: MockConfigEntry, sim: OpenNVRSimulator
) -> MockConfigEntry:
    write_workflow(hass, "look", LOOK_ANYWHERE)
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    await until(lambda: config_entry.runtime_data.hub.connected("websocket"), "connected")
    return config_entry


async def test_a_list_that_fails_is_left_out_and_said_so(
    hass: HomeAssistant,
    site: MockConfigEntry,
    sim: OpenNVRSimulator,
    ollama: FakeOllama,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    await decide(host_of(site), sim, ollama, 1, "a courier with a parcel")

    def locked(*args: Any, **kwargs: Any) -> Any:
        raise sqlite3.OperationalError("database is locked")

    async def nvr_down(*args: Any, **kwargs: Any) -> Any:
        raise ConnectionError("OpenNVR is restarting")

    monkeypatch.setattr(history_search, "search_text", locked)
    monkeypatch.setattr(NvrHistorySearch, "search", nvr_down)
    found = await search(hass, query="courier")
    assert found["searched"]["words"] == "failed: database is locked"
    assert found["searched"]["nvr"] == "failed: OpenNVR is restarting"
    assert found["results"] == [] or all(r["found_by"] != ["words"] for r in found["results"])

    with pytest.raises(ServiceValidationError) as caught:
        await search(hass, query="courier", camera="attic")
    assert caught.value.translation_key == "unknown_camera"
