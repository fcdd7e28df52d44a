"""The SDK's ``LLMClient`` for Ollama's chat (``/api/chat``).

The chat goes through :class:`.ollama_api.OllamaApi` (aiohttp, on Home Assistant's shared
session in the host; see that module for why not the ``ollama`` package). The behaviour
matches the SDK's client where it matters to the AI step:

* ``format`` carries the decision's JSON schema (constrained decoding), ``images`` ride on
  the user message as base64, ``tools`` are function definitions, and the options are
  ``temperature``, ``num_predict`` (the protocol's ``max_tokens``) and ``num_ctx``;
  ``keep_alive`` keeps the model resident and ``think=False`` switches reasoning off.
* Every failure is an ``LLMError`` subclass whose text is the diagnosis: unreachable,
  timed out, an HTTP error with Ollama's message, or a reply that is not a chat reply.
  Content that is not the JSON the schema asked for is NOT an error here: the SDK reads it
  with ``ChatResult.json()`` and decides ``invalid_output``, which is the honest reason.
"""

from __future__ import annotations

import base64
import logging
import ssl
import time
from dataclasses import dataclass, field, replace
from typing import Any

import aiohttp
from opennvr_app_sdk.agent import (
    ChatResult,
    LLMError,
    LLMHTTPError,
    LLMOutputError,
    LLMTimeoutError,
    LLMUnreachableError,
    ToolCall,
)

from .ollama_api import OllamaApi, OllamaHTTPError, OllamaReplyError

_LOGGER = logging.getLogger(__name__)

DEFAULT_TIMEOUT_SECONDS = 120.0
DEFAULT_NUM_CTX = 8192
#: Keep the model loaded between steps: a cold load costs more than the call itself.
DEFAULT_KEEP_ALIVE = "30m"


@dataclass(frozen=True)
class OllamaSettings:
    """Where the model is and how to call it; built from the config entry by the host.

    ``ssl_context``, when given, is the TLS context for an ``https`` server (a script's or
    a test's own); without it the session's own is used."""

    host: str
    model: str
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
    num_ctx: int = DEFAULT_NUM_CTX
    keep_alive: str | float = DEFAULT_KEEP_ALIVE
    #: False switches a reasoning model's thinking off; None sends nothing.
    think: bool | None = False
    ssl_context: ssl.SSLContext | None = field(default=None, compare=False, repr=False)


class OllamaLLMClient:
    """One model on one Ollama server, speaking the SDK's ``LLMClient`` protocol.

    ``session`` is the aiohttp session to send on (the host passes Home Assistant's shared
    one, which this client never closes); without one, a session of its own is made at the
    first chat and closed by :meth:`aclose`."""

    def __init__(self, settings: OllamaSettings, session: aiohttp.ClientSession | None = None):
        self.settings = settings
        self.model = settings.model
        self._api = OllamaApi(
            settings.host,
            timeout_seconds=settings.timeout_seconds,
            ssl_context=settings.ssl_context,
            session=session,
        )
        self._think = settings.think

    async def aclose(self) -> None:
        """Close the session this client opened (never one handed in)."""
        await self._api.aclose()

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
        request: dict[str, Any] = {
            "model": self.model,
            "messages": _ollama_messages(messages),
            "options": {
                "temperature": temperature,
                "num_predict": max_tokens,
                "num_ctx": self.settings.num_ctx,
            },
            "keep_alive": self.settings.keep_alive,
            "stream": False,
        }
        if tools:
            request["tools"] = tools
        if format is not None:
            request["format"] = format
        t0 = time.perf_counter()
        try:
            reply = await self._chat(request)
            message = _reply_message(reply)
        except LLMError:
            raise
        except Exception as err:  # never let a transport detail escape as anything else
            raise as_llm_error(err, self.settings) from err
        return ChatResult(
            content=message["content"],
            tool_calls=_tool_calls(message.get("tool_calls")),
            message=message,
            model=str(reply.get("model") or self.model),
            prompt_tokens=_count(reply.get("prompt_eval_count")),
            completion_tokens=_count(reply.get("eval_count")),
            ms=int((time.perf_counter() - t0) * 1000),
        )

    async def _chat(self, request: dict[str, Any]) -> dict[str, Any]:
        if self._think is not None:
            request["think"] = self._think
        try:
            return await self._api.post("/api/chat", request)
        except OllamaHTTPError as err:
            # Some builds reject the think switch on models without it. Retry once without
            # it, and remember, but only when that is what the error is about.
            if "think" in request and err.status == 400 and "think" in err.error.lower():
                _LOGGER.debug(
                    "model %s refused think=%s; retrying without", self.model, self._think
                )
                self._think = None
                request.pop("think")
                return await self._api.post("/api/chat", request)
            raise


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


def _reply_message(reply: dict[str, Any]) -> dict[str, Any]:
    """The assistant's message of a chat reply, its empty fields left out, its content
    text (empty when there is none)."""
    message = reply.get("message")
    if not isinstance(message, dict):
        raise OllamaReplyError("the reply carries no message")
    out = {k: v for k, v in message.items() if v is not None}
    out.setdefault("role", "assistant")
    content = out.get("content") or ""
    if not isinstance(content, str):
        raise OllamaReplyError("the message's content is not text")
    out["content"] = content
    calls = out.get("tool_calls")
    if calls is not None and not (
        isinstance(calls, list) and all(isinstance(c, dict) for c in calls)
    ):
        raise OllamaReplyError("the message's tool calls are not a list of calls")
    return out


def _count(value: Any) -> int | None:
    """A token count as Ollama reports it, or None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


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


def as_llm_error(err: Exception, settings: OllamaSettings) -> LLMError:
    """One failure to reach a model, as the SDK's error kinds, with a message worth
    showing."""
    where = f"Ollama at {settings.host} (model {settings.model!r})"
    if isinstance(err, OllamaHTTPError):
        return LLMHTTPError(f"{where} answered HTTP {err.status}: {err.error}", status=err.status)
    # A timeout first: aiohttp's are connection errors too.
    if isinstance(err, TimeoutError):
        return LLMTimeoutError(
            f"{where} timed out after {settings.timeout_seconds:g}s ({type(err).__name__})"
        )
    if isinstance(err, aiohttp.InvalidURL):
        return LLMError(f"{where}: the address is not one to send to: {err}")
    if isinstance(
        err, (ConnectionError, aiohttp.ClientConnectionError, aiohttp.ClientPayloadError)
    ):
        return LLMUnreachableError(
            f"{where} is unreachable ({type(err).__name__}): is Ollama running and "
            "reachable from Home Assistant?"
        )
    if isinstance(err, OllamaReplyError):
        return LLMOutputError(
            f"{where} sent a reply that is not a chat reply: {str(err).splitlines()[0][:200]}"
        )
    return LLMError(f"{where}: {type(err).__name__}: {err}")
