"""Ollama's HTTP API, the few calls this integration makes, over aiohttp.

The integration asks an Ollama server for five things: a chat (``/api/chat``), its version,
its models (``/api/tags``), what a model can do (``/api/show``) and embeddings
(``/api/embed``). Each is one JSON request and one JSON reply, which aiohttp (Home
Assistant's own HTTP client) and ``orjson`` (its JSON library) carry. The ``ollama``
package was the client before: it brings ``pydantic`` and its models, about 9.5 MB of
Home Assistant's memory with the AI on (measured with ``/proc``'s resident set after Home
Assistant's own components), and sends through ``httpx``, about 1 ms of the event loop a
chat more than aiohttp (``README.md``, *The model's chat*). The package stays the reference
in the tests: ``tests/ai/test_ollama_api.py`` reads addresses both ways, and the Ollama
fake is checked against the package's client.

:class:`OllamaApi` sends on the session it is handed (Home Assistant's shared one, never
closed here) or on one of its own, made at the first call and closed by
:meth:`OllamaApi.aclose`. A TLS context given is used for each request; otherwise the
session's own (Home Assistant's shared session carries Home Assistant's). Making one
loads no certificates. An HTTP error status is :class:`OllamaHTTPError` with Ollama's
own message; a reply that is not a JSON object is :class:`OllamaReplyError`; transport
failures are aiohttp's own exceptions (and ``TimeoutError``), for each caller to say in
its own words.
"""

from __future__ import annotations

import ipaddress
import os
import ssl
from typing import Any, Final
from urllib.parse import urlsplit

import aiohttp
import orjson

#: The port Ollama listens on when an address names none.
DEFAULT_PORT: Final = 11434
#: Where Ollama's own clients read a bearer key for the server from; read here the same way.
API_KEY_VARIABLE: Final = "OLLAMA_API_KEY"
_SCHEME_PORTS: Final = {"http": 80, "https": 443}


class OllamaHTTPError(Exception):
    """Ollama answered with an HTTP error status; ``error`` is its own message (the reply's
    ``error`` field, or the reply's text)."""

    def __init__(self, status: int, body: bytes) -> None:
        text = body.decode("utf-8", "replace")
        try:
            data = orjson.loads(body)
        except orjson.JSONDecodeError:
            data = None
        error = data.get("error") if isinstance(data, dict) else None
        self.status = status
        self.error = str(error) if error is not None else text
        super().__init__(f"{self.error} (HTTP {status})")


class OllamaReplyError(ValueError):
    """A reply that is not what the call answers: not JSON, or not of the call's shape."""


def base_url(host: str | None) -> str:
    """The server's base URL from an address as people write it, read as Ollama's own
    clients read it: ``gpu-box`` and ``gpu-box:11434`` are ``http://gpu-box:11434``; a
    scheme without a port takes the scheme's (``https://gpu-box`` is port 443); a path is
    kept without its slashes; no host is ``127.0.0.1``. Credentials in the address are
    not kept (Ollama's clients drop them too)."""
    written = (host or "").strip()
    scheme, sep, rest = written.partition("://")
    if not sep:
        scheme, rest, port = "http", written, DEFAULT_PORT
    else:
        scheme = scheme.lower()
        port = _SCHEME_PORTS.get(scheme, DEFAULT_PORT)
    split = urlsplit(f"{scheme}://{rest}")
    name = split.hostname or "127.0.0.1"
    port = split.port or port
    try:
        if ipaddress.ip_address(name).version == 6:
            name = f"[{name}]"
    except ValueError:
        pass  # a name, not an address
    path = split.path.strip("/")
    return f"{scheme}://{name}:{port}" + (f"/{path}" if path else "")


def request_headers() -> dict[str, str]:
    """JSON both ways, and a bearer key from ``OLLAMA_API_KEY`` when that is set, for a
    server that asks for one (as Ollama's own clients send it)."""
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    api_key = os.environ.get(API_KEY_VARIABLE)
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    return headers


class OllamaApi:
    """One Ollama server: JSON calls to it, on a session handed in or one of its own."""

    def __init__(
        self,
        host: str,
        *,
        timeout_seconds: float,
        ssl_context: ssl.SSLContext | None = None,
        session: aiohttp.ClientSession | None = None,
    ) -> None:
        self.url = base_url(host)
        self._session = session
        self._owns_session = session is None
        self._headers = request_headers()
        # As Ollama's own clients: the timeout bounds connecting and each wait for data,
        # so a long generation is bounded by the wait for its reply's first byte.
        self._timeout = aiohttp.ClientTimeout(
            total=None, sock_connect=timeout_seconds, sock_read=timeout_seconds
        )
        self._ssl: ssl.SSLContext | bool = ssl_context if ssl_context is not None else True

    async def aclose(self) -> None:
        """Close the session this client opened (never one handed in)."""
        if self._owns_session and self._session is not None:
            await self._session.close()
            self._session = None

    async def get(self, path: str) -> dict[str, Any]:
        """``GET path``: the reply's JSON object."""
        return await self._call("GET", path, None)

    async def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """``POST path`` with ``body`` as JSON: the reply's JSON object."""
        return await self._call("POST", path, orjson.dumps(body))

    async def _call(self, method: str, path: str, data: bytes | None) -> dict[str, Any]:
        session = self._session
        if session is None:
            session = self._session = aiohttp.ClientSession()
        async with session.request(
            method,
            self.url + path,
            data=data,
            headers=self._headers,
            timeout=self._timeout,
            ssl=self._ssl,
        ) as reply:
            body = await reply.read()
            status = reply.status
        if status >= 400:
            raise OllamaHTTPError(status, body)
        try:
            answer = orjson.loads(body)
        except orjson.JSONDecodeError as err:
            raise OllamaReplyError(f"{path} answered with what is not JSON: {err}") from err
        if not isinstance(answer, dict):
            raise OllamaReplyError(f"{path} answered with JSON that is not an object")
        return answer
