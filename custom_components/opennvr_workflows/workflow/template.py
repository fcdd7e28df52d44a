"""What a ``{placeholder}`` is: the one tokenizer the validator and the engine share.

A text of a workflow is literal text and placeholders. ``{name}`` is the value of ``name``;
``{{`` and ``}}`` are one literal brace each, so ``"{{reason}}"`` is the text ``{reason}``
and fills nothing. If the validator and the renderer read a text differently, a value the
validator never saw could reach an action (AI words on a speaker, in an app's data), so both
read it through :func:`tokens` here: the validator lists what a text reads with
:func:`placeholders_in`, the engine fills it with :func:`fill`, and both agree by
construction.

A brace that opens or closes no placeholder is a located error for the validator (its text
must say ``{{`` or ``}}``); :func:`fill` keeps such a brace as written.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Final

__all__ = ["Literal", "Placeholder", "Stray", "fill", "placeholders_in", "tokens"]

#: ``{{``, ``}}``, ``{name}``, or a brace on its own, in the order a reader meets them.
_TOKEN: Final = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}|\{|\}")


@dataclass(frozen=True, slots=True)
class Literal:
    """Text shown as written (an escaped brace is a literal brace)."""

    text: str


@dataclass(frozen=True, slots=True)
class Placeholder:
    """``{name}``: the value of ``name`` goes here."""

    name: str


@dataclass(frozen=True, slots=True)
class Stray:
    """A brace that opens or closes no placeholder (kept as written)."""

    text: str


type Token = Literal | Placeholder | Stray


def tokens(text: str) -> Iterator[Token]:
    """The parts of ``text``, in order."""
    end = 0
    for match in _TOKEN.finditer(text):
        if match.start() > end:
            yield Literal(text[end : match.start()])
        token = match.group(0)
        if match.group(1):
            yield Placeholder(match.group(1))
        elif token in ("{{", "}}"):
            yield Literal(token[0])
        else:
            yield Stray(token)
        end = match.end()
    if end < len(text):
        yield Literal(text[end:])


@functools.lru_cache(maxsize=2048)
def parsed(text: str) -> tuple[Token, ...]:
    """:func:`tokens` of ``text``, parsed once: a workflow's few texts are filled on every
    run, and parsing them each time cost more than filling them."""
    return tuple(tokens(text))


def placeholders_in(text: str) -> tuple[tuple[str, ...], bool]:
    """The placeholder names ``text`` reads, in order (repeats kept), and whether every
    brace in it is well formed."""
    names: list[str] = []
    ok = True
    for token in tokens(text):
        if isinstance(token, Placeholder):
            names.append(token.name)
        elif isinstance(token, Stray):
            ok = False
    return tuple(names), ok


def fill(text: str, value: Callable[[str], str | None]) -> str:
    """``text`` with each placeholder replaced by ``value(name)``; a name ``value`` answers
    None for stays as written (``{who}``), so a message is never silently blanked."""
    if "{" not in text and "}" not in text:
        return text
    out: list[str] = []
    for token in parsed(text):
        if isinstance(token, Placeholder):
            shown = value(token.name)
            out.append(f"{{{token.name}}}" if shown is None else shown)
        else:
            out.append(token.text)
    return "".join(out)
