"""The name a person probably meant ("did you mean ...?"), for a message refusing theirs.

A person types what they read on a screen ("Fence line", "Front door"); the file wants the
name's written form (``fence_line``, ``front_door``), or one of a few known names. A refusal
that says which name would pass saves a trip to the documentation. Names are compared in
their written form (lower case, ``_`` for spaces and punctuation), then by ``difflib``'s
similarity, so a typo (``cooldwon``) finds ``cooldown`` too.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

__all__ = ["did_you_mean", "name_form"]

_NOT_NAME = re.compile(r"[^a-z0-9]+")


def name_form(text: str) -> str:
    """``text`` written as a name: ``"Fence line"`` -> ``fence_line``."""
    return _NOT_NAME.sub("_", text.strip().lower()).strip("_")


def did_you_mean(value: object, candidates: Iterable[str], *, cutoff: float = 0.6) -> str:
    """``"; did you mean `x`?"`` for the candidate closest to ``value``, or ``""`` when none
    is close (or ``value`` is one of them already)."""
    if not isinstance(value, str):
        return ""
    names = [c for c in dict.fromkeys(candidates) if isinstance(c, str)]
    if not names or value in names:
        return ""
    wanted = name_form(value)
    by_form = {name_form(n): n for n in names}
    found = by_form.get(wanted)
    if found is None:
        close = difflib.get_close_matches(wanted, list(by_form), n=1, cutoff=cutoff)
        found = by_form[close[0]] if close else None
    return f"; did you mean `{found}`?" if found is not None else ""
