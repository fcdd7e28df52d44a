"""Answers about the frozen workflow model, worked out once per object.

A workflow, a step and an action never change once loaded (the model is frozen
dataclasses), yet the run-time checks on them (which names an AI step defines,
which placeholders an action reads, whether it moves things) would otherwise
walk them again for every run, on the path every event takes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class PerObject[T]:
    """What ``compute`` returns for an object, worked out once per object.

    Keyed by identity (hashing a frozen dataclass walks it too), holding the object
    so its id is not reused while the answer is kept; cleared when full (a workflow
    file reloaded many times)."""

    __slots__ = ("_compute", "_found", "_limit")

    def __init__(self, compute: Callable[[Any], T], limit: int = 4096) -> None:
        self._compute = compute
        self._found: dict[int, tuple[object, T]] = {}
        self._limit = limit

    def __call__(self, obj: Any) -> T:
        hit = self._found.get(id(obj))
        if hit is not None and hit[0] is obj:
            return hit[1]
        value = self._compute(obj)
        if len(self._found) >= self._limit:
            self._found.clear()
        self._found[id(obj)] = (obj, value)
        return value
