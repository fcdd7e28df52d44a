"""The history index's vectors: stored compactly, ranked by cosine within the asker's
cameras, never returned below the similarity floor."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from custom_components.opennvr_workflows.engine.history import Scope, index_stats
from custom_components.opennvr_workflows.engine.history_vectors import (
    cosine,
    dequantize,
    pending,
    quantize,
    search_vectors,
    signs,
    store_embeddings,
    unit,
)
from custom_components.opennvr_workflows.engine.schema import MIGRATIONS
from custom_components.opennvr_workflows.engine.store import _statements


def test_quantized_vectors_keep_their_direction_in_a_quarter_of_the_bytes() -> None:
    rng = random.Random(7)
    vector = unit([rng.gauss(0, 1) for _ in range(768)])
    blob = quantize(vector)
    assert len(blob) == 4 + 768  # float32 would be 3072
    assert cosine(vector, dequantize(blob)) > 0.999
    assert len(signs(vector)) == 96
    assert int.from_bytes(signs([1.0, -1.0, 0.0, 2.0]), "little") == 0b1001


@pytest.fixture
def conn(tmp_path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(tmp_path / "h.db", isolation_level=None)
    for script in MIGRATIONS:
        for statement in _statements(script):
            conn.execute(statement)
    return conn


def _decision(conn: sqlite3.Connection, run_id: str, camera: str | None, at: float) -> int:
    cursor = conn.execute(
        "INSERT INTO workflow_history (run_id, step_path, workflow_id, at, camera_id, test, "
        "decision, reason, fields, subject) VALUES (?, 'then.0', 'w', ?, ?, 0, 'x', ?, '', '')",
        (run_id, at, camera, f"reason of {run_id}"),
    )
    assert cursor.lastrowid is not None
    return cursor.lastrowid


def test_nearest_first_within_scope_and_not_below_the_floor(conn: sqlite3.Connection) -> None:
    rng = random.Random(3)
    query = unit([rng.gauss(0, 1) for _ in range(64)])
    noise = [unit([rng.gauss(0, 1) for _ in range(64)]) for _ in range(50)]

    def near(amount: float) -> list[float]:
        return unit([q + amount * n for q, n in zip(query, noise[0], strict=True)])

    ids = {
        "close": _decision(conn, "close", "3", 10.0),
        "closer": _decision(conn, "closer", "3", 11.0),
        "hidden": _decision(conn, "hidden", "4", 12.0),
        "none": _decision(conn, "none", None, 13.0),
    }
    others = [_decision(conn, f"other{i}", "3", 1.0) for i in range(40)]
    assert {d.run_id for d in pending(conn, "m", 100)} == {*ids, *(f"other{i}" for i in range(40))}
    store_embeddings(
        conn,
        "m",
        [
            (ids["close"], near(0.6)),
            (ids["closer"], near(0.2)),
            (ids["hidden"], near(0.1)),
            (ids["none"], near(0.1)),
            *((row, noise[i + 1]) for i, row in enumerate(others)),
        ],
    )
    assert index_stats(conn) == {"decisions": 44, "embedded": 44}
    assert pending(conn, "m", 10) == []
    # Another model's vectors are pending again, newest first.
    assert [d.run_id for d in pending(conn, "other-model", 2)] == ["other39", "other38"]

    everyone = search_vectors(conn, "m", query, Scope(), 10)
    names = [d.run_id for d, _ in everyone]
    assert names[:2] == ["hidden", "none"] or set(names[:2]) == {"hidden", "none"}
    assert names.index("closer") < names.index("close")
    assert all(score >= 0.5 for _, score in everyone)
    assert not any(n.startswith("other") for n in names)  # unrelated: below the floor

    camera_3 = search_vectors(conn, "m", query, Scope(cameras=frozenset({"3"})), 10)
    assert [d.run_id for d, _ in camera_3] == ["closer", "close"]
    assert search_vectors(conn, "other-model", query, Scope(), 10) == []
    assert search_vectors(conn, "m", query, Scope(cameras=frozenset()), 10) == []
    later = search_vectors(conn, "m", query, Scope(since=11.5), 10)
    assert {d.run_id for d, _ in later} == {"hidden", "none"}
