"""Names in one list that a person must tell apart: no invisible characters, no look-alikes.

Reply buttons, the values an AI step's field can take and the values a rule tests are read by
people (on a phone, in a trace) and matched by code. A name with a control or formatting
character in it reads as another name, and two names that differ only by such characters,
case, width, accents, spacing or a look-alike letter read as one; both are refused here, with
the rule of :mod:`..names`.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..names import forbidden_character, name_key
from ..paths import PathPart
from .context import CheckContext

__all__ = ["check_name_characters", "check_names"]


def check_name_characters(
    ctx: CheckContext, name: str, parts: tuple[PathPart, ...], *, key: bool = False
) -> bool:
    """Refuse ``name`` when it holds a character no name may hold; True when it is clean."""
    found = forbidden_character(name)
    if found is None:
        return True
    ctx.report(
        "WF-NAME-CHARACTER",
        f"the name {name!r} holds {found}, a control or formatting character that a person "
        "cannot see or that changes how the text reads; remove it",
        parts,
        key=key,
    )
    return False


def check_names(
    ctx: CheckContext,
    names: Iterable[str],
    parts: tuple[PathPart, ...],
    *,
    what: str,
    code: str = "WF-NAME-DUPLICATE",
    reserved: Iterable[str] = (),
) -> None:
    """Check the names of one list at ``parts`` (item ``i`` at ``(*parts, i)``): each must be
    clean, and no two (nor one and a ``reserved`` name) may read the same."""
    seen = {name_key(name): name for name in reserved}
    for i, name in enumerate(names):
        here = (*parts, i)
        check_name_characters(ctx, name, here)
        folded = name_key(name)
        if folded in seen:
            ctx.report(
                code,
                f"the {what} {name!r} reads the same as {seen[folded]!r}; each {what} must be "
                "told apart at a glance (case, accents, width, spacing, invisible characters "
                "and look-alike letters do not count)",
                here,
            )
            continue
        seen[folded] = name
