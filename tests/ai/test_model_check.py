"""The config flow's model check against the fake Ollama: reachable, pulled, capable."""

from __future__ import annotations

from custom_components.opennvr_workflows.ai import check_model, list_models
from tests.fakes.ollama_server import FakeOllama


async def test_a_vision_model_with_tools_passes(fake: FakeOllama) -> None:
    check = await check_model(fake.url, "qwen2.5vl:3b", need_tools=True)
    assert (check.reachable, check.found, check.error) == (True, True, None)
    assert (check.vision, check.tools, check.thinking) == (True, True, False)
    assert check.version == "0.12.6"
    assert "qwen3:1.7b" in check.models
    assert [r.path for r in fake.requests] == ["/api/version", "/api/tags", "/api/show"]


async def test_a_model_without_vision_is_named(fake: FakeOllama) -> None:
    check = await check_model(fake.url, "qwen3:1.7b")
    assert (check.error, check.tools) == ("no_vision", True)
    assert "cannot read pictures" in check.detail


async def test_tools_are_checked_only_when_needed(fake: FakeOllama) -> None:
    fake.models["llava:latest"] = ("completion", "vision")
    assert (await check_model(fake.url, "llava")).error is None
    assert (await check_model(fake.url, "llava", need_tools=True)).error == "no_tools"


async def test_a_model_not_pulled_is_named(fake: FakeOllama) -> None:
    check = await check_model(fake.url, "llama3.2-vision:11b")
    assert (check.reachable, check.found, check.error) == (True, False, "model_not_found")
    assert "ollama pull llama3.2-vision:11b" in check.detail


async def test_an_unreachable_server_is_an_answer_not_an_exception() -> None:
    dead = FakeOllama()
    await dead.start()
    await dead.stop()
    check = await check_model(dead.url, "qwen2.5vl:3b", timeout_seconds=2)
    assert (check.reachable, check.error) == (False, "cannot_connect")
    assert "unreachable" in check.detail
    assert await list_models(dead.url, timeout_seconds=2) is None


async def test_list_models(fake: FakeOllama) -> None:
    assert await list_models(fake.url) == ("gemma3:1b", "qwen2.5vl:3b", "qwen3:1.7b")
