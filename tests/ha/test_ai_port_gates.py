"""The host's AI port before it asks any model: AI switched off, no model chosen, or a server
no admin allowed pictures to go to each answer ``unsure`` with the reason, a step resumed
after a person's answer included; new options drop the clients of the old server; a model
an admin named wins."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, cast

from pyopennvr import OpenNVRClient

from custom_components.opennvr_workflows.engine import AiResult
from custom_components.opennvr_workflows.engine.ports import AiContext
from custom_components.opennvr_workflows.host.model.port import HaAiPort
from custom_components.opennvr_workflows.host.settings import HostSettings
from custom_components.opennvr_workflows.workflow import load_template, walk_steps
from custom_components.opennvr_workflows.workflow.model import AIStep

ON = HostSettings(vision_model="qwen2.5vl:3b", text_model="qwen3:4b")


def first_ai_step(template: str) -> AIStep:
    return next(s for _, s in walk_steps(load_template(template)) if isinstance(s, AIStep))


def port(settings: HostSettings, *, may_send: bool = True) -> HaAiPort:
    client = cast(OpenNVRClient, object())
    return HaAiPort(client, settings, may_send=lambda: may_send)


def nothing() -> AiContext:
    return cast(AiContext, None)  # never read: the port answers before it looks


async def answers(ai: HaAiPort, step: AIStep) -> list[AiResult]:
    out = [await ai.run(step, nothing()), await ai.resume(step, {}, "yes", nothing())]
    assert all(isinstance(o, AiResult) for o in out)
    return cast(list[AiResult], out)


async def test_ai_off_or_no_model_is_unsure_before_any_model_is_asked() -> None:
    step = first_ai_step("parcel_at_door")
    for settings in (replace(ON, ai_enabled=False), HostSettings()):
        for result in await answers(port(settings), step):
            assert (result.outcome, result.unsure_reason) == ("unsure", "llm_down")


async def test_a_server_pictures_may_not_go_to_is_unsure() -> None:
    step = first_ai_step("parcel_at_door")
    for result in await answers(port(ON, may_send=False), step):
        assert (result.outcome, result.unsure_reason) == ("unsure", "not_local")


def test_the_model_a_step_runs_on() -> None:
    ai = port(ON)
    look = first_ai_step("parcel_at_door")
    investigate = first_ai_step("investigate_on_request")
    assert ai.model_for(look) == "qwen2.5vl:3b"
    assert ai.model_for(investigate) == "qwen3:4b"
    assert ai.model_for(look, "llava:7b") == "llava:7b", "an admin's choice wins"
    assert port(replace(ON, text_model="")).model_for(None) == "qwen2.5vl:3b"


def test_new_options_drop_the_clients_of_another_server() -> None:
    ai = port(ON)
    clients: dict[str, Any] = ai._llms
    clients["qwen2.5vl:3b"] = object()
    ai.update(replace(ON, vision_model="llava:7b"))
    assert clients, "the same server: its clients stay"
    ai.update(replace(ON, ollama_url="http://10.0.0.9:11434"))
    assert clients == {}
