"""The history index's embeddings: stored small, searched without numpy.

Each decision's embedding is kept twice, compactly: its signs (one bit a dimension, 96
bytes for a 768-dimension model), and its components as int8 with one float32 scale (4 +
768 bytes). A search reads every sign vector in scope and ranks by Hamming distance to the
query's signs (an XOR and a popcount per row: a fast stand-in for the angle between two
vectors), then rescores the closest :data:`SHORTLIST` exactly by cosine from their int8
components. Pure Python at this size: about 0.9 KB a decision, and a scan of the signs that
grows linearly with the decisions kept (see ``scripts/bench_history.py`` for what 100,000
cost). A site that keeps far more would want an ANN index; this one keeps what retention
keeps.
"""

from __future__ import annotations

import heapq
import math
import sqlite3
import struct
from collections.abc import Sequence
from typing import Final

from .history import DECISION_COLUMNS, Decision, Scope

#: How many rows the sign scan hands on to the exact cosine.
SHORTLIST: Final = 200
#: Below this cosine a decision is not about the query at all: a nearest neighbour is
#: always found, and one that means nothing must not be handed on as a match.
MIN_SIMILARITY: Final = 0.5
_SCALE: Final = struct.Struct("<f")


def unit(vector: Sequence[float]) -> list[float]:
    """``vector`` scaled to length 1 (a zero vector stays zero)."""
    norm = math.sqrt(math.fsum(x * x for x in vector))
    return [x / norm for x in vector] if norm > 0 else [0.0 for _ in vector]


def signs(vector: Sequence[float]) -> bytes:
    """One bit a dimension: set where the component is positive."""
    value = 0
    for i, x in enumerate(vector):
        if x > 0:
            value |= 1 << i
    return value.to_bytes((len(vector) + 7) // 8, "little")


def quantize(vector: Sequence[float]) -> bytes:
    """A float32 scale then each component as int8 (``component ≈ scale * int8``)."""
    peak = max((abs(x) for x in vector), default=0.0)
    scale = peak / 127.0 if peak > 0 else 1.0
    ints = bytes((round(x / scale) & 0xFF) for x in vector)
    return _SCALE.pack(scale) + ints


def dequantize(blob: bytes) -> list[float]:
    """The components :func:`quantize` stored."""
    (scale,) = _SCALE.unpack_from(blob)
    return [scale * (b - 256 if b > 127 else b) for b in blob[_SCALE.size :]]


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """The cosine of the angle between two vectors of one length (0 for a zero one)."""
    if len(a) != len(b):
        return 0.0
    dot = math.fsum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(math.fsum(x * x for x in a)) * math.sqrt(math.fsum(y * y for y in b))
    return dot / norm if norm > 0 else 0.0


def pending(conn: sqlite3.Connection, model: str, limit: int) -> list[Decision]:
    """Decisions without an embedding from ``model``, newest first (those never embedded
    before those embedded by another model)."""
    rows = conn.execute(
        f"SELECT {DECISION_COLUMNS} FROM workflow_history h WHERE h.embed_model IS NULL "
        "ORDER BY h.id DESC LIMIT ?",
        (limit,),
    ).fetchall()
    if len(rows) < limit:
        rows += conn.execute(
            f"SELECT {DECISION_COLUMNS} FROM workflow_history h WHERE h.embed_model != ? "
            "ORDER BY h.id DESC LIMIT ?",
            (model, limit - len(rows)),
        ).fetchall()
    return [Decision.from_row(r) for r in rows]


def store_embeddings(
    conn: sqlite3.Connection, model: str, vectors: Sequence[tuple[int, Sequence[float]]]
) -> int:
    """Keep each ``(decision id, embedding)``; returns the rows still there to take it."""
    written = 0
    for row_id, vector in vectors:
        written += conn.execute(
            "UPDATE workflow_history SET embed_model = ?, bits = ?, vector = ? WHERE id = ?",
            (model, signs(vector), quantize(vector), row_id),
        ).rowcount
    return written


def search_vectors(
    conn: sqlite3.Connection,
    model: str,
    query: Sequence[float],
    scope: Scope,
    limit: int,
    *,
    min_similarity: float = MIN_SIMILARITY,
) -> list[tuple[Decision, float]]:
    """The decisions nearest ``query`` (an embedding from ``model``), best first, with
    their cosine; none below ``min_similarity``."""
    if scope.empty or limit <= 0 or not query:
        return []
    where, params = scope.where()
    wanted = int.from_bytes(signs(query), "little")
    rows = conn.execute(
        f"SELECT h.id, h.bits FROM workflow_history h WHERE h.embed_model = ?{where}",
        [model, *params],
    )
    closest = heapq.nsmallest(
        max(SHORTLIST, limit),
        (
            (((int.from_bytes(bits, "little") ^ wanted).bit_count()), row_id)
            for row_id, bits in rows
        ),
    )
    if not closest:
        return []
    ids = [row_id for _, row_id in closest]
    found = conn.execute(
        f"SELECT {DECISION_COLUMNS}, h.vector FROM workflow_history h "
        f"WHERE h.id IN ({','.join('?' * len(ids))})",
        ids,
    ).fetchall()
    scored = [(Decision.from_row(r), cosine(query, dequantize(bytes(r[-1])))) for r in found]
    scored = [(d, s) for d, s in scored if s >= min_similarity]
    scored.sort(key=lambda pair: (-pair[1], -pair[0].at))
    return scored[:limit]
