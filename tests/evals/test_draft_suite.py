"""The draft suite end to end on scripted answers, recorded and replayed with no model.

The scripted answers prove the scoring only, nothing about any model: a valid draft that
says what the expected workflow says passes, a draft repaired once passes with its repair
counted, a draft the validator still refuses after two repairs fails as invalid, a valid
draft with a wrong field fails on that field, an xfail row that passes is flagged stale,
and a replay scores exactly what the recording did.
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from custom_components.opennvr_workflows.engine import wilson_interval
from custom_components.opennvr_workflows.workflow import load_template, workflow_to_data
from evals.cli import main
from tests.fakes.ollama_server import Answer, FakeOllama, Received, Reply

WriteCase = Callable[[str, str, str], Path]
MODEL = "scripted-drafts:1b"

CASE = """\
id: {id}
suite: draft
about: A scripted draft row.
sentence: "Tell us about parcels at the front door ({script})."
site:
  camera_roles: [front_door]
  skills: [detector, vision_model]
expect:
  workflow: {{ template: parcel_at_door }}
  match: ["$.when", "$.then[0].ai.decision"]
"""


def parcel() -> dict[str, Any]:
    return workflow_to_data(load_template("parcel_at_door"))


def scripted(received: Received) -> Reply:
    """A draft chosen by the sentence's script word; ``repair`` is right once told why."""
    user = received.user
    data = parcel()
    told = "validator refused" in user
    if "wrong-field" in user:
        data["then"][0]["ai"]["decision"] = ["parcel", "nothing"]
        data["then"][0]["ai"]["nothing"] = data["then"][0]["ai"].pop("no_parcel")
    elif "never-valid" in user or ("repair" in user and not told):
        data["when"]["event"]["cameras"] = ["garage"]
    return Answer(copy.deepcopy(data))


def write_suite(write_case: WriteCase) -> None:
    write_case("draft", "right", CASE.format(id="right", script="right"))
    write_case("draft", "repair", CASE.format(id="repair", script="repair"))
    write_case("draft", "invalid", CASE.format(id="invalid", script="never-valid"))
    write_case("draft", "wrong", CASE.format(id="wrong", script="wrong-field"))
    stale = CASE.format(id="stale", script="right") + "xfail: a known gap in drafting\n"
    write_case("draft", "stale", stale)


def rows_of(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["case_id"]: row for d in report["drafts"] for row in d["rows"]}


async def test_the_draft_suite_scores_validity_then_fields_and_replays(
    write_case: WriteCase, cases_root: Path, tmp_path: Path
) -> None:
    write_suite(write_case)
    transcript, live_json = tmp_path / "drafts.json", tmp_path / "live.json"
    markdown = tmp_path / "live.md"
    async with FakeOllama(models={MODEL: ("completion", "tools")}) as fake:
        fake.responder = scripted
        rc = await asyncio.to_thread(
            main,
            ["record", "--suite", "draft", "--cases", str(cases_root), "--ollama", fake.url,
             "--model", MODEL, "--out", str(transcript), "--json", str(live_json),
             "--markdown", str(markdown), "--no-progress"],
        )  # fmt: skip
    assert rc == 1  # the invalid and the wrong-field rows fail the run
    live = json.loads(live_json.read_text())
    rows = rows_of(live)
    assert {k: r["status"] for k, r in rows.items()} == {
        "right": "PASS",
        "repair": "PASS",
        "invalid": "FAIL",
        "wrong": "FAIL",
        "stale": "XPASS",
    }
    assert (rows["right"]["repairs"], rows["repair"]["repairs"]) == (0, 1)
    assert rows["invalid"]["valid"] is False
    assert rows["invalid"]["repairs"] == 2  # the first draft and two repairs, then refused
    assert "WF-CAMERA-ROLE-UNMAPPED" in rows["invalid"]["problems"][0]
    assert rows["invalid"]["fields_matched"] == 0
    assert "state: test" in rows["right"]["yaml"]
    wrong = {c["name"]: c for c in rows["wrong"]["checks"]}
    assert wrong["valid"]["ok"]
    assert wrong["field $.when"]["ok"]
    assert not wrong["field $.then[0].ai.decision"]["ok"]
    assert "'nothing'" in wrong["field $.then[0].ai.decision"]["detail"]
    assert live["stale_xfail"] == [f"draft/stale ({MODEL})"]
    # every request carried the contract's schema and the case's site
    assert all(r.format and r.format.get("$schema") for r in fake.chats)
    assert all("front_door" in r.system for r in fake.chats)

    (metrics,) = [d["metrics"] for d in live["drafts"]]
    assert (metrics["rows"], metrics["valid"], metrics["passed"], metrics["failed"]) == (5, 4, 2, 2)
    assert (metrics["wilson_low"], metrics["wilson_high"]) == wilson_interval(4, 5)
    assert (metrics["fields_matched"], metrics["fields_total"]) == (7, 10)
    assert metrics["all_fields"] == 3
    assert metrics["mean_repairs"] == 0.25
    table = markdown.read_text()
    assert f"| draft | {MODEL} | 5 | 2 | 2 | 0 | 1 | 4/5 = 80% (" in table
    assert "| 7/10 = 70% | 3 |" in table

    replay_json = tmp_path / "replay.json"
    rc = await asyncio.to_thread(
        main,
        ["run", "--replay", str(transcript), "--cases", str(cases_root), "--suite", "draft",
         "--json", str(replay_json), "--no-progress"],
    )  # fmt: skip
    assert rc == 1
    replay = json.loads(replay_json.read_text())
    assert replay["replay_misses"] == 0
    again = rows_of(replay)
    for case_id, row in rows.items():
        for key in ("status", "valid", "fields_matched", "repairs", "problems", "yaml"):
            assert again[case_id][key] == row[key], (case_id, key)


async def test_the_shipped_draft_cases_run_and_a_perfect_drafter_passes_them(
    tmp_path: Path,
) -> None:
    """Every shipped draft case, answered with its own expected template: each is valid on
    its site and matches every field (the cases are consistent with their sites)."""
    from custom_components.opennvr_workflows.evaluation.case_loader import (
        DEFAULT_CASES,
        load_suite,
    )
    from custom_components.opennvr_workflows.evaluation.case_model import DraftCase

    cases = [c for c in load_suite(DEFAULT_CASES, "draft") if isinstance(c, DraftCase)]
    by_sentence = {json.dumps(c.sentence): workflow_to_data(c.expected) for c in cases}

    def perfect(received: Received) -> Reply:
        (data,) = [d for s, d in by_sentence.items() if s in received.user]
        return Answer(data)

    out = tmp_path / "shipped.json"
    async with FakeOllama(models={MODEL: ("completion",)}) as fake:
        fake.responder = perfect
        rc = await asyncio.to_thread(
            main,
            ["run", "--suite", "draft", "--ollama", fake.url, "--model", MODEL,
             "--json", str(out), "--no-progress"],
        )  # fmt: skip
    report = json.loads(out.read_text())
    rows = rows_of(report)
    assert {k: (r["status"], r["repairs"]) for k, r in rows.items()} == {
        c.id: ("PASS", 0) for c in cases
    }, [r["problems"] for r in rows.values()]
    assert rc == 0
