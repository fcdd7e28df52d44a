"""A workflow's version: its content hash, and a JSON form that rebuilds it.

RFC section 7: every change is a version and each run records the version that
decided. The engine stores each version's JSON form, so a run that was waiting
for a person when the workflow was edited, or when Home Assistant restarted,
resumes on exactly the steps it started with, even if the file is gone.

The JSON form is a tagged dump of the frozen model (``{"__t": "AIStep", ...}``)
rather than the workflow file: it round-trips every model object exactly,
including ones a builder made without a file, and needs nothing but the model.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final

from ..workflow import model

_TAG: Final = "__t"
_TIME: Final = "__time"
_CLASSES: Final[dict[str, type[Any]]] = {
    name: obj
    for name in model.__all__
    if isinstance(obj := getattr(model, name), type) and dataclasses.is_dataclass(obj)
}


class VersionDecodeError(ValueError):
    """A stored version could not be rebuilt (a class or field this code lacks)."""


def encode(value: Any) -> Any:
    """The JSON-safe, tagged form of a model object (or any value inside one)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {_TAG: type(value).__name__}
        for f in dataclasses.fields(value):
            out[f.name] = encode(getattr(value, f.name))
        return out
    if isinstance(value, Mapping):
        return {str(k): encode(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [encode(v) for v in value]
    if isinstance(value, dt.time):
        return {_TIME: value.isoformat()}
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise TypeError(f"cannot encode {type(value).__name__} in a workflow version")


def decode(data: Any) -> Any:
    """Rebuild what :func:`encode` wrote: tagged dicts become model objects,
    other dicts read-only mappings, lists tuples."""
    if isinstance(data, list):
        return tuple(decode(v) for v in data)
    if isinstance(data, dict):
        if _TIME in data:
            return dt.time.fromisoformat(str(data[_TIME]))
        tag = data.get(_TAG)
        if tag is None:
            return MappingProxyType({k: decode(v) for k, v in data.items()})
        cls = _CLASSES.get(str(tag))
        if cls is None:
            raise VersionDecodeError(f"unknown workflow class {tag!r}")
        kwargs = {k: decode(v) for k, v in data.items() if k != _TAG}
        try:
            return cls(**kwargs)
        except TypeError as err:
            raise VersionDecodeError(f"{tag}: {err}") from err
    return data


def dumps(workflow: model.Workflow) -> str:
    """Canonical JSON text of a workflow (sorted keys, no spaces)."""
    return json.dumps(encode(workflow), sort_keys=True, separators=(",", ":"))


def loads(text: str) -> model.Workflow:
    """The workflow a stored version holds."""
    value = decode(json.loads(text))
    if not isinstance(value, model.Workflow):
        raise VersionDecodeError("a stored version is not a workflow")
    return value


def content_hash(text: str) -> str:
    """A version id: the first 16 hex digits of the canonical JSON's SHA-256."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def step_hash(step: Any) -> str:
    """The hash of one step's content, so an AI step's accuracy record follows
    the step itself: editing its prompt starts a new record."""
    text = json.dumps(encode(step), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:12]
