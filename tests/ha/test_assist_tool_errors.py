"""An Assist tool that cannot answer says why, as a result the model reads (never an
exception in the conversation): arguments it cannot read, a workflow or a run it does not
know, a camera it may not name, OpenNVR failing, or the tool itself failing."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from homeassistant.core import HomeAssistant
from homeassistant.helpers import llm
from pyopennvr import OpenNVRError
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.opennvr_workflows.assist import workflow_tools
from tests.fakes.ollama_server import FakeOllama
from tests.ha.assist_support import PORCH, call, site_options
from tests.ha.workflow_files import write_workflow


@pytest.fixture
def entry_options(ollama: FakeOllama) -> dict[str, Any]:
    return site_options(ollama)


@pytest.fixture
async def site(hass: HomeAssistant, config_entry: MockConfigEntry) -> MockConfigEntry:
    write_workflow(hass, "porch", PORCH)
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    return config_entry


def error_of(result: llm.ToolResult) -> str:
    assert result.error, result.data
    assert isinstance(result.data, dict)
    return str(result.data["error"])


async def test_what_a_tool_cannot_read_or_does_not_know(
    hass: HomeAssistant, site: MockConfigEntry
) -> None:
    assert error_of(await call(hass, site, "run_trace")) == "give a run_id or a workflow"
    unknown = error_of(await call(hass, site, "run_trace", {"workflow": "garage"}))
    assert unknown.startswith("no workflow 'garage'; workflows: ")
    assert "porch" in unknown
    assert error_of(await call(hass, site, "run_trace", {"run_id": "r-404"})) == "no run 'r-404'"
    none_yet = await call(hass, site, "run_trace", {"workflow": "porch"})
    assert none_yet.data == {"workflow_id": "porch", "runs": [], "found": 0}
    bad = error_of(await call(hass, site, "recent_events", {"hours": "soon"}))
    assert bad.startswith("invalid arguments")
    hidden = error_of(await call(hass, site, "camera_health", {"camera": "attic"}))
    assert hidden.startswith("invalid arguments: value must be one of")
    missing = error_of(await call(hass, site, "site_lookup", {"name": "couriers"}))
    assert missing == "invalid arguments: not a valid option at 'name'"


async def test_opennvr_failing_and_a_tool_failing_are_said_so(
    hass: HomeAssistant,
    site: MockConfigEntry,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    def down(*args: Any, **kwargs: Any) -> Any:
        raise OpenNVRError("the site is restarting")

    monkeypatch.setattr(workflow_tools, "visible_workflows", down)
    said = error_of(await call(hass, site, "list_workflows"))
    assert said == "OpenNVR: OpenNVRError: the site is restarting"

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a bug")

    monkeypatch.setattr(workflow_tools, "visible_workflows", broken)
    failed = error_of(await call(hass, site, "list_workflows"))
    assert failed == "the tool failed; see Home Assistant's log"
    assert "The assistant tool opennvr_workflows__list_workflows failed" in caplog.text


async def test_the_alerts_inbox_as_a_tool_reads_it(
    hass: HomeAssistant, site: MockConfigEntry, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows OpenNVR sends that cannot be read are left out; old ones too; times without a
    zone are UTC; a camera given by name stays its name."""
    now = datetime.now(UTC)
    alerts = {
        "alerts": [
            "not a row",
            {"title": "no id"},
            {"id": 1, "camera_id": True, "title": "a camera that is a flag"},
            {"id": 2, "camera_id": "cam1", "title": "old", "fired_at": "2001-01-01T00:00:00"},
            {
                "id": 3,
                "alert_id": "a-3",
                "camera_id": "cam1",
                "title": "Person at the door",
                "fired_at": now.replace(tzinfo=None).isoformat(),
                "acknowledged_at": now.isoformat(),
            },
            {"id": 4, "camera_id": None, "title": "Site armed"},
        ]
    }

    async def inbox(*args: Any, **kwargs: Any) -> dict[str, Any]:
        return alerts

    monkeypatch.setattr(site.runtime_data.client, "get_alerts", inbox)
    found = await call(hass, site, "recent_events", {"hours": 2})
    assert isinstance(found.data, dict)
    rows = [
        (a["alert_id"], a["title"], a["camera"], a["acknowledged"]) for a in found.data["alerts"]
    ]
    assert rows == [
        ("a-3", "Person at the door", "Front Door", True),
        (4, "Site armed", None, False),
    ]
