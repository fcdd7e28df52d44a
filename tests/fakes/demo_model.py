"""The demo model server: Ollama's API with one model, ``opennvr-demo-vision``, that answers
what the demo NVR (``tests.fakes.opennvr_sim``) really shows. Not a model: a demo.

``scripts/develop`` starts it beside the demo NVR, on Ollama's own address when that is
free, so the setup's *Local AI* step finds it with its defaults and every template can run
on the demo site. It is built on the Ollama-API fake (:mod:`tests.fakes.ollama_server`)
with a responder that plays the model:

- A **Look** (a chat with a picture and a JSON schema) reads the picture's pixels: the
  simulator draws a parcel, a person and a car in colours nothing else in its frames has
  (:data:`~tests.fakes.opennvr_sim.PARCEL_COLOUR`, :data:`~tests.fakes.opennvr_sim.PERSON_COLOUR`,
  :data:`~tests.fakes.opennvr_sim.CAR_COLOUR`). The decision is the option that fits what
  is there (``parcel`` or ``no_parcel``, ``still_there`` or ``gone``, ``stranger``, a car
  at the gate a ``visitor``, ``answered``...), and the reason says what
  was seen in a sentence, so a notification and Assist have words to show.
- A **chat with tools** (Home Assistant's conversation agent on the integration's Assist
  API, or an Investigate step) calls the tool the demo question asks for ("what is at the
  front door", "any alerts", "which workflows", "questions waiting", "is a camera offline")
  and, once the results come back, answers from them in words.

Run it alone: ``python -m tests.fakes.demo_model --port 11434``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from PIL import Image

from tests.fakes.ollama_server import Answer, FakeOllama, Received, Reply, ToolCalls
from tests.fakes.opennvr_sim import CAR_COLOUR, PARCEL_COLOUR, PERSON_COLOUR

_LOGGER = logging.getLogger(__name__)

#: The one model it serves: sees pictures and calls tools.
DEMO_MODEL: Final = "opennvr-demo-vision:latest"
DEMO_MODELS: Final = {DEMO_MODEL: ("completion", "vision", "tools")}
#: How far (per channel) a JPEG pixel may stray from a scene's colour and still count.
TOLERANCE: Final = 28
#: The share of the picture a scene's colour must cover to count as seen (JPEG edges and
#: blends between other colours stay far below it).
MIN_SHARE: Final = 0.003
CONFIDENCE: Final = 0.92
#: How many requests the server remembers (the fake keeps each one for tests).
KEEP_REQUESTS: Final = 50

REASONS: Final = {
    "parcel": "A brown parcel lies on the doorstep, and nobody is there to pick it up.",
    "person": "A person in a red jacket is standing by the fence line, at the left of the picture.",
    "car": (
        "A blue car waits at the gate with one person at the wheel; no company livery, "
        "taxi sign or parcels in view, so it looks like a visitor."
    ),
    "": "Nobody is in view and nothing lies on the ground: the scene is empty.",
}
#: Decision options in the order each scene prefers them; the first one a step offers wins.
#: An empty scene's list is also every scene's fallback (a parcel on a question about
#: people is a "no").
PREFERRED: Final[Mapping[str, tuple[str, ...]]] = {
    "parcel": ("parcel", "still_there", "delivery", "activity", "answered", "report"),
    "person": ("stranger", "alert", "missing", "visitor", "activity", "answered", "report"),
    "car": ("visitor", "activity", "answered", "report"),
    "": (
        "no_parcel",
        "gone",
        "quiet",
        "geared",
        "ignore",
        "nothing_found",
        "answered",
        "report",
        "unknown",
    ),
}
#: Field values in the order each scene prefers them (``who``, ``missing``, ``company``).
FIELD_PREFERRED: Final[Mapping[str, tuple[str, ...]]] = {
    "parcel": ("parcel_service", "none", "unknown"),
    "person": ("stranger", "both", "none", "unknown"),
    "car": ("none", "unknown"),
    "": ("none", "unknown"),
}
#: The demo questions: words in the person's message, and the tool (by its short name)
#: they call. The first match wins.
QUESTIONS: Final[Sequence[tuple[tuple[str, ...], str]]] = (
    (("question", "approv", "waiting for me", "answer"), "pending_approvals"),
    (("workflow",), "list_workflows"),
    (("offline", "health", "working", "down"), "camera_health"),
    (("alert", "event", "happened", "today"), "recent_events"),
    (
        ("front door", "garden", "driveway", "see", "parcel", "anyone", "what's at", "what is at"),
        "describe_camera",
    ),
)
HELP: Final = (
    "I am the demo model. Ask me: what is at the front door, any alerts, which workflows "
    "are on, or are any questions waiting."
)


@dataclass(frozen=True)
class Seen:
    """What a picture shows: ``scene`` is "parcel", "person", "car" or "" (nothing)."""

    scene: str

    @property
    def reason(self) -> str:
        return REASONS[self.scene]


def _near(pixel: tuple[int, ...], colour: tuple[int, int, int]) -> bool:
    return all(abs(a - b) <= TOLERANCE for a, b in zip(pixel[:3], colour, strict=True))


def look_at(picture: bytes) -> Seen:
    """What the picture shows, read from its pixels."""
    with Image.open(io.BytesIO(picture)) as img:
        rgb = img.convert("RGB")
        rgb.thumbnail((320, 320))
        raw = rgb.tobytes()
    pixels = [tuple(raw[i : i + 3]) for i in range(0, len(raw), 3)]
    total = max(1, len(pixels))
    for scene, colour in (
        ("person", PERSON_COLOUR),
        ("parcel", PARCEL_COLOUR),
        ("car", CAR_COLOUR),
    ):
        if sum(1 for p in pixels if _near(p, colour)) / total >= MIN_SHARE:
            return Seen(scene)
    return Seen("")


def choose(options: Sequence[str], scene: str) -> str:
    """The option that fits the scene (see :data:`PREFERRED`); the first one otherwise."""
    for option in (*PREFERRED[scene], *PREFERRED[""]):
        if option in options:
            return option
    return options[0]


def _tool_results(messages: Sequence[Mapping[str, Any]]) -> list[Any]:
    """The tool results after the last person's or model's turn, oldest first."""
    results: list[Any] = []
    for message in reversed(messages):
        if message.get("role") != "tool":
            break
        content = message.get("content")
        try:
            results.append(json.loads(content) if isinstance(content, str) else content)
        except json.JSONDecodeError:
            results.append(content)
    return list(reversed(results))


def _last_user(messages: Sequence[Mapping[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            return str(message.get("content") or "")
    return ""


def _schema_answer(received: Received, seen: Seen | None) -> dict[str, Any]:
    """A decision reply that fills the request's schema from what was seen (or, with no
    picture, from the tools' results)."""
    schema = received.format if isinstance(received.format, dict) else {}
    scene = seen.scene if seen is not None else ""
    if seen is not None:
        reason = seen.reason
    else:
        found = [_words(r) for r in _tool_results_all(received.messages)]
        reason = " ".join(f for f in found if f) or "Nothing the tools returned points anywhere."
    out: dict[str, Any] = {}
    for name, prop in (schema.get("properties") or {}).items():
        enum = [str(v) for v in prop.get("enum") or []]
        if name == "decision" and enum:
            out[name] = choose([o for o in enum if o != "unsure"] or enum, scene)
        elif enum:
            wanted = (*FIELD_PREFERRED[scene], *FIELD_PREFERRED[""])
            out[name] = next((v for v in wanted if v in enum), enum[0])
        elif name == "reason":
            out[name] = reason
        elif name == "confidence" or prop.get("type") == "number":
            out[name] = CONFIDENCE
        elif prop.get("type") == "boolean":
            out[name] = seen is not None and bool(scene)
        else:
            out[name] = reason
    return out


def _tool_results_all(messages: Sequence[Mapping[str, Any]]) -> list[Any]:
    """Every tool result in the conversation (an Investigate step's decision call comes
    after a model turn, so the last results are not at the end)."""
    out: list[Any] = []
    for message in messages:
        if message.get("role") == "tool":
            content = message.get("content")
            with contextlib.suppress(json.JSONDecodeError, TypeError):
                out.append(json.loads(content) if isinstance(content, str) else content)
    return out


def _data(result: Any) -> Any:
    """A tool result's own data (Home Assistant wraps it)."""
    if isinstance(result, dict) and isinstance(result.get("data"), dict):
        return result["data"]
    return result


def _words(result: Any) -> str:
    """One tool result, said in a sentence or two, with the citations it carries."""
    data = _data(result)
    if not isinstance(data, dict):
        return str(data)[:200]
    if error := data.get("error"):
        return f"The tool could not answer: {error}."
    if "answer" in data:
        cite = f" {data['cite']}" if data.get("cite") else ""
        return f"At {data.get('camera', 'the camera')}: {data['answer'] or 'no answer'}{cite}"
    for key, noun in (
        ("events", "event"),
        ("alerts", "alert"),
        ("workflows", "workflow"),
        ("approvals", "question waiting"),
        ("cameras", "camera"),
        ("results", "result"),
    ):
        rows = data.get(key)
        if isinstance(rows, list):
            return _rows_in_words(rows, noun)
    return json.dumps(data)[:300]


def _rows_in_words(rows: list[Any], noun: str) -> str:
    if not rows:
        return f"No {noun}s found."
    head = f"{len(rows)} {noun}{'' if len(rows) == 1 else 's'}"
    parts = []
    for row in rows[:5]:
        if not isinstance(row, dict):
            continue
        name = row.get("name") or row.get("question") or row.get("label") or row.get("kind")
        where = row.get("camera")
        state = row.get("state") or row.get("status")
        bits = " ".join(str(b) for b in (name, f"at {where}" if where else None, state) if b)
        cite = f" {row['cite']}" if row.get("cite") else ""
        parts.append(f"{bits}{cite}".strip())
    return f"{head}: " + "; ".join(p for p in parts if p) + "." if parts else f"{head}."


def _tool_named(received: Received, short_name: str) -> dict[str, Any] | None:
    """The request's tool whose name is ``short_name`` or ends with ``__short_name``."""
    for tool in received.body.get("tools") or []:
        function = tool.get("function") or {}
        name = str(function.get("name") or "")
        if name == short_name or name.endswith(f"__{short_name}"):
            return dict(function)
    return None


def _camera_argument(function: Mapping[str, Any], text: str) -> str | None:
    """The camera the person named, among the tool's camera choices (the first when the
    message names none)."""
    prop = ((function.get("parameters") or {}).get("properties") or {}).get("camera") or {}
    choices = [str(c) for c in prop.get("enum") or []]
    lowered = text.casefold()
    for choice in choices:
        if choice.casefold() in lowered:
            return choice
    for word, name in (("door", "Front Door"), ("garden", "Back Garden"), ("drive", "Driveway")):
        if word in lowered:
            return next((c for c in choices if c.casefold() == name.casefold()), name)
    return choices[0] if choices else None


def _call_for(received: Received) -> Reply:
    """The tool the person's demo question asks for, or the demo's help."""
    text = _last_user(received.messages)
    lowered = text.casefold()
    for words, short_name in QUESTIONS:
        if not any(w in lowered for w in words):
            continue
        function = _tool_named(received, short_name)
        if function is None:
            continue
        args: dict[str, Any] = {}
        if short_name == "describe_camera":
            camera = _camera_argument(function, text)
            if camera is None:
                continue
            args = {"camera": camera, "question": text}
        return ToolCalls([(str(function["name"]), args)])
    return Answer(HELP)


def respond(received: Received) -> Reply:
    """The demo model's answer to one chat (see the module docstring)."""
    images = received.images
    if isinstance(received.format, dict):
        seen = look_at(images[-1]) if images else None
        return Answer(_schema_answer(received, seen))
    if images:
        return Answer(look_at(images[-1]).reason)
    results = _tool_results(received.messages)
    if results:
        return Answer(" ".join(_words(r) for r in results))
    if received.body.get("tools"):
        return _call_for(received)
    return Answer(HELP)


def demo_server() -> FakeOllama:
    """The demo model server, not started."""
    server = FakeOllama(DEMO_MODELS)

    def answer(received: Received) -> Reply:
        # A demo runs for hours: keep only the latest requests (each holds its pictures).
        del server.requests[:-KEEP_REQUESTS]
        return respond(received)

    server.responder = answer
    return server


async def _serve(port: int) -> None:
    server = demo_server()
    await server.start(port)
    print(f"Demo model server (not a real model: {DEMO_MODEL}) on {server.url}", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=11434)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(args.port))


if __name__ == "__main__":
    main()
