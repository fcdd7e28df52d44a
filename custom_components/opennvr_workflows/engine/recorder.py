"""Step records: the in-memory mirror of ``workflow_run_steps`` and its writes.

Every executor goes through :meth:`StepRecorder.record`, so the record in
memory (which the replay reads) and the row queued for the database (which a
restart reads) can never disagree.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any, Final

import orjson

from .history import index_decision
from .ports import AiResult, JsonMap, RunContext, SiteClock
from .records import SETTLED, ActiveRun, StepRecord
from .store import StoreSlot

STEP_SQL: Final = (
    "INSERT OR REPLACE INTO workflow_run_steps (run_id, path, seq, kind, status, inputs, "
    "result, outcome, started_at, ended_at, ms, fields, reason, confidence, "
    "confidence_source, self_reported, unsure_reason, rule, model, usage, state) "
    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
)
TRACE_SQL: Final = (
    "INSERT OR IGNORE INTO workflow_tool_calls (id, run_id, step_path, workflow_id, kind, "
    "name, args_asked, result, status, mode, started_at, ms, tokens_in, tokens_out) "
    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
)


#: The standard library's encoder, for what orjson refuses (an integer past 64 bits).
_ENCODE: Final = json.JSONEncoder(default=str, separators=(",", ":")).encode
#: What orjson hands to ``default`` (``str``) as the standard encoder would: dataclasses and
#: dates are written as their ``str()``, not as orjson's own forms; keys that are not
#: strings become strings.
_ORJSON_OPTIONS: Final = (
    orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_NON_STR_KEYS
)


def dumps(value: Any) -> str | None:
    """Compact JSON for a column (``None`` stays NULL).

    orjson (Home Assistant's own JSON library) rather than the standard encoder: a run
    writes eight columns of JSON, and the standard one took about 1.3 µs a column against
    0.2 (its Python-level setup per call). The text differs only where JSON allows it
    (non-ASCII written as UTF-8 rather than escaped; NaN as null); reading it back gives
    the same values."""
    if value is None:
        return None
    try:
        return orjson.dumps(value, default=str, option=_ORJSON_OPTIONS).decode()
    except orjson.JSONEncodeError:
        return _ENCODE(value)


def ai_columns(ai: AiResult | None, state: dict[str, Any] | None) -> tuple[Any, ...]:
    """The AI columns of a ``workflow_run_steps`` row (from ``fields`` to ``state``): the
    decision's when ``ai`` is given, else empty but for the suspended state."""
    if ai is None:
        return (None, None, None, None, None, None, None, None, None, dumps(state))
    return (
        dumps(dict(ai.fields)),
        ai.reason,
        ai.confidence,
        ai.confidence_source,
        ai.self_reported,
        ai.unsure_reason,
        ai.rule,
        ai.model,
        dumps(dict(ai.usage)),
        dumps(state),
    )


def trace_params(
    run_id: str, path: str, workflow_id: str, rows: Sequence[JsonMap]
) -> list[tuple[Any, ...]]:
    """``workflow_tool_calls`` rows (:data:`TRACE_SQL`) for an AI step's trace."""
    return [
        (
            str(r.get("id")),
            run_id,
            path,
            workflow_id,
            str(r.get("kind", "tool")),
            str(r.get("name", "")),
            dumps(r.get("args_asked")),
            str(r.get("result", "")),
            str(r.get("status", "ok")),
            r.get("mode"),
            float(r.get("started_at") or 0.0),
            int(r.get("ms") or 0),
            r.get("tokens_in"),
            r.get("tokens_out"),
        )
        for r in rows
    ]


def run_context(
    run: ActiveRun, path: str, *, ai_derived: bool | None = None, needs_person: bool = False
) -> RunContext:
    """What the host's effects and the AI port learn about the step calling them;
    ``ai_derived`` (default: the run's) says the effect carries AI output, ``needs_person``
    that nothing moving things may act at this step (see :class:`.ports.RunContext`)."""
    return RunContext(
        workflow_id=run.workflow_id,
        workflow_name=run.workflow.name,
        version=run.version,
        run_id=run.run_id,
        correlation_id=run.correlation_id,
        chain=run.chain,
        step_path=path,
        test=run.test,
        trigger=run.event,
        ai_derived=run.ai_derived if ai_derived is None else ai_derived,
        needs_person=needs_person,
        trial=run.trial,
        resumed=run.resumed,
    )


class StepRecorder:
    """Writes step records and AI tool-call traces."""

    def __init__(self, db: StoreSlot, clock: SiteClock) -> None:
        self._db = db
        self._clock = clock

    def record(
        self,
        run: ActiveRun,
        path: str,
        kind: str,
        status: str,
        *,
        outcome: str | None = None,
        inputs: dict[str, Any] | None = None,
        result: dict[str, Any] | None = None,
        state: dict[str, Any] | None = None,
        ai: AiResult | None = None,
        write: bool = True,
    ) -> StepRecord:
        """Update the step's record in memory and queue its row (``write=False``:
        memory only, for a state the next record of the step overwrites and a
        restart need not see)."""
        now = self._clock.now_ts()
        rec = run.steps.get(path)
        if rec is None:
            run.seq += 1
            rec = StepRecord(path=path, kind=kind, status=status, seq=run.seq, started_at=now)
            run.steps[path] = rec
        rec.status = status
        rec.outcome = outcome if outcome is not None else rec.outcome
        if inputs is not None:
            rec.inputs = inputs
        if result is not None:
            rec.result = result
        rec.state = state
        if status in SETTLED:
            rec.ended_at = now
        if not write:
            return rec
        ms = None if rec.ended_at is None else int((rec.ended_at - rec.started_at) * 1000)
        params: tuple[Any, ...] = (
            run.run_id,
            path,
            rec.seq,
            kind,
            status,
            dumps(rec.inputs),
            dumps(rec.result),
            rec.outcome,
            rec.started_at,
            rec.ended_at,
            ms,
        )
        self._db.store.execute_nowait(STEP_SQL, params + ai_columns(ai, state))
        if ai is not None and status == "done":
            index_decision(self._db.store, run.run_id, path)  # the history search's index
        return rec

    def trace(self, run: ActiveRun, path: str, rows: Sequence[JsonMap]) -> None:
        """Queue an AI step's tool calls (the trace its result carries)."""
        if not rows:
            return
        params = trace_params(run.run_id, path, run.workflow_id, rows)

        def write(conn: sqlite3.Connection) -> None:
            conn.executemany(TRACE_SQL, params)

        self._db.store.submit_nowait(write)
