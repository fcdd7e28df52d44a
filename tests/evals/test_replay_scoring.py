"""The harness end to end on scripted answers, recorded and replayed with no model.

The scripted answers prove the scoring, nothing about any model: a wrong answer fails its
row, an xfail row that passes is flagged XPASS (stale), an xfail row that fails is XFAIL,
the judge runs only for rows that opt in, the metrics are what the rows say, and a replay
scores exactly what the recording did.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from custom_components.opennvr_workflows.engine import wilson_interval
from evals.cli import main
from evals.relay import load_transcript
from tests.fakes.ollama_server import (
    FakeOllama,
    FromSchema,
    Received,
    ReplayResponder,
    Reply,
    ToolCalls,
)

WriteCase = Callable[[str, str, str], Path]
ANSWER_MODEL = "scripted-answers:1b"
JUDGE_MODEL = "other-family:1b"
MODELS = {ANSWER_MODEL: ("completion", "vision", "tools"), JUDGE_MODEL: ("completion",)}

LOOK = """\
id: {id}
suite: look
about: A scripted row.
step:
  ai: {{ mode: look, prompt: "Is the note a yes?", input: text, text: "{{note}}",
        decision: [yes, no] }}
event: {{ note: "{script}" }}
expect:
  decision: yes
  keywords: [[green, lime]]
"""

INVESTIGATE = """\
id: visitor-check
suite: investigate
about: A scripted row that needs site_lookup.
step:
  ai: {{ mode: investigate, goal: "Is {{camera}}'s visitor expected?", tools: [site_lookup],
        decision: [expected, unexpected] }}
event: {{ camera: gate, note: "{script}" }}
fixtures: {{ cameras: [gate] }}
site: {{ lists: {{ visitors: ["Ana, Tuesday"] }} }}
expect:
  decision: expected
  tools: [site_lookup]
"""


def scripted(received: Received) -> Reply:
    """Answers chosen by the case's note: ``yes`` / ``no`` and whether a tool is called."""
    if received.model == JUDGE_MODEL:
        verdict = "pass" if "judge-pass" in received.user else "fail"
        return FromSchema(values={"verdict": verdict, "why": "scripted verdict"})
    user = received.user
    if received.tool_names and not any(m.get("role") == "tool" for m in received.messages):
        return ToolCalls(calls=[("site_lookup", {"list": "visitors"})])
    answer = "yes" if ("say-yes" in user or "judge-" in user) else "no"
    if received.format and "expected" in json.dumps(received.format):
        answer = "expected" if "say-yes" in user else "unexpected"
    confidence = 0.9 if answer in ("yes", "expected") else 0.4
    return FromSchema(
        values={"decision": answer, "reason": "a lime green note", "confidence": confidence}
    )


def write_suite(write_case: WriteCase) -> None:
    write_case("look", "right", LOOK.format(id="right", script="say-yes"))
    write_case("look", "wrong", LOOK.format(id="wrong", script="say-no"))
    write_case("look", "stale", LOOK.format(id="stale", script="say-yes") + "xfail: a known gap\n")
    write_case("look", "gap", LOOK.format(id="gap", script="say-no") + "xfail: a known gap\n")
    judged = "judge: The reason must name the note's colour.\n"
    write_case("look", "judged-pass", LOOK.format(id="judged-pass", script="judge-pass") + judged)
    write_case("look", "judged-fail", LOOK.format(id="judged-fail", script="judge-fail") + judged)
    write_case("investigate", "visitor", INVESTIGATE.format(script="say-yes"))


async def record(cases_root: Path, out: Path, report: Path, *extra: str) -> tuple[int, FakeOllama]:
    async with FakeOllama(models=MODELS) as fake:
        fake.responder = scripted
        rc = await asyncio.to_thread(
            main,
            [
                "record",
                "--cases", str(cases_root),
                "--ollama", fake.url,
                "--model", ANSWER_MODEL,
                "--out", str(out),
                "--json", str(report),
                "--no-progress",
                *extra,
            ],
        )  # fmt: skip
    return rc, fake


def rows_of(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["case_id"]: row for r in report["results"] for row in r["rows"]}


async def test_record_then_replay_scores_the_scripted_answers(
    write_case: WriteCase, cases_root: Path, tmp_path: Path
) -> None:
    write_suite(write_case)
    transcript, live_json = tmp_path / "answers.json", tmp_path / "live.json"
    rc, fake = await record(cases_root, transcript, live_json)
    assert rc == 1  # the wrong row and the judged-fail row fail the run
    live = json.loads(live_json.read_text())
    rows = rows_of(live)
    assert {k: r["status"] for k, r in rows.items()} == {
        "right": "PASS",
        "wrong": "FAIL",
        "stale": "XPASS",
        "gap": "XFAIL",
        "judged-pass": "PASS",
        "judged-fail": "FAIL",
        "visitor-check": "PASS",
    }
    wrong = {c["name"]: c for c in rows["wrong"]["checks"]}
    assert not wrong["decision"]["ok"]
    assert wrong["decision"]["detail"] == "got no, expected yes"
    assert wrong["keyword green|lime"]["ok"]
    assert "judge" not in wrong  # no rubric: never judged
    judged = {c["name"]: c for c in rows["judged-fail"]["checks"]}
    assert judged["judge"] == {"name": "judge", "ok": False, "detail": "fail: scripted verdict"}
    assert rows["stale"]["stale_xfail"]
    assert live["stale_xfail"] == [f"look/stale ({ANSWER_MODEL})"]
    assert live["judge_model"] == JUDGE_MODEL  # the default: another family on the server
    assert [r.model for r in fake.chats].count(JUDGE_MODEL) == 2  # the opted-in rows only
    assert rows["visitor-check"]["tools_run"] == ["site_lookup"]

    look = next(r["metrics"] for r in live["results"] if r["metrics"]["suite"] == "look")
    assert (look["rows"], look["passed"], look["failed"]) == (6, 2, 2)
    assert (look["xfailed"], look["xpassed"]) == (1, 1)
    assert look["right"] == 4  # right, stale and both judged rows decided yes
    assert look["accuracy"] == 4 / 6
    assert (look["wilson_low"], look["wilson_high"]) == wilson_interval(4, 6)
    assert look["unsure_rate"] == 0.0
    assert look["needed_tools_rate"] is None
    assert look["auroc_self_reported"] == 1.0  # 0.9 on every right row, 0.4 on the wrong
    investigate = next(
        r["metrics"] for r in live["results"] if r["metrics"]["suite"] == "investigate"
    )
    assert investigate["needed_tools_rate"] == 1.0

    entries = load_transcript(transcript)
    assert entries[0]["path"] == "#meta"
    assert entries[0]["models"] == [ANSWER_MODEL]
    replay_json = tmp_path / "replay.json"
    rc = await asyncio.to_thread(
        main,
        ["run", "--replay", str(transcript), "--cases", str(cases_root),
         "--json", str(replay_json), "--no-progress"],
    )  # fmt: skip
    assert rc == 1
    replay = json.loads(replay_json.read_text())
    assert replay["source"] == "replay"
    assert replay["replay_misses"] == 0
    assert "answers recorded from http://127.0.0.1:" in replay["origin"]
    again = rows_of(replay)
    for case_id, row in rows.items():
        for key in ("status", "decision", "fields", "reason", "confidence", "tools_run"):
            assert again[case_id][key] == row[key], (case_id, key)


async def test_only_non_xfail_rows_decide_the_exit_status(
    write_case: WriteCase, cases_root: Path, tmp_path: Path
) -> None:
    write_suite(write_case)
    rc, _ = await record(
        cases_root, tmp_path / "a.json", tmp_path / "r.json",
        "--case", "right", "--case", "stale", "--case", "gap", "--suite", "look",
    )  # fmt: skip
    assert rc == 0  # XPASS and XFAIL rows are reported, never failed
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["ok"] is True
    assert report["stale_xfail"] == [f"look/stale ({ANSWER_MODEL})"]


async def test_a_changed_case_misses_the_recording_and_says_so(
    write_case: WriteCase, cases_root: Path, tmp_path: Path
) -> None:
    write_case("look", "right", LOOK.format(id="right", script="say-yes"))
    transcript = tmp_path / "a.json"
    rc, _ = await record(cases_root, transcript, tmp_path / "r.json")
    assert rc == 0
    write_case("look", "right", LOOK.format(id="right", script="say-yes, edited"))
    out = tmp_path / "replay.json"
    rc = await asyncio.to_thread(
        main,
        ["run", "--replay", str(transcript), "--cases", str(cases_root), "--json", str(out),
         "--no-progress"],
    )  # fmt: skip
    assert rc == 1
    report = json.loads(out.read_text())
    assert report["replay_misses"] == 1
    row = rows_of(report)["right"]
    assert (row["decision"], row["unsure_reason"]) == ("unsure", "llm_down")
    assert "no recorded answer" in json.dumps(row["trace"])


async def test_agreement_draws_replay_in_their_recorded_order(
    write_case: WriteCase, cases_root: Path, tmp_path: Path
) -> None:
    """On the gpu class the decision is drawn three times with the same request; a replay
    answers them in order, so a split vote stays split."""
    write_case("look", "right", LOOK.format(id="right", script="say-yes"))
    votes = iter(["yes", "no", "yes"])

    def split(received: Received) -> Reply:
        return FromSchema(values={"decision": next(votes), "reason": "lime", "confidence": 1})

    transcript = tmp_path / "a.json"
    async with FakeOllama(models=MODELS) as fake:
        fake.responder = split
        rc = await asyncio.to_thread(
            main,
            ["record", "--cases", str(cases_root), "--ollama", fake.url, "--model",
             ANSWER_MODEL, "--hardware", "gpu", "--out", str(transcript), "--no-progress",
             "--json", str(tmp_path / "live.json")],
        )  # fmt: skip
    live = rows_of(json.loads((tmp_path / "live.json").read_text()))["right"]
    assert rc == 1
    assert len({e["key"] for e in load_transcript(transcript)[1:]}) == 1
    assert (live["decision"], live["unsure_reason"]) == ("unsure", "below_floor")
    assert live["confidence"] == 2 / 3
    out = tmp_path / "replay.json"
    await asyncio.to_thread(
        main,
        ["run", "--replay", str(transcript), "--cases", str(cases_root), "--json", str(out),
         "--no-progress"],
    )  # fmt: skip
    replayed = rows_of(json.loads(out.read_text()))["right"]
    assert replayed["confidence"] == 2 / 3
    assert json.loads(out.read_text())["hardware"] == "gpu"


async def test_the_ollama_fake_serves_a_recording_too(
    write_case: WriteCase, cases_root: Path, tmp_path: Path
) -> None:
    """The transcript is the test fake's format, with its request key: the fake answers a
    recording exactly as the harness's own relay does."""
    write_suite(write_case)
    transcript = tmp_path / "a.json"
    await record(cases_root, transcript, tmp_path / "live.json")
    entries = load_transcript(transcript)
    for entry in entries:
        if entry.get("path") == "/api/chat":
            assert len(entry["key"]) == 64
    async with FakeOllama(models=MODELS) as fake:
        fake.responder = ReplayResponder(entries)
        rc = await asyncio.to_thread(
            main,
            ["run", "--cases", str(cases_root), "--ollama", fake.url, "--model", ANSWER_MODEL,
             "--json", str(tmp_path / "fake.json"), "--no-progress"],
        )  # fmt: skip
        assert fake.chats
    assert rc == 1
    live = rows_of(json.loads((tmp_path / "live.json").read_text()))
    served = rows_of(json.loads((tmp_path / "fake.json").read_text()))
    assert {k: r["status"] for k, r in served.items()} == {k: r["status"] for k, r in live.items()}


async def test_without_a_judge_the_opted_in_rows_fail_and_say_why(
    write_case: WriteCase, cases_root: Path, tmp_path: Path
) -> None:
    """A server with no model of another family: the rows that opt in fail, saying so."""
    judged = "judge: The reason must name the note's colour.\n"
    write_case("look", "judged", LOOK.format(id="judged", script="judge-pass") + judged)
    async with FakeOllama(models={ANSWER_MODEL: MODELS[ANSWER_MODEL]}) as fake:
        fake.responder = scripted
        rc = await asyncio.to_thread(
            main,
            ["run", "--cases", str(cases_root), "--ollama", fake.url, "--model", ANSWER_MODEL,
             "--json", str(tmp_path / "r.json"), "--no-progress"],
        )  # fmt: skip
    assert rc == 1
    checks = {c["name"]: c for c in rows_of(json.loads((tmp_path / "r.json").read_text()))[
        "judged"]["checks"]}  # fmt: skip
    assert checks["decision"]["ok"]
    assert not checks["judge"]["ok"]
    assert "no judge" in checks["judge"]["detail"]
