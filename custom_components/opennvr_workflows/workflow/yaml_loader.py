"""Read workflow YAML into plain data, remembering where every value and key stood.

Why not ``yaml.safe_load``: it forgets positions, silently keeps the last of two duplicate
keys, expands aliases (a few lines can expand into gigabytes), and follows YAML 1.1, where
``replies: [Yes, No]`` becomes two booleans, ``state: off`` becomes False and ``22:00`` becomes
the number 1320. A workflow file is a public contract read by people, so this reader:

* resolves plain scalars by the YAML 1.2 core schema (only ``true``/``false`` are booleans,
  only ``null``/``~``/empty are null, no sexagesimal numbers, no dates);
* refuses duplicate keys, anchors and aliases, explicit tags, keys that are not text, and
  numbers that are not finite or too large to hold exactly (a number of thousands of digits
  is refused from its text, never converted: Python refuses to convert it, and the schema
  library would fail while quoting it in a message);
* refuses NEL, LINE SEPARATOR and PARAGRAPH SEPARATOR outside quoted strings: this reader
  breaks lines at them and YAML 1.2 readers, editors and people do not, so a comment could
  hide a step (:func:`line_separator_problems`);
* caps the text's size, its nesting depth and its number of values;
* builds the data from the parser's event stream with an explicit stack, so no input can
  exhaust Python's recursion limit;
* reports every problem it can find in one pass, each with a line and column (a syntax
  error in plain words, at the line to fix: :mod:`.yaml_errors`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from .paths import PathPart, format_path
from .problems import Problem
from .yaml_errors import syntax_problem

__all__ = [
    "LINE_SEPARATORS",
    "MAX_DEPTH",
    "MAX_NODES",
    "MAX_SAFE_INTEGER",
    "MAX_TEXT_BYTES",
    "Located",
    "Mark",
    "line_separator_problems",
    "load_yaml",
    "resolve_plain_scalar",
]

#: A workflow is a page of YAML; the biggest template is a few KiB.
MAX_TEXT_BYTES = 256 * 1024
#: Deeper than any valid workflow (the flow itself is capped well below this).
MAX_DEPTH = 64
#: Values (scalars, lists and mappings) in one file.
MAX_NODES = 20_000

#: The largest whole number every JSON reader holds exactly (JavaScript's safe integers); a
#: workflow's numbers (limits, thresholds) are far below it.
MAX_SAFE_INTEGER = 2**53 - 1
#: Digits past which a number's text is not converted at all (it is too large either way).
_MAX_NUMBER_DIGITS = 64

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_NULL = re.compile(r"~|null|Null|NULL|")
_TRUE = re.compile(r"true|True|TRUE")
_FALSE = re.compile(r"false|False|FALSE")
_INT10 = re.compile(r"[-+]?[0-9]+")
_INT8 = re.compile(r"0o[0-7]+")
_INT16 = re.compile(r"0x[0-9a-fA-F]+")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
_INF = re.compile(r"[-+]?\.(?:inf|Inf|INF)")
_NAN = re.compile(r"\.(?:nan|NaN|NAN)")
_INTEGER = re.compile(r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+")


def resolve_plain_scalar(text: str) -> str | int | float | bool | None:
    """The value of an unquoted scalar under the YAML 1.2 core schema.

    A whole number written with more than a few dozen digits is read as an infinite float,
    without converting its digits: it is a number (so text that spells it must be quoted),
    and one too large to hold.
    """
    if len(text) > _MAX_NUMBER_DIGITS and _INTEGER.fullmatch(text):
        return -math.inf if text.startswith("-") else math.inf
    if _NULL.fullmatch(text):
        return None
    if _TRUE.fullmatch(text):
        return True
    if _FALSE.fullmatch(text):
        return False
    if _INT10.fullmatch(text):
        return int(text)
    if _INT8.fullmatch(text):
        return int(text[2:], 8)
    if _INT16.fullmatch(text):
        return int(text[2:], 16)
    if _FLOAT.fullmatch(text):
        return float(text)
    if _INF.fullmatch(text):
        return -math.inf if text.startswith("-") else math.inf
    if _NAN.fullmatch(text):
        return math.nan
    return text


@dataclass(frozen=True, slots=True)
class Mark:
    """A 1-based position in the text."""

    line: int
    column: int


@dataclass(frozen=True, slots=True)
class Located:
    """Plain data read from YAML, with the position of each value and of each mapping key."""

    data: object
    values: Mapping[tuple[PathPart, ...], Mark] = field(default_factory=dict)
    keys: Mapping[tuple[PathPart, ...], Mark] = field(default_factory=dict)

    def locate(self, parts: tuple[PathPart, ...], *, key: bool = False) -> Mark:
        """Where ``parts`` stands (its key when ``key``), or its nearest located ancestor;
        ``Mark(0, 0)`` when nothing is located (data that was not read from text)."""
        if key and parts in self.keys:
            return self.keys[parts]
        while parts not in self.values and parts:
            parts = parts[:-1]
        return self.values.get(parts, Mark(0, 0))


def _mark(event: Any) -> Mark:
    start = event.start_mark
    return Mark(start.line + 1, start.column + 1)


class _Frame:
    """An open mapping or sequence while the event stream is read."""

    __slots__ = ("container", "key", "key_mark", "parts", "skip_value")

    def __init__(self, container: dict[str, object] | list[object], parts: tuple[PathPart, ...]):
        self.container = container
        self.parts = parts
        self.key: str | None = None
        self.key_mark: Mark | None = None
        self.skip_value = False


class _Reader:
    """Turns one event stream into data, positions and problems."""

    def __init__(self) -> None:
        self.problems: list[Problem] = []
        self.values: dict[tuple[PathPart, ...], Mark] = {}
        self.keys: dict[tuple[PathPart, ...], Mark] = {}
        self.stack: list[_Frame] = []
        self.root: object = None
        self.documents = 0
        self.nodes = 0

    def problem(self, code: str, message: str, mark: Mark, parts: tuple[PathPart, ...]) -> None:
        self.problems.append(Problem(code, message, format_path(parts), mark.line, mark.column))

    def next_parts(self) -> tuple[PathPart, ...] | None:
        """The path of the value about to be read, or None when a mapping key is due."""
        if not self.stack:
            return ()
        top = self.stack[-1]
        if isinstance(top.container, list):
            return (*top.parts, len(top.container))
        if top.key is None:
            return None
        return (*top.parts, top.key)

    def put(self, value: object) -> None:
        """Store a finished value in the open container (or as the document)."""
        if not self.stack:
            self.root = value
            return
        top = self.stack[-1]
        if isinstance(top.container, list):
            top.container.append(value)
            return
        assert top.key is not None
        if not top.skip_value:
            top.container[top.key] = value
        top.key = None
        top.skip_value = False

    def check_node(self, event: Any, mark: Mark, parts: tuple[PathPart, ...]) -> bool:
        """Count the node and refuse anchors and tags; False when reading must stop."""
        self.nodes += 1
        if self.nodes > MAX_NODES:
            self.problem(
                "WF-YAML-TOO-MANY-NODES",
                f"the file has more than {MAX_NODES} values; a workflow is a page of steps",
                mark,
                parts,
            )
            return False
        if getattr(event, "anchor", None) and not isinstance(event, yaml.AliasEvent):
            self.problem(
                "WF-YAML-ALIAS",
                f"anchor &{event.anchor} is not allowed: write each value out in full, so the "
                "file reads the same to people and to the validator",
                mark,
                parts,
            )
        tag = getattr(event, "tag", None)
        if tag not in (None, "!"):
            self.problem(
                "WF-YAML-TAG",
                f"explicit tag {tag} is not allowed; remove it (quote the value to make it text)",
                mark,
                parts,
            )
        return True

    def key_event(self, event: Any, top: _Frame) -> None:
        """A mapping key: it must be plain text and must not repeat."""
        mark = _mark(event)
        if not isinstance(event, yaml.ScalarEvent):
            self.problem(
                "WF-YAML-KEY",
                "a mapping key must be plain text, not a list or mapping",
                mark,
                top.parts,
            )
            raise _Stop
        value = self.scalar_value(event, mark, top.parts)
        if not isinstance(value, str):
            shown = _shown(event.value)
            self.problem(
                "WF-YAML-KEY",
                f"the key {shown} is read as {type(value).__name__}, not text; quote it: {shown}",
                mark,
                top.parts,
            )
            value = event.value
        assert isinstance(top.container, dict)
        top.key = value
        top.key_mark = mark
        parts = (*top.parts, value)
        if parts in self.keys:
            first = self.keys[parts]
            self.problem(
                "WF-YAML-DUPLICATE-KEY",
                f"the key {value!r} appears twice in this mapping (first on line {first.line}); "
                "keep one",
                mark,
                parts,
            )
            # Read the repeated value under a name of its own, so its contents are not
            # taken for repeats of the first value's keys; it is then dropped.
            top.key = f"{value} (repeated on line {mark.line})"
            top.skip_value = True
        else:
            self.keys[parts] = mark

    def scalar_value(self, event: Any, mark: Mark, parts: tuple[PathPart, ...]) -> object:
        if not event.style and event.implicit[0]:  # plain (the C parser says '' not None)
            value = resolve_plain_scalar(event.value)
            if isinstance(value, float) and not math.isfinite(value):
                if _INF.fullmatch(event.value) or _NAN.fullmatch(event.value):
                    self.problem(
                        "WF-YAML-NUMBER",
                        f"{event.value} is not a finite number; quote it if it is text",
                        mark,
                        parts,
                    )
                else:
                    self.problem("WF-NUMBER-TOO-LARGE", _too_large(event.value), mark, parts)
                return event.value
            is_number = isinstance(value, int) and not isinstance(value, bool)
            if is_number and abs(value) > MAX_SAFE_INTEGER:  # type: ignore[arg-type]
                self.problem("WF-NUMBER-TOO-LARGE", _too_large(event.value), mark, parts)
                return event.value
            return value
        return str(event.value)

    def feed(self, event: Any) -> None:
        if isinstance(event, yaml.DocumentStartEvent):
            self.documents += 1
            if self.documents > 1:
                self.problem(
                    "WF-YAML-DOCUMENTS",
                    "the file holds more than one YAML document (---); one file, one workflow",
                    _mark(event),
                    (),
                )
                raise _Stop
            return
        if isinstance(event, yaml.MappingEndEvent | yaml.SequenceEndEvent):
            frame = self.stack.pop()
            self.put(frame.container)
            return
        if not isinstance(event, yaml.NodeEvent):
            return
        parts = self.next_parts()
        if parts is None:
            self.key_event(event, self.stack[-1])
            return
        mark = _mark(event)
        if not self.check_node(event, mark, parts):
            raise _Stop
        # A list or mapping is located at its key, where a reader looks for it (a block
        # mapping's own start is its first key's line).
        is_container = isinstance(event, yaml.MappingStartEvent | yaml.SequenceStartEvent)
        self.values[parts] = self.keys.get(parts, mark) if is_container else mark
        if isinstance(event, yaml.AliasEvent):
            self.problem(
                "WF-YAML-ALIAS",
                f"alias *{event.anchor} is not allowed: write the value out in full",
                mark,
                parts,
            )
            self.put(None)
        elif isinstance(event, yaml.ScalarEvent):
            self.put(self.scalar_value(event, mark, parts))
        else:
            if len(self.stack) >= MAX_DEPTH:
                self.problem(
                    "WF-YAML-TOO-DEEP",
                    f"the YAML nests more than {MAX_DEPTH} levels deep",
                    mark,
                    parts,
                )
                raise _Stop
            container: dict[str, object] | list[object] = (
                {} if isinstance(event, yaml.MappingStartEvent) else []
            )
            self.stack.append(_Frame(container, parts))


def _shown(text: str) -> str:
    """``text`` quoted for a message, shortened: a key may be thousands of characters."""
    return repr(text) if len(text) <= 40 else repr(text[:37]) + "..."


def _too_large(text: str) -> str:
    return (
        f"{_shown(text)} is too large a number (whole numbers go up to {MAX_SAFE_INTEGER:,}, "
        "and a number must be finite); quote it if it is text"
    )


class _Stop(Exception):
    """Reading cannot go on; the problem is recorded."""


def _events(text: str) -> Iterator[Any]:
    return iter(yaml.parse(text, Loader=_Loader))


#: Characters this reader (YAML 1.1) takes for a line break and YAML 1.2 readers, editors and
#: people do not: NEL, LINE SEPARATOR, PARAGRAPH SEPARATOR.
LINE_SEPARATORS = frozenset("\x85\u2028\u2029")


def line_separator_problems(text: str) -> list[Problem]:
    """Every line separator outside a quoted string, located as an editor shows it.

    Inside a comment one would end the comment for this reader and start a line of YAML (a
    hidden step) that people and other YAML tools read as part of the comment. Inside a
    quoted string it is part of the text for every reader, and is left to the rules on text.
    """
    if not LINE_SEPARATORS.intersection(text):
        return []
    quoted = _quoted_spans(text)
    problems: list[Problem] = []
    for index, char in enumerate(text):
        if char not in LINE_SEPARATORS or any(start < index < end for start, end in quoted):
            continue
        line = text.count("\n", 0, index) + 1
        column = index - (text.rfind("\n", 0, index) + 1) + 1
        name = {"\x85": "NEXT LINE (NEL)", "\u2028": "LINE SEPARATOR"}.get(
            char, "PARAGRAPH SEPARATOR"
        )
        problems.append(
            Problem(
                "WF-YAML-LINE-SEPARATOR",
                f"U+{ord(char):04X} {name} outside a quoted string: this reader takes it for "
                "a new line, and people and other YAML tools do not, so what follows it "
                "(even inside a comment) would be read differently; remove it, or put the "
                "text in quotes",
                "$",
                line,
                column,
            )
        )
    return problems


def _quoted_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` character offsets of the quoted scalars of ``text`` (the pure-Python
    scanner counts characters; C's marks count bytes). Text that does not scan has none:
    every separator in it is then refused."""
    spans: list[tuple[int, int]] = []
    try:
        for token in yaml.scan(text, Loader=yaml.SafeLoader):
            if isinstance(token, yaml.ScalarToken) and token.style in ("'", '"'):
                spans.append((token.start_mark.index, token.end_mark.index - 1))
    except yaml.YAMLError:
        return []
    return spans


def load_yaml(text: str) -> tuple[Located | None, list[Problem]]:
    """Read ``text``; return the located data (None when unreadable) and every problem found.

    Data comes back only when there are no problems: a file with a duplicate key or an alias is
    not read "mostly", since what the validator saw would then differ from what a person reads.
    """
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_TEXT_BYTES:
        return None, [
            Problem(
                "WF-YAML-TOO-LARGE",
                f"the file is {size} bytes; a workflow may be at most {MAX_TEXT_BYTES} bytes",
                "$",
                1,
                1,
            )
        ]
    separators = line_separator_problems(text)
    if separators:
        return None, separators
    reader = _Reader()
    try:
        for event in _events(text):
            reader.feed(event)
    except _Stop:
        pass
    except yaml.MarkedYAMLError as err:
        reader.problems.append(syntax_problem(err, text))
    except yaml.YAMLError as err:
        reader.problems.append(Problem("WF-YAML-SYNTAX", f"YAML syntax: {err}", "$", 1, 1))
    if reader.problems:
        return None, reader.problems
    if reader.documents == 0 or reader.root is None:
        return None, [
            Problem(
                "WF-NOT-A-MAPPING",
                "the file is empty; a workflow is a mapping "
                "that starts with `contract: workflow.v1`",
                "$",
                1,
                1,
            )
        ]
    if not isinstance(reader.root, dict):
        kind = "a list" if isinstance(reader.root, list) else "a single value"
        root = reader.values.get((), Mark(1, 1))
        message = (
            f"the file is {kind}; a workflow is a mapping of keys (contract, name, when, then, "
            "...) to values"
        )
        return None, [Problem("WF-NOT-A-MAPPING", message, "$", root.line, root.column)]
    return Located(reader.root, reader.values, reader.keys), []
