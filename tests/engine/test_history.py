"""The history index: every finished AI step is found by its words, the runs kept before the
index existed are indexed when the file is migrated, camera scope is applied in the query,
and retention forgets a run's decisions with the run."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from custom_components.opennvr_workflows.engine import AiResult
from custom_components.opennvr_workflows.engine.history import (
    Scope,
    index_stats,
    match_expression,
    search_text,
)
from custom_components.opennvr_workflows.engine.schema import MIGRATIONS, SCHEMA_VERSION
from custom_components.opennvr_workflows.engine.store import Store, _statements
from custom_components.opennvr_workflows.engine.testing import FakeAi, ManualClock, event
from custom_components.opennvr_workflows.workflow import model as m

from .conftest import EngineFactory


def look(name: str = "Porch check") -> m.Workflow:
    return m.Workflow(
        name=name,
        when=m.AlertTrigger(alert_type="intrusion", cameras=("yard",)),
        then=(
            m.AIStep(
                spec=m.LookSpec(prompt="Who is at the door?"),
                decision=("delivery", "visitor"),
                fields={"carrier": ("postman", "courier", "none")},
                paths={"delivery": (), "visitor": (), "unsure": ()},
            ),
        ),
        state="on",
    )


def answers(*results: AiResult) -> Any:
    queue = list(results)

    def decide(step: Any, ctx: Any) -> AiResult:
        return queue.pop(0)

    return decide


def found(conn: sqlite3.Connection, query: str, scope: Scope | None = None) -> list[str]:
    return [d.run_id for d, _ in search_text(conn, query, scope or Scope(), 10)]


async def test_a_decision_is_indexed_as_it_is_recorded(
    make_engine: EngineFactory, ai: FakeAi, clock: ManualClock
) -> None:
    ai.decide = answers(
        AiResult(
            outcome="delivery", reason="a man holding a brown parcel", fields={"carrier": "courier"}
        ),
        AiResult(outcome="visitor", reason="a woman rings the bell", fields={"carrier": "none"}),
    )
    engine = make_engine()
    engine.set_workflows({"w": look()})
    await engine.start()
    (parcel,) = engine.submit(
        event(camera_id="3", title="Front door", payload={"event_id": 42}, alert_id="alrt_1")
    )
    await engine.idle()
    clock.set(datetime(2026, 1, 6, 9, 0, tzinfo=UTC))
    (bell,) = engine.submit(event(camera_id="5", time=clock.now()))
    await engine.idle()

    def check(conn: sqlite3.Connection) -> dict[str, Any]:
        hits = search_text(conn, "parcel", Scope(), 10)
        return {
            "parcel": [
                (d.run_id, d.event_id, d.alert_id, d.camera_id, d.decision) for d, _ in hits
            ],
            "courier": found(conn, "courier"),  # a field's value
            "porch": sorted(found(conn, "porch check")),  # the workflow's name
            "words": found(conn, "parcels holds"),  # porter stemming: parcel, hold
            "door": found(conn, "front door"),  # the trigger's title
            "bell": found(conn, "bell"),
            "cameras_3": found(conn, "parcel OR bell", Scope(cameras=frozenset({"3"}))),
            "cameras_5": found(conn, "parcel bell", Scope(cameras=frozenset({"5"}))),
            "none": found(conn, "parcel bell", Scope(cameras=frozenset())),
            "since": found(
                conn, "parcel bell", Scope(since=datetime(2026, 1, 6, tzinfo=UTC).timestamp())
            ),
            "stats": index_stats(conn),
        }

    out = await engine.store.submit(check)
    assert out["parcel"] == [(parcel, 42, "alrt_1", "3", "delivery")]
    assert out["courier"] == [parcel]
    assert out["porch"] == sorted([parcel, bell])
    assert out["words"] == [parcel]
    assert out["door"] == [parcel]
    assert out["bell"] == [bell]
    assert out["cameras_3"] == [parcel]
    assert out["cameras_5"] == [bell]
    assert out["none"] == []
    assert out["since"] == [bell]
    assert out["stats"] == {"decisions": 2, "embedded": 0}


async def test_retention_forgets_a_runs_decisions_and_keeps_the_index_whole(
    make_engine: EngineFactory, ai: FakeAi
) -> None:
    ai.decide = answers(AiResult(outcome="delivery", reason="parcel on the step"))
    engine = make_engine()
    engine.set_workflows({"w": look()})
    await engine.start()
    engine.submit(event(camera_id="3"))
    await engine.idle()
    assert await engine.store.submit(lambda c: found(c, "parcel"))
    assert await engine.prune(older_than_days=-1) == 1

    def after(conn: sqlite3.Connection) -> tuple[list[str], dict[str, int]]:
        # FTS5's own check that the index matches its content rows (raises if not).
        conn.execute(
            "INSERT INTO workflow_history_text(workflow_history_text) VALUES('integrity-check')"
        )
        return found(conn, "parcel"), index_stats(conn)

    assert await engine.store.submit(after) == ([], {"decisions": 0, "embedded": 0})


def _v2_file(path: Path, steps: list[tuple[str, str, str, str | None, str, str]]) -> None:
    """A file at schema version 2 holding runs ``(run_id, trigger JSON, status, outcome,
    reason, fields JSON)`` with one AI step each, as an older release left it."""
    conn = sqlite3.connect(path, isolation_level=None)
    for script in MIGRATIONS[:2]:
        for statement in _statements(script):
            conn.execute(statement)
    conn.execute("PRAGMA user_version=2")
    conn.execute("INSERT INTO workflows VALUES ('w', 'Gate watch', 'on', NULL, 'v1', 0)")
    for run_id, trigger, status, outcome, reason, fields in steps:
        conn.execute(
            "INSERT INTO workflow_runs (id, workflow_id, version, correlation_id, chain, depth, "
            "trigger, limit_key, test, status, started_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (run_id, "w", "v1", f"w/{run_id}", "[]", 0, trigger, "camera:1", 0, "done", 100.0),
        )
        conn.execute(
            "INSERT INTO workflow_run_steps (run_id, path, seq, kind, status, outcome, "
            "started_at, ended_at, reason, fields) VALUES (?,?,?,?,?,?,?,?,?,?)",
            (run_id, "then.0", 1, "ai", status, outcome, 100.0, 101.0, reason, fields),
        )
    conn.close()


async def test_migration_indexes_the_decisions_already_kept(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    trigger = json.dumps(
        {"kind": "camera_event", "camera_id": "7", "payload": {"id": 9}, "labels": ["car"]}
    )
    _v2_file(
        path,
        [
            ("r1", trigger, "done", "stranger", "a red van idles at the gate", '{"plate":"AB12"}'),
            ("r2", "not json", "done", "owner", "the owner's blue car", "not json"),
            ("r3", trigger, "running", None, "", "{}"),  # not finished: not a decision
        ],
    )
    store = await Store.open(path)
    try:

        def read(conn: sqlite3.Connection) -> dict[str, Any]:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            van = search_text(conn, "van", Scope(), 5)
            return {
                "version": version,
                "van": [(d.run_id, d.camera_id, d.event_id, d.fields, d.subject) for d, _ in van],
                "ab12": found(conn, "AB12"),
                "gate": sorted(found(conn, "gate watch")),
                "blue": [
                    (d.camera_id, d.event_id) for d, _ in search_text(conn, "blue", Scope(), 5)
                ],
                "stats": index_stats(conn),
            }

        out = await store.submit(read)
    finally:
        await store.close()
    assert out["version"] == SCHEMA_VERSION
    assert out["van"] == [("r1", "7", 9, "plate AB12", "Gate watch car")]
    assert out["ab12"] == ["r1"]
    assert out["gate"] == ["r1", "r2"]
    # A malformed trigger or fields column is read as empty, not a failed migration.
    assert out["blue"] == [(None, None)]
    assert out["stats"] == {"decisions": 2, "embedded": 0}


def test_plain_words_are_never_read_as_fts_syntax() -> None:
    assert match_expression('red "van" NEAR(gate) -owner* at the') == (
        '"red" OR "van" OR "near" OR "gate" OR "owner"'
    )
    assert match_expression("the at") == '"the" OR "at"'  # only stop words: keep them
    assert match_expression("?!  ") is None


async def test_a_query_of_fts_operators_finds_by_words_and_does_not_fail(
    make_engine: EngineFactory, ai: FakeAi
) -> None:
    ai.decide = answers(AiResult(outcome="delivery", reason="NEAR the gate, a parcel"))
    engine = make_engine()
    engine.set_workflows({"w": look()})
    await engine.start()
    (run_id,) = engine.submit(event(camera_id="3"))
    await engine.idle()
    hits = await engine.store.submit(lambda c: found(c, 'NEAR(" AND parcel*'))
    assert hits == [run_id]
