"""The LLMClient for Ollama's chat, against the fake Ollama over a real loopback socket."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable

import aiohttp
import pytest
from opennvr_app_sdk.agent import (
    DecisionSpec,
    LLMClient,
    LLMError,
    LLMHTTPError,
    LLMOutputError,
    LLMTimeoutError,
    LLMUnreachableError,
)
from yarl import URL

from custom_components.opennvr_workflows.ai import OllamaLLMClient, OllamaSettings, make_llm_client
from tests.ai.conftest import MODEL
from tests.ai.fake_nvr import jpeg
from tests.fakes.ollama_server import (
    Answer,
    BrokenBody,
    FakeOllama,
    FromSchema,
    Hangup,
    HttpError,
    Slow,
    ToolCalls,
)

SPEC = DecisionSpec(options=("delivery", "visitor"), fields={"company": ("dhl", "ups", "none")})


def test_is_an_sdk_llm_client(llm: OllamaLLMClient) -> None:
    assert isinstance(llm, LLMClient)


async def test_chat_sends_schema_images_and_options(fake: FakeOllama, llm: OllamaLLMClient) -> None:
    fake.script(FromSchema({"decision": "delivery", "company": "dhl", "reason": "a van"}))
    picture = base64.b64encode(jpeg((64, 48))).decode()
    res = await llm.chat(
        messages=[
            {"role": "system", "content": "rules"},
            {"role": "user", "content": "who?", "images": [picture]},
        ],
        format=SPEC.schema(),
        temperature=0.3,
        max_tokens=99,
    )

    sent = fake.chats[-1]
    assert sent.format == SPEC.schema()
    assert sent.images == [base64.b64decode(picture)]
    assert sent.body["stream"] is False
    assert sent.body["think"] is False
    assert sent.body["keep_alive"] == "30m"
    assert sent.options["temperature"] == pytest.approx(0.3)
    assert sent.options["num_predict"] == 99
    assert sent.options["num_ctx"] == 8192
    assert sent.conforms is True
    assert res.json()["decision"] == "delivery"
    assert SPEC.read(res.json()) == ("delivery", {"company": "dhl"}, "a van", 0.9)
    assert res.prompt_tokens == 120
    assert res.completion_tokens == 24
    assert res.model == MODEL


async def test_tool_calls_round_trip_in_ollamas_native_form(
    fake: FakeOllama, llm: OllamaLLMClient
) -> None:
    fake.script(ToolCalls([("describe_camera", {"camera_id": "gate"})]), Answer("done"))
    tools = [
        {
            "type": "function",
            "function": {
                "name": "describe_camera",
                "description": "d",
                "parameters": {
                    "type": "object",
                    "properties": {"camera_id": {"type": "string"}},
                    "required": ["camera_id"],
                },
            },
        }
    ]
    first = await llm.chat(messages=[{"role": "user", "content": "go"}], tools=tools)
    assert [(c.name, c.arguments) for c in first.tool_calls] == [
        ("describe_camera", {"camera_id": "gate"})
    ]
    assert fake.chats[-1].tool_names == ["describe_camera"]
    # The SDK appends the assistant message and an OpenAI-style tool message.
    history = [
        {"role": "user", "content": "go"},
        first.message,
        {
            "role": "tool",
            "tool_call_id": first.tool_calls[0].id,
            "name": "describe_camera",
            "content": "a person",
        },
    ]
    json.dumps(history)  # the history is the suspended state: plain JSON
    await llm.chat(messages=history, tools=tools)
    tool_turn = fake.chats[-1].messages[-1]
    assert tool_turn == {"role": "tool", "tool_name": "describe_camera", "content": "a person"}
    assert history[-1]["tool_call_id"]  # the SDK's own list is untouched


async def test_unparsable_content_is_left_for_the_sdk_to_judge(
    fake: FakeOllama, llm: OllamaLLMClient
) -> None:
    fake.script(Answer("{not json"))
    res = await llm.chat(messages=[{"role": "user", "content": "x"}], format=SPEC.schema())
    assert fake.chats[-1].conforms is False
    with pytest.raises(LLMOutputError):
        res.json()


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        (HttpError(500, "llama runner process has terminated"), LLMHTTPError),
        (HttpError(503, "server busy"), LLMHTTPError),
        (BrokenBody(), LLMOutputError),
        (Hangup(), LLMUnreachableError),
    ],
)
async def test_transport_failures_are_llm_errors(
    fake: FakeOllama, llm: OllamaLLMClient, reply: object, error: type[LLMError]
) -> None:
    fake.script(reply)  # type: ignore[arg-type]
    with pytest.raises(error) as info:
        await llm.chat(messages=[{"role": "user", "content": "x"}])
    assert MODEL in str(info.value)


async def test_http_error_carries_status_and_ollamas_message(
    fake: FakeOllama, llm: OllamaLLMClient
) -> None:
    fake.script(HttpError(500, "out of memory"))
    with pytest.raises(LLMHTTPError) as info:
        await llm.chat(messages=[{"role": "user", "content": "x"}])
    assert info.value.status == 500
    assert "out of memory" in str(info.value)


async def test_unknown_model_is_an_http_error_naming_it(fake: FakeOllama) -> None:
    client = OllamaLLMClient(OllamaSettings(host=fake.url, model="nope:1b"))
    try:
        with pytest.raises(LLMHTTPError) as info:
            await client.chat(messages=[{"role": "user", "content": "x"}])
    finally:
        await client.aclose()
    assert info.value.status == 404
    assert "not found" in str(info.value)


async def test_timeout_is_llm_timeout(fake: FakeOllama) -> None:
    client = OllamaLLMClient(OllamaSettings(host=fake.url, model=MODEL, timeout_seconds=0.2))
    fake.script(Slow(5.0, Answer("late")))
    try:
        with pytest.raises(LLMTimeoutError):
            await client.chat(messages=[{"role": "user", "content": "x"}])
    finally:
        await client.aclose()


async def test_server_down_is_unreachable() -> None:
    fake = FakeOllama()
    await fake.start()
    url = fake.url
    await fake.stop()
    client = OllamaLLMClient(OllamaSettings(host=url, model=MODEL, timeout_seconds=2))
    try:
        with pytest.raises(LLMUnreachableError) as info:
            await client.chat(messages=[{"role": "user", "content": "x"}])
    finally:
        await client.aclose()
    assert "unreachable" in str(info.value)


async def test_think_switch_is_dropped_once_when_the_model_refuses_it(fake: FakeOllama) -> None:
    client = OllamaLLMClient(OllamaSettings(host=fake.url, model=MODEL, think=True))
    try:
        res = await client.chat(messages=[{"role": "user", "content": "x"}])
        await client.chat(messages=[{"role": "user", "content": "y"}])
    finally:
        await client.aclose()
    assert res.content == "ok"
    assert [c.body.get("think") for c in fake.chats] == [True, None, None]


async def test_pictures_to_a_model_without_vision_are_refused(fake: FakeOllama) -> None:
    client = OllamaLLMClient(OllamaSettings(host=fake.url, model="gemma3:1b"))
    picture = base64.b64encode(jpeg((32, 32))).decode()
    try:
        with pytest.raises(LLMHTTPError):
            await client.chat(messages=[{"role": "user", "content": "x", "images": [picture]}])
    finally:
        await client.aclose()


def traced_session(
    record: Callable[[aiohttp.TraceRequestStartParams], None],
) -> aiohttp.ClientSession:
    """A session that hands each request it starts to ``record``."""

    async def on_start(_: object, __: object, params: aiohttp.TraceRequestStartParams) -> None:
        record(params)

    trace = aiohttp.TraceConfig()
    trace.on_request_start.append(on_start)
    return aiohttp.ClientSession(trace_configs=[trace])


async def test_a_session_handed_in_carries_the_chat_and_stays_open(fake: FakeOllama) -> None:
    """The host hands in Home Assistant's shared session: the chat goes over it, and
    closing the client leaves it open for everyone else."""
    sent: list[str] = []
    async with traced_session(lambda p: sent.append(f"{p.method} {p.url.path}")) as session:
        client = make_llm_client(OllamaSettings(host=fake.url, model=MODEL), session=session)
        res = await client.chat(messages=[{"role": "user", "content": "x"}])
        await client.aclose()
        assert not session.closed
        assert (res.content, sent) == ("ok", ["POST /api/chat"])


async def test_a_client_without_a_session_closes_its_own(fake: FakeOllama) -> None:
    client = OllamaLLMClient(OllamaSettings(host=fake.url, model=MODEL))
    await client.chat(messages=[{"role": "user", "content": "x"}])
    own = client._api._session
    assert own is not None
    assert not own.closed
    await client.aclose()
    assert own.closed


@pytest.mark.parametrize("written", ["{host}:{port}", "http://{host}:{port}/"])
async def test_the_address_is_read_as_the_ollama_package_reads_it(
    fake: FakeOllama, written: str
) -> None:
    """A bare ``host:port`` (http, as the package assumes) and a trailing slash reach the
    same server as the full address."""
    url = URL(fake.url)
    client = OllamaLLMClient(
        OllamaSettings(host=written.format(host=url.host, port=url.port), model=MODEL)
    )
    try:
        res = await client.chat(messages=[{"role": "user", "content": "x"}])
    finally:
        await client.aclose()
    assert res.content == "ok"


async def test_a_bearer_key_in_the_environment_is_sent_as_the_package_sends_it(
    fake: FakeOllama, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str | None] = []
    async with traced_session(lambda p: seen.append(p.headers.get("Authorization"))) as session:
        settings = OllamaSettings(host=fake.url, model=MODEL)
        await OllamaLLMClient(settings, session).chat(messages=[{"role": "user", "content": "x"}])
        monkeypatch.setenv("OLLAMA_API_KEY", "k-123")
        await OllamaLLMClient(settings, session).chat(messages=[{"role": "user", "content": "y"}])
    assert seen == [None, "Bearer k-123"]


async def test_a_picture_given_as_bytes_is_sent_as_base64(
    fake: FakeOllama, llm: OllamaLLMClient
) -> None:
    picture = jpeg((16, 16))
    await llm.chat(messages=[{"role": "user", "content": "x", "images": [picture]}])
    assert fake.chats[-1].images == [picture]
