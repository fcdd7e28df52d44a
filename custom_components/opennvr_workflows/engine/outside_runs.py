"""Runs that no workflow started: an AI step asked from outside (Home Assistant's AI Task).

Such a step is answered through the same AI step library as a workflow's, and is kept the
same way, so it is never the invisible part: one ``workflow_runs`` row (already ended), its
AI step's row with the decision, its trace in ``workflow_tool_calls`` (one row per picture
fetched and per model call), and its line in the history index. Its ``workflow_id`` is a
name no workflow file can have (a file's id has no ``-``), so it never mixes with a
workflow's runs, and the hourly AI window of that name counts its model calls: a restart
counts that window again from the trace's ``llm`` rows (:mod:`.restore`), and retention
forgets these runs with the others.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Final

from .events import NvrEvent
from .history import index_decision
from .ports import AiResult
from .recorder import STEP_SQL, TRACE_SQL, ai_columns, dumps, trace_params
from .store import Store

#: The version column of such a run: there is no workflow version behind it.
OUTSIDE_VERSION: Final = "-"
#: The one step of such a run.
STEP_PATH: Final = "then.0"

_RUN_SQL: Final = (
    "INSERT OR REPLACE INTO workflow_runs (id, workflow_id, version, correlation_id, chain, "
    "depth, trigger, limit_key, test, status, outcome, started_at, ended_at) "
    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)"
)


@dataclass(frozen=True, slots=True)
class OutsideRun:
    """One AI step asked from outside a workflow, and what it decided."""

    run_id: str
    #: The runs' name (never a workflow file's id), e.g. ``ai-task``.
    workflow_id: str
    event: NvrEvent
    result: AiResult
    started_at: float
    ended_at: float
    #: What the step was asked (its step row's ``inputs``).
    inputs: dict[str, object]
    limit_key: str = "outside"

    @property
    def correlation_id(self) -> str:
        return f"{self.workflow_id}/{self.run_id}"


def record_outside_run(store: Store, run: OutsideRun) -> None:
    """Queue the run, its step and its trace as one write, then its history line (the
    store's single writer commits them with the engine's own rows)."""
    ai = run.result
    ms = int((run.ended_at - run.started_at) * 1000)
    step = (
        run.run_id,
        STEP_PATH,
        1,
        "ai",
        "done",
        dumps(run.inputs),
        dumps(
            {
                "decision": ai.outcome,
                "fields": dict(ai.fields),
                "reason": ai.reason,
                "confidence": ai.confidence,
                "evidence": list(ai.evidence),
            }
        ),
        ai.outcome,
        run.started_at,
        run.ended_at,
        ms,
        *ai_columns(ai, None),
    )
    row = (
        run.run_id,
        run.workflow_id,
        OUTSIDE_VERSION,
        run.correlation_id,
        dumps([run.correlation_id]),
        1,
        dumps(run.event.summary()),
        run.limit_key,
        0,
        "done",
        ai.outcome,
        run.started_at,
        run.ended_at,
    )
    trace = trace_params(run.run_id, STEP_PATH, run.workflow_id, ai.trace)

    def write(conn: sqlite3.Connection) -> None:
        conn.execute(_RUN_SQL, row)
        conn.execute(STEP_SQL, step)
        conn.executemany(TRACE_SQL, trace)

    store.submit_nowait(write)
    index_decision(store, run.run_id, STEP_PATH)
