"""The Ollama client runs on the TLS context the host hands it, and making one loads no
certificates (Home Assistant's event loop must not read a CA bundle from disk)."""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from opennvr_app_sdk.agent import LLMUnreachableError

from custom_components.opennvr_workflows.ai import (
    OllamaLLMClient,
    OllamaSettings,
    check_model,
    list_models,
    make_llm_client,
)
from tests.ai.conftest import MODEL
from tests.fakes.ollama_server import Answer, FakeOllama
from tests.fakes.tls import write_self_signed


@pytest.fixture
def certificate(tmp_path: Path) -> tuple[Path, Path]:
    return write_self_signed(tmp_path)


@pytest.fixture
async def tls_fake(certificate: tuple[Path, Path]) -> AsyncIterator[FakeOllama]:
    server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_context.load_cert_chain(*certificate)
    async with FakeOllama(ssl_context=server_context) as server:
        yield server


@pytest.fixture
def trusting(certificate: tuple[Path, Path]) -> ssl.SSLContext:
    """A client context that trusts the fake's self-signed certificate, as a host's own
    context would trust the server's CA."""
    return ssl.create_default_context(cafile=str(certificate[0]))


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every certificate load from now on, by the name of the call."""
    seen: list[str] = []
    for name in ("load_verify_locations", "load_default_certs", "set_default_verify_paths"):
        original = getattr(ssl.SSLContext, name)

        def probe(self: ssl.SSLContext, *args: Any, _n: str = name, _o: Any = original) -> Any:
            seen.append(_n)
            return _o(self, *args)

        monkeypatch.setattr(ssl.SSLContext, name, probe)
    return seen


async def test_the_hosts_context_is_the_one_the_client_uses(
    tls_fake: FakeOllama, trusting: ssl.SSLContext
) -> None:
    assert tls_fake.url.startswith("https://")
    settings = OllamaSettings(host=tls_fake.url, model=MODEL, timeout_seconds=5)
    tls_fake.script(Answer("over TLS"))
    client = make_llm_client(settings, ssl_context=trusting)
    try:
        assert client.settings.ssl_context is trusting
        res = await client.chat(messages=[{"role": "user", "content": "x"}])
    finally:
        await client.aclose()
    assert res.content == "over TLS"
    # Without it the client verifies against the public CAs, and the fake is not one.
    untrusting = OllamaLLMClient(settings)
    try:
        with pytest.raises(LLMUnreachableError):
            await untrusting.chat(messages=[{"role": "user", "content": "x"}])
    finally:
        await untrusting.aclose()
    assert len(tls_fake.chats) == 1


async def test_settings_carry_the_context_too(
    tls_fake: FakeOllama, trusting: ssl.SSLContext
) -> None:
    settings = OllamaSettings(host=tls_fake.url, model=MODEL, ssl_context=trusting)
    assert settings == OllamaSettings(host=tls_fake.url, model=MODEL)  # not a setting to compare
    client = make_llm_client(settings)
    try:
        res = await client.chat(messages=[{"role": "user", "content": "x"}])
    finally:
        await client.aclose()
    assert res.content == "ok"


async def test_model_check_and_listing_use_the_context(
    tls_fake: FakeOllama, trusting: ssl.SSLContext
) -> None:
    check = await check_model(tls_fake.url, MODEL, ssl_context=trusting, timeout_seconds=5)
    assert (check.reachable, check.error) == (True, None)
    assert MODEL in (await list_models(tls_fake.url, ssl_context=trusting) or ())
    refused = await check_model(tls_fake.url, MODEL, timeout_seconds=5)
    assert (refused.reachable, refused.error) == (False, "cannot_connect")
    assert await list_models(tls_fake.url, timeout_seconds=5) is None


async def test_making_a_client_with_a_context_loads_no_certificates(
    fake: FakeOllama, loads: list[str]
) -> None:
    context = ssl.create_default_context()  # the host's, loaded once at its start
    loads.clear()
    settings = OllamaSettings(host=fake.url, model=MODEL)
    client = make_llm_client(settings, ssl_context=context)
    await client.chat(messages=[{"role": "user", "content": "x"}])
    await client.aclose()
    assert (await check_model(fake.url, MODEL, ssl_context=context)).error is None
    assert MODEL in (await list_models(fake.url, ssl_context=context) or ())
    assert loads == []
    # Without a context none either: the calls go over aiohttp, whose default context
    # was made when aiohttp was imported.
    plain = OllamaLLMClient(settings)
    await plain.chat(messages=[{"role": "user", "content": "x"}])
    await plain.aclose()
    assert (await check_model(fake.url, MODEL)).error is None
    assert MODEL in (await list_models(fake.url) or ())
    assert loads == []
    # The probe sees a load when there is one.
    ssl.create_default_context()
    assert loads
