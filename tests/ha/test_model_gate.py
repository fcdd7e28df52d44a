"""The evaluation gate in Home Assistant, and Describe it behind it.

The options' model page measures the chosen model on the look cases (a progress step with a
background task) and stores the result; the gate opens Investigate steps (the skill
``investigate_model``) and the ``describe_workflow`` action only when the stored Wilson
lower bound is 0.80 or more on the vision model. The model is the Ollama fake with scripted
answers: they prove the flow and the scoring, not any model's quality. The look cases here
are a folder written by the test (sixteen rows right is the least that can pass).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from homeassistant.auth.models import User
from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import Context, HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.exceptions import ServiceValidationError, Unauthorized
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.opennvr_workflows.const import (
    CONF_AI_ENABLED,
    CONF_CAMERA_ROLES,
    CONF_HARDWARE,
    CONF_MODEL_GATE,
    CONF_OLLAMA_URL,
    CONF_TEXT_MODEL,
    CONF_VISION_MODEL,
    DOMAIN,
    WORKFLOW_FOLDER,
)
from custom_components.opennvr_workflows.engine import wilson_interval
from custom_components.opennvr_workflows.evaluation import gate
from custom_components.opennvr_workflows.flows.steps import CONF_SKIP_AI
from custom_components.opennvr_workflows.host.folder.files import TEMPLATES_MARKER
from custom_components.opennvr_workflows.workflow import load_template, workflow_to_data
from tests.fakes.ollama_server import Answer, FakeOllama, FromSchema, Received, Reply
from tests.fakes.opennvr_sim import OpenNVRSimulator

from .conftest import PASSED_GATE, WEBSOCKET_OPTIONS

MODEL = "qwen2.5vl:3b"
LOOK = """\
id: note-{n}
suite: look
about: A scripted row.
step:
  ai: {{ mode: look, prompt: "Is the note a yes?", input: text, text: "{{note}}",
        decision: [yes, no] }}
event: {{ note: "{script} {n}" }}
expect:
  decision: yes
"""
INVESTIGATE = """\
contract: workflow.v1
name: Who was at the door
state: test
when: { button: {} }
then:
  - ai:
      mode: investigate
      goal: Who came to the front door today?
      tools: [recent_events]
      decision: [someone, nobody]
      someone: []
      nobody: []
      unsure: []
"""


@pytest.fixture
def look_suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The look cases the options measure with: a folder of the test's own."""
    root = tmp_path / "cases"
    (root / "look").mkdir(parents=True)
    monkeypatch.setattr(gate, "DEFAULT_CASES", root)
    return root


def write_looks(root: Path, right: int, wrong: int) -> None:
    for n in range(right + wrong):
        script = "say-yes" if n < right else "say-no"
        (root / "look" / f"note_{n}.yaml").write_text(LOOK.format(n=n, script=script))


def scripted(received: Received) -> Reply:
    answer = "yes" if "say-yes" in received.user else "no"
    return FromSchema(values={"decision": answer, "reason": "the note says so"})


@pytest.fixture
def entry_options(ollama: FakeOllama) -> dict[str, Any]:
    return {
        **WEBSOCKET_OPTIONS,
        CONF_AI_ENABLED: True,
        CONF_OLLAMA_URL: ollama.url,
        CONF_VISION_MODEL: MODEL,
        CONF_CAMERA_ROLES: {"front_door": "1"},
    }


async def set_up(hass: HomeAssistant, entry: MockConfigEntry, **files: str) -> None:
    folder = Path(hass.config.path(WORKFLOW_FOLDER))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / TEMPLATES_MARKER).write_text("", encoding="utf-8")
    for name, text in files.items():
        (folder / f"{name}.yaml").write_text(text, encoding="utf-8")
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()


async def measure(hass: HomeAssistant, entry: MockConfigEntry, ollama: FakeOllama) -> Any:
    """Walk the options: Ollama page, models, measure, progress, result; save."""
    result = await hass.config_entries.options.async_init(entry.entry_id)
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {"next_step_id": "ollama"}
    )
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {CONF_OLLAMA_URL: ollama.url, CONF_SKIP_AI: False}
    )
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {CONF_VISION_MODEL: MODEL, CONF_TEXT_MODEL: MODEL, CONF_HARDWARE: "cpu"}
    )
    assert result["step_id"] == "evaluate"
    assert result["description_placeholders"]["model"] == MODEL
    progress: list[float] = []
    hass.bus.async_listen(
        "data_entry_flow_progress_update", lambda event: progress.append(event.data["progress"])
    )
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {"run_evaluation": True}
    )
    assert result["type"] is FlowResultType.SHOW_PROGRESS, result
    assert result["progress_action"] == "evaluate"
    await hass.async_block_till_done()
    result = await hass.config_entries.options.async_configure(result["flow_id"])
    return result, progress


async def test_a_model_that_passes_opens_investigate_and_describe_it(
    hass: HomeAssistant,
    sim: OpenNVRSimulator,
    config_entry: MockConfigEntry,
    ollama: FakeOllama,
    look_suite: Path,
) -> None:
    await set_up(hass, config_entry, door=INVESTIGATE)
    host = config_entry.runtime_data.workflows
    assert "investigate_model" not in (host.site_profile().skills or ())
    refused = host.files["door"].errors
    assert [(p.code, p.path) for p in refused] == [("WF-SKILL-MISSING", "$.then[0].ai.mode")]
    with pytest.raises(ServiceValidationError) as err:
        await hass.services.async_call(
            DOMAIN, "describe_workflow", {"sentence": "Tell us about parcels"}, blocking=True,
            return_response=True,
        )  # fmt: skip
    assert err.value.translation_key == "describe_gate_closed"

    write_looks(look_suite, right=16, wrong=0)
    ollama.responder = scripted
    result, progress = await measure(hass, config_entry, ollama)
    assert result["step_id"] == "evaluate_done"
    shown = result["description_placeholders"]
    assert (shown["right"], shown["rows"]) == ("16", "16")
    assert shown["low"] == f"{wilson_interval(16, 16)[0]:.2f}"
    assert progress[-1] == 1.0
    assert len(progress) == 16
    result = await hass.config_entries.options.async_configure(result["flow_id"], {})
    assert result["type"] is FlowResultType.CREATE_ENTRY
    await hass.async_block_till_done()
    stored = config_entry.options[CONF_MODEL_GATE]
    assert stored["model"] == MODEL
    assert (stored["right"], stored["rows"]) == (16, 16)
    assert stored["wilson_low"] == wilson_interval(16, 16)[0] >= 0.80
    assert stored["date"].startswith("20")

    assert config_entry.state is ConfigEntryState.LOADED
    host = config_entry.runtime_data.workflows
    assert "investigate_model" in (host.site_profile().skills or ())
    assert host.files["door"].workflow is not None  # the Investigate step now loads


async def test_a_model_below_the_bound_keeps_the_gate_closed(
    hass: HomeAssistant,
    sim: OpenNVRSimulator,
    config_entry: MockConfigEntry,
    ollama: FakeOllama,
    look_suite: Path,
) -> None:
    """Fifteen of sixteen right is 94 %, but its lower bound is under 0.80: closed."""
    await set_up(hass, config_entry, door=INVESTIGATE)
    write_looks(look_suite, right=15, wrong=1)
    ollama.responder = scripted
    result, _ = await measure(hass, config_entry, ollama)
    assert result["description_placeholders"]["right"] == "15"
    await hass.config_entries.options.async_configure(result["flow_id"], {})
    await hass.async_block_till_done()
    stored = config_entry.options[CONF_MODEL_GATE]
    assert stored["wilson_low"] == wilson_interval(15, 16)[0] < 0.80
    host = config_entry.runtime_data.workflows
    assert "investigate_model" not in (host.site_profile().skills or ())
    assert host.files["door"].workflow is None


async def test_a_measurement_that_cannot_run_says_why_and_keeps_the_models(
    hass: HomeAssistant,
    sim: OpenNVRSimulator,
    config_entry: MockConfigEntry,
    ollama: FakeOllama,
    look_suite: Path,
) -> None:
    await set_up(hass, config_entry)
    (look_suite / "look" / "broken.yaml").write_text("id: broken\nsuite: look\n")
    result, _ = await measure(hass, config_entry, ollama)
    assert result["step_id"] == "evaluate_failed"
    assert "broken.yaml" in result["description_placeholders"]["error"]
    result = await hass.config_entries.options.async_configure(result["flow_id"], {})
    assert result["type"] is FlowResultType.CREATE_ENTRY
    await hass.async_block_till_done()
    assert CONF_MODEL_GATE not in config_entry.options
    assert config_entry.options[CONF_TEXT_MODEL] == MODEL


# ── Describe it ──────────────────────────────────────────────────────────────────────────


def parcel_draft(camera: str = "front_door") -> dict[str, Any]:
    data = workflow_to_data(load_template("parcel_at_door"))
    data["when"]["event"]["cameras"] = [camera]
    data["state"] = "on"  # the model asks for on; a draft is always Test
    return data


async def describe(hass: HomeAssistant, context: Context | None = None, **data: Any) -> Any:
    return await hass.services.async_call(
        DOMAIN, "describe_workflow", {"sentence": "Tell us about parcels at the door", **data},
        blocking=True, return_response=True, context=context,
    )  # fmt: skip


async def test_describe_it_drafts_repairs_reviews_and_saves_in_test(
    hass: HomeAssistant,
    sim: OpenNVRSimulator,
    ollama: FakeOllama,
    hass_read_only_user: User,
) -> None:
    entry = MockConfigEntry(
        domain=DOMAIN,
        title=sim.config.name,
        unique_id=sim.config.site_id,
        data={"url": sim.url, "token": sim.config.token, "verify_ssl": True},
        options={
            **WEBSOCKET_OPTIONS,
            CONF_AI_ENABLED: True,
            CONF_OLLAMA_URL: ollama.url,
            CONF_VISION_MODEL: MODEL,
            CONF_CAMERA_ROLES: {"front_door": "1"},
            CONF_MODEL_GATE: dict(PASSED_GATE),
        },
    )
    entry.add_to_hass(hass)
    await set_up(hass, entry)
    folder = Path(hass.config.path(WORKFLOW_FOLDER))

    # a draft on an unmapped camera is repaired once with the validator's problem
    ollama.script(Answer(parcel_draft("garage")), Answer(parcel_draft()))
    review = await describe(hass)
    assert review["valid"] is True
    assert review["repairs"] == 1
    assert review["written"] is False
    assert review["state"] == "test"
    assert review["model"] == MODEL
    assert yaml.safe_load(review["yaml"])["state"] == "test"
    assert not (folder / f"{review['workflow_id']}.yaml").exists()
    first, repair = ollama.chats[-2:]
    assert "front_door" in first.system
    assert "investigate_model" in first.system  # the gate is open: Investigate is offered
    feedback = repair.messages[-1]["content"]
    assert "$.when.event.cameras[0]: WF-CAMERA-ROLE-UNMAPPED" in feedback

    # saving is for admins (refused before the model is asked)
    asked = len(ollama.chats)
    with pytest.raises(Unauthorized) as err:  # drafting at all is an admin's
        await describe(hass, Context(user_id=hass_read_only_user.id), save=True)
    assert err.value.translation_key == "not_allowed"
    assert len(ollama.chats) == asked

    ollama.script(Answer(parcel_draft()))
    saved = await describe(hass, save=True, file_name="parcel_drafted")
    assert saved["written"] is True
    assert saved["file"] == "parcel_drafted.yaml"
    written = (folder / "parcel_drafted.yaml").read_text()
    assert "state: test" in written
    host = entry.runtime_data.workflows
    assert host.engine.workflow_status("parcel_drafted").state == "test"

    # still invalid after two repairs: refused with the located problems
    ollama.script(*(Answer(parcel_draft("garage")) for _ in range(3)))
    with pytest.raises(ServiceValidationError) as err:
        await describe(hass)
    assert err.value.translation_key == "draft_refused"
    placeholders = err.value.translation_placeholders or {}
    assert placeholders["repairs"] == "2"
    assert "$.when.event.cameras[0]" in placeholders["problems"]
    assert "'garage'" in placeholders["problems"]
