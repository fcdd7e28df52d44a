"""Which workflow host a panel command acts on: the one its entry names, else the only
loaded one; an entry that is not loaded, none loaded, or several without a name are each
refused with a translated error."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import ServiceValidationError
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.opennvr_workflows.const import DOMAIN
from custom_components.opennvr_workflows.panel.hosts import host_for, loaded_hosts


def site(hass: HomeAssistant, entry_id: str, state: ConfigEntryState) -> SimpleNamespace:
    """An entry in ``state`` whose runtime data holds a stand-in workflow host."""
    host = SimpleNamespace(entry_id=entry_id)
    entry = MockConfigEntry(domain=DOMAIN, entry_id=entry_id, state=state)
    entry.add_to_hass(hass)
    entry.runtime_data = SimpleNamespace(workflows=host)
    return host


def refused(hass: HomeAssistant, entry_id: str | None) -> str:
    with pytest.raises(ServiceValidationError) as caught:
        host_for(hass, entry_id)
    return str(caught.value.translation_key)


async def test_the_host_a_panel_command_acts_on(hass: HomeAssistant) -> None:
    assert refused(hass, None) == "no_loaded_entry"
    home = site(hass, "home", ConfigEntryState.LOADED)
    site(hass, "cabin", ConfigEntryState.NOT_LOADED)
    assert loaded_hosts(hass) == [home]
    assert host_for(hass, None) is home
    assert host_for(hass, "home") is home
    assert refused(hass, "cabin") == "no_loaded_entry"
    shop = site(hass, "shop", ConfigEntryState.LOADED)
    assert refused(hass, None) == "several_entries"
    assert host_for(hass, "shop") is shop
