"""Fixtures for the AI step's tests: the fake Ollama on loopback, a client, an NVR."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from custom_components.opennvr_workflows.ai import (
    AIStepContext,
    FixedBudget,
    OllamaLLMClient,
    OllamaSettings,
    SiteRules,
)
from tests.ai.fake_nvr import FakeNvr
from tests.fakes.ollama_server import FakeOllama

MODEL = "qwen2.5vl:3b"


@pytest.fixture(autouse=True)
def _loopback(socket_enabled: None) -> None:
    """These tests talk to real servers on 127.0.0.1 (never beyond it)."""


@pytest.fixture
async def fake() -> AsyncIterator[FakeOllama]:
    async with FakeOllama() as server:
        yield server


@pytest.fixture
async def llm(fake: FakeOllama) -> AsyncIterator[OllamaLLMClient]:
    client = OllamaLLMClient(OllamaSettings(host=fake.url, model=MODEL, timeout_seconds=10))
    yield client
    await client.aclose()


@pytest.fixture
def nvr() -> FakeNvr:
    return FakeNvr()


@pytest.fixture
def make_context(llm: OllamaLLMClient, nvr: FakeNvr) -> Callable[..., AIStepContext]:
    """A context on the fake model and NVR; keyword arguments override its fields."""

    async def no_sleep(seconds: float) -> None:
        return None

    def build(**overrides: Any) -> AIStepContext:
        base: dict[str, Any] = {
            "llm": llm,
            "nvr": nvr,
            "budget": FixedBudget(100),
            "hardware": "cpu",
            "site": SiteRules(),
            "camera": "gate",
            "model_name": MODEL,
            "sleep": no_sleep,
        }
        base.update(overrides)
        return AIStepContext(**base)

    return build
