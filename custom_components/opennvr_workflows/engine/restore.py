"""Restart: read the file in one transaction, then rebuild the engine's memory.

What survives a restart is exactly what is in the database: running and waiting
runs with their step records (their replay resumes them), their approvals, the
due rows, the marks, and the last hour of starts and AI calls (so a restart
never resets a workflow's hourly limits). A run whose workflow version cannot
be read any more is failed with a located reason instead of being resumed.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..workflow import model
from .admission import DELIVERED_WINDOW_S, REDELIVERING
from .catalog import Catalog
from .events import NvrEvent, word
from .limits import TEST_KEY
from .ports import SiteClock
from .records import ActiveRun, ApprovalRecord, StepRecord
from .store import Store, chunks
from .trust import Marks
from .versions import VersionDecodeError, loads

_LOGGER = logging.getLogger(__name__)

_REDELIVERING = ",".join(f"'{source}'" for source in sorted(REDELIVERING))


@dataclass(slots=True)
class Loaded:
    """What :meth:`Engine.start` reads from the file, in one transaction."""

    workflows: list[tuple[Any, ...]]
    runs: list[tuple[Any, ...]]
    steps: list[tuple[Any, ...]]
    approvals: list[tuple[Any, ...]]
    due: list[tuple[Any, ...]]
    marks: list[tuple[Any, ...]]
    versions: dict[tuple[str, str], str]
    starts: list[tuple[str, str, float]]
    ai_calls: list[tuple[str, float]]
    #: ``(workflow_id, alert_id, run_id, started_at)`` of the last hour's runs that an
    #: alert from a redelivering source started (see :class:`.admission.Delivered`).
    delivered: list[tuple[str, str, str, float]]


def load(conn: sqlite3.Connection, now: float) -> Loaded:
    """Read everything a start needs (runs on the store's thread)."""
    runs = conn.execute(
        "SELECT id, workflow_id, version, correlation_id, chain, trigger, limit_key, test, "
        "status, seen_again, unknown_steps, started_at FROM workflow_runs "
        "WHERE status IN ('running', 'waiting')"
    ).fetchall()
    run_ids = [r[0] for r in runs]
    # A run's id, its workflow's id and a row's kind come back in several tables' rows, each
    # read as a string of its own; the rows kept (due times, delivered alerts, approvals)
    # share the run's copy and the interned words, so a thousand waiting runs do not hold
    # each id three or four times.
    ids = dict(zip(run_ids, run_ids, strict=True))
    steps: list[tuple[Any, ...]] = []
    approvals: list[tuple[Any, ...]] = []
    versions: dict[tuple[str, str], str] = {}
    for chunk in chunks(run_ids, 500):
        marks = ",".join("?" * len(chunk))
        steps += conn.execute(
            "SELECT run_id, path, seq, kind, status, inputs, result, outcome, started_at, "
            f"ended_at, state FROM workflow_run_steps WHERE run_id IN ({marks})",
            chunk,
        ).fetchall()
        approvals += (
            (row[0], ids.get(row[1], row[1]), *row[2:])
            for row in conn.execute(
                "SELECT id, run_id, step_path, workflow_id, who, message, replies, "
                "default_reply, camera_id, status, reply, answered_by, asked, created_at, "
                f"expires_at, answered_at FROM workflow_approvals WHERE run_id IN ({marks})",
                chunk,
            )
        )
    for workflow_id, version in {(r[1], r[2]) for r in runs}:
        row = conn.execute(
            "SELECT source FROM workflow_versions WHERE workflow_id=? AND version=?",
            (workflow_id, version),
        ).fetchone()
        if row is not None:
            versions[(workflow_id, version)] = row[0]
    hour_ago = now - 3600.0
    return Loaded(
        workflows=conn.execute("SELECT id, state, reason, version FROM workflows").fetchall(),
        runs=runs,
        steps=steps,
        approvals=approvals,
        due=[
            (due_id, word(kind), word(workflow_id), ids.get(run_id, run_id), due_at, payload)
            for due_id, kind, workflow_id, run_id, due_at, payload in conn.execute(
                "SELECT id, kind, workflow_id, run_id, due_at, payload FROM workflow_due"
            )
        ],
        marks=conn.execute("SELECT run_id, right, ai_steps FROM workflow_marks").fetchall(),
        versions=versions,
        # Trials (limit key "trial:...") count against neither hourly window; a Test run
        # counts in the Test runs' (its key marked so, also for a run stored before Test
        # runs had keys of their own).
        starts=conn.execute(
            "SELECT workflow_id, CASE WHEN test AND limit_key NOT LIKE 'test:%' "
            "THEN 'test:' || limit_key ELSE limit_key END, started_at FROM workflow_runs "
            "WHERE started_at > ? AND limit_key NOT LIKE 'trial:%' ORDER BY started_at",
            (hour_ago,),
        ).fetchall(),
        ai_calls=conn.execute(
            "SELECT workflow_id, started_at FROM workflow_tool_calls WHERE kind='llm' "
            "AND started_at > ? AND run_id NOT IN (SELECT id FROM workflow_runs "
            "WHERE limit_key LIKE 'trial:%')",
            (hour_ago,),
        ).fetchall(),
        delivered=[
            (word(workflow_id), alert_id, ids.get(run_id, run_id), started_at)
            for workflow_id, alert_id, run_id, started_at in conn.execute(
                "SELECT workflow_id, alert_id, id, started_at FROM (SELECT workflow_id, id, "
                "started_at, json_extract(trigger, '$.alert_id') AS alert_id, "
                "json_extract(trigger, '$.source') AS source FROM workflow_runs "
                "WHERE started_at > ? AND limit_key NOT LIKE 'trial:%') "
                f"WHERE alert_id IS NOT NULL AND source IN ({_REDELIVERING}) "
                "ORDER BY started_at",
                (now - DELIVERED_WINDOW_S,),
            )
        ],
    )


def restore_limits(loaded: Loaded, catalog: Catalog) -> None:
    """Refill each workflow's hourly windows with the last hour's starts and AI calls."""
    starts: dict[str, list[tuple[str, float]]] = {}
    for workflow_id, key, at in loaded.starts:
        starts.setdefault(workflow_id, []).append((key, at))
    ai_calls: dict[str, list[float]] = {}
    for workflow_id, at in loaded.ai_calls:
        ai_calls.setdefault(workflow_id, []).append(at)
    for workflow_id in set(starts) | set(ai_calls):
        entry = catalog.entries.get(workflow_id)
        limiter = catalog.limiter(workflow_id, entry.workflow if entry else None)
        limiter.restore(starts.get(workflow_id, []), ai_calls.get(workflow_id, []))


def restore_marks(loaded: Loaded, marks: Marks) -> None:
    for run_id, right, keys_json in loaded.marks:
        marks.restore(run_id, bool(right), tuple(json.loads(keys_json)))


def restore_approvals(loaded: Loaded, into: dict[str, ApprovalRecord]) -> None:
    for row in loaded.approvals:
        approval = ApprovalRecord(
            approval_id=row[0],
            run_id=row[1],
            step_path=word(row[2]),
            workflow_id=word(row[3]),
            who=tuple(map(word, json.loads(row[4]))),
            message=row[5],
            replies=tuple(map(word, json.loads(row[6]))),
            default=word(row[7]),
            camera_id=word(row[8]),
            status=word(row[9]),
            reply=row[10],
            answered_by=row[11],
            asked=bool(row[12]),
            created_at=row[13],
            expires_at=row[14],
            answered_at=row[15],
        )
        into[approval.approval_id] = approval


def restore_runs(
    loaded: Loaded, catalog: Catalog, into: dict[str, ActiveRun], store: Store, clock: SiteClock
) -> None:
    """Rebuild the active runs on the workflow version each started with; a run whose
    version cannot be read is failed in ``store``, and a trial the last stop caught
    (the try_workflow action answers only once its runs ended) is ended there: a trial
    never goes on after its action."""
    steps = _steps_by_run(loaded.steps)
    workflows: dict[tuple[str, str], model.Workflow] = {}
    for row in loaded.runs:
        (
            run_id,
            workflow_id,
            version,
            correlation_id,
            chain,
            trigger,
            key,
            test,
            status,
            seen_again,
            _unknown,
            started_at,
        ) = row
        if str(key).startswith("trial:"):
            _end_trial(store, clock, run_id)
            continue
        workflow_id, version, status = word(workflow_id), word(version), word(status)
        if test and not str(key).startswith(TEST_KEY):
            key = TEST_KEY + key  # stored before Test runs had limits of their own
        workflow = workflows.get((workflow_id, version))
        if workflow is None:
            entry = catalog.entries.get(workflow_id)
            if entry is not None and entry.version == version:
                workflow = entry.workflow
            else:
                try:
                    workflow = loads(loaded.versions[(workflow_id, version)])
                except (KeyError, VersionDecodeError, ValueError) as err:
                    _LOGGER.exception("run %s: its workflow version is unreadable", run_id)
                    _fail_unreadable(store, clock, run_id, f"workflow version unreadable: {err}")
                    continue
            workflows[(workflow_id, version)] = workflow
        run_steps = steps.get(run_id, {})
        # A run's chain ends with its correlation id: the same string, as in a live run.
        links = tuple(json.loads(chain))
        if links and links[-1] == correlation_id:
            links = (*links[:-1], correlation_id)
        run = ActiveRun(
            run_id=run_id,
            workflow_id=workflow_id,
            version=version,
            workflow=workflow,
            correlation_id=correlation_id,
            chain=links,
            event=NvrEvent.from_summary(json.loads(trigger)),
            limit_key=word(key),
            test=bool(test),
            started_at=started_at,
            status=status,
            # It goes on from where the stop left it: a resume, not a start.
            resumed=True,
            seen_again=seen_again,
            # Counted from the steps, not the run's column: that column is written when
            # the run ends, and a crash between marking a step unknown and the run's end
            # would leave it short.
            unknown_steps=sum(1 for s in run_steps.values() if s.status == "unknown"),
            steps=run_steps,
            seq=max((s.seq for s in run_steps.values()), default=0),
        )
        into[run_id] = run
        limiter = catalog.limiter(workflow_id, workflow)
        limiter.active[key] = run_id


def _end_trial(store: Store, clock: SiteClock, run_id: str) -> None:
    """End a trial run a stop caught, with what it waited on."""

    def write(conn: sqlite3.Connection) -> None:
        conn.execute(
            "UPDATE workflow_runs SET status='cancelled', ended_at=?, error=? WHERE id=?",
            (clock.now_ts(), "the trial ended before the run did", run_id),
        )
        conn.execute("DELETE FROM workflow_due WHERE run_id=?", (run_id,))

    store.submit_nowait(write)


def _fail_unreadable(store: Store, clock: SiteClock, run_id: str, error: str) -> None:
    """Fail a run that cannot be resumed. An actuator it had begun (an intent with no
    result) may or may not have acted: it is marked unknown, and counted, like any
    interrupted actuator."""

    def write(conn: sqlite3.Connection) -> None:
        conn.execute(
            "UPDATE workflow_run_steps SET status='unknown', outcome='done', "
            "result=? WHERE run_id=? AND status='intent'",
            (json.dumps({"error": "interrupted between intent and result"}), run_id),
        )
        conn.execute(
            "UPDATE workflow_runs SET status='failed', ended_at=?, error=?, unknown_steps="
            "(SELECT count(*) FROM workflow_run_steps WHERE run_id=? AND status='unknown') "
            "WHERE id=?",
            (clock.now_ts(), error, run_id, run_id),
        )

    store.submit_nowait(write)


def _steps_by_run(rows: Iterable[tuple[Any, ...]]) -> dict[str, dict[str, StepRecord]]:
    steps: dict[str, dict[str, StepRecord]] = {}
    for row in rows:
        rec = StepRecord(
            path=word(row[1]),
            seq=row[2],
            kind=word(row[3]),
            status=word(row[4]),
            inputs=_loads(row[5]),
            result=_loads(row[6]),
            outcome=row[7],
            started_at=row[8],
            ended_at=row[9],
            state=_loads(row[10]),
        )
        steps.setdefault(row[0], {})[rec.path] = rec
    return steps


def _loads(text: str | None) -> Any:
    """A step's JSON, its keys interned: each waiting step's ``due_at`` or ``approval_id``
    is then one string, not one per step."""
    return None if text is None else json.loads(text, object_hook=_interned_keys)


def _interned_keys(obj: dict[str, Any]) -> dict[str, Any]:
    return {sys.intern(key): value for key, value in obj.items()}
