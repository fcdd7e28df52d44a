"""Citation markers: what a tool hands out, what an answer may cite, what is stripped.

Every fact a tool returns carries a ``cite`` field holding the exact marker to put after
a sentence drawn from it (``[^event:42]``, ``[^alert:alrt_1a2b]``, ``[^run:01J...]``,
``[^look:3f9c...]``). After the model answers, each marker in the text is checked against
the markers the tools returned in that turn: one that no tool returned was invented and
is stripped from the answer, and counted (spec 001's citation check). A valid marker
proves the answer points at something retrieved, not that it supports the sentence.

Nothing here imports Home Assistant: :mod:`.turn_guard` applies it to a conversation.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

#: ``[^kind:id]``; ids are OpenNVR's and the engine's (digits, letters, ``_ - . :``).
MARKER: Final = re.compile(r"\[\^([A-Za-z]+:[A-Za-z0-9_.:\-]+)\]")
#: A marker with the spaces before it, which go with it when it is stripped.
_SPACED_MARKER: Final = re.compile(r"[ \t]*\[\^([A-Za-z]+:[A-Za-z0-9_.:\-]+)\]")
#: The longest marker kept waiting while a streamed answer is filtered.
_MAX_MARKER: Final = 120
#: How deep into a tool's result the ``cite`` fields are looked for.
_MAX_DEPTH: Final = 8


def cite(kind: str, ident: Any) -> str:
    """The marker for one fact: ``cite("event", 42)`` -> ``[^event:42]``."""
    return f"[^{kind}:{ident}]"


def markers_in(data: Any, depth: int = 0) -> set[str]:
    """The ``cite`` markers anywhere in a tool's result (a JSON value)."""
    found: set[str] = set()
    if depth > _MAX_DEPTH:
        return found
    if isinstance(data, Mapping):
        for key, value in data.items():
            if key == "cite" and isinstance(value, str):
                found.update(MARKER.findall(value))
            else:
                found |= markers_in(value, depth + 1)
    elif isinstance(data, list | tuple):
        for value in data:
            found |= markers_in(value, depth + 1)
    return found


@dataclass(slots=True)
class Checked:
    """One answer after the check: its text and the markers kept and stripped."""

    text: str
    valid: list[str] = field(default_factory=list)
    invented: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Citations:
    """The markers the tools returned in one turn."""

    returned: set[str] = field(default_factory=set)

    def record(self, data: Any) -> None:
        """Remember every marker in a tool's result."""
        self.returned |= markers_in(data)

    def check(self, text: str) -> Checked:
        """``text`` with every marker no tool returned removed (see the module docstring)."""
        out = Checked(text)
        for ident in MARKER.findall(text):
            (out.valid if ident in self.returned else out.invented).append(ident)
        if out.invented:
            out.text = strip_markers(text, set(out.invented))
        return out


def strip_markers(text: str, idents: Iterable[str]) -> str:
    """``text`` without the markers of ``idents`` (and the spaces before each)."""
    drop = set(idents)

    def keep(match: re.Match[str]) -> str:
        return "" if match.group(1) in drop else match.group(0)

    return _SPACED_MARKER.sub(keep, text)


class StreamFilter:
    """Strips invented markers from an answer that arrives in pieces (a streamed reply),
    holding back only the text of a marker that has not closed yet."""

    def __init__(self, citations: Citations) -> None:
        self._citations = citations
        self._held = ""

    def feed(self, piece: str) -> str:
        """The part of the answer so far that can be shown, invented markers removed."""
        text = self._held + piece
        self._held = ""
        cut = text.rfind("[")
        if cut != -1 and "]" not in text[cut:] and len(text) - cut <= _MAX_MARKER:
            # "[" or "[^event:4" so far: wait for the rest before deciding, with the
            # spaces before it (they go if the marker goes).
            while cut > 0 and text[cut - 1] in " \t":
                cut -= 1
            text, self._held = text[:cut], text[cut:]
        return self._citations.check(text).text

    def flush(self) -> str:
        """Whatever was held back (a "[" that never became a marker)."""
        held, self._held = self._held, ""
        return self._citations.check(held).text
