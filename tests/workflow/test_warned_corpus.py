"""The warned corpus: workflow files the contract accepts, each with a warning and its fix.

Each file under ``warned/`` starts with a ``# Warned: <why>.`` comment and marks every line
that must carry a warning with a trailing ``#? <CODE>`` comment. The test asserts that the file
is valid and that the validator reports exactly those warnings, each on its marked line, and
that each warning's message says the fix (``add`` or ``write`` what is missing).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from custom_components.opennvr_workflows.workflow import CODES, validate_text

CORPUS = Path(__file__).parent / "warned"
_MARK = re.compile(r"#\?\s*(WF-[A-Z0-9-]+)\s*$")

FILES = sorted(CORPUS.glob("*.yaml"))


def _expected(text: str) -> set[tuple[str, int]]:
    marks = set()
    for number, line in enumerate(text.splitlines(), start=1):
        match = _MARK.search(line)
        if match:
            marks.add((match.group(1), number))
    return marks


def test_the_corpus_has_the_rules_that_became_warnings() -> None:
    codes = {code for path in FILES for code, _ in _expected(path.read_text(encoding="utf-8"))}
    assert codes >= {"WF-NEEDS-MISSING", "WF-ASK-PATH-MISSING"}


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_accepted_with_the_marked_warnings(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# Warned: "), "state why the file is warned about on its first line"
    expected = _expected(text)
    assert expected, "mark the warned line with  #? <CODE>"
    assert all(code in CODES for code, _ in expected)

    report = validate_text(text)

    assert report.ok, "\n".join(p.format(path.name) for p in report.errors)
    assert report.workflow is not None
    got = {(p.code, p.line) for p in report.warnings}
    assert got == expected, "\n".join(p.format(path.name) for p in report.problems)
    for problem in report.warnings:
        assert re.search(r"\b(add|write) `", problem.message), problem.message
