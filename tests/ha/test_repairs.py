"""Repairs: an invalid workflow file, a workflow that needs attention, and a model that
cannot be reached each raise an issue that says what is wrong, and each issue goes away as
soon as its cause does."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from homeassistant.core import HomeAssistant
from homeassistant.helpers import issue_registry as ir
from homeassistant.util import dt as dt_util
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_fire_time_changed,
    async_mock_service,
)

from custom_components.opennvr_workflows.const import (
    CONF_AI_ENABLED,
    CONF_OLLAMA_URL,
    CONF_VISION_MODEL,
    DOMAIN,
)
from custom_components.opennvr_workflows.host import issues
from custom_components.opennvr_workflows.host.model import watch as watch_module
from custom_components.opennvr_workflows.host.workflows import WorkflowHost
from tests.fakes.ollama_server import FakeOllama, HttpError
from tests.fakes.opennvr_sim import OpenNVRSimulator
from tests.nvr.conftest import until

from .conftest import PHONE, ai_options
from .workflow_files import DOOR_LOOK, log_on_alert, write_workflow

#: Line 8 is a step whose kind is misspelt.
BROKEN = """\
contract: workflow.v1
name: Broken
state: test
when:
  button: {}
then:
  - log: "fine"
  - notfy: { who: role:household, message: hi }
"""
FIXED = BROKEN.replace("notfy", "notify")

#: Its action does not exist in Home Assistant: the run loses its provider.
LOST_PROVIDER = """\
contract: workflow.v1
name: Tell nobody
state: on
when:
  button: {}
then:
  - home_assistant: { action: notify.nobody_here, data: { message: hi } }
"""


def host_of(entry: MockConfigEntry) -> WorkflowHost:
    host = entry.runtime_data.workflows
    assert host is not None
    return host


def issue(hass: HomeAssistant, issue_id: str) -> ir.IssueEntry | None:
    return ir.async_get(hass).async_get_issue(DOMAIN, issue_id)


async def test_invalid_file_raises_an_issue_until_it_is_fixed(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    broken = write_workflow(hass, "broken", BROKEN)
    write_workflow(hass, "door", DOOR_LOOK.format(state="test"))
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    host = host_of(config_entry)

    found = issue(hass, issues.invalid_file_id(config_entry.entry_id, "broken"))
    assert found is not None
    assert found.translation_key == "invalid_workflow_file"
    assert found.severity is ir.IssueSeverity.ERROR
    placeholders = found.translation_placeholders or {}
    assert placeholders["file"] == "broken.yaml"
    assert placeholders["line"] == "8"
    assert placeholders["problem"].startswith("WF-STEP-KIND")
    assert "notfy" in placeholders["problem"]
    # The other workflows keep running.
    assert "broken" not in {s.workflow_id for s in host.engine.workflows()}
    assert "door" in {s.workflow_id for s in host.engine.workflows()}
    assert host.summary()["loaded"].count("door") == 1

    broken.write_text(FIXED, encoding="utf-8")
    summary = await host.async_reload()
    assert "broken" in summary["loaded"]
    assert issue(hass, issues.invalid_file_id(config_entry.entry_id, "broken")) is None
    assert "broken" in {s.workflow_id for s in host.engine.workflows()}


async def test_removing_an_invalid_file_clears_its_issue(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    broken = write_workflow(hass, "broken", BROKEN)
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    assert issue(hass, issues.invalid_file_id(config_entry.entry_id, "broken")) is not None

    broken.unlink()
    await host_of(config_entry).async_reload()
    assert issue(hass, issues.invalid_file_id(config_entry.entry_id, "broken")) is None


async def test_needs_attention_raises_an_issue_until_a_state_is_chosen(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    write_workflow(hass, "tell_nobody", LOST_PROVIDER)
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    host = host_of(config_entry)
    issue_id = issues.attention_id(config_entry.entry_id, "tell_nobody")
    assert issue(hass, issue_id) is None

    assert host.engine.run_now("tell_nobody")
    await host.engine.idle()
    status = host.engine.workflow_status("tell_nobody")
    assert status.state == "needs_attention"
    found = issue(hass, issue_id)
    assert found is not None
    assert found.translation_key == "workflow_needs_attention"
    placeholders = found.translation_placeholders or {}
    assert placeholders["workflow"] == "Tell nobody"
    assert "notify.nobody_here" in placeholders["reason"]

    host.engine.set_workflow_state("tell_nobody", "test")
    assert issue(hass, issue_id) is None


async def test_needs_attention_issue_is_raised_again_after_a_restart_of_the_entry(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    """The state is stored: a reload finds the workflow still parked, and says so."""
    write_workflow(hass, "tell_nobody", LOST_PROVIDER)
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    host = host_of(config_entry)
    host.engine.run_now("tell_nobody")
    await host.engine.idle()
    issue_id = issues.attention_id(config_entry.entry_id, "tell_nobody")
    ir.async_delete_issue(hass, DOMAIN, issue_id)

    assert await hass.config_entries.async_reload(config_entry.entry_id)
    await hass.async_block_till_done()
    assert host_of(config_entry).engine.workflow_status("tell_nobody").state == "needs_attention"
    assert issue(hass, issue_id) is not None


# ── links to the panel ───────────────────────────────────────────────


async def test_each_workflow_repair_opens_its_workflow_in_the_panel(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    """*Learn more* on a repair about one workflow opens its page in the Workflows panel,
    in place (``homeassistant://``, which Home Assistant turns into its own path); the
    repair listing the files that wait for this site opens the panel's list."""
    write_workflow(hass, "broken", BROKEN)
    write_workflow(hass, "tell_nobody", LOST_PROVIDER)
    write_workflow(hass, "far_gate", log_on_alert("Far gate", cameras="far_gate"))
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    entry_id = config_entry.entry_id

    broken = issue(hass, issues.invalid_file_id(entry_id, "broken"))
    assert broken is not None
    assert broken.learn_more_url == "homeassistant://opennvr-workflows/workflow/broken"
    waiting = issue(hass, issues.waiting_id(entry_id))
    assert waiting is not None
    assert "far_gate.yaml" in (waiting.translation_placeholders or {})["files"]
    assert waiting.learn_more_url == "homeassistant://opennvr-workflows"

    host = host_of(config_entry)
    assert host.engine.run_now("tell_nobody")
    await host.engine.idle()
    parked = issue(hass, issues.attention_id(entry_id, "tell_nobody"))
    assert parked is not None
    assert parked.learn_more_url == "homeassistant://opennvr-workflows/workflow/tell_nobody"


# ── the model ────────────────────────────────────────────────────────


@pytest.fixture
def entry_options(ollama: FakeOllama) -> dict[str, Any]:
    return ai_options(ollama)


async def settled(hass: HomeAssistant, entry: MockConfigEntry) -> None:
    """Let timers' jobs run, then wait for the model check they started."""
    await hass.async_block_till_done()
    await host_of(entry).model_watch.async_settled()


def tag_requests(ollama: FakeOllama) -> int:
    return sum(1 for r in ollama.requests if r.path == "/api/tags")


async def test_model_down_raises_an_issue_and_its_return_clears_it(
    hass: HomeAssistant, config_entry: MockConfigEntry, ollama: FakeOllama
) -> None:
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    host = host_of(config_entry)
    watch = host.model_watch
    issue_id = issues.model_down_id(config_entry.entry_id)
    await settled(hass, config_entry)
    assert tag_requests(ollama) == 1
    assert watch.health.reachable is True
    assert "qwen2.5vl:3b" in watch.health.models
    assert issue(hass, issue_id) is None

    port = ollama.port
    await ollama.stop()
    async_fire_time_changed(hass, dt_util.utcnow() + timedelta(minutes=6))
    await settled(hass, config_entry)
    found = issue(hass, issue_id)
    assert found is not None
    assert found.translation_key == "model_unreachable"
    placeholders = found.translation_placeholders or {}
    assert placeholders["url"] == ollama.url
    assert "does not answer" in placeholders["detail"]
    assert watch.health.reachable is False

    await ollama.start(port)
    async_fire_time_changed(hass, dt_util.utcnow() + timedelta(minutes=12))
    await settled(hass, config_entry)
    assert issue(hass, issue_id) is None
    assert watch.health.reachable is True


async def test_a_model_not_pulled_is_a_model_that_cannot_be_reached(
    hass: HomeAssistant, config_entry: MockConfigEntry, ollama: FakeOllama
) -> None:
    hass.config_entries.async_update_entry(
        config_entry, options={**config_entry.options, CONF_VISION_MODEL: "llava"}
    )
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await settled(hass, config_entry)
    found = issue(hass, issues.model_down_id(config_entry.entry_id))
    assert found is not None
    assert "llava" in (found.translation_placeholders or {})["detail"]
    health = host_of(config_entry).model_watch.health
    assert health.reachable is True
    assert health.missing == ("llava",)


async def test_an_ai_step_that_finds_the_model_down_checks_it_at_once(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    sim: OpenNVRSimulator,
    ollama: FakeOllama,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No timer fires here: the step's ``llm_down`` is what makes the watch look."""
    monkeypatch.setattr(watch_module, "MIN_GAP_S", 0.0)
    async_mock_service(hass, "notify", PHONE)
    write_workflow(hass, "door", DOOR_LOOK.format(state="on"))
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await settled(hass, config_entry)
    host = host_of(config_entry)
    issue_id = issues.model_down_id(config_entry.entry_id)
    assert issue(hass, issue_id) is None
    checks = tag_requests(ollama)

    # The model's runner crashes: chats fail, the server itself still answers.
    ollama.script(*[HttpError(500)] * 8)
    await until(lambda: config_entry.runtime_data.hub.connected("websocket"), "connected")
    await sim.emit_alert(1, "person")
    await until(lambda: host.engine.stats.started == 1, "a run started")
    await host.engine.idle()
    await settled(hass, config_entry)
    runs = await host.engine.runs("door")
    detail = await host.engine.run_detail(runs[0]["id"])
    look = next(s for s in detail["steps"] if s["path"] == "then.0")
    assert look["unsure_reason"] == "llm_down"
    assert tag_requests(ollama) == checks + 1
    assert issue(hass, issue_id) is None  # it answers its model list: not unreachable

    # Now the server is gone too: the next step's llm_down raises the issue.
    await ollama.stop()
    await sim.emit_alert(1, "person")
    await until(lambda: host.engine.stats.started == 2, "a second run started")
    await host.engine.idle()
    await settled(hass, config_entry)
    assert issue(hass, issue_id) is not None


async def test_ai_off_checks_nothing_and_leaves_no_issue(
    hass: HomeAssistant, config_entry: MockConfigEntry, ollama: FakeOllama
) -> None:
    hass.config_entries.async_update_entry(
        config_entry, options={**config_entry.options, CONF_AI_ENABLED: False}
    )
    # An issue left from when AI was on.
    issues.raise_model_down(hass, config_entry.entry_id, ollama.url, "it does not answer")
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await settled(hass, config_entry)
    async_fire_time_changed(hass, dt_util.utcnow() + timedelta(minutes=6))
    await settled(hass, config_entry)
    assert tag_requests(ollama) == 0
    assert host_of(config_entry).model_watch.health.reachable is None
    assert issue(hass, issues.model_down_id(config_entry.entry_id)) is None


async def test_a_model_address_that_cannot_be_used_is_an_issue_not_a_crash(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    hass.config_entries.async_update_entry(
        config_entry, options={**config_entry.options, CONF_OLLAMA_URL: "http://127.0.0.1:99999"}
    )
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await settled(hass, config_entry)
    found = issue(hass, issues.model_down_id(config_entry.entry_id))
    assert found is not None
    assert "Port out of range" in (found.translation_placeholders or {})["detail"]
