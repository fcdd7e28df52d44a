"""The recording relay at its edges: a transcript file that is not one, a request it cannot
read or has no answer for, an upstream that is down or does not answer JSON. Each ends in
an answer the harness reports (an HTTP error with Ollama's shape), never a hang or a crash.
"""

from __future__ import annotations

import json
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web

from evals.relay import (
    META,
    Relay,
    TranscriptError,
    load_transcript,
    reply_of,
    request_key,
    transcript_meta,
)


def test_a_request_key_reads_images_by_digest_and_ignores_the_rest() -> None:
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": "what?", "images": ["aGVsbG8="]}],
        "tools": [{"function": {"name": "b"}}, {"function": {"name": "a"}}],
        "stream": True,
    }
    same = {**body, "stream": False, "tools": list(reversed(body["tools"]))}
    assert request_key(body) == request_key(same)
    other = {**body, "messages": [{**body["messages"][0], "images": ["d29ybGQ="]}]}
    assert request_key(other) != request_key(body)


def test_a_file_that_is_not_a_transcript(tmp_path: Path) -> None:
    missing = tmp_path / "missing.json"
    with pytest.raises(TranscriptError, match="cannot read a transcript"):
        load_transcript(missing)
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    with pytest.raises(TranscriptError, match="cannot read a transcript"):
        load_transcript(broken)
    mapping = tmp_path / "mapping.json"
    mapping.write_text('{"path": "/api/chat"}', encoding="utf-8")
    with pytest.raises(TranscriptError, match="a JSON list of entries"):
        load_transcript(mapping)
    assert transcript_meta([{"path": "/api/chat"}]) == {}
    assert transcript_meta([{"path": META, "format": 1}]) == {"path": META, "format": 1}


def test_an_upstream_answer_that_is_no_chat_reply_is_an_http_error() -> None:
    assert reply_of(500, {"error": "model not found"}) == {
        "kind": "http_error",
        "status": 500,
        "error": "model not found",
    }
    odd = reply_of(200, ["not", "a", "reply"])
    assert (odd["kind"], odd["status"]) == ("http_error", 502)
    assert odd["error"].startswith("not a chat reply")


def test_a_relay_records_or_replays() -> None:
    with pytest.raises(ValueError, match="either records"):
        Relay()
    with pytest.raises(ValueError, match="either records"):
        Relay(upstream="http://127.0.0.1:1", transcript=[])


async def test_a_replay_answers_what_it_can_and_says_what_it_cannot(
    socket_enabled: None,
) -> None:
    async with Relay(transcript=[{"path": "/api/tags", "response": {"models": []}}]) as relay:
        async with aiohttp.ClientSession() as session:
            async with session.post(f"{relay.url}/api/chat", data="{oops") as resp:
                assert resp.status == 400
            async with session.post(f"{relay.url}/api/chat", json=["a", "list"]) as resp:
                assert resp.status == 400
            chat = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
            async with session.post(f"{relay.url}/api/chat", json=chat) as resp:
                assert resp.status == 404
                assert "no recorded answer" in (await resp.json())["error"]
            async with session.get(f"{relay.url}/api/tags") as resp:
                assert await resp.json() == {"models": []}
            async with session.get(f"{relay.url}/api/version") as resp:
                assert resp.status == 404
            async with session.post(f"{relay.url}/api/show", data="{oops") as resp:
                assert resp.status == 404
    assert relay.misses == [request_key(chat)]


async def test_recording_from_an_upstream_that_is_down_or_speaks_no_json(
    socket_enabled: None, tmp_path: Path
) -> None:
    async def not_json(request: web.Request) -> web.Response:
        return web.Response(text="<html>proxy error</html>")

    app = web.Application()
    app.router.add_post("/api/chat", not_json)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    upstream = f"http://127.0.0.1:{runner.addresses[0][1]}"
    chat = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    try:
        async with Relay(upstream=upstream) as relay, aiohttp.ClientSession() as session:
            async with session.post(f"{relay.url}/api/chat", json=chat) as resp:
                assert resp.status == 502
                assert "not JSON" in (await resp.json())["error"]
            relay.save(tmp_path / "t.json", note="edge")
    finally:
        await runner.cleanup()
    saved = load_transcript(tmp_path / "t.json")
    assert saved[0]["path"] == META
    assert saved[0]["note"] == "edge"
    assert saved[1]["reply"]["kind"] == "http_error"

    async with Relay(upstream="http://127.0.0.1:9") as relay, aiohttp.ClientSession() as session:
        async with session.post(f"{relay.url}/api/chat", json=chat) as resp:
            assert resp.status == 502
            assert "did not answer" in (await resp.json())["error"]
        async with session.get(f"{relay.url}/api/tags") as resp:
            assert resp.status == 502
    assert json.dumps(relay.entries)  # what was recorded stays writable
