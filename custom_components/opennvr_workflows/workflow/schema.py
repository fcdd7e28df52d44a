"""The workflow.v1 JSON Schema (a file in this package) and its errors as located problems.

The schema is the published description of the file's structure: builders outside this
project (a browser builder, an assistant drafting a file, CI) can check a file with any Draft
2020-12 validator. Here it is the first gate: a file must fit it before the typed model is
built and the semantic rules (:mod:`.checks`) run.

``jsonschema``'s messages speak of schemas, not workflows, so each error is turned into a
problem with a stable code and a sentence about the workflow. Subschemas carry annotations the
validator ignores: ``x-what`` names the object ("AI step"), ``x-codes`` maps a failing keyword
to a code, ``x-code``/``x-message`` give a code and message outright, ``x-outcome-path`` marks
the schema of an outcome path (any key of an AI or Ask a person step that is not one of its
settings is read as the path of an outcome), and ``x-one-or-list`` a place that takes one value
or a list of them (its errors are those of the form the author wrote).

Four keywords are evaluated here rather than by the library, each for a reason (and the
``integer`` type means a whole number as written: ``3.0`` is refused where a count is due):

* ``pattern`` has the meaning the schema's own dialect (ECMA-262) gives it: ``$`` is the end of
  the text, not "the end, or before a final newline" as in Python, and ``\\d`` is an ASCII
  digit. A name followed by a newline, or written with Arabic-Indic digits, does not pass.
* ``uniqueItems`` hashes a canonical form of each item (linear); the library compares every
  pair of items it cannot sort (quadratic: a list of thousands of mappings took a minute).
* ``items`` checks no more items than ``maxItems`` allows: the count is already an error, and
  items past it would only add work and repeat errors.
* a reference to a step counts the steps; past :data:`~.vocabulary.MAX_STEPS` one problem
  says so and no further step is checked, so the schema's work is bounded by the contract's
  caps, not by the size of the file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator, validators
from jsonschema import _keywords as keywords
from jsonschema.exceptions import ValidationError

from .paths import PathPart, format_path
from .problems import Problem
from .suggest import did_you_mean, name_form
from .vocabulary import MAX_STEPS
from .yaml_loader import Located

__all__ = ["SCHEMA_FILE", "load_schema", "schema_problems", "schema_text"]

SCHEMA_FILE = "workflow.v1.schema.json"

_KEYWORD_CODES = {
    "additionalProperties": "WF-UNKNOWN-KEY",
    "required": "WF-MISSING-KEY",
    "type": "WF-TYPE",
    "enum": "WF-VALUE",
    "const": "WF-VALUE",
    "pattern": "WF-FORMAT",
    "minimum": "WF-RANGE",
    "maximum": "WF-RANGE",
    "minLength": "WF-RANGE",
    "maxLength": "WF-RANGE",
    "minItems": "WF-COUNT",
    "maxItems": "WF-COUNT",
    "minProperties": "WF-COUNT",
    "maxProperties": "WF-COUNT",
    "uniqueItems": "WF-DUPLICATE-ITEM",
}

_JSON_TYPES = {
    "object": "a mapping",
    "array": "a list",
    "string": "text",
    "integer": "a whole number",
    "number": "a number",
    "boolean": "true or false",
    "null": "empty",
}


def schema_text() -> str:
    """The schema file's text, as published."""
    return resources.files(__package__).joinpath(SCHEMA_FILE).read_text(encoding="utf-8")


@cache
def load_schema() -> dict[str, Any]:
    """The schema as data (a fresh parse is cached; do not modify it)."""
    schema: dict[str, Any] = json.loads(schema_text())
    return schema


_STEP_REF = "#/$defs/step"
#: The steps the schema has met in the current validation (by identity, so a step reached
#: twice through two subschemas counts once).
_steps_seen: ContextVar[set[int] | None] = ContextVar("_steps_seen", default=None)


@cache
def ecma_pattern(pattern: str) -> re.Pattern[str]:
    r"""``pattern`` (ECMA-262, the JSON Schema dialect) compiled to mean the same in Python:
    ``$`` outside a character class is the end of the text (``\Z``), ``\d`` an ASCII digit."""
    out: list[str] = []
    in_class = False
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            escaped = pattern[i + 1]
            if escaped == "d":
                out.append("0-9" if in_class else "[0-9]")
            else:
                out.append(char + escaped)
            i += 2
            continue
        if char == "[" and not in_class:
            in_class = True
        elif char == "]" and in_class:
            in_class = False
        elif char == "$" and not in_class:
            char = r"\Z"
        out.append(char)
        i += 1
    return re.compile("".join(out))


def _pattern(validator: Any, pattern: str, instance: object, schema: Any) -> Iterator[Any]:
    if isinstance(instance, str) and not ecma_pattern(pattern).search(instance):
        yield ValidationError(f"the text does not match {pattern!r}")


def json_key(value: object) -> object:
    """A hashable form of plain data that is equal exactly when JSON Schema calls two values
    equal: ``1`` and ``1.0`` are, ``true`` and ``1`` are not; key order does not count."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int | float):
        return ("number", value)
    if isinstance(value, str):
        return ("text", value)
    if value is None:
        return ("null",)
    if isinstance(value, list | tuple):
        return ("list", tuple(json_key(item) for item in value))
    if isinstance(value, dict):
        return ("map", frozenset((key, json_key(item)) for key, item in value.items()))
    return ("object", id(value))


def _unique_items(validator: Any, unique: bool, instance: object, schema: Any) -> Iterator[Any]:
    if not unique or not isinstance(instance, list):
        return
    seen: set[object] = set()
    for item in instance:
        key = json_key(item)
        if key in seen:
            yield ValidationError("the list holds the same item twice")
            return
        seen.add(key)


def _items(validator: Any, items: Any, instance: object, schema: Any) -> Iterator[Any]:
    cap = schema.get("maxItems") if isinstance(schema, dict) else None
    if isinstance(instance, list) and isinstance(cap, int) and len(instance) > cap:
        instance = instance[:cap]
    yield from _library_items(validator, items, instance, schema)


def _ref(validator: Any, ref: str, instance: object, schema: Any) -> Iterator[Any]:
    seen = _steps_seen.get()
    if ref == _STEP_REF and seen is not None and id(instance) not in seen:
        if len(seen) >= MAX_STEPS:
            if len(seen) == MAX_STEPS:
                seen.add(id(instance))
                yield ValidationError(
                    f"the workflow has more than {MAX_STEPS} steps; at most {MAX_STEPS} are "
                    "allowed: split it into workflows that raise alerts for each other",
                    validator="x-too-many-steps",
                )
            return
        seen.add(id(instance))
    yield from _library_ref(validator, ref, instance, schema)


def _is_integer(checker: Any, instance: object) -> bool:
    """A whole number as written: ``3``, never ``3.0``. JSON Schema counts a float with no
    fraction as an integer, but a reader would have to convert it, and a field that takes a
    count (frames, per_hour, tool_calls) must be written as one, so the mistake is named at
    its line rather than met at run time."""
    return isinstance(instance, int) and not isinstance(instance, bool)


_library_items: Callable[..., Any] = keywords.items
_library_ref: Callable[..., Any] = keywords.ref
_extend: Callable[..., Any] = validators.extend
_WorkflowValidator: Any = _extend(
    Draft202012Validator,
    {"pattern": _pattern, "uniqueItems": _unique_items, "items": _items, "$ref": _ref},
    type_checker=Draft202012Validator.TYPE_CHECKER.redefine("integer", _is_integer),
)


@cache
def _validator() -> Any:
    # The schema is checked against the Draft 2020-12 metaschema by the tests, not here: that
    # check costs more than validating a dozen files, on every start of the command line.
    return _WorkflowValidator(load_schema())


def _describe(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "empty"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + '..."'


def _what(error: ValidationError) -> str:
    schema = error.schema if isinstance(error.schema, dict) else {}
    what = schema.get("x-what")
    return str(what) if what else "this value"


def _leaf_errors(error: ValidationError) -> Iterator[ValidationError]:
    """For "one value or a list of them", the errors of the form the author wrote."""
    if (
        error.validator == "anyOf"
        and isinstance(error.schema, dict)
        and error.schema.get("x-one-or-list")
        and error.context
    ):
        branch = 1 if isinstance(error.instance, list) else 0
        chosen = [e for e in error.context if e.relative_schema_path[0] == branch]
        if chosen:
            for sub in chosen:
                yield from _leaf_errors(sub)
            return
    yield error


def _code(error: ValidationError) -> str:
    if error.validator == "x-too-many-steps":
        return "WF-TOO-MANY-STEPS"
    schema = error.schema if isinstance(error.schema, dict) else {}
    if "x-code" in schema:
        return str(schema["x-code"])
    codes = schema.get("x-codes", {})
    keyword = str(error.validator)
    if keyword in codes:
        return str(codes[keyword])
    return _KEYWORD_CODES.get(keyword, "WF-FORMAT")


def _message(error: ValidationError, code: str, unknown_key: str = "") -> str:
    schema: dict[str, Any] = error.schema if isinstance(error.schema, dict) else {}
    keyword = str(error.validator)
    value: Any = error.instance
    wanted: Any = error.validator_value
    what = _what(error)
    if "x-message" in schema:
        return str(schema["x-message"])
    if keyword == "x-too-many-steps":
        return error.message
    if keyword == "additionalProperties":
        allowed = ", ".join(schema.get("properties", {}))
        names = repr(unknown_key)
        return (
            f"{names} is not a key of {_article(what)}; the keys are: {allowed}. The contract is "
            "additive-only, so an unknown key is refused rather than ignored"
            + did_you_mean(unknown_key, schema.get("properties", {}))
        )
    if keyword == "required":
        missing = (
            str(wanted)
            if not isinstance(value, dict)
            else ", ".join(k for k in wanted if k not in value)
        )
        return f"{_article(what)} needs `{missing}`"
    if keyword == "type" and schema.get("x-outcome-path"):
        key = error.relative_path[-1] if error.relative_path else "?"
        return (
            f"`{key}` is not a setting of this step, so it is read as the path of an outcome "
            f"named {key!r}, and a path is a list of steps; check the spelling of the key"
        )
    if code == "WF-STEP-KIND":
        return (
            "a step is a mapping with exactly one kind key: ai, if, for_each, ask_person, call, "
            "or an action (alert, notify, log, save_clip, ptz_preset, webhook, home_assistant, "
            "site_mode, app_action, wait, reply)" + _found_keys(value)
        )
    if code == "WF-TRIGGER-KIND":
        return (
            "`when` holds exactly one trigger: alert, event, camera_offline, schedule, button "
            "or message" + _found_keys(value)
        )
    if code == "WF-CONDITION-KIND":
        if what == "condition":
            return (
                "a condition holds exactly one test: time, site_mode, camera, value or list"
                + _found_keys(value)
            )
        if what == "list condition":
            return "a list condition needs exactly one of `in` and `not_in`"
        return "a value condition needs at least one test: is, is_not, above or below"
    if code == "WF-SCHEDULE-KIND":
        return "a schedule needs exactly one of `at` (times of day) and `every` (a duration)"
    if code == "WF-FOREACH-KIND":
        return "for_each needs exactly one of `cameras`, `list` and `events`"
    if code == "WF-CAMERA-NOT-ROLE":
        return (
            f"{_describe(value)} is not a camera role: cameras are named by role (front_door, "
            "driveway: lower-case letters, digits, _ and -), never by an OpenNVR camera id or a "
            "Home Assistant entity id, so the workflow works in another home"
            + _as_name(value, schema)
        )
    if code == "WF-WHO-NOT-ROLE":
        return (
            f"{_describe(value)} does not name people by role; write role:<name> (role:owner, "
            "role:household), so the workflow works in another home"
        )
    if code == "WF-WEBHOOK-URL":
        return (
            f"{_describe(value)} is not the name of an approved destination; webhooks go only to "
            "destinations an admin approved in the integration's options, named like ticketing"
        )
    if code == "WF-DURATION":
        return (
            f"{_describe(value)} is not a duration; write a whole number with a unit, such as "
            "45s, 2m, 1h30m or 1d"
        )
    if code == "WF-TIME":
        return f'{_describe(value)} is not a time of day; write HH:MM in quotes, such as "22:00"'
    if code == "WF-AI-TOOLS-TOO-MANY":
        return (
            f"an AI step may list at most {wanted} tools (it lists "
            f"{len(value) if isinstance(value, list) else '?'}); fewer tools make small models "
            "choose better"
        )
    if code == "WF-AI-TOOLS-DUPLICATE":
        return "a tool is listed twice; list each tool once"
    if keyword == "type":
        types = [wanted] if isinstance(wanted, str) else list(wanted)
        return f"{_describe(value)} should be {' or '.join(_JSON_TYPES.get(n, n) for n in types)}"
    if keyword in ("enum", "const"):
        options = wanted if keyword == "enum" else [wanted]
        return (
            f"{_describe(value)} is not allowed here; use one of: "
            + ", ".join(str(o) for o in options)
            + did_you_mean(value, (str(o) for o in options))
        )
    if keyword in ("minimum", "maximum"):
        low, high = schema.get("minimum"), schema.get("maximum")
        return f"{_describe(value)} is out of range; use a value from {low} to {high}"
    if keyword in ("minLength", "maxLength"):
        return (
            "text is empty"
            if keyword == "minLength"
            else f"text is longer than {wanted} characters; shorten it"
        )
    if keyword in ("minItems", "maxItems"):
        bound = "at least" if keyword == "minItems" else "at most"
        return f"{_article(what)} takes {bound} {_counted(wanted, 'item')} here"
    if keyword in ("minProperties", "maxProperties"):
        bound = "at least" if keyword == "minProperties" else "at most"
        return f"{_article(what)} takes {bound} {_counted(wanted, 'key')}"
    if keyword == "uniqueItems":
        return "the same item appears twice in this list; list each once"
    if keyword == "pattern":
        description = schema.get("description")
        hint = f" ({description})" if description else ""
        return f"{_describe(value)} does not have the required form{hint}" + _as_name(value, schema)
    return error.message


def _as_name(value: object, schema: dict[str, Any]) -> str:
    """``; did you mean `fence_line`?`` when ``value`` written as a name fits the pattern
    it failed (a person wrote the name as they read it: "Fence line")."""
    pattern = schema.get("pattern")
    if not isinstance(value, str) or not isinstance(pattern, str):
        return ""
    form = name_form(value)
    if form == value or not ecma_pattern(pattern).search(form):
        return ""
    return f"; did you mean `{form}`?"


def _article(what: str) -> str:
    if what == "this value":
        return what
    return ("an " if what[:1].lower() in "aeiou" else "a ") + what


def _found_keys(value: object) -> str:
    if isinstance(value, dict):
        return "; found: " + (", ".join(map(str, value)) or "nothing")
    return f"; found {_describe(value)}"


def schema_problems(located: Located) -> list[Problem]:
    """Every structural problem of ``located.data`` against the schema, located.

    Where a step (or trigger, or condition) is not exactly one kind, that is the one problem
    reported for it: the errors its would-be kinds raise would only repeat it.
    """
    raw: list[tuple[tuple[PathPart, ...], str, str, bool]] = []
    token = _steps_seen.set(set())
    try:
        errors = list(_validator().iter_errors(located.data))
    finally:
        _steps_seen.reset(token)
    for top in errors:
        for error in _leaf_errors(top):
            parts = tuple(error.absolute_path)
            code = _code(error)
            on_key = code in ("WF-UNKNOWN-KEY", "WF-AI-KEY-WRONG-MODE")
            if error.validator == "additionalProperties" and isinstance(error.instance, dict):
                props = error.schema.get("properties", {}) if isinstance(error.schema, dict) else {}
                for key in error.instance:
                    if key not in props:
                        raw.append(((*parts, key), code, _message(error, code, str(key)), True))
                continue
            raw.append((parts, code, _message(error, code), on_key))
    kind_codes = {"WF-STEP-KIND", "WF-TRIGGER-KIND", "WF-CONDITION-KIND"}
    kind_paths = {parts for parts, code, _, _ in raw if code in kind_codes}
    problems: list[Problem] = []
    for parts, code, message, on_key in raw:
        if code not in kind_codes and _under_kind_error(parts, kind_paths):
            continue
        mark = located.locate(parts, key=on_key)
        problems.append(Problem(code, message, format_path(parts), mark.line, mark.column))
    return problems


def _under_kind_error(parts: tuple[PathPart, ...], kind_paths: set[tuple[PathPart, ...]]) -> bool:
    """Whether ``parts`` is, or lies under, one of ``kind_paths``: one set lookup per
    prefix, so matching every error against every kind error stays linear."""
    return any(parts[:end] in kind_paths for end in range(len(parts) + 1))


def _counted(number: object, noun: str) -> str:
    """``1 item``, ``2 items``: messages are read by people."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"
