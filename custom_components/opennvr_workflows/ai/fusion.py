"""Reciprocal rank fusion (spec 001, "Knowledge Base And Retrieval").

Ranked lists from searches whose scores cannot be compared (bm25 from the full-text index,
a cosine from the embeddings, OpenNVR's own ``/search`` order) are merged by position
alone: each item scores ``1 / (k + rank)`` in every list it appears in (rank from 1), summed,
so what several searches rank high rises to the top. ``k`` (60, the usual choice) damps the
weight of the very first places.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Final

K: Final = 60


def reciprocal_rank_fusion[T: Hashable](
    ranked: Mapping[str, Sequence[T]], *, k: int = K
) -> list[tuple[T, float, tuple[str, ...]]]:
    """Merge ``ranked`` (list name -> items, best first) into ``(item, score, the lists
    that found it)``, best first; an item listed twice in one list counts at its first
    place. Ties keep the order items were first met in."""
    scores: dict[T, float] = {}
    sources: dict[T, list[str]] = {}
    for name, items in ranked.items():
        for rank, item in enumerate(_unique(items), start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
            sources.setdefault(item, []).append(name)
    order = sorted(scores, key=lambda item: -scores[item])  # stable: ties keep first-met order
    return [(item, scores[item], tuple(sources[item])) for item in order]


def _unique[T: Hashable](items: Iterable[T]) -> list[T]:
    return list(dict.fromkeys(items))
