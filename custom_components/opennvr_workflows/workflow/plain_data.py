"""Refuse data the schema library cannot be trusted with, before it sees it.

The YAML reader already refuses what text can spell wrongly, but data handed over in code
(:func:`..validate.validate_data`, a model written back) never passed through it. Such data
can hold a whole number of thousands of digits (``jsonschema`` fails while quoting it in its
own error message: Python refuses to print an integer past 4,300 digits), NaN or an infinity
(every comparison with NaN is false, so a range check would let it through), keys that are not
text, objects that are not plain data, or a structure nested past any workflow (or cyclic).
Each is a located problem here, and the schema runs only on data with none of them.

The walk is iterative and visits each value once, so its cost is linear in the file.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from .paths import PathPart, format_path
from .problems import Problem
from .yaml_loader import MAX_DEPTH, MAX_NODES, MAX_SAFE_INTEGER, Located

__all__ = ["plain_data_problems"]


def plain_data_problems(located: Located) -> list[Problem]:
    """Every value of ``located.data`` that is not finite, safely sized plain data."""
    problems: list[Problem] = []

    def report(code: str, message: str, parts: tuple[PathPart, ...], key: bool = False) -> None:
        mark = located.locate(parts, key=key)
        problems.append(Problem(code, message, format_path(parts), mark.line, mark.column))

    stack: list[tuple[object, tuple[PathPart, ...]]] = [(located.data, ())]
    nodes = 0
    while stack:
        value, parts = stack.pop()
        nodes += 1
        if nodes > MAX_NODES:
            report(
                "WF-YAML-TOO-MANY-NODES",
                f"the workflow has more than {MAX_NODES} values; a workflow is a page of steps",
                parts,
            )
            break
        if len(parts) > MAX_DEPTH:
            report("WF-YAML-TOO-DEEP", f"the data nests more than {MAX_DEPTH} levels deep", parts)
            continue
        if isinstance(value, Mapping):
            for key, item in value.items():
                if not isinstance(key, str):
                    report(
                        "WF-YAML-KEY",
                        f"a mapping key must be text, not {type(key).__name__}",
                        parts,
                    )
                    continue
                stack.append((item, (*parts, key)))
        elif isinstance(value, list | tuple):
            stack.extend((item, (*parts, i)) for i, item in enumerate(value))
        elif isinstance(value, bool) or value is None or isinstance(value, str):
            continue
        elif isinstance(value, int):
            if abs(value) > MAX_SAFE_INTEGER:
                report(
                    "WF-NUMBER-TOO-LARGE",
                    f"a whole number of {value.bit_length()} bits is too large; whole numbers go "
                    f"up to {MAX_SAFE_INTEGER:,}",
                    parts,
                )
        elif isinstance(value, float):
            if not math.isfinite(value):
                report("WF-YAML-NUMBER", f"{value} is not a finite number", parts)
        else:
            report(
                "WF-DATA-TYPE",
                f"a {type(value).__name__} is not plain data; use text, a number, true or "
                "false, a list or a mapping",
                parts,
            )
    return problems
