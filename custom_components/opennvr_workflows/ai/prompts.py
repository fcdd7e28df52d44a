"""What goes into the model's data block, and what may join its instructions.

RFC section 7 and seed 000: ``{placeholders}`` such as ``{plate}`` or an intercom
transcript are data. They are never expanded into the system turn, where a plate reading
"IGNORE PREVIOUS INSTRUCTIONS" would be read as an instruction. The author's prompt keeps
``{plate}`` as a name; the value goes, with every other value of the run, into the labelled
JSON block of the user turn, which the SDK's rules tell the model is data.

Site facts are admin-written and do join Investigate's instructions, capped at about 300
words (the RFC's correction 9: unbounded facts crowd a small model's context); longer
material belongs in the site's lists, which ``site_lookup`` reads on demand.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import date, datetime, time
from typing import Any

from ..workflow.template import fill, placeholders_in

MAX_FACT_WORDS = 300
#: A single value longer than this is cut: the data block is for facts, not documents.
MAX_VALUE_CHARS = 1000
MAX_VALUES = 40


def placeholders(text: str) -> tuple[str, ...]:
    """The ``{names}`` a text refers to, in order, without repeats (read by the
    workflow's own tokenizer, so ``{{name}}`` is literal text here as everywhere)."""
    return tuple(dict.fromkeys(placeholders_in(text or "")[0]))


def fill_text(template: str, values: Mapping[str, Any]) -> str:
    """``template`` with its placeholders filled, for a DATA value (Look's text input);
    an unknown name stays as written."""
    return fill(template or "", lambda name: _text(values[name]) if name in values else None)


def data_block(values: Mapping[str, Any], referenced: tuple[str, ...] = ()) -> dict[str, Any]:
    """The run's values as JSON-safe data for the model. Names the instructions refer to
    come first and are always present (None when the run has no such value)."""
    out: dict[str, Any] = {}
    for name in referenced:
        out[name] = _json_safe(values.get(name))
    for name, val in values.items():
        if len(out) >= MAX_VALUES:
            break
        out.setdefault(str(name), _json_safe(val))
    return out


def site_facts(facts: str, max_words: int = MAX_FACT_WORDS) -> str:
    """The site's facts, cut to ``max_words`` words with a note saying so."""
    words = (facts or "").split()
    if len(words) <= max_words:
        return " ".join(words)
    return (
        " ".join(words[:max_words]) + f" [site facts cut at {max_words} of "
        f"{len(words)} words; longer material belongs in the site's lists]"
    )


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _json_safe(value: Any, depth: int = 0) -> Any:
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        return value if len(value) <= MAX_VALUE_CHARS else value[:MAX_VALUE_CHARS] + "…"
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    if depth < 3 and isinstance(value, Mapping):
        return {str(k): _json_safe(v, depth + 1) for k, v in list(value.items())[:MAX_VALUES]}
    if depth < 3 and isinstance(value, (list, tuple, set, frozenset)):
        return [_json_safe(v, depth + 1) for v in list(value)[:MAX_VALUES]]
    return _json_safe(str(value), depth)
