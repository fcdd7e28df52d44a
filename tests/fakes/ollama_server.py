"""An Ollama-API-compatible fake: the part of Ollama's HTTP API the integration speaks.

There is no Ollama binary or model on the test machines, so the AI step is tested against
this server on a real loopback socket, through the real ``ollama`` client. It serves
``/api/chat`` (``format``, ``images``, ``tools``, ``think``, ``options``, ``keep_alive``,
``stream`` true or false), ``/api/tags``, ``/api/show`` (with ``capabilities``) and
``/api/version`` and ``/api/embed``, and refuses what Ollama refuses: an unknown model
(404), pictures to a model without vision, tools to a model without tools, thinking to a
model without it, embeddings from a model that is not an embedding model.

Embeddings stand in for meaning without a model: each word is hashed to a signed
dimension, and the words :attr:`FakeOllama.concepts` maps to one concept (``courier`` and
``parcel`` to ``delivery``) embed as that concept, with full weight, while other words
weigh :data:`STRAY_WEIGHT`. Texts sharing a concept come out close; others do not.

What it answers is scripted per test, in order: :class:`Answer` (any content: a JSON
object, malformed text, a value outside the enum), :class:`FromSchema` (an answer built
from the request's ``format`` schema, as constrained decoding would give),
:class:`ToolCalls`, :class:`HttpError` (500, 503, ...), :class:`Slow` (then another
reply), :class:`BrokenBody` (HTTP 200 that is not JSON) and :class:`Hangup` (the
connection dropped). Stop the server to make the model "down".

Every request is recorded (:attr:`FakeOllama.requests`), with helpers to read the system
turn, the user turns, the images (decoded), the schema and the tool names, so a test can
assert on exactly what the model was sent.

Replay: every reply is plain JSON (:meth:`Reply.to_json`, :func:`reply_from_json`) and
every chat request has a stable key (:func:`request_key`, the evals harness's own
``evals.relay.request_key``, so a recording serves both). :meth:`FakeOllama.transcript`
returns what was asked and answered; :class:`ReplayResponder` answers from such a
transcript, so an eval runner can record answers once and replay them deterministically.

Run it alone: ``python -m tests.fakes.ollama_server --port 11434 [--replay FILE]``.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import functools
import hashlib
import json
import logging
import re
import ssl
from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

import jsonschema
import jsonschema.protocols
import jsonschema.validators
from aiohttp import web

from evals.relay import request_key

_LOGGER = logging.getLogger(__name__)

VERSION = "0.12.6"
#: A vision model with tools, like qwen2.5vl; the default the tests configure.
DEFAULT_MODELS: Mapping[str, tuple[str, ...]] = {
    "qwen2.5vl:3b": ("completion", "vision", "tools"),
    "qwen3:1.7b": ("completion", "tools", "thinking"),
    "gemma3:1b": ("completion",),
}
#: An embedding model, for tests that want one (not among the defaults).
EMBEDDING_MODEL: Final = "nomic-embed-text:latest"
EMBEDDING_DIMENSIONS: Final = 64
#: The weight of a word that names no concept (see the module docstring).
STRAY_WEIGHT: Final = 0.2
_WORD = re.compile(r"\w+")


def fake_embedding(
    text: str, concepts: Mapping[str, str], dimensions: int = EMBEDDING_DIMENSIONS
) -> list[float]:
    """The fake's embedding of ``text`` (unit length; see the module docstring)."""
    vector = [0.0] * dimensions
    for word in _WORD.findall(text.casefold()):
        concept = concepts.get(word)
        weight = 1.0 if concept is not None or word in concepts.values() else STRAY_WEIGHT
        digest = hashlib.sha256((concept or word).encode()).digest()
        index = int.from_bytes(digest[:4], "little") % dimensions
        vector[index] += weight if digest[4] & 1 else -weight
    norm = sum(x * x for x in vector) ** 0.5
    return [x / norm for x in vector] if norm else vector


# ── replies ──────────────────────────────────────────────────────────────────────────────


class Reply:
    """One scripted answer to one ``/api/chat`` request."""

    kind = "reply"

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, **vars(self)}


@dataclass
class Answer(Reply):
    """The assistant says ``content``: a dict or list is sent as JSON text, a string as is
    (so malformed JSON and values outside the schema are just answers)."""

    content: Any = ""
    prompt_tokens: int = 120
    completion_tokens: int = 24
    kind = "answer"

    def text(self) -> str:
        return self.content if isinstance(self.content, str) else json.dumps(self.content)


@dataclass
class FromSchema(Reply):
    """An answer built from the request's ``format`` schema, as a constrained decoder would
    produce: ``values`` where given, otherwise the first enum value, ``""``, ``0.9`` or
    ``true``. Without a schema in the request it answers ``text``."""

    values: dict[str, Any] = field(default_factory=dict)
    text: str = "ok"
    kind = "from_schema"


@dataclass
class ToolCalls(Reply):
    """The assistant calls tools: ``calls`` is ``[(name, arguments), ...]``."""

    calls: list[tuple[str, Any]] = field(default_factory=list)
    content: str = ""
    kind = "tool_calls"

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "calls": [list(c) for c in self.calls], "content": self.content}


@dataclass
class HttpError(Reply):
    """Ollama answers with an HTTP error and its JSON ``{"error": ...}`` body."""

    status: int = 500
    error: str = "llama runner process has terminated: signal: killed"
    kind = "http_error"


@dataclass
class Slow(Reply):
    """Wait ``seconds`` (until the server stops, at most), then answer ``then``."""

    seconds: float = 5.0
    then: Reply = field(default_factory=lambda: FromSchema())
    kind = "slow"

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "seconds": self.seconds, "then": self.then.to_json()}


@dataclass
class BrokenBody(Reply):
    """HTTP 200 whose body is not JSON: a proxy's page, a half-written reply."""

    body: str = "<html>502 Bad Gateway</html>"
    kind = "broken_body"


@dataclass
class Hangup(Reply):
    """The connection drops before any answer."""

    kind = "hangup"


def reply_from_json(data: Mapping[str, Any]) -> Reply:
    """The reply :meth:`Reply.to_json` wrote."""
    kind = data.get("kind")
    args = {k: v for k, v in data.items() if k != "kind"}
    if kind == "answer":
        return Answer(**args)
    if kind == "from_schema":
        return FromSchema(**args)
    if kind == "tool_calls":
        return ToolCalls(
            calls=[(c[0], c[1]) for c in args.get("calls", [])], content=args.get("content", "")
        )
    if kind == "http_error":
        return HttpError(**args)
    if kind == "slow":
        return Slow(seconds=float(args["seconds"]), then=reply_from_json(args["then"]))
    if kind == "broken_body":
        return BrokenBody(**args)
    if kind == "hangup":
        return Hangup()
    raise ValueError(f"unknown reply kind {kind!r}")


# ── what was received ────────────────────────────────────────────────────────────────────


@dataclass
class Received:
    """One request as the fake received it."""

    method: str
    path: str
    body: dict[str, Any]
    reply: dict[str, Any] | None = None
    #: For a chat with a schema: did the answer sent back satisfy it?
    conforms: bool | None = None

    @property
    def model(self) -> str:
        return str(self.body.get("model") or "")

    @property
    def messages(self) -> list[dict[str, Any]]:
        msgs = self.body.get("messages")
        return list(msgs) if isinstance(msgs, list) else []

    @property
    def system(self) -> str:
        """Every system turn's text, joined."""
        return "\n".join(
            str(m.get("content") or "") for m in self.messages if m.get("role") == "system"
        )

    @property
    def user(self) -> str:
        """Every user turn's text, joined."""
        return "\n".join(
            str(m.get("content") or "") for m in self.messages if m.get("role") == "user"
        )

    @property
    def images(self) -> list[bytes]:
        """Every image sent, decoded from base64."""
        out = []
        for m in self.messages:
            for b64 in m.get("images") or []:
                out.append(base64.b64decode(b64))
        return out

    @property
    def format(self) -> Any:
        return self.body.get("format")

    @property
    def tool_names(self) -> list[str]:
        return [str((t.get("function") or {}).get("name")) for t in self.body.get("tools") or []]

    @property
    def options(self) -> dict[str, Any]:
        opts = self.body.get("options")
        return dict(opts) if isinstance(opts, dict) else {}


Responder = Callable[[Received], Reply | None]


class ReplayResponder:
    """Answers from a transcript (:meth:`FakeOllama.transcript`): each request key gets its
    recorded replies in order. An unknown request gets ``missing`` (an HTTP 404 naming
    the key by default), so a replay never silently invents an answer."""

    def __init__(
        self, transcript: Iterable[Mapping[str, Any]], missing: Reply | None = None
    ) -> None:
        self._replies: dict[str, deque[Reply]] = defaultdict(deque)
        for entry in transcript:
            if entry.get("path") == "/api/chat" and entry.get("reply"):
                self._replies[str(entry["key"])].append(reply_from_json(entry["reply"]))
        self._missing = missing
        self.misses: list[str] = []

    def __call__(self, received: Received) -> Reply:
        key = request_key(received.body)
        queue = self._replies.get(key)
        if queue:
            return queue.popleft()
        self.misses.append(key)
        return self._missing or HttpError(404, f"no recorded answer for request {key[:12]}")


# ── the server ───────────────────────────────────────────────────────────────────────────


class FakeOllama:
    """The fake server. ``async with FakeOllama() as fake:`` binds 127.0.0.1 on a free
    port; ``fake.url`` is the host to give the client. With ``ssl_context`` (a server
    context, e.g. ``tests.fakes.tls.self_signed_context()``) it serves HTTPS."""

    def __init__(
        self,
        models: Mapping[str, Sequence[str]] | None = None,
        *,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.models: dict[str, tuple[str, ...]] = {
            k: tuple(v) for k, v in (models or DEFAULT_MODELS).items()
        }
        self.requests: list[Received] = []
        #: word -> concept, for the fake's embeddings (see the module docstring)
        self.concepts: dict[str, str] = {}
        #: When set, ``/api/embed`` answers this HTTP error instead.
        self.embed_error: HttpError | None = None
        self.responder: Responder | None = None
        self.default: Reply = FromSchema()
        self._script: deque[Reply] = deque()
        self._runner: web.AppRunner | None = None
        self._release = asyncio.Event()
        self._ssl_context = ssl_context
        self.port = 0

    # lifecycle

    @property
    def url(self) -> str:
        scheme = "https" if self._ssl_context is not None else "http"
        return f"{scheme}://127.0.0.1:{self.port}"

    async def start(self, port: int = 0) -> None:
        app = web.Application()
        app.router.add_post("/api/chat", self._chat)
        app.router.add_get("/api/tags", self._tags)
        app.router.add_post("/api/show", self._show)
        app.router.add_get("/api/version", self._version)
        app.router.add_post("/api/embed", self._embed)
        self._release = asyncio.Event()
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", port, ssl_context=self._ssl_context)
        await site.start()
        server = site._server
        assert server is not None
        self.port = server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    async def stop(self) -> None:
        """Stop serving: from now on the model is down (connection refused)."""
        self._release.set()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeOllama:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # scripting

    def script(self, *replies: Reply) -> FakeOllama:
        """Answer the next chats with ``replies``, in order; then ``default``."""
        self._script.extend(replies)
        return self

    @property
    def pending(self) -> int:
        """Scripted replies not used yet."""
        return len(self._script)

    @property
    def chats(self) -> list[Received]:
        return [r for r in self.requests if r.path == "/api/chat"]

    def transcript(self) -> list[dict[str, Any]]:
        """Every chat asked and what was answered, as JSON for :class:`ReplayResponder`."""
        return [
            {"path": r.path, "key": request_key(r.body), "model": r.model, "reply": r.reply}
            for r in self.chats
            if r.reply is not None
        ]

    # handlers

    async def _version(self, request: web.Request) -> web.Response:
        self.requests.append(Received("GET", "/api/version", {}))
        return web.json_response({"version": VERSION})

    async def _tags(self, request: web.Request) -> web.Response:
        self.requests.append(Received("GET", "/api/tags", {}))
        return web.json_response(
            {"models": [_model_row(n, caps) for n, caps in self.models.items()]}
        )

    async def _show(self, request: web.Request) -> web.Response:
        body = await _json(request)
        self.requests.append(Received("POST", "/api/show", body))
        name = self._resolve(str(body.get("model") or body.get("name") or ""))
        if name is None:
            return _error(404, f"model '{body.get('model')}' not found")
        caps = self.models[name]
        return web.json_response(
            {
                "modelfile": "",
                "parameters": "",
                "template": "{{ .Prompt }}",
                "details": _details(name, caps),
                "model_info": {"general.architecture": "fake"},
                "capabilities": list(caps),
                "modified_at": _now(),
            }
        )

    @property
    def embeds(self) -> list[Received]:
        return [r for r in self.requests if r.path == "/api/embed"]

    async def _embed(self, request: web.Request) -> web.Response:
        body = await _json(request)
        self.requests.append(Received("POST", "/api/embed", body))
        name = self._resolve(str(body.get("model") or ""))
        if name is None:
            return _error(404, f'model "{body.get("model")}" not found, try pulling it first')
        if "embedding" not in self.models[name]:
            return _error(400, f'"{name}" does not support embeddings')
        if self.embed_error is not None:
            return _error(self.embed_error.status, self.embed_error.error)
        raw = body.get("input")
        texts = [raw] if isinstance(raw, str) else raw
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            return _error(400, "invalid input type")
        return web.json_response(
            {
                "model": name,
                "embeddings": [fake_embedding(t, self.concepts) for t in texts],
                "total_duration": 1_000_000,
                "load_duration": 100_000,
                "prompt_eval_count": sum(len(t.split()) for t in texts),
            }
        )

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        try:
            body = json.loads(await request.text())
        except json.JSONDecodeError:
            return _error(400, "invalid JSON in request body")
        received = Received("POST", "/api/chat", body if isinstance(body, dict) else {})
        self.requests.append(received)
        refusal = self._refusal(received)
        if refusal is not None:
            return refusal
        reply = self._next(received)
        received.reply = reply.to_json()
        return await self._answer(request, received, reply)

    def _next(self, received: Received) -> Reply:
        if self._script:
            return self._script.popleft()
        if self.responder is not None:
            reply = self.responder(received)
            if reply is not None:
                return reply
        return self.default

    def _resolve(self, name: str) -> str | None:
        if name in self.models:
            return name
        latest = f"{name}:latest"
        return latest if latest in self.models else None

    def _refusal(self, received: Received) -> web.Response | None:
        """What real Ollama refuses before running the model."""
        name = self._resolve(received.model)
        if name is None:
            return _error(404, f'model "{received.model}" not found, try pulling it first')
        caps = self.models[name]
        if any(m.get("images") for m in received.messages) and "vision" not in caps:
            return _error(500, "this model is missing data required for image input")
        if received.body.get("tools") and "tools" not in caps:
            return _error(400, f"registry.ollama.ai/library/{name} does not support tools")
        if received.body.get("think") is True and "thinking" not in caps:
            return _error(400, f'"{name}" does not support thinking')
        for m in received.messages:
            for image in m.get("images") or []:
                try:
                    base64.b64decode(str(image), validate=True)
                except ValueError:
                    return _error(400, "illegal base64 data in image")
        return None

    async def _answer(
        self, request: web.Request, received: Received, reply: Reply
    ) -> web.StreamResponse:
        if isinstance(reply, Slow):
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._release.wait(), timeout=reply.seconds)
            return await self._answer(request, received, reply.then)
        if isinstance(reply, HttpError):
            return _error(reply.status, reply.error)
        if isinstance(reply, BrokenBody):
            return web.Response(text=reply.body, content_type="application/json")
        if isinstance(reply, Hangup):
            if request.transport is not None:
                request.transport.abort()
            return web.Response(status=500)
        message: dict[str, Any] = {"role": "assistant", "content": ""}
        tokens = (120, 24)
        if isinstance(reply, Answer):
            message["content"] = reply.text()
            tokens = (reply.prompt_tokens, reply.completion_tokens)
        elif isinstance(reply, FromSchema):
            schema = received.format
            message["content"] = (
                json.dumps(_from_schema(schema, reply.values))
                if isinstance(schema, dict)
                else reply.text
            )
        elif isinstance(reply, ToolCalls):
            message["content"] = reply.content
            message["tool_calls"] = [
                {"function": {"name": n, "arguments": a}} for n, a in reply.calls
            ]
        if isinstance(received.format, dict) and not message.get("tool_calls"):
            received.conforms = _conforms(message["content"], received.format)
        done = {
            "model": received.model,
            "created_at": _now(),
            "done": True,
            "done_reason": "stop",
            "total_duration": 1_000_000,
            "prompt_eval_count": tokens[0],
            "eval_count": tokens[1],
        }
        if received.body.get("stream") is False:
            return web.json_response({**done, "message": message})
        response = web.StreamResponse(headers={"Content-Type": "application/x-ndjson"})
        await response.prepare(request)
        await response.write(
            (
                json.dumps(
                    {
                        "model": received.model,
                        "created_at": _now(),
                        "message": message,
                        "done": False,
                    }
                )
                + "\n"
            ).encode()
        )
        await response.write(
            (json.dumps({**done, "message": {"role": "assistant", "content": ""}}) + "\n").encode()
        )
        await response.write_eof()
        return response


def _from_schema(schema: Mapping[str, Any], values: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, prop in (schema.get("properties") or {}).items():
        if name in values:
            out[name] = values[name]
        elif prop.get("enum"):
            out[name] = prop["enum"][0]
        elif prop.get("type") == "number":
            out[name] = 0.9
        elif prop.get("type") == "boolean":
            out[name] = True
        else:
            out[name] = ""
    return out


def _conforms(content: str, schema: Mapping[str, Any]) -> bool:
    """Whether ``content`` is JSON that ``schema`` accepts (False for a schema that is not
    one). A run sends the same schema every time, so its validator is built once."""
    validator = _validator(json.dumps(schema, sort_keys=True))
    if validator is None:
        return False
    try:
        validator.validate(json.loads(content))
    except (json.JSONDecodeError, jsonschema.ValidationError):
        return False
    return True


@functools.lru_cache(maxsize=64)
def _validator(schema_json: str) -> jsonschema.protocols.Validator | None:
    """The validator of one schema (by its JSON), checked against its metaschema once:
    ``jsonschema.validate`` checks the schema again at every call, which took 0.8 ms of
    the loop a chat against 0.014 ms for the validation itself (the Look decision's
    schema, timeit), time the benchmarks subtract but the loop still spends."""
    schema = json.loads(schema_json)
    cls = jsonschema.validators.validator_for(schema)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError:
        return None
    return cls(schema)


def _model_row(name: str, caps: Sequence[str]) -> dict[str, Any]:
    return {
        "name": name,
        "model": name,
        "modified_at": _now(),
        "size": 2_000_000_000,
        "digest": hashlib.sha256(name.encode()).hexdigest(),
        "details": _details(name, caps),
    }


def _details(name: str, caps: Sequence[str]) -> dict[str, Any]:
    family = name.split(":")[0]
    return {
        "parent_model": "",
        "format": "gguf",
        "family": family,
        "families": [family, "clip"] if "vision" in caps else [family],
        "parameter_size": "3B",
        "quantization_level": "Q4_K_M",
    }


def _error(status: int, error: str) -> web.Response:
    return web.json_response({"error": error}, status=status)


async def _json(request: web.Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except (json.JSONDecodeError, ValueError):
        return {}
    return body if isinstance(body, dict) else {}


def _now() -> str:
    return datetime.now(UTC).isoformat()


async def _serve(args: argparse.Namespace, transcript: list[dict[str, Any]] | None) -> None:
    fake = FakeOllama()
    if transcript is not None:
        fake.responder = ReplayResponder(transcript)
    await fake.start(args.port)
    _LOGGER.warning("fake Ollama on %s", fake.url)
    try:
        await asyncio.Event().wait()
    finally:
        await fake.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=11434)
    parser.add_argument("--replay", help="a transcript JSON file to answer from")
    args = parser.parse_args()
    transcript = None
    if args.replay:
        with open(args.replay, encoding="utf-8") as f:
            transcript = json.load(f)
    logging.basicConfig(level=logging.INFO)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(args, transcript))


if __name__ == "__main__":
    main()
