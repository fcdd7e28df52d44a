"""Run cases through the real AI step library and score them.

Each case runs ``ai.run_ai_step`` (the function the engine calls) with an
``AIStepContext`` built from the case: the model client, a :class:`FixtureNvr` that answers
from the case's fixtures, an unlimited budget, the site's facts and lists, the run's values
and time. Nothing of the step's logic is copied here: prompts, tools, agreement draws, the
evidence check and rule tables are the library's. A step that asks a person is resumed
with the case's ``ask_person`` reply (or "no answer").
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from ..ai import (
    AIStepContext,
    AIStepResult,
    AISuspended,
    Hardware,
    OllamaLLMClient,
    OllamaSettings,
    SiteRules,
    UnlimitedBudget,
    resume_ai_step,
    run_ai_step,
)
from .case_model import StepCase
from .fixture_nvr import FixtureNvr
from .judge import judge
from .progress import Progress
from .scoring import Check, Row, deterministic_checks, score

#: The run's time when a case sets none and has no events to follow.
FALLBACK_NOW = datetime(2026, 1, 15, 2, 15, tzinfo=UTC)
#: How many times one step may ask a person before the harness stops answering.
MAX_ASKS = 3
NO_ANSWER = "No answer: nobody replied in time."


@dataclass(frozen=True)
class Settings:
    """Where the models are and how to run them. ``judge_model`` None means rows that opt
    in to the judge fail with the reason (no judge of another family was found)."""

    ollama: str
    hardware: Hardware = "cpu"
    timeout_s: float = 180.0
    judge_model: str | None = None


def case_now(case: StepCase) -> datetime:
    """The run's time: the case's, else five minutes after its latest event, else a fixed
    time, so every run of a case (and its replay) sees the same windows."""
    if case.now is not None:
        return case.now if case.now.tzinfo else case.now.replace(tzinfo=UTC)
    times = [
        datetime.fromisoformat(e.started_at) for e in (*case.fixtures.events, *case.fixtures.search)
    ]
    if not times:
        return FALLBACK_NOW
    latest = max(t if t.tzinfo else t.replace(tzinfo=UTC) for t in times)
    return latest + timedelta(minutes=5)


class TooManyAsksError(RuntimeError):
    """A step kept asking a person; the case cannot be scored."""


async def _no_sleep(seconds: float) -> None:
    return None


def context_for(
    case: StepCase, llm: OllamaLLMClient, model: str, hardware: Hardware
) -> AIStepContext:
    now = case_now(case)
    return AIStepContext(
        llm=llm,
        nvr=FixtureNvr(case),
        budget=UnlimitedBudget(),
        hardware=hardware,
        site=SiteRules(facts=case.facts, lists=case.lists),
        values=case.values,
        camera=case.camera,
        model_name=model,
        frame_interval_s=0.0,
        now=lambda: now,
        sleep=_no_sleep,
    )


async def run_case(
    case: StepCase, llm: OllamaLLMClient, model: str, hardware: Hardware
) -> tuple[AIStepResult, float]:
    """The step's result on ``case`` and the seconds it took (the person's wait excluded)."""
    ctx = context_for(case, llm, model, hardware)
    t0 = time.perf_counter()
    out = await run_ai_step(case.step, ctx)
    asks = 0
    while isinstance(out, AISuspended) and asks < MAX_ASKS:
        asks += 1
        out = await resume_ai_step(case.step, ctx, out, case.ask_person or NO_ANSWER)
    seconds = time.perf_counter() - t0
    if isinstance(out, AISuspended):
        raise TooManyAsksError(f"{case.id}: the step asked a person more than {MAX_ASKS} times")
    return out, seconds


async def run_cases(
    cases: Sequence[StepCase],
    model: str,
    settings: Settings,
    progress: Progress,
) -> list[Row]:
    """Every case on ``model``, scored, in order."""
    llm = OllamaLLMClient(
        OllamaSettings(host=settings.ollama, model=model, timeout_seconds=settings.timeout_s)
    )
    judge_llm = (
        OllamaLLMClient(
            OllamaSettings(
                host=settings.ollama, model=settings.judge_model, timeout_seconds=settings.timeout_s
            )
        )
        if settings.judge_model
        else None
    )
    rows: list[Row] = []
    try:
        for case in cases:
            result, seconds = await run_case(case, llm, model, settings.hardware)
            verdict = await _verdict(case, result, judge_llm)
            row = score(case, result, model=model, seconds=seconds, judge=verdict)
            rows.append(row)
            progress.advance(f"{case.suite} {model} {case.id}: {row.status}")
    finally:
        await llm.aclose()
        if judge_llm is not None:
            await judge_llm.aclose()
    return rows


async def _verdict(
    case: StepCase, result: AIStepResult, judge_llm: OllamaLLMClient | None
) -> Check | None:
    """The judge's check for a row that opted in; asked only once the rules hold."""
    if case.judge is None:
        return None
    if not all(c.ok for c in deterministic_checks(case, result.decision)):
        return None  # the row fails on its rules; a judge could not make it pass
    if judge_llm is None:
        return Check(
            "judge",
            False,
            "no judge: the server has no model of another family; pass --judge-model",
        )
    return await judge(judge_llm, case, result.decision)
