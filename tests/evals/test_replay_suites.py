"""``evals run --replay`` without ``--suite`` replays the suites the recording holds: a
look-only recording replays the look suite, not investigate cases it has no answers for."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from evals.cli import main

from .test_replay_scoring import INVESTIGATE, LOOK, WriteCase, record


async def test_a_look_only_recording_replays_without_naming_its_suite(
    write_case: WriteCase, cases_root: Path, tmp_path: Path
) -> None:
    write_case("look", "right", LOOK.format(id="right", script="say-yes"))
    write_case("investigate", "visitor", INVESTIGATE.format(script="say-yes"))
    transcript = tmp_path / "answers.json"
    rc, _ = await record(cases_root, transcript, tmp_path / "live.json", "--suite", "look")
    assert rc == 0

    replayed = tmp_path / "replay.json"
    rc = await asyncio.to_thread(
        main,
        ["run", "--replay", str(transcript), "--cases", str(cases_root),
         "--json", str(replayed), "--no-progress"],
    )  # fmt: skip
    report = json.loads(replayed.read_text())
    assert rc == 0
    assert report["replay_misses"] == 0
    assert [r["metrics"]["suite"] for r in report["results"]] == ["look"]

    # Naming a suite still wins: the investigate case has no recorded answer.
    rc = await asyncio.to_thread(
        main,
        ["run", "--replay", str(transcript), "--cases", str(cases_root), "--suite",
         "investigate", "--json", str(replayed), "--no-progress"],
    )  # fmt: skip
    assert rc == 1
    assert json.loads(replayed.read_text())["replay_misses"] > 0
