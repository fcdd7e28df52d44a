"""The options' *Started only by trusted triggers* page: an admin picks the workflows among
those loaded, the choice is saved and read by the host, and the page speaks words, not
keys (the README's "Where the AI mark goes" explains it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.opennvr_workflows.const import CONF_TRUSTED_STARTS
from custom_components.opennvr_workflows.host.settings import HostSettings
from tests.fakes.opennvr_sim import OpenNVRSimulator

from .ai_mark_support import UNLOCK
from .test_services import set_up
from .workflow_files import log_on_alert

ROOT = Path(__file__).parents[2]
STRINGS = ROOT / "custom_components" / "opennvr_workflows" / "strings.json"


def offered(result: dict[str, Any]) -> dict[str, str]:
    (key,) = result["data_schema"].schema
    selector = result["data_schema"].schema[key]
    return {o["value"]: o["label"] for o in selector.config["options"]}


async def test_an_admin_marks_workflows_as_started_only_by_trusted_triggers(
    hass: HomeAssistant, sim: OpenNVRSimulator, config_entry: MockConfigEntry
) -> None:
    await set_up(hass, config_entry, unlock=UNLOCK, door=log_on_alert("Door log"))
    result = await hass.config_entries.options.async_init(config_entry.entry_id)
    assert result["type"] is FlowResultType.MENU
    assert "trusted_starts" in result["menu_options"]
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {"next_step_id": "trusted_starts"}
    )
    assert result["step_id"] == "trusted_starts"
    assert offered(result) == {"door": "Door log (door)", "unlock": "Let the visitor in (unlock)"}

    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {CONF_TRUSTED_STARTS: ["unlock"]}
    )
    assert result["type"] is FlowResultType.CREATE_ENTRY
    await hass.async_block_till_done()
    assert config_entry.state is ConfigEntryState.LOADED
    assert config_entry.options[CONF_TRUSTED_STARTS] == ["unlock"]
    host = config_entry.runtime_data.workflows
    assert host is not None
    assert host.settings.trusted_starts == {"unlock"}


def test_the_option_is_read_and_a_wrong_shape_is_ignored() -> None:
    assert HostSettings.from_options({CONF_TRUSTED_STARTS: ["a", "b"]}).trusted_starts == {
        "a",
        "b",
    }
    assert HostSettings.from_options({CONF_TRUSTED_STARTS: 7}).trusted_starts == frozenset()
    assert HostSettings.from_options({}).trusted_starts == frozenset()


def test_the_page_says_what_it_does_in_words() -> None:
    options = json.loads(STRINGS.read_text())["options"]["step"]
    assert options["init"]["menu_options"]["trusted_starts"]
    page = options["trusted_starts"]
    assert page["title"]
    assert "AI output" in page["description"]
    assert page["data"][CONF_TRUSTED_STARTS]
    assert page["data_description"][CONF_TRUSTED_STARTS]
