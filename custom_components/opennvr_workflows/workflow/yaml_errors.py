"""A YAML syntax error said in plain words, at the line a person has to fix.

The YAML reader stops at the first token it cannot fit and reports where it stopped, in its
own terms ("while parsing a flow sequence did not find expected ',' or ']'"). Where it stopped
is often the line *after* the mistake: a list opened with ``[`` and never closed is noticed
at the next key. The reader also keeps where the construct it was reading began (its context
mark); for an unclosed bracket or quote, and for a line that is not ``key: value``, that is
the line to fix. This module picks the right one of the two marks and says what is wrong and
how to fix it in words a homeowner editing a file can follow; only a failure it does not know
keeps the reader's words, marked as such.
"""

from __future__ import annotations

from typing import Any

from .problems import Problem

__all__ = ["syntax_problem"]


def syntax_problem(err: Any, text: str) -> Problem:
    """The ``WF-YAML-SYNTAX`` problem for a ``yaml.MarkedYAMLError`` raised reading ``text``."""
    context = str(getattr(err, "context", None) or "")
    problem = str(getattr(err, "problem", None) or "")
    context_mark = getattr(err, "context_mark", None)
    problem_mark = getattr(err, "problem_mark", None)
    lines = text.splitlines()

    def at(mark: Any) -> tuple[int, int]:
        if mark is None:
            return 1, 1
        return int(mark.line) + 1, int(mark.column) + 1

    def char_at(mark: Any) -> str:
        if mark is None or mark.line >= len(lines) or mark.column >= len(lines[mark.line]):
            return ""
        return str(lines[mark.line][mark.column])

    message: str | None = None
    mark = problem_mark or context_mark
    if "flow sequence" in context and context_mark is not None:
        mark = context_mark
        message = (
            "the list that starts with `[` here is not closed: add the `]` that ends it "
            "(and put a `,` between its items)"
        )
    elif "flow mapping" in context and context_mark is not None:
        mark = context_mark
        message = (
            "the mapping that starts with `{` here is not closed: add the `}` that ends it "
            "(and put a `,` between its entries)"
        )
    elif "quoted scalar" in context and context_mark is not None:
        mark = context_mark
        quote = char_at(context_mark) or '"'
        message = f"the text that starts with {quote} here is not closed: add the closing {quote}"
    elif "simple key" in context and context_mark is not None:
        mark = context_mark
        message = (
            "this line is neither `key: value` nor a list item (`- ...`): add the missing `:`, "
            "or indent the line under the one it belongs to"
        )
    elif "mapping values are not allowed" in problem:
        message = (
            "a second `: ` on this line: put the value in quotes if the colon is part of the "
            'text (message: "Note: ..."), or start the inner mapping on its own line'
        )
    elif "cannot start any token" in problem:
        found = char_at(problem_mark)
        if found == "\t":
            message = "a tab character: YAML indents with spaces only; replace the tab with spaces"
        else:
            shown = f"`{found}`" if found else "this character"
            message = f"a value cannot start with {shown}: put the value in quotes"
    elif "block mapping" in context or "block collection" in context:
        line, column = at(problem_mark)
        before = lines[line - 1][: column - 1] if 0 < line <= len(lines) else ""
        if before.strip():
            message = (
                "unexpected text after the value on this line: put the whole value in quotes, "
                "or move the rest to a line of its own"
            )
        elif "block collection" in context:
            message = (
                "this line does not line up with the list above it: every item of a list starts "
                "with `- ` at the same indentation"
            )
        else:
            message = (
                "this line does not line up with the keys above it: indent it exactly as far as "
                "the other keys of its mapping (with spaces)"
            )
    elif "end of stream" in problem:
        message = "the file ends in the middle of a value: finish or remove the last line"
    line, column = at(mark)
    if message is None:
        raw = " ".join(p for p in (context, problem) if p) or "not valid YAML"
        message = f"this is not valid YAML here (the YAML reader says: {raw})"
    return Problem("WF-YAML-SYNTAX", f"YAML syntax: {message}", "$", line, column)
