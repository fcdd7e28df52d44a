"""The eval command line refuses what it cannot run, in words, with exit status 2: a run
with neither a server nor a recording (or both), a recording that is not one, cases with
problems, a case id that does not exist, a folder with no cases, no model named; and
``check`` prints the problems of a broken cases folder."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from evals.cli import main

from .test_cases import TEXT_STEP

WriteCase = Callable[[str, str, str], Path]


def refused(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 2
    return capsys.readouterr().err


def test_a_run_needs_a_server_or_a_recording(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    err = refused(capsys, "run", "--model", "m")
    assert "give --ollama URL (a live run) or --replay FILE (a recording)" in err
    both = ("run", "--model", "m", "--ollama", "http://127.0.0.1:9", "--replay", "x.json")
    assert "give --ollama URL" in refused(capsys, *both)
    not_one = tmp_path / "t.json"
    not_one.write_text("{}", encoding="utf-8")
    assert "a JSON list of entries" in refused(capsys, "run", "--replay", str(not_one))


def test_what_the_cases_say_is_checked_first(
    capsys: pytest.CaptureFixture[str],
    write_case: WriteCase,
    cases_root: Path,
    tmp_path: Path,
) -> None:
    replay = tmp_path / "t.json"
    replay.write_text('[{"path": "#meta", "suites": ["look"]}]', encoding="utf-8")
    base = ("run", "--replay", str(replay), "--cases", str(cases_root))
    assert "no cases under" in refused(capsys, *base)
    write_case("look", "ok", TEXT_STEP.format(id="ok"))
    assert "no such case(s): missing" in refused(capsys, *base, "--case", "missing")
    assert "name the model to evaluate with --model" in refused(capsys, *base)
    write_case("look", "bad", "id: [broken\n")
    assert "the cases have problems" in refused(capsys, *base)

    assert main(["check", "--cases", str(cases_root)]) == 2
    assert "bad.yaml" in capsys.readouterr().err
