"""What an action really does on this site: the notify platform behind ``notify.x``, the
commands a message carries, and webhook destinations an admin marked as moving things,
judged at import (the safety rule for actuators) and again before each call."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest
from homeassistant.core import HomeAssistant
from homeassistant.helpers import entity_registry as er
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.opennvr_workflows.const import (
    CONF_MOVING_WEBHOOKS,
    CONF_WEBHOOKS,
)
from custom_components.opennvr_workflows.engine import (
    ActionRequest,
    NvrEvent,
    ProviderUnavailable,
    RunContext,
)
from custom_components.opennvr_workflows.host.effects.judge import (
    MESSAGING,
    ActionJudge,
    message_command,
)
from custom_components.opennvr_workflows.host.workflows import WorkflowHost

from .conftest import WEBSOCKET_OPTIONS
from .notify_platforms import RecordingService, add_notify_platforms
from .workflow_files import write_workflow

PHONE = "notify.mobile_app_alices_phone"
SPEAKER = "notify.alexa_media"


@pytest.fixture
def entry_options() -> dict[str, Any]:
    return {
        **WEBSOCKET_OPTIONS,
        CONF_WEBHOOKS: {"tickets": "http://127.0.0.1:9/t", "gate": "http://127.0.0.1:9/g"},
        CONF_MOVING_WEBHOOKS: ["gate"],
    }


@pytest.fixture
async def platforms(hass: HomeAssistant) -> dict[str, RecordingService]:
    """A companion app phone and an announcement speaker, as real notify platforms."""
    return await add_notify_platforms(
        hass, {"mobile_app": {"alices_phone": "a1"}, "alexa_media": None}
    )


def host_of(entry: MockConfigEntry) -> WorkflowHost:
    host = entry.runtime_data.workflows
    assert host is not None
    return host


def workflow(step: str, *, gated: bool = False) -> str:
    """A button workflow whose only step is ``step`` (after an ``if`` when ``gated``)."""
    if gated:
        body = f"""\
  - if: [ {{ site_mode: [armed_away] }} ]
    then:
      - {step}
"""
    else:
        body = f"  - {step}\n"
    return f"""\
contract: workflow.v1
name: Judged
state: test
when:
  button: {{}}
then:
{body}"""


def codes(host: WorkflowHost, text: str) -> dict[str, str]:
    return {p.code: p.message for p in host.validate(text).problems if p.severity == "error"}


# ── at import ────────────────────────────────────────────────────────────


async def test_a_notify_service_of_a_speaker_is_an_actuator_at_import(
    hass: HomeAssistant, platforms: dict[str, RecordingService], setup_entry: MockConfigEntry
) -> None:
    host = host_of(setup_entry)
    speak = f"home_assistant: {{ action: {SPEAKER}, data: {{ message: Someone is here }} }}"
    found = codes(host, workflow(speak))
    assert set(found) == {"WF-SAFETY-ACTUATOR-UNGATED"}
    message = found["WF-SAFETY-ACTUATOR-UNGATED"]
    assert SPEAKER in message
    assert "alexa_media" in message
    located = next(p for p in host.validate(workflow(speak)).problems)
    assert located.path == "$.then[0].home_assistant"
    assert located.line == 7
    # Behind a plain rule it stands, as any actuator does.
    assert codes(host, workflow(speak, gated=True)) == {}


async def test_a_phone_message_informs_but_a_phone_command_moves_things(
    hass: HomeAssistant, platforms: dict[str, RecordingService], setup_entry: MockConfigEntry
) -> None:
    host = host_of(setup_entry)
    text = f"home_assistant: {{ action: {PHONE}, data: {{ message: Someone is here }} }}"
    assert codes(host, workflow(text)) == {}
    for message, data in (
        ("TTS", "{ tts_text: Leave now }"),
        ("command_screen_on", "{}"),
        ("request_location_update", "{}"),
        ("hello", "{ media_stream: alarm_stream }"),
    ):
        step = (
            f"home_assistant: {{ action: {PHONE}, data: {{ message: {message}, data: {data} }} }}"
        )
        found = codes(host, workflow(step))
        assert set(found) == {"WF-SAFETY-ACTUATOR-UNGATED"}, message
        assert "mobile_app" in found["WF-SAFETY-ACTUATOR-UNGATED"]
        assert codes(host, workflow(step, gated=True)) == {}
    tidy = f"home_assistant: {{ action: {PHONE}, data: {{ message: clear_notification }} }}"
    assert codes(host, workflow(tidy)) == {}


async def test_a_webhook_marked_as_moving_things_is_an_actuator_at_import(
    hass: HomeAssistant, setup_entry: MockConfigEntry
) -> None:
    host = host_of(setup_entry)
    assert codes(host, workflow("webhook: { to: tickets, data: { a: 1 } }")) == {}
    found = codes(host, workflow("webhook: { to: gate, data: { open: true } }"))
    assert set(found) == {"WF-SAFETY-ACTUATOR-UNGATED"}
    assert "'gate'" in found["WF-SAFETY-ACTUATOR-UNGATED"]
    assert codes(host, workflow("webhook: { to: gate, data: {} }", gated=True)) == {}


async def test_an_action_not_offered_yet_is_left_to_the_call(
    hass: HomeAssistant, setup_entry: MockConfigEntry
) -> None:
    """Integrations may start after this one: a notify service not there yet is judged
    when it is called, not refused at import."""
    host = host_of(setup_entry)
    step = "home_assistant: { action: notify.later_phone, data: { message: hi } }"
    assert codes(host, workflow(step)) == {}


# ── before each call ─────────────────────────────────────────────────────


def ctx(workflow_id: str = "judged", step: str = "then.0") -> RunContext:
    return RunContext(
        workflow_id=workflow_id,
        workflow_name="Judged",
        version="v1",
        run_id="r1",
        correlation_id=f"{workflow_id}/r1",
        chain=(),
        step_path=step,
        test=False,
        trigger=NvrEvent(kind="button", source="engine", time=datetime.now(UTC)),
    )


def call(action: str, message: str, data: dict[str, Any] | None = None) -> ActionRequest:
    payload: dict[str, Any] = {"message": message}
    if data is not None:
        payload["data"] = data
    return ActionRequest(kind="home_assistant", params={"action": action, "data": payload})


async def test_a_call_that_moves_things_is_refused_unless_the_import_cleared_its_step(
    hass: HomeAssistant, platforms: dict[str, RecordingService], setup_entry: MockConfigEntry
) -> None:
    fx = host_of(setup_entry).effects
    with pytest.raises(ProviderUnavailable, match="alexa_media"):
        await fx.call_action(ctx(), call(SPEAKER, "Someone is here"))
    # A message rendered into a phone command at run time is refused the same way.
    with pytest.raises(ProviderUnavailable, match="command to the phone"):
        await fx.call_action(ctx(step="then.1"), call(PHONE, "command_screen_on"))
    with pytest.raises(ProviderUnavailable, match="'gate'"):
        await fx.webhook(ctx(), ActionRequest(kind="webhook", params={"to": "gate"}))
    assert platforms["alexa_media"].sent == []
    assert platforms["mobile_app"].sent == []
    # A plain message to the phone goes through, naming the integration it went to.
    result = await fx.call_action(ctx(step="then.2"), call(PHONE, "Someone is here"))
    assert result == {"action": PHONE, "integration": "mobile_app"}
    assert platforms["mobile_app"].sent[0]["message"] == "Someone is here"


async def test_a_gated_speaker_step_in_a_loaded_workflow_speaks(
    hass: HomeAssistant, platforms: dict[str, RecordingService], config_entry: MockConfigEntry
) -> None:
    """End to end: the import clears the gated step, the engine runs it, the host calls."""
    speak = f"home_assistant: {{ action: {SPEAKER}, data: {{ message: Someone is here }} }}"
    text = workflow(speak, gated=True).replace(
        "site_mode: [armed_away]", 'time: { from: "00:00", to: "23:59" }'
    )
    write_workflow(hass, "judged", text)
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    host = host_of(config_entry)
    assert host.files["judged"].workflow is not None, host.files["judged"].report.problems
    host.engine.set_workflow_state("judged", "on")
    host.engine.run_now("judged")
    await host.engine.idle()
    assert [s["message"] for s in platforms["alexa_media"].sent] == ["Someone is here"]


async def test_a_cleared_speaker_step_is_refused_in_a_run_ai_output_started(
    hass: HomeAssistant, platforms: dict[str, RecordingService], config_entry: MockConfigEntry
) -> None:
    """The import cleared the step (a plain rule stands before it), but this run was
    started by an alert a workflow raised from an AI decision: without a person's reply
    in the run, the speaker stays silent; a message to a phone still goes."""
    speak = f"home_assistant: {{ action: {SPEAKER}, data: {{ message: Someone is here }} }}"
    text = workflow(speak, gated=True).replace(
        "site_mode: [armed_away]", 'time: { from: "00:00", to: "23:59" }'
    )
    write_workflow(hass, "judged", text)
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    fx = host_of(config_entry).effects
    step = next(iter(fx.cleared["judged"])).pattern.removesuffix("\\Z").replace("\\", "")
    laundered = replace(ctx(step=step), needs_person=True)
    with pytest.raises(ProviderUnavailable, match="started by AI output"):
        await fx.call_action(laundered, call(SPEAKER, "Someone is here"))
    assert platforms["alexa_media"].sent == []
    await fx.call_action(replace(laundered, step_path="then.9"), call(PHONE, "Someone is here"))
    assert len(platforms["mobile_app"].sent) == 1
    # The same step with a person's reply before it in the run speaks.
    await fx.call_action(ctx(step=step), call(SPEAKER, "Someone is here"))
    assert len(platforms["alexa_media"].sent) == 1


# ── the judgement itself ─────────────────────────────────────────────────


def test_every_messaging_platform_is_listed_with_its_reason() -> None:
    assert "mobile_app" in MESSAGING
    assert "persistent_notification" in MESSAGING
    assert all(reason.strip() for reason in MESSAGING.values())
    for speaker in ("alexa_media", "google_assistant_sdk", "command_line", "rest", "group"):
        assert speaker not in MESSAGING


@pytest.mark.parametrize(
    ("message", "data", "command"),
    [
        ("command_activity", None, True),
        ("  TTS ", None, True),
        ("remove_channel", None, True),
        ("Hello", {"tts_text": "go"}, True),
        ("Hello", {"intent_action": "x"}, True),
        ("clear_notification", None, False),
        ("A command_ in the middle", None, False),
        ("Hello", {"push": {"sound": "default"}}, False),
    ],
)
def test_message_command(message: str, data: Any, command: bool) -> None:
    assert (message_command("mobile_app", message, data) is not None) is command


def test_notify_send_message_is_judged_by_its_entities() -> None:
    judge = ActionJudge(
        notify_entities={"notify.chat": "matrix", "notify.kitchen": "alexa_devices"}
    )
    chat = judge.judge_call("notify.send_message", {"message": "hi"}, {"entity_id": "notify.chat"})
    assert not chat.moves_things
    both = judge.judge_call(
        "notify.send_message", {"message": "hi"}, {"entity_id": ["notify.chat", "notify.kitchen"]}
    )
    assert both.moves_things
    assert both.integration == "alexa_devices"
    assert judge.judge_call("notify.send_message", {"message": "hi"}, {}).moves_things
    assert not judge.judge_call("persistent_notification.create", {"message": "x"}).moves_things
    assert judge.judge_call("notify.unknown", {"message": "x"}).moves_things


async def test_a_live_judge_reads_home_assistant_at_each_judgement(
    hass: HomeAssistant, platforms: dict[str, RecordingService]
) -> None:
    """The judge a call is made with (``live``) sees a notify entity, or a service, that
    came or went after it was built, and judges what it knows as the snapshot does."""
    live = ActionJudge.live(hass)
    snapshot = ActionJudge.of(hass)
    for action, data in (
        (PHONE, {"message": "Someone at the door"}),
        (PHONE, {"message": "TTS"}),
        (SPEAKER, {"message": "hello"}),
        ("notify.nobody", {"message": "hello"}),
        ("light.turn_on", {}),
        ("persistent_notification.create", {"message": "x"}),
    ):
        assert live.judge_call(action, data) == snapshot.judge_call(action, data), action
        assert live.exists(action) == snapshot.exists(action), action

    send = ("notify.send_message", {"message": "hi"}, {"entity_id": "notify.chat"})
    assert live.judge_call(*send).moves_things  # no such entity yet
    registry = er.async_get(hass)
    registry.async_get_or_create("notify", "matrix", "room", suggested_object_id="chat")
    assert not live.judge_call(*send).moves_things  # a messaging platform's, now
    registry.async_remove("notify.chat")
    registry.async_get_or_create("notify", "alexa_devices", "k", suggested_object_id="chat")
    assert live.judge_call(*send).integration == "alexa_devices"
    assert live.judge_call(*send).moves_things
    assert sorted(live.notify_entities) == ["notify.chat"]

    assert not live.exists("script.late")
    hass.services.async_register("script", "late", lambda call: None)
    assert live.exists("script.late")
    hass.services.async_remove("script", "late")
    assert not live.exists("script.late")
