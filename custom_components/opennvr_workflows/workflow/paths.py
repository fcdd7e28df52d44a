"""JSON paths into a workflow file: ``$.then[0].ai.tools[2]``, ``$.then[0]["Let in"]``.

A path names a place in the file independently of its formatting, so a builder can point at
the card a problem belongs to, and the YAML loader can turn it into a line and column.
"""

from __future__ import annotations

import json
import re

__all__ = ["PathPart", "format_path"]

type PathPart = str | int

_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def format_path(parts: tuple[PathPart, ...]) -> str:
    """``("then", 0, "Let in")`` -> ``$.then[0]["Let in"]``."""
    out = ["$"]
    for part in parts:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif _PLAIN_KEY.fullmatch(part):
            out.append(f".{part}")
        else:
            out.append(f"[{json.dumps(part, ensure_ascii=False)}]")
    return "".join(out)
