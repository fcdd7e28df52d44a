"""The refused corpus: workflow files the contract must refuse, each for a stated reason.

Each file under ``refused/`` starts with a ``# Refused: <why>.`` comment and marks every line
that must carry an error with a trailing ``#! <CODE>`` comment. The test asserts that the
validator reports exactly those errors: each marked code on its marked line, and nothing else
(a refusal for the wrong reason, or a second, noisy error, fails the test too).

A file refused only on a particular site says so on its second line, as
``# Site: skills=a,b; tools=c; camera_roles=d,e`` (the parts of a :class:`SiteProfile`);
it is then checked against that site, and also shown to pass the contract alone.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from custom_components.opennvr_workflows.workflow import CODES, SiteProfile, validate_text

CORPUS = Path(__file__).parent / "refused"
_MARK = re.compile(r"#!\s*(WF-[A-Z0-9-]+)\s*$")
_SITE = re.compile(r"^# Site: (.+)$", re.MULTILINE)


def _expected(text: str) -> set[tuple[str, int]]:
    marks = set()
    for number, line in enumerate(text.splitlines(), start=1):
        match = _MARK.search(line)
        if match:
            marks.add((match.group(1), number))
    return marks


def _site(text: str) -> SiteProfile | None:
    """The site of a ``# Site:`` line, or None when the file has none."""
    match = _SITE.search(text)
    if match is None:
        return None
    parts: dict[str, frozenset[str]] = {}
    for part in match.group(1).split(";"):
        name, _, names = part.partition("=")
        parts[name.strip()] = frozenset(n.strip() for n in names.split(",") if n.strip())
    return SiteProfile(**parts)


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

    site = _site(text)
    report = validate_text(text, site=site)

    assert not report.ok
    assert report.workflow is None
    got = {(p.code, p.line) for p in report.errors}
    assert got == expected, "\n".join(p.format(path.name) for p in report.problems)


def test_every_safety_and_severity_code_is_exercised() -> None:
    used = {code for path in FILES for code, _ in _expected(path.read_text(encoding="utf-8"))}
    for code, meaning in CODES.items():
        if meaning.endswith("(warning)"):
            continue  # a warning never refuses a file; the warned corpus exercises these
        if code.startswith(("WF-SAFETY-", "WF-SEVERITY-", "WF-AI-TOOL", "WF-ASK-", "WF-AI-PATH")):
            assert code in used, f"no refused file exercises {code}"


@pytest.mark.parametrize(
    "path",
    [p for p in FILES if _site(p.read_text(encoding="utf-8"))],
    ids=lambda p: p.stem,
)
def test_a_site_refusal_passes_the_contract_alone(path: Path) -> None:
    report = validate_text(path.read_text(encoding="utf-8"))
    assert report.ok, "\n".join(p.format(path.name) for p in report.errors)


def test_every_site_code_is_exercised() -> None:
    used = {code for path in FILES for code, _ in _expected(path.read_text(encoding="utf-8"))}
    assert {"WF-SKILL-MISSING", "WF-TOOL-NOT-HERE", "WF-CAMERA-ROLE-UNMAPPED"} <= used
