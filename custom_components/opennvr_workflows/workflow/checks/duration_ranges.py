"""Durations within the contract's ranges (cooldowns, timeouts, waits, windows, margins).

The JSON Schema only knows a duration is well formed; whether ten days is a sane wait is the
contract's call, kept in :data:`..vocabulary.DURATION_RANGES` so every rule reads one table.
"""

from __future__ import annotations

from ..durations import format_duration
from ..paths import PathPart
from ..vocabulary import DURATION_RANGES
from .context import CheckContext

__all__ = ["check_duration"]


def check_duration(
    ctx: CheckContext, seconds: float, what: str, label: str, parts: tuple[PathPart, ...]
) -> None:
    """Report ``seconds`` (called ``label`` in the message) outside the range for ``what``."""
    low, high = DURATION_RANGES[what]
    if not low <= seconds <= high:
        ctx.report(
            "WF-LIMIT-RANGE",
            f"{label} is {_fmt(seconds)}; use a duration from {_fmt(low)} to {_fmt(high)}",
            parts,
        )


def _fmt(seconds: float) -> str:
    return format_duration(seconds) if seconds == int(seconds) and seconds >= 0 else f"{seconds}s"
