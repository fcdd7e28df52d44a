"""The fake Ollama itself: the API shapes the ollama client reads, streaming, replay."""

from __future__ import annotations

import json

import aiohttp
import ollama
import pytest
from opennvr_app_sdk.agent import LLMHTTPError

from custom_components.opennvr_workflows.ai import OllamaLLMClient, OllamaSettings
from tests.ai.conftest import MODEL
from tests.fakes.ollama_server import (
    Answer,
    FakeOllama,
    FromSchema,
    HttpError,
    ReplayResponder,
    Slow,
    ToolCalls,
    reply_from_json,
    request_key,
)


async def test_the_ollama_package_reads_every_endpoint(fake: FakeOllama) -> None:
    client = ollama.AsyncClient(host=fake.url)
    try:
        listing = await client.list()
        shown = await client.show(MODEL)
        streamed = [
            part
            async for part in await client.chat(
                model=MODEL, messages=[{"role": "user", "content": "hi"}], stream=True
            )
        ]
    finally:
        await client.close()  # type: ignore[no-untyped-call]
    assert {m.model for m in listing.models} == set(fake.models)
    assert shown.capabilities == ["completion", "vision", "tools"]
    assert "".join(p.message.content or "" for p in streamed) == "ok"
    assert streamed[-1].done is True
    assert fake.chats[0].body["stream"] is True


async def test_version_endpoint(fake: FakeOllama) -> None:
    async with aiohttp.ClientSession() as session, session.get(f"{fake.url}/api/version") as resp:
        assert await resp.json() == {"version": "0.12.6"}


async def test_replies_round_trip_as_json() -> None:
    replies = [
        Answer({"decision": "cab"}),
        Answer("{broken"),
        FromSchema({"who": "staff"}),
        ToolCalls([("recent_events", {"camera_id": "gate", "window_seconds": 60})]),
        HttpError(503, "busy"),
        Slow(0.1, Answer("late")),
    ]
    for reply in replies:
        assert reply_from_json(json.loads(json.dumps(reply.to_json()))) == reply


async def test_a_transcript_replays_the_same_answers(fake: FakeOllama) -> None:
    llm = OllamaLLMClient(OllamaSettings(host=fake.url, model=MODEL))
    msgs = [{"role": "user", "content": "who is at the gate?"}]
    fake.script(Answer({"decision": "cab"}), Answer({"decision": "visitor"}))
    first = [await llm.chat(messages=msgs), await llm.chat(messages=msgs)]
    recorded = json.loads(json.dumps(fake.transcript()))
    await llm.aclose()

    async with FakeOllama() as replay:
        replay.responder = ReplayResponder(recorded)
        client = OllamaLLMClient(OllamaSettings(host=replay.url, model=MODEL))
        again = [await client.chat(messages=msgs), await client.chat(messages=msgs)]
        with pytest.raises(LLMHTTPError, match="no recorded answer"):
            await client.chat(messages=[{"role": "user", "content": "never recorded"}])
        await client.aclose()
    assert [r.content for r in again] == [r.content for r in first]
    assert isinstance(replay.responder, ReplayResponder)
    assert replay.responder.misses == [request_key(replay.chats[-1].body)]
