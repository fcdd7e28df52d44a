"""``python -m evals``: run the AI step's eval suites against a model, record, replay, check.

    python -m evals run --suite look --ollama http://host:11434 --model qwen2.5vl:3b
    python -m evals run --suite look --suite investigate --ollama URL --model a --model b
    python -m evals run --suite draft --ollama URL --model M       # Describe it's drafts
    python -m evals record --suite look --ollama URL --model M --out answers.json
    python -m evals run --replay answers.json
    python -m evals check

Exit status: 0 when every row that is not xfail passed, 1 when one failed, 2 when the run
could not start (case files with problems, a transcript that cannot be read, bad options).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

from custom_components.opennvr_workflows.ai import Hardware
from custom_components.opennvr_workflows.evaluation.case_loader import (
    DEFAULT_CASES,
    CaseError,
    load_suite,
)
from custom_components.opennvr_workflows.evaluation.case_model import (
    STEP_SUITES,
    SUITES,
    DraftCase,
    StepCase,
    Suite,
)
from custom_components.opennvr_workflows.evaluation.draft_scoring import summarize_drafts
from custom_components.opennvr_workflows.evaluation.harness import Settings, run_cases
from custom_components.opennvr_workflows.evaluation.judge import default_judge, server_models
from custom_components.opennvr_workflows.evaluation.metrics import summarize
from custom_components.opennvr_workflows.evaluation.progress import Progress

from .drafting import run_drafts
from .relay import Relay, TranscriptError, load_transcript, transcript_meta
from .report import DraftSuiteResult, Report, SuiteResult


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="python -m evals", description="Measure the AI step on golden cases."
    )
    sub = top.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run suites live (--ollama) or from a recording (--replay)")
    record = sub.add_parser("record", help="run suites live and save the model's answers")
    for p in (run, record):
        p.add_argument(
            "--suite",
            action="append",
            choices=SUITES,
            help="look, investigate or draft; repeat for several (default: look and "
            "investigate; a replay: the suites it recorded)",
        )
        p.add_argument("--model", action="append", help="the answer model; repeat to compare")
        p.add_argument(
            "--judge-model",
            help="the judge for rows that opt in (default: a model "
            "of another family on the same server)",
        )
        p.add_argument(
            "--hardware",
            choices=("cpu", "gpu"),
            help="the hardware class: gpu "
            "draws the decision three times (agreement), cpu once (default cpu)",
        )
        p.add_argument("--cases", type=Path, default=DEFAULT_CASES, help="the cases folder")
        p.add_argument("--case", action="append", help="run only this case id (repeatable)")
        p.add_argument("--timeout", type=float, default=180.0, help="seconds per model call")
        p.add_argument("--json", type=Path, help="write the JSON report here")
        p.add_argument("--markdown", type=Path, help="write the markdown report here")
        p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    run.add_argument("--ollama", help="the Ollama server's URL (a live run)")
    run.add_argument("--replay", type=Path, help="a transcript from `evals record` (no model)")
    record.add_argument("--ollama", required=True, help="the Ollama server's URL")
    record.add_argument("--out", type=Path, required=True, help="where to save the answers")
    check = sub.add_parser("check", help="check every case file (all suites, draft included)")
    check.add_argument("--cases", type=Path, default=DEFAULT_CASES)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.command == "check":
        return check(args.cases)
    try:
        return asyncio.run(_run(args))
    except _UsageError as err:
        print(f"evals: {err}", file=sys.stderr)
        return 2


class _UsageError(Exception):
    pass


def check(root: Path) -> int:
    """Load every suite; print the located problems, or how many cases each suite has."""
    bad = False
    for suite in SUITES:
        try:
            cases = load_suite(root, suite)
        except CaseError as err:
            print(str(err), file=sys.stderr)
            bad = True
            continue
        xfail = sum(1 for c in cases if c.xfail)
        print(f"{suite}: {len(cases)} case(s), {xfail} xfail")
    return 2 if bad else 0


def _cases(
    root: Path, suites: Sequence[Suite], only: Sequence[str] | None
) -> list[StepCase | DraftCase]:
    cases: list[StepCase | DraftCase] = []
    try:
        for suite in suites:
            cases += load_suite(root, suite)
    except CaseError as err:
        raise _UsageError(f"the cases have problems:\n{err}") from err
    if only:
        unknown = sorted(set(only) - {c.id for c in cases})
        if unknown:
            raise _UsageError(f"no such case(s): {', '.join(unknown)}")
        cases = [c for c in cases if c.id in only]
    if not cases:
        raise _UsageError(f"no cases under {root} for {', '.join(suites)}")
    return cases


async def _run(args: argparse.Namespace) -> int:
    replay: Path | None = getattr(args, "replay", None)
    if args.command == "run" and (replay is None) == (args.ollama is None):
        raise _UsageError("give --ollama URL (a live run) or --replay FILE (a recording)")
    meta: dict[str, Any] = {}
    entries: list[dict[str, Any]] | None = None
    if replay is not None:
        try:
            entries = load_transcript(replay)
        except TranscriptError as err:
            raise _UsageError(str(err)) from err
        meta = transcript_meta(entries)
    # A replay without --suite runs what was recorded (a look-only recording has no
    # investigate answers to replay); a live run, the step suites.
    recorded = [s for s in meta.get("suites") or () if s in SUITES]
    suites = cast(list[Suite], args.suite or recorded or list(STEP_SUITES))
    cases = _cases(args.cases, suites, args.case)
    models: list[str] = args.model or list(meta.get("models") or [])
    if not models:
        raise _UsageError("name the model to evaluate with --model")
    hardware = cast(Hardware, args.hardware or meta.get("hardware") or "cpu")
    report = Report(
        source="replay" if replay else "live",
        hardware=hardware,
        ollama=args.ollama,
        replay=str(replay) if replay else None,
        recorded=meta,
    )
    relay = Relay(transcript=entries) if entries is not None else None
    if args.command == "record":
        relay = Relay(upstream=args.ollama)
    progress = Progress(len(cases) * len(models), enabled=not args.no_progress)
    if relay is None:
        await _evaluate(args.ollama, cases, models, hardware, args, report, progress)
    else:
        async with relay:
            await _evaluate(relay.url, cases, models, hardware, args, report, progress)
        report.replay_misses = len(relay.misses)
        if args.command == "record":
            relay.save(
                args.out,
                models=models,
                hardware=hardware,
                suites=list(suites),
                judge_model=report.judge_model,
            )
            print(f"evals: answers saved to {args.out}", file=sys.stderr)
    progress.close()
    _write(report, args)
    return 0 if report.ok else 1


async def _evaluate(
    url: str,
    cases: list[StepCase | DraftCase],
    models: list[str],
    hardware: Hardware,
    args: argparse.Namespace,
    report: Report,
    progress: Progress,
) -> None:
    wants_judge = any(isinstance(c, StepCase) and c.judge for c in cases)
    for model in models:
        judge_model = args.judge_model
        if wants_judge and judge_model is None:
            judge_model = default_judge(model, await server_models(url))
        report.judge_model = judge_model
        settings = Settings(
            ollama=url, hardware=hardware, timeout_s=args.timeout, judge_model=judge_model
        )
        for suite in dict.fromkeys(c.suite for c in cases):
            if suite == "draft":
                drafts = [c for c in cases if isinstance(c, DraftCase)]
                drafted = await run_drafts(drafts, model, settings, progress)
                report.drafts.append(DraftSuiteResult(summarize_drafts(model, drafted), drafted))
                continue
            group = [c for c in cases if isinstance(c, StepCase) and c.suite == suite]
            rows = await run_cases(group, model, settings, progress)
            report.results.append(SuiteResult(summarize(suite, model, rows), rows))


def _write(report: Report, args: argparse.Namespace) -> None:
    text = report.markdown()
    print(text)
    if args.markdown:
        args.markdown.write_text(text + "\n", encoding="utf-8")
    if args.json:
        args.json.write_text(json.dumps(report.as_json(), indent=1) + "\n", encoding="utf-8")
