"""Removing the integration: every open question's card leaves the phones, waiting runs
end, and nothing of the entry is left in ``.storage`` (stores, the run database and its
files, pictures); the workflow files stay unless the options say to delete them."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from homeassistant.components import persistent_notification
from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.opennvr_workflows.const import (
    CONF_REMOVE_WORKFLOW_FILES,
    DOMAIN,
    WORKFLOW_FOLDER,
)
from custom_components.opennvr_workflows.host import sentences
from custom_components.opennvr_workflows.host.approvals.desk import notification_id
from tests.fakes.opennvr_sim import OpenNVRSimulator
from tests.nvr.conftest import until

from .approval_support import Home, asks

pytest_plugins = ["tests.ha.phones", "tests.ha.approval_support"]


def notifications(hass: HomeAssistant) -> set[str]:
    """The ids of Home Assistant's notifications now."""
    return set(persistent_notification._async_get_or_create_notifications(hass))


def left_in_storage(hass: HomeAssistant, entry_id: str) -> list[str]:
    """Files and folders in ``.storage`` that belong to the entry."""
    storage = Path(hass.config.path(".storage"))
    return sorted(p.name for p in storage.iterdir() if entry_id in p.name)


async def test_removal_clears_the_cards_ends_the_runs_and_deletes_what_it_kept(
    hass: HomeAssistant,
    home: Home,
    sim: OpenNVRSimulator,
    hass_storage: dict[str, object],
    caplog: pytest.LogCaptureFixture,
) -> None:
    entry_id = home.entry.entry_id
    run_id = await home.alert(sim)
    (ticket,) = home.desk.pending()
    for phone in (home.alice, home.bob):
        card = await phone.wait_for(asks)
        assert card["data"]["tag"] == ticket.tag
    await until(
        lambda: notification_id(ticket.approval_id) in notifications(hass),
        "the question's notification in Home Assistant",
    )
    await home.host.evidence_store.async_flush()
    await home.host.effects.ledger.async_flush()
    assert home.host.db_path.exists()
    assert [k for k in hass_storage if entry_id in k]
    sentences.install(Path(hass.config.config_dir))  # the Assist sentences, installed once
    caplog.set_level(logging.INFO, logger="custom_components.opennvr_workflows")

    await hass.config_entries.async_remove(entry_id)
    await hass.async_block_till_done()

    for phone in (home.alice, home.bob):
        cleared = await phone.wait_for(
            lambda p: p.get("message") == "clear_notification"
            and p.get("data", {}).get("tag") == ticket.tag
        )
        assert "actions" not in cleared["data"]
    assert notification_id(ticket.approval_id) not in notifications(hass)
    assert [k for k in hass_storage if entry_id in k] == []
    assert left_in_storage(hass, entry_id) == []
    assert "1 waiting run(s) ended, 1 question(s) withdrawn" in caplog.text
    assert run_id  # the run that waited is gone with the database
    # The homeowner's files stay; the sentences went with the last site.
    assert (Path(hass.config.path(WORKFLOW_FOLDER)) / "gate.yaml").is_file()
    assert not sentences.installed_path(Path(hass.config.config_dir), "en").exists()


async def test_the_workflow_files_go_only_when_asked_and_with_the_last_site(
    hass: HomeAssistant, config_entry: MockConfigEntry, sim: OpenNVRSimulator
) -> None:
    hass.config_entries.async_update_entry(
        config_entry, options={**config_entry.options, CONF_REMOVE_WORKFLOW_FILES: True}
    )
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    setup_entry = config_entry
    folder = Path(hass.config.path(WORKFLOW_FOLDER))
    assert any(folder.glob("*.yaml"))  # the templates were copied in
    other = MockConfigEntry(
        domain=DOMAIN,
        title="Another site",
        unique_id="another-site",
        options={CONF_REMOVE_WORKFLOW_FILES: True},
    )
    other.add_to_hass(hass)

    await hass.config_entries.async_remove(setup_entry.entry_id)
    await hass.async_block_till_done()
    assert any(folder.glob("*.yaml"))  # another site still reads the folder

    await hass.config_entries.async_remove(other.entry_id)
    await hass.async_block_till_done()
    assert not folder.exists()
