"""Record a live run's model answers, and replay them with no model: a small Ollama endpoint.

The harness always talks to Ollama through the real client (``ai.OllamaLLMClient``) and,
for ``evals record`` and ``evals run --replay``, through this relay on loopback:

* **record**: each request goes on to the real Ollama; the answer is reduced to what a
  replay can give back (the content, or the tool calls by name and arguments, the token
  counts, or the HTTP error) and the client is sent exactly that. So the recorded run and
  every replay of it see the same answers byte for byte, and the follow-up requests (which
  carry those answers) have the same keys.
* **replay**: each chat request is answered from the transcript by its key, recorded answers
  for one key in order (agreement draws ask the same thing several times). A request with
  no recorded answer gets HTTP 404 naming its key (a changed case, prompt or picture), never
  an invented answer; :attr:`Relay.misses` counts them for the report.

The transcript is the format of the repository's Ollama test fake
(``tests/fakes/ollama_server.py``: ``{"path", "key", "model", "reply"}`` entries, replies
of kind ``answer``, ``tool_calls`` or ``http_error``, the same request key), so that fake
can serve a recording too (``python -m tests.fakes.ollama_server --replay FILE``). The
harness does not import it: ``tests/`` is the test suite's, and a harness run on a
person's own hardware must not depend on it. The fake imports :func:`request_key` from
here instead, so the two cannot key a request differently.

A first entry with ``path: "#meta"`` says where and when the answers were recorded; the
fake skips it. ``/api/tags``, ``/api/show`` and ``/api/version`` answers are recorded as
they came (they name the models and their families, which the judge's default reads).
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict, deque
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

#: The transcript format this module writes (in the ``#meta`` entry).
FORMAT = "opennvr-evals-replay/1"
META = "#meta"
_PASSTHROUGH = ("/api/tags", "/api/version")
_DEFAULT_TOKENS = (120, 24)


def request_key(body: Mapping[str, Any]) -> str:
    """A stable key for a chat request: the model, the messages (images by digest), the
    schema and the tool names. Equal requests get equal keys across processes."""
    messages = []
    for m in body.get("messages") or []:
        msg = {k: v for k, v in m.items() if k != "images"}
        if m.get("images"):
            msg["images"] = [hashlib.sha256(str(i).encode()).hexdigest()[:16] for i in m["images"]]
        messages.append(msg)
    basis = {
        "model": body.get("model"),
        "messages": messages,
        "format": body.get("format"),
        "tools": sorted(
            str((t.get("function") or {}).get("name")) for t in body.get("tools") or []
        ),
    }
    return hashlib.sha256(json.dumps(basis, sort_keys=True, default=str).encode()).hexdigest()


class TranscriptError(ValueError):
    """A file that is not a transcript this harness wrote."""


def load_transcript(path: Path) -> list[dict[str, Any]]:
    """A transcript file's entries. Raises :class:`TranscriptError` naming what is wrong."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise TranscriptError(f"{path}: cannot read a transcript: {err}") from err
    if not isinstance(data, list) or not all(isinstance(e, dict) for e in data):
        raise TranscriptError(f"{path}: a transcript is a JSON list of entries")
    return data


def transcript_meta(entries: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The ``#meta`` entry (empty when the file has none)."""
    for entry in entries:
        if entry.get("path") == META:
            return dict(entry)
    return {}


def reply_of(status: int, body: Any) -> dict[str, Any]:
    """An upstream chat answer as the reply a replay gives: its content or tool calls and
    token counts, or the HTTP error with Ollama's message."""
    if status != 200 or not isinstance(body, dict) or not isinstance(body.get("message"), dict):
        error = body.get("error") if isinstance(body, dict) else None
        return {
            "kind": "http_error",
            "status": status if status != 200 else 502,
            "error": str(error or f"not a chat reply: {str(body)[:200]}"),
        }
    message = body["message"]
    tokens = {
        "prompt_tokens": int(body.get("prompt_eval_count") or 0),
        "completion_tokens": int(body.get("eval_count") or 0),
    }
    content = str(message.get("content") or "")
    calls = message.get("tool_calls") or []
    if calls:
        return {
            "kind": "tool_calls",
            "calls": [
                [
                    str((c.get("function") or {}).get("name") or ""),
                    (c.get("function") or {}).get("arguments"),
                ]
                for c in calls
            ],
            "content": content,
            **tokens,
        }
    return {"kind": "answer", "content": content, **tokens}


def render(reply: Mapping[str, Any], model: str) -> web.Response:
    """What the client is sent for ``reply``, the same in a recording and its replays."""
    kind = reply.get("kind")
    if kind == "http_error":
        return web.json_response({"error": reply.get("error")}, status=int(reply["status"]))
    message: dict[str, Any] = {"role": "assistant", "content": ""}
    if kind == "tool_calls":
        message["content"] = str(reply.get("content") or "")
        message["tool_calls"] = [
            {"function": {"name": name, "arguments": args}} for name, args in reply["calls"]
        ]
    else:
        content = reply.get("content")
        message["content"] = content if isinstance(content, str) else json.dumps(content)
    return web.json_response(
        {
            "model": model,
            "created_at": "1970-01-01T00:00:00Z",
            "message": message,
            "done": True,
            "done_reason": "stop",
            "prompt_eval_count": int(reply.get("prompt_tokens") or _DEFAULT_TOKENS[0]),
            "eval_count": int(reply.get("completion_tokens") or _DEFAULT_TOKENS[1]),
        }
    )


class Relay:
    """The loopback endpoint. ``Relay(upstream=URL)`` records; ``Relay(transcript=entries)``
    replays. ``async with Relay(...) as relay:`` serves on ``relay.url``."""

    def __init__(
        self,
        *,
        upstream: str | None = None,
        transcript: Iterable[Mapping[str, Any]] | None = None,
        upstream_timeout: float = 600.0,
    ) -> None:
        if (upstream is None) == (transcript is None):
            raise ValueError("a relay either records (upstream) or replays (transcript)")
        self.upstream = upstream.rstrip("/") if upstream else None
        self.entries: list[dict[str, Any]] = []
        self.misses: list[str] = []
        self._replies: dict[str, deque[dict[str, Any]]] = defaultdict(deque)
        self._fixed: dict[str, Any] = {}
        self.meta: dict[str, Any] = {}
        for entry in transcript or ():
            path = entry.get("path")
            if path == META:
                self.meta = dict(entry)
            elif path == "/api/chat" and isinstance(entry.get("reply"), dict):
                self._replies[str(entry.get("key"))].append(dict(entry["reply"]))
            elif isinstance(path, str) and "response" in entry:
                self._fixed[str(entry.get("key") or path)] = entry["response"]
        self._timeout = aiohttp.ClientTimeout(total=upstream_timeout)
        self._session: aiohttp.ClientSession | None = None
        self._runner: web.AppRunner | None = None
        self.port = 0

    @property
    def recording(self) -> bool:
        return self.upstream is not None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def __aenter__(self) -> Relay:
        app = web.Application(client_max_size=256 * 1024 * 1024)
        app.router.add_post("/api/chat", self._chat)
        app.router.add_post("/api/show", self._show)
        for path in _PASSTHROUGH:
            app.router.add_get(path, self._get)
        if self.recording:
            self._session = aiohttp.ClientSession(timeout=self._timeout)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert server is not None
        sockets: list[Any] = list(getattr(server, "sockets", None) or [])
        self.port = int(sockets[0].getsockname()[1])
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._session is not None:
            await self._session.close()
            self._session = None

    def transcript(self, **meta: Any) -> list[dict[str, Any]]:
        """What was recorded, with a ``#meta`` entry first (``meta`` added to it)."""
        head = {
            "path": META,
            "format": FORMAT,
            "recorded_from": self.upstream,
            "recorded_at": datetime.now(UTC).isoformat(timespec="seconds"),
            **meta,
        }
        return [head, *self.entries]

    def save(self, path: Path, **meta: Any) -> None:
        path.write_text(json.dumps(self.transcript(**meta), indent=1) + "\n", encoding="utf-8")

    # ── handlers ─────────────────────────────────────────────────────────────────────────

    async def _chat(self, request: web.Request) -> web.Response:
        try:
            body = json.loads(await request.text())
        except json.JSONDecodeError:
            return web.json_response({"error": "invalid JSON in request body"}, status=400)
        if not isinstance(body, dict):
            return web.json_response({"error": "a chat request is a JSON object"}, status=400)
        key = request_key(body)
        model = str(body.get("model") or "")
        if not self.recording:
            queue = self._replies.get(key)
            if not queue:
                self.misses.append(key)
                return web.json_response(
                    {"error": f"no recorded answer for request {key[:12]}"}, status=404
                )
            return render(queue.popleft(), model)
        status, answer = await self._forward("POST", "/api/chat", {**body, "stream": False})
        reply = reply_of(status, answer)
        self.entries.append({"path": "/api/chat", "key": key, "model": model, "reply": reply})
        return render(reply, model)

    async def _show(self, request: web.Request) -> web.Response:
        try:
            body = json.loads(await request.text())
        except json.JSONDecodeError:
            body = {}
        name = str((body or {}).get("model") or (body or {}).get("name") or "")
        return await self._fixed_answer("POST", "/api/show", f"/api/show {name}", body)

    async def _get(self, request: web.Request) -> web.Response:
        return await self._fixed_answer("GET", request.path, request.path, None)

    async def _fixed_answer(self, method: str, path: str, key: str, body: Any) -> web.Response:
        if not self.recording:
            if key not in self._fixed:
                return web.json_response({"error": f"not recorded: {key}"}, status=404)
            return web.json_response(self._fixed[key])
        status, answer = await self._forward(method, path, body)
        if status == 200:
            self.entries.append({"path": path, "key": key, "response": answer})
        return web.json_response(answer, status=status)

    async def _forward(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        """The upstream's status and JSON; a transport failure is a 502 with its words."""
        assert self._session is not None
        assert self.upstream is not None
        try:
            async with self._session.request(method, self.upstream + path, json=body) as resp:
                text = await resp.text()
                try:
                    return resp.status, json.loads(text)
                except json.JSONDecodeError:
                    return 502, {"error": f"Ollama sent a reply that is not JSON: {text[:200]}"}
        except (aiohttp.ClientError, TimeoutError) as err:
            return 502, {"error": f"Ollama at {self.upstream} did not answer: {err!r}"}
