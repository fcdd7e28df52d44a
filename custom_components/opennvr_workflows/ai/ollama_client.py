"""The SDK's ``LLMClient`` for Ollama's chat, sent over aiohttp.

Home Assistant's own Ollama integration uses the ``ollama`` package, so this integration
reads Ollama's replies with that package's ``ChatResponse`` and its errors as its
``ResponseError``, and finds the server from the address as the package does. The request
itself goes over aiohttp, on the session the host hands in (Home Assistant's shared one,
as Home Assistant asks of integrations), not through the package's ``httpx`` client: a
chat cost about 1 ms more of the event loop that way, most of it in ``httpx``'s and
``httpcore``'s layers (the Look's overhead, model excluded, is measured per part by
``scripts/bench_ha.py``). The behaviour matches the SDK's client where it matters to the AI
step:

* ``format`` carries the decision's JSON schema (constrained decoding), ``images`` ride on
  the user message as base64, ``tools`` are function definitions, and the options are
  ``temperature``, ``num_predict`` (the protocol's ``max_tokens``) and ``num_ctx``;
  ``keep_alive`` keeps the model resident and ``think=False`` switches reasoning off.
* A TLS context in the settings is used for the request; otherwise the session's own
  (Home Assistant's shared session carries Home Assistant's, loaded once at its start).
  Making a client loads no certificates, which would block the event loop.
* Every failure is an ``LLMError`` subclass whose text is the diagnosis: unreachable,
  timed out, an HTTP error with Ollama's message, or a reply that is not a chat reply.
  Content that is not the JSON the schema asked for is NOT an error here: the SDK reads it
  with ``ChatResult.json()`` and decides ``invalid_output``, which is the honest reason.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import ssl
import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Final

import aiohttp
import httpx
import orjson
from opennvr_app_sdk.agent import (
    ChatResult,
    LLMError,
    LLMHTTPError,
    LLMOutputError,
    LLMTimeoutError,
    LLMUnreachableError,
    ToolCall,
)

if TYPE_CHECKING:
    import ollama  # imported where it is used: see .library

_LOGGER = logging.getLogger(__name__)

DEFAULT_TIMEOUT_SECONDS = 120.0
DEFAULT_NUM_CTX = 8192
#: Keep the model loaded between steps: a cold load costs more than the call itself.
DEFAULT_KEEP_ALIVE = "30m"
#: Where the package's client reads a bearer key for the server from, read here the same way.
_API_KEY_VARIABLE: Final = "OLLAMA_API_KEY"


@dataclass(frozen=True)
class OllamaSettings:
    """Where the model is and how to call it; built from the config entry by the host.

    ``ssl_context`` is the TLS context for an ``https`` server and the reason no
    certificates are loaded when a client is made: pass one that is already loaded (Home
    Assistant's ``get_default_context()``). None lets ``httpx`` build its own, which reads
    its CA bundle from disk: fine in a script, a blocking call on an event loop."""

    host: str
    model: str
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
    num_ctx: int = DEFAULT_NUM_CTX
    keep_alive: str | float = DEFAULT_KEEP_ALIVE
    #: False switches a reasoning model's thinking off; None sends nothing.
    think: bool | None = False
    ssl_context: ssl.SSLContext | None = field(default=None, compare=False, repr=False)


def async_client(
    host: str, timeout_seconds: float, ssl_context: ssl.SSLContext | None = None
) -> ollama.AsyncClient:
    """An ``ollama.AsyncClient`` for ``host``; with ``ssl_context`` it is ``httpx``'s
    ``verify``, so making the client loads no certificates. On the event loop, await
    :func:`.library.async_load_ollama` first."""
    import ollama

    if ssl_context is None:
        return ollama.AsyncClient(host=host, timeout=timeout_seconds)
    return ollama.AsyncClient(host=host, timeout=timeout_seconds, verify=ssl_context)


class OllamaLLMClient:
    """One model on one Ollama server, speaking the SDK's ``LLMClient`` protocol.

    ``session`` is the aiohttp session to send on (the host passes Home Assistant's shared
    one, which this client never closes); without one, a session of its own is made at the
    first chat and closed by :meth:`aclose`."""

    def __init__(self, settings: OllamaSettings, session: aiohttp.ClientSession | None = None):
        from ollama._client import _parse_host  # the package's reading of an address

        self.settings = settings
        self.model = settings.model
        self._session = session
        self._owns_session = session is None
        self._url = f"{_parse_host(settings.host)}/api/chat"
        self._headers = _request_headers()
        # As the package's client: the timeout bounds connecting and each wait for data,
        # so a long generation is bounded by the wait for the reply's first byte.
        self._timeout = aiohttp.ClientTimeout(
            total=None,
            sock_connect=settings.timeout_seconds,
            sock_read=settings.timeout_seconds,
        )
        self._ssl: ssl.SSLContext | bool = (
            settings.ssl_context if settings.ssl_context is not None else True
        )
        self._think = settings.think

    async def aclose(self) -> None:
        """Close the session this client opened (never one handed in)."""
        if self._owns_session and self._session is not None:
            await self._session.close()
            self._session = None

    async def chat(
        self,
        *,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        format: dict[str, Any] | None = None,
        temperature: float = 0.2,
        max_tokens: int = 256,
    ) -> ChatResult:
        """One chat turn; see ``opennvr_app_sdk.agent.LLMClient``."""
        options = {
            "temperature": temperature,
            "num_predict": max_tokens,
            "num_ctx": self.settings.num_ctx,
        }
        t0 = time.perf_counter()
        try:
            response = await self._chat(_ollama_messages(messages), tools, format, options)
        except LLMError:
            raise
        except Exception as err:  # never let a transport detail escape as anything else
            raise _as_llm_error(err, self.settings) from err
        message = response.message.model_dump(exclude_none=True, mode="json")
        message.setdefault("role", "assistant")
        message["content"] = message.get("content") or ""
        return ChatResult(
            content=message["content"],
            tool_calls=_tool_calls(message.get("tool_calls")),
            message=message,
            model=str(response.model or self.model),
            prompt_tokens=response.prompt_eval_count,
            completion_tokens=response.eval_count,
            ms=int((time.perf_counter() - t0) * 1000),
        )

    async def _chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        format_: dict[str, Any] | None,
        options: dict[str, Any],
    ) -> ollama.ChatResponse:
        import ollama  # loaded with the client (see .library)

        request: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "options": options,
            "keep_alive": self.settings.keep_alive,
            "stream": False,
        }
        if tools:
            request["tools"] = tools
        if format_ is not None:
            request["format"] = format_
        if self._think is not None:
            request["think"] = self._think
        try:
            return await self._post(request)
        except ollama.ResponseError as err:
            # Some builds reject the think switch on models without it. Retry once without
            # it, and remember, but only when that is what the error is about.
            if "think" in request and err.status_code == 400 and "think" in str(err).lower():
                _LOGGER.debug(
                    "model %s refused think=%s; retrying without", self.model, self._think
                )
                self._think = None
                request.pop("think")
                return await self._post(request)
            raise

    async def _post(self, request: dict[str, Any]) -> ollama.ChatResponse:
        """``request`` to ``/api/chat``: Ollama's reply, or its ``ResponseError`` for an
        HTTP error status (with the message Ollama gave), as the package's client does."""
        import ollama

        session = self._session
        if session is None:
            session = self._session = aiohttp.ClientSession()
        async with session.post(
            self._url,
            data=orjson.dumps(request),
            headers=self._headers,
            timeout=self._timeout,
            ssl=self._ssl,
        ) as reply:
            body = await reply.read()
            status = reply.status
        if status >= 400:
            raise ollama.ResponseError(body.decode("utf-8", "replace"), status)
        return ollama.ChatResponse.model_validate_json(body)


def make_llm_client(
    settings: OllamaSettings,
    *,
    ssl_context: ssl.SSLContext | None = None,
    session: aiohttp.ClientSession | None = None,
) -> OllamaLLMClient:
    """The LLM client an AI step runs on, from the integration's model settings, sending
    on ``session`` when given (see :class:`OllamaLLMClient`). ``ssl_context``, when given,
    replaces the settings' own (see :class:`OllamaSettings`)."""
    if ssl_context is not None:
        settings = replace(settings, ssl_context=ssl_context)
    return OllamaLLMClient(settings, session)


def _request_headers() -> dict[str, str]:
    """The headers the package's client sends with a request, but its ``User-Agent``
    (the session's own names Home Assistant): JSON both ways, and a bearer key from
    ``OLLAMA_API_KEY`` when that is set, for a server that asks for one."""
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    api_key = os.environ.get(_API_KEY_VARIABLE)
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    return headers


def _ollama_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The SDK's history in Ollama's native form, without touching the SDK's own list
    (it is the suspended state): a tool result names its tool as ``tool_name``."""
    out = []
    for m in messages:
        if m.get("role") == "tool":
            out.append(
                {
                    "role": "tool",
                    "tool_name": m.get("name") or "",
                    "content": m.get("content") or "",
                }
            )
        else:
            copy = {k: v for k, v in m.items() if k not in ("tool_call_id", "name")}
            if copy.get("images"):
                copy["images"] = [_base64(i) for i in copy["images"]]
            out.append(copy)
    return out


def _base64(image: str | bytes) -> str:
    """A picture as the base64 text Ollama reads (the SDK sends text already)."""
    return image if isinstance(image, str) else base64.b64encode(image).decode("ascii")


def _tool_calls(raw: Any) -> list[ToolCall]:
    calls: list[ToolCall] = []
    for i, call in enumerate(raw or []):
        func = call.get("function") or {}
        args = func.get("arguments")
        calls.append(
            ToolCall(
                name=str(func.get("name") or "").strip(),
                arguments=dict(args) if isinstance(args, dict) else None,
                raw_arguments=args,
                id=str(call.get("id") or f"call-{i}"),
            )
        )
    return calls


def _as_llm_error(err: Exception, settings: OllamaSettings) -> LLMError:
    """One transport failure as the SDK's error kinds, with a message worth showing."""
    import ollama
    import pydantic

    where = f"Ollama at {settings.host} (model {settings.model!r})"
    if isinstance(err, ollama.ResponseError):
        return LLMHTTPError(
            f"{where} answered HTTP {err.status_code}: {err.error}", status=err.status_code
        )
    # The chat's errors are aiohttp's; the package's client (listing and checking models)
    # raises httpx's. A timeout first: aiohttp's are connection errors too.
    if isinstance(err, (TimeoutError, httpx.TimeoutException)):
        return LLMTimeoutError(
            f"{where} timed out after {settings.timeout_seconds:g}s ({type(err).__name__})"
        )
    if isinstance(err, aiohttp.InvalidURL):
        return LLMError(f"{where}: the address is not one to send to: {err}")
    if isinstance(
        err,
        (
            ConnectionError,
            httpx.TransportError,
            aiohttp.ClientConnectionError,
            aiohttp.ClientPayloadError,
        ),
    ):
        return LLMUnreachableError(
            f"{where} is unreachable ({type(err).__name__}): is Ollama running and "
            "reachable from Home Assistant?"
        )
    if isinstance(err, (json.JSONDecodeError, pydantic.ValidationError)):
        return LLMOutputError(
            f"{where} sent a reply that is not a chat reply: {str(err).splitlines()[0][:200]}"
        )
    if isinstance(err, ollama.RequestError):
        return LLMError(f"{where}: the request was refused before sending: {err.error}")
    return LLMError(f"{where}: {type(err).__name__}: {err}")
