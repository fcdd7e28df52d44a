"""The SDK's ``LLMClient`` on the ``ollama`` package's ``AsyncClient``.

Home Assistant's own Ollama integration uses the ``ollama`` package, so this integration
does too, rather than the SDK's httpx-based ``OllamaChat``: one Ollama library per install.
The behaviour matches the SDK's client where it matters to the AI step:

* ``format`` carries the decision's JSON schema (constrained decoding), ``images`` ride on
  the user message as base64, ``tools`` are function definitions, and the options are
  ``temperature``, ``num_predict`` (the protocol's ``max_tokens``) and ``num_ctx``;
  ``keep_alive`` keeps the model resident and ``think=False`` switches reasoning off.
* The host hands in the TLS context to use (Home Assistant's shared one): creating a client
  then loads no certificates, which would block the event loop (``httpx`` reads its CA
  bundle from disk for every client made without one).
* Every failure is an ``LLMError`` subclass whose text is the diagnosis: unreachable,
  timed out, an HTTP error with Ollama's message, or a reply that is not a chat reply.
  Content that is not the JSON the schema asked for is NOT an error here: the SDK reads it
  with ``ChatResult.json()`` and decides ``invalid_output``, which is the honest reason.
"""

from __future__ import annotations

import json
import logging
import ssl
import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import httpx
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

    ``client`` may be passed in (tests, or a host that shares one); otherwise one
    ``ollama.AsyncClient`` is made here and closed by :meth:`aclose`."""

    def __init__(self, settings: OllamaSettings, client: ollama.AsyncClient | None = None):
        self.settings = settings
        self.model = settings.model
        self._owns_client = client is None
        self._client = client or async_client(
            settings.host, settings.timeout_seconds, settings.ssl_context
        )
        self._think = settings.think

    async def aclose(self) -> None:
        """Close the connection pool this client opened."""
        if self._owns_client:
            await self._client.close()  # type: ignore[no-untyped-call]  # untyped upstream

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

        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "tools": tools or None,
            "format": format_,
            "options": options,
            "keep_alive": self.settings.keep_alive,
            "stream": False,
        }
        if self._think is not None:
            kwargs["think"] = self._think
        try:
            response: ollama.ChatResponse = await self._client.chat(**kwargs)
            return response
        except ollama.ResponseError as err:
            # Some builds reject the think switch on models without it. Retry once without
            # it, and remember, but only when that is what the error is about.
            if "think" in kwargs and err.status_code == 400 and "think" in str(err).lower():
                _LOGGER.debug(
                    "model %s refused think=%s; retrying without", self.model, self._think
                )
                self._think = None
                kwargs.pop("think")
                retried: ollama.ChatResponse = await self._client.chat(**kwargs)
                return retried
            raise


def make_llm_client(
    settings: OllamaSettings, *, ssl_context: ssl.SSLContext | None = None
) -> OllamaLLMClient:
    """The LLM client an AI step runs on, from the integration's model settings.
    ``ssl_context``, when given, replaces the settings' own (see :class:`OllamaSettings`)."""
    if ssl_context is not None:
        settings = replace(settings, ssl_context=ssl_context)
    return OllamaLLMClient(settings)


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
            out.append({k: v for k, v in m.items() if k not in ("tool_call_id", "name")})
    return out


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
    if isinstance(err, httpx.TimeoutException):
        return LLMTimeoutError(
            f"{where} timed out after {settings.timeout_seconds:g}s ({type(err).__name__})"
        )
    if isinstance(err, (ConnectionError, httpx.TransportError)):
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
