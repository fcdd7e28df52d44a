"""Fill ``{placeholders}`` in a step's text and data from the run's values.

What a placeholder is, and that ``{{`` and ``}}`` are literal braces, is decided
by the tokenizer the validator reads texts with (:mod:`..workflow.template`), so
a value fills exactly the places the validator checked. A placeholder the run does
not define stays as written (``{who}``), so a message is never silently blanked;
the validator already refuses placeholders that no trigger or earlier step defines.

Where the text is shown as markdown (Home Assistant's notifications), the values are
escaped and the workflow's own text is not (:func:`render_markdown`): an event's title, a
plate or an AI's words come from outside, and a ``[link](...)`` or ``<a href>`` in them
must read as the characters it is, never as a link beside the real ones. The author's
``**bold**`` still works.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Final

from ..workflow.template import fill

#: Every character that starts or ends markdown or HTML syntax in Home Assistant's
#: renderer (CommonMark with GitHub's extensions: links, images, emphasis, code, headings,
#: lists, tables, strikethrough, entities, HTML and autolinks, ``www.`` and ``https:``
#: bare links, e-mail addresses). CommonMark makes any of them literal after a backslash.
_MARKDOWN_SYNTAX: Final = re.compile(r"([\\`*_\[\]()#+\-.!|<>~&:@=])")


def escape_markdown(value: str) -> str:
    """``value`` shown as the characters it is where markdown is rendered: every markdown
    and HTML character behind a backslash (the one escaping every markdown surface of
    this integration uses; never for a text that is not shown as markdown)."""
    return _MARKDOWN_SYNTAX.sub(r"\\\1", value)


def render(text: str, values: Mapping[str, Any], escape: Callable[[str], str] | None = None) -> str:
    """``text`` with every defined ``{name}`` replaced by its value as text (passed
    through ``escape`` when given; the text around it never is)."""

    def value(name: str) -> str | None:
        if name not in values:
            return None
        found = values[name]
        shown = "" if found is None else str(found)
        return escape(shown) if escape is not None else shown

    return fill(text, value)


def render_markdown(text: str, values: Mapping[str, Any]) -> str:
    """``text`` for a surface that renders markdown: the workflow's own markdown works,
    every value in it is shown literally (:func:`escape_markdown`)."""
    return render(text, values, escape_markdown)


def render_json(value: Any, values: Mapping[str, Any]) -> Any:
    """A plain JSON copy of ``value`` with placeholders filled in every string."""
    if isinstance(value, str):
        return render(value, values)
    if isinstance(value, Mapping):
        return {str(k): render_json(v, values) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [render_json(v, values) for v in value]
    return value
