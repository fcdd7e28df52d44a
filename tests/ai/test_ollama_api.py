"""Ollama's HTTP API over aiohttp: addresses read as Ollama's own clients read them, and
Ollama's errors and odd replies named, against the fake Ollama over a real loopback socket.

The ``ollama`` package is the reference here, not a dependency of the integration: its
address reading is compared with ours."""

from __future__ import annotations

import pytest
from aiohttp import web
from ollama._client import _parse_host

from custom_components.opennvr_workflows.ai.ollama_api import (
    OllamaApi,
    OllamaHTTPError,
    OllamaReplyError,
    base_url,
)
from tests.fakes.ollama_server import FakeOllama

#: Addresses as people write them (the package's own examples, and a few more).
ADDRESSES = [
    "",
    "1.2.3.4",
    ":56789",
    "1.2.3.4:56789",
    "http://1.2.3.4",
    "https://1.2.3.4",
    "https://1.2.3.4:56789",
    "example.com",
    "example.com:56789",
    "http://example.com",
    "https://example.com",
    "https://example.com:56789",
    "example.com/",
    "example.com:56789/",
    "example.com/path",
    "example.com:56789/path",
    "https://example.com:56789/path",
    "example.com:56789/path/",
    "[0001:002:003:0004::1]",
    "[0001:002:003:0004::1]:56789",
    "http://[0001:002:003:0004::1]",
    "https://[0001:002:003:0004::1]",
    "https://[0001:002:003:0004::1]:56789",
    "[0001:002:003:0004::1]/path",
    "http://user:secret@ollama.lan:11434",
    "ollama.lan/a/b/",
]


@pytest.mark.parametrize("address", ADDRESSES)
def test_an_address_is_read_as_ollamas_own_client_reads_it(address: str) -> None:
    assert base_url(address) == _parse_host(address)


def test_no_address_is_the_local_server() -> None:
    assert base_url(None) == "http://127.0.0.1:11434"


async def _serve(handler: web.StreamResponse | web.Response) -> tuple[web.AppRunner, str]:
    async def answer(_: web.Request) -> web.StreamResponse:
        return handler

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", answer)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, f"http://127.0.0.1:{port}"


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        (web.json_response({"error": "model is loading"}, status=503), "model is loading"),
        (web.Response(text="bad gateway", status=502), "bad gateway"),
    ],
    ids=["ollamas-message", "plain-text"],
)
async def test_an_http_error_carries_its_status_and_ollamas_own_message(
    reply: web.Response, error: str
) -> None:
    runner, url = await _serve(reply)
    api = OllamaApi(url, timeout_seconds=5)
    try:
        with pytest.raises(OllamaHTTPError) as info:
            await api.get("/api/tags")
    finally:
        await api.aclose()
        await runner.cleanup()
    assert (info.value.status, info.value.error) == (reply.status, error)


@pytest.mark.parametrize(
    "reply",
    [web.Response(text="{not json"), web.json_response([1, 2])],
    ids=["not-json", "not-an-object"],
)
async def test_a_reply_that_is_not_a_json_object_is_named(reply: web.Response) -> None:
    runner, url = await _serve(reply)
    api = OllamaApi(url, timeout_seconds=5)
    try:
        with pytest.raises(OllamaReplyError, match="/api/tags"):
            await api.get("/api/tags")
    finally:
        await api.aclose()
        await runner.cleanup()


async def test_a_call_reaches_the_server_and_reads_its_answer(fake: FakeOllama) -> None:
    api = OllamaApi(fake.url, timeout_seconds=5)
    try:
        listing = await api.get("/api/tags")
        shown = await api.post("/api/show", {"model": "qwen2.5vl:3b"})
    finally:
        await api.aclose()
    assert "qwen2.5vl:3b" in [m["model"] for m in listing["models"]]
    assert "vision" in shown["capabilities"]
