"""Fill ``{placeholders}`` in a step's text and data from the run's values.

A placeholder the run does not define stays as written (``{who}``), so a
message is never silently blanked; the validator already refuses
placeholders that no trigger or earlier step defines.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

_PLACEHOLDER: Final = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def render(text: str, values: Mapping[str, Any]) -> str:
    """``text`` with every defined ``{name}`` replaced by its value as text."""
    if "{" not in text:
        return text

    def sub(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in values:
            return match.group(0)
        value = values[name]
        return "" if value is None else str(value)

    return _PLACEHOLDER.sub(sub, text)


def render_json(value: Any, values: Mapping[str, Any]) -> Any:
    """A plain JSON copy of ``value`` with placeholders filled in every string."""
    if isinstance(value, str):
        return render(value, values)
    if isinstance(value, Mapping):
        return {str(k): render_json(v, values) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [render_json(v, values) for v in value]
    return value
