"""The options pages that keep data and say what leaves the house: *Data kept* stores each
period and whether removal deletes the workflow files, *What leaves the house* offers the
notify services that leave it and keeps the admin's choice, and *Voice sentences* says so
when it cannot write the sentences file."""

from __future__ import annotations

from pathlib import Path

import pytest
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_mock_service

from custom_components.opennvr_workflows.const import (
    CONF_FULL_TEXT_TO,
    CONF_REMOVE_WORKFLOW_FILES,
    CONF_RETENTION,
)
from custom_components.opennvr_workflows.host import sentences

from .test_options_flow import _open, _saved


async def test_data_kept_stores_each_period_and_the_removal_choice(
    hass: HomeAssistant, setup_entry: MockConfigEntry
) -> None:
    result = await _open(hass, setup_entry, "retention")
    fields = {str(key) for key in result["data_schema"].schema}
    assert fields == {
        "runs_days",
        "versions_days",
        "marks_days",
        "evidence_days",
        "evidence_mb",
        CONF_REMOVE_WORKFLOW_FILES,
    }
    result = await hass.config_entries.options.async_configure(
        result["flow_id"],
        {
            "runs_days": 7,
            "versions_days": 30,
            "marks_days": 90,
            "evidence_days": 0,
            "evidence_mb": 50,
            CONF_REMOVE_WORKFLOW_FILES: True,
        },
    )
    await _saved(hass, result, setup_entry)
    assert setup_entry.options[CONF_RETENTION] == {
        "runs_days": 7,
        "versions_days": 30,
        "marks_days": 90,
        "evidence_days": 0,
        "evidence_mb": 50,
    }
    assert setup_entry.options[CONF_REMOVE_WORKFLOW_FILES] is True


async def test_what_leaves_the_house_offers_the_leaving_services_and_keeps_the_choice(
    hass: HomeAssistant, setup_entry: MockConfigEntry
) -> None:
    async_mock_service(hass, "notify", "telegram_family")
    result = await _open(hass, setup_entry, "privacy")
    (field,) = result["data_schema"].schema
    offered = result["data_schema"].schema[field].config["options"]
    assert "notify.telegram_family" in offered
    assert "notify.send_message" not in offered
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {CONF_FULL_TEXT_TO: ["notify.telegram_family"]}
    )
    await _saved(hass, result, setup_entry)
    assert setup_entry.options[CONF_FULL_TEXT_TO] == ["notify.telegram_family"]

    # Shown again with the choice, even for a service that is gone meanwhile.
    result = await _open(hass, setup_entry, "privacy")
    (field,) = result["data_schema"].schema
    assert field.default() == ["notify.telegram_family"]


async def test_voice_sentences_say_so_when_the_file_cannot_be_written(
    hass: HomeAssistant, setup_entry: MockConfigEntry, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def refused(hass: HomeAssistant) -> Path:
        raise PermissionError("read-only configuration folder")

    monkeypatch.setattr(sentences, "async_install", refused)
    result = await _open(hass, setup_entry, "voice_sentences")
    result = await hass.config_entries.options.async_configure(result["flow_id"], {})
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"base": "sentences_write_failed"}
