"""Durations as a workflow file writes them ("90s", "2m", "1h30m", "1d"), and as the model
holds them.

A workflow file never carries a bare number for a duration: "60" could be seconds or minutes,
and a sharer reading someone else's file should not have to guess. The model holds every
duration as a ``float`` of seconds (always a whole number of them), which is what the engine's
clocks, SQLite rows and limit counters use. :func:`format_duration` writes the canonical form
back, so ``parse_duration(format_duration(s)) == s`` for every whole number of seconds.
"""

from __future__ import annotations

import re

__all__ = ["DURATION_PATTERN", "DurationError", "format_duration", "parse_duration"]

#: The grammar, shared with the JSON Schema file: days, hours, minutes, seconds, each optional,
#: in that order, whole numbers only. At least one part must be present.
DURATION_PATTERN = r"^(?=\d)(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$"

_RE = re.compile(DURATION_PATTERN)
_UNITS = (("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1))


class DurationError(ValueError):
    """A duration string that does not follow the grammar."""


def parse_duration(text: str) -> float:
    """Seconds in ``text`` ("2m" -> 120.0); raises :class:`DurationError` with the fix."""
    match = _RE.fullmatch(text.strip()) if isinstance(text, str) else None
    if match is None:
        raise DurationError(
            f"{text!r} is not a duration; write a whole number with a unit, "
            "such as 45s, 2m, 1h30m or 1d"
        )
    total = 0
    for (_, factor), part in zip(_UNITS, match.groups(), strict=True):
        if part is not None:
            total += int(part) * factor
    return float(total)


def format_duration(seconds: float) -> str:
    """The canonical text of a whole number of seconds (90.0 -> "1m30s", 0.0 -> "0s")."""
    if seconds < 0 or seconds != int(seconds):
        raise ValueError(f"a duration is a whole, non-negative number of seconds, not {seconds}")
    rest = int(seconds)
    if rest == 0:
        return "0s"
    parts: list[str] = []
    for unit, factor in _UNITS:
        count, rest = divmod(rest, factor)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts)
