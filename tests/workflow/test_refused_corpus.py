"""The refused corpus: workflow files the contract must refuse, each for a stated reason.

Each file under ``refused/`` starts with a ``# Refused: <why>.`` comment and marks every line
that must carry an error with a trailing ``#! <CODE>`` comment. The test asserts that the
validator reports exactly those errors: each marked code on its marked line, and nothing else
(a refusal for the wrong reason, or a second, noisy error, fails the test too).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from custom_components.opennvr_workflows.workflow import CODES, validate_text

CORPUS = Path(__file__).parent / "refused"
_MARK = re.compile(r"#!\s*(WF-[A-Z0-9-]+)\s*$")


def _expected(text: str) -> set[tuple[str, int]]:
    marks = set()
    for number, line in enumerate(text.splitlines(), start=1):
        match = _MARK.search(line)
        if match:
            marks.add((match.group(1), number))
    return marks


FILES = sorted(CORPUS.glob("*.yaml"))


def test_the_corpus_is_large_enough() -> None:
    assert len(FILES) >= 60


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_refused_for_the_marked_reasons(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# Refused: "), "state why the file is refused on its first line"
    expected = _expected(text)
    assert expected, "mark the offending line with  #! <CODE>"
    assert all(code in CODES for code, _ in expected)

    report = validate_text(text)

    assert not report.ok
    assert report.workflow is None
    got = {(p.code, p.line) for p in report.errors}
    assert got == expected, "\n".join(p.format(path.name) for p in report.problems)


def test_every_safety_and_severity_code_is_exercised() -> None:
    used = {code for path in FILES for code, _ in _expected(path.read_text(encoding="utf-8"))}
    for code in CODES:
        if code.startswith(("WF-SAFETY-", "WF-SEVERITY-", "WF-AI-TOOL", "WF-ASK-", "WF-AI-PATH")):
            assert code in used, f"no refused file exercises {code}"
