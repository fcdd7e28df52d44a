"""Placeholders: each ``{name}`` in a text is defined by the trigger or an earlier step on its path.

A placeholder that is not defined where it is used would reach a person as a literal
``{plate}``, or as nothing; naming the ones that are defined, with the closest match, makes the
typo obvious.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping

from ..model import JsonValue
from ..paths import PathPart
from ..template import placeholders_in
from .context import CheckContext
from .scope import Scope

__all__ = ["check_json_texts", "check_text", "placeholders_in", "undefined_message"]


def check_text(
    ctx: CheckContext, text: str | None, scope: Scope, parts: tuple[PathPart, ...]
) -> None:
    """Check the placeholders of one string against the names defined on its path."""
    if text is None:
        return
    names, ok = placeholders_in(text)
    if not ok:
        ctx.report(
            "WF-PLACEHOLDER-SYNTAX",
            "a brace that opens or closes no placeholder; write {name} for a value, and "
            "{{ or }} for a literal brace",
            parts,
        )
    for name in dict.fromkeys(names):
        if name not in scope.names:
            ctx.report("WF-PLACEHOLDER-UNDEFINED", undefined_message(name, scope), parts)


def check_json_texts(
    ctx: CheckContext, value: JsonValue, scope: Scope, parts: tuple[PathPart, ...]
) -> None:
    """Check every string inside free-form data (webhook, app or Home Assistant data)."""
    if isinstance(value, str):
        check_text(ctx, value, scope, parts)
    elif isinstance(value, tuple):
        for i, item in enumerate(value):
            check_json_texts(ctx, item, scope, (*parts, i))
    elif isinstance(value, Mapping):
        for key, item in value.items():
            check_json_texts(ctx, item, scope, (*parts, key))


def undefined_message(name: str, scope: Scope) -> str:
    """The message for ``{name}`` used where it is not defined, with the closest defined name."""
    defined = sorted(scope.names)
    close = difflib.get_close_matches(name, defined, n=1)
    hint = f"did you mean {{{close[0]}}}? " if close else ""
    return (
        f"{{{name}}} is not defined here; {hint}the trigger and the steps before this one on its "
        "path define: " + ", ".join(f"{{{n}}}" for n in defined)
    )
