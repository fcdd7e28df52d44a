#!/usr/bin/env python3
"""The history index at scale: index N AI decisions, then time queries and weigh the file.

A fresh engine database (migrated by the real store) gets N runs with one finished AI step
each (synthetic decisions, reasons and fields over 8 cameras and 6 workflows); each is
indexed as the recorder's hook does it (:func:`index_step`), then given an embedding of
``--dims`` dimensions (synthetic: words hashed to signed dimensions, so nearby texts are
near; the scan's cost depends on rows and dimensions, not on what the vectors mean).

Printed, each with the load average beside it (the machine is shared: times move with it):

* indexing: decisions per second through the hook, and the embeddings' write rate;
* size: the database before the index, after the full-text index, after the embeddings;
* query p50/p95/max over ``--queries`` plain-word queries, for: words only (everyone), words
  for a person who sees 2 of the 8 cameras, meaning only (the vector scan, the query's
  embedding given: asking Ollama for it is not counted), and the two fused by reciprocal
  rank fusion (what the action runs, less OpenNVR's own ``/search``, which is remote).

    .venv/bin/python scripts/bench_history.py [--decisions 100000] [--queries 200] [--dims 768]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from custom_components.opennvr_workflows.ai.fusion import reciprocal_rank_fusion
from custom_components.opennvr_workflows.engine.history import Scope, index_step, search_text
from custom_components.opennvr_workflows.engine.history_vectors import (
    search_vectors,
    store_embeddings,
)
from custom_components.opennvr_workflows.engine.store import Store

WORKFLOWS = {
    "door": "Visitor at the front door",
    "parcel": "Parcel left at the door",
    "gate": "Gate concierge",
    "night": "Night intrusion triage",
    "plates": "Known plates at the barrier",
    "yard": "Yard watch",
}
DECISIONS = ["visitor", "delivery", "nobody", "stranger", "resident", "vehicle", "animal"]
PEOPLE = ["a man", "a woman", "a courier", "a postman", "two people", "a child", "a neighbour"]
DOING = [
    "holding a brown parcel",
    "ringing the bell",
    "walking a dog",
    "standing by the gate",
    "carrying a ladder",
    "looking into the car",
    "leaving a package on the step",
    "waiting with a bicycle",
    "wearing a high visibility vest",
    "trying the door handle",
]
VEHICLES = ["red van", "white car", "black suv", "blue truck", "motorbike", "delivery van"]
LIGHT = ["in daylight", "at dusk", "at night under the porch light", "in the rain"]
QUERY_WORDS = [
    "parcel",
    "courier",
    "red van",
    "dog",
    "ladder",
    "door handle",
    "night",
    "bicycle",
    "vest",
    "package step",
    "white car gate",
    "woman bell",
    "postman",
    "truck",
    "child",
    "rain",
]


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.2f}/{five:.2f}"


def embedding(text: str, dims: int) -> list[float]:
    """Words hashed to signed dimensions, unit length (see the module docstring)."""
    vector = [0.0] * dims
    for word in text.lower().split():
        digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
        index = int.from_bytes(digest[:4], "little") % dims
        vector[index] += 1.0 if digest[4] & 1 else -1.0
    norm = sum(x * x for x in vector) ** 0.5 or 1.0
    return [x / norm for x in vector]


def file_bytes(path: Path) -> int:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return path.stat().st_size


def fill_runs(path: Path, n: int, rng: random.Random) -> list[tuple[str, str]]:
    """N runs with one finished AI step each, written as the engine writes them."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN")
    for wid, name in WORKFLOWS.items():
        conn.execute("INSERT INTO workflows VALUES (?, ?, 'on', NULL, 'v1', 0)", (wid, name))
    keys = []
    start = 1_780_000_000.0
    for i in range(n):
        run_id = f"run{i:07d}"
        wid = rng.choice(list(WORKFLOWS))
        camera = rng.randint(1, 8)
        at = start + i * 30.0
        trigger = {
            "kind": "alert",
            "camera_id": str(camera),
            "title": f"Person on camera {camera}",
            "type": "person",
            "alert_id": f"alrt_{i:012x}",
            "labels": ["person"],
            "payload": {"event_id": 100_000 + i},
        }
        reason = (
            f"{rng.choice(PEOPLE)} {rng.choice(DOING)} {rng.choice(LIGHT)}, "
            f"a {rng.choice(VEHICLES)} nearby"
        )
        fields = {"vehicle": rng.choice(VEHICLES), "who": rng.choice(PEOPLE)}
        conn.execute(
            "INSERT INTO workflow_runs (id, workflow_id, version, correlation_id, chain, depth, "
            "trigger, limit_key, test, status, started_at, ended_at) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                run_id,
                wid,
                "v1",
                f"{wid}/{run_id}",
                "[]",
                1,
                json.dumps(trigger),
                f"camera:{camera}",
                0,
                "done",
                at,
                at + 5,
            ),
        )
        conn.execute(
            "INSERT INTO workflow_run_steps (run_id, path, seq, kind, status, outcome, "
            "started_at, ended_at, reason, fields, result) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (
                run_id,
                "then.0",
                1,
                "ai",
                "done",
                rng.choice(DECISIONS),
                at,
                at + 4,
                reason,
                json.dumps(fields),
                "{}",
            ),
        )
        keys.append((run_id, "then.0"))
    conn.execute("COMMIT")
    conn.close()
    return keys


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def percentiles(samples: list[float]) -> str:
    ms = sorted(s * 1000 for s in samples)
    p95 = ms[max(0, round(0.95 * len(ms)) - 1)]
    return f"p50 {statistics.median(ms):7.1f} ms  p95 {p95:7.1f} ms  max {ms[-1]:7.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--decisions", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--dims", type=int, default=768)
    args = parser.parse_args()
    rng = random.Random(2026)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.db"

        async def migrate() -> None:
            store = await Store.open(path)
            await store.close()

        asyncio.run(migrate())
        keys = fill_runs(path, args.decisions, rng)
        base = file_bytes(path)
        print(f"{args.decisions:,} runs with one AI decision each: {base / 1e6:.1f} MB  [{load()}]")

        conn = sqlite3.connect(path, isolation_level=None)
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("BEGIN")
        took, _ = timed(lambda: [index_step(conn, run_id, p) for run_id, p in keys])
        conn.execute("COMMIT")
        indexed = file_bytes(path)
        print(
            f"indexed through the hook: {args.decisions / took:,.0f} decisions/s "
            f"({took * 1e6 / args.decisions:.0f} us each)  [{load()}]"
        )
        print(
            f"full-text index: +{(indexed - base) / 1e6:.1f} MB "
            f"({(indexed - base) / args.decisions:.0f} B a decision)  [{load()}]"
        )

        rows = conn.execute(
            "SELECT id, decision || ' ' || reason || ' ' || fields FROM workflow_history"
        ).fetchall()
        conn.execute("BEGIN")
        took, _ = timed(
            lambda: store_embeddings(
                conn, "bench", [(i, embedding(text, args.dims)) for i, text in rows]
            )
        )
        conn.execute("COMMIT")
        embedded = file_bytes(path)
        print(
            f"embeddings ({args.dims} dims, computing the synthetic vectors included): "
            f"{len(rows) / took:,.0f}/s  +{(embedded - indexed) / 1e6:.1f} MB "
            f"({(embedded - indexed) / len(rows):.0f} B a decision)  [{load()}]"
        )
        print(f"database total: {embedded / 1e6:.1f} MB  [{load()}]")

        queries = [rng.choice(QUERY_WORDS) for _ in range(args.queries)]
        vectors = {q: embedding(q, args.dims) for q in set(queries)}
        few = Scope(cameras=frozenset({"1", "2"}))

        everyone = Scope()

        def words(q: str, scope: Scope = everyone) -> list[int]:
            return [d.id for d, _ in search_text(conn, q, scope, 20)]

        def meaning(q: str) -> list[int]:
            return [d.id for d, _ in search_vectors(conn, "bench", vectors[q], Scope(), 20)]

        def fused(q: str) -> list[Any]:
            return reciprocal_rank_fusion({"words": words(q), "meaning": meaning(q)})[:10]

        for name, run in (
            ("words, every camera", lambda q: words(q)),
            ("words, 2 of 8 cameras", lambda q: words(q, few)),
            ("meaning (vector scan)", meaning),
            ("fused (words + meaning)", fused),
        ):
            samples = [timed(partial(run, q))[0] for q in queries]
            print(f"{name:26} {percentiles(samples)}  [{load()}]")
        conn.close()


if __name__ == "__main__":
    main()
