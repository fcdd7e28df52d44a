"""Embeddings through the real ``ollama`` client against the fake's ``/api/embed``, and
reciprocal rank fusion."""

from __future__ import annotations

import pytest

from custom_components.opennvr_workflows.ai.embeddings import EmbeddingError, OllamaEmbedder
from custom_components.opennvr_workflows.ai.fusion import reciprocal_rank_fusion
from custom_components.opennvr_workflows.engine.history_vectors import cosine
from tests.fakes.ollama_server import (
    DEFAULT_MODELS,
    EMBEDDING_DIMENSIONS,
    EMBEDDING_MODEL,
    FakeOllama,
    HttpError,
)

MODELS = {**DEFAULT_MODELS, EMBEDDING_MODEL: ("embedding",)}


async def test_texts_are_embedded_in_order_and_alike_when_they_share_a_concept() -> None:
    async with FakeOllama(MODELS) as fake:
        fake.concepts = {"courier": "delivery", "parcel": "delivery"}
        embedder = OllamaEmbedder(fake.url, EMBEDDING_MODEL)
        try:
            courier, parcel, cat = await embedder.embed(
                ["a courier at the door", "parcel left on the step", "a cat on the wall"]
            )
        finally:
            await embedder.aclose()
    assert len(courier) == EMBEDDING_DIMENSIONS
    assert cosine(courier, parcel) > 0.7
    assert cosine(courier, cat) < 0.5
    (asked,) = fake.embeds
    assert asked.body["model"] == EMBEDDING_MODEL
    assert asked.body["input"] == [
        "a courier at the door",
        "parcel left on the step",
        "a cat on the wall",
    ]


async def test_every_failure_is_an_embedding_error_that_says_why() -> None:
    async with FakeOllama(MODELS) as fake:
        chat_model = OllamaEmbedder(fake.url, "qwen2.5vl:3b")
        missing = OllamaEmbedder(fake.url, "all-minilm")
        broken = OllamaEmbedder(fake.url, EMBEDDING_MODEL)
        fake.embed_error = HttpError(500, "llama runner process has terminated")
        with pytest.raises(EmbeddingError, match=r"400.*does not support embeddings"):
            await chat_model.embed(["x"])
        with pytest.raises(EmbeddingError, match=r"404.*not found"):
            await missing.embed(["x"])
        with pytest.raises(EmbeddingError, match=r"500.*terminated"):
            await broken.embed(["x"])
        url = fake.url
        for embedder in (chat_model, missing, broken):
            await embedder.aclose()
    down = OllamaEmbedder(url, EMBEDDING_MODEL, timeout_s=2)
    try:
        with pytest.raises(EmbeddingError, match="unreachable"):
            await down.embed(["x"])
        assert await down.embed([]) == []  # nothing to embed asks nothing
    finally:
        await down.aclose()


def test_fusion_ranks_what_several_lists_agree_on_first() -> None:
    fused = reciprocal_rank_fusion(
        {"words": ["a", "b", "c", "a"], "meaning": ["c", "d"], "nvr": ["e"]}, k=60
    )
    # c: 1/63 + 1/61; a and e: 1/61; b and d: 1/62 (ties in the order first met).
    assert [item for item, _, _ in fused] == ["c", "a", "e", "b", "d"]
    scores = {item: score for item, score, _ in fused}
    assert scores["c"] == pytest.approx(1 / 63 + 1 / 61)
    assert scores["a"] == pytest.approx(1 / 61)  # counted once, at its first place
    assert {item: found for item, _, found in fused}["c"] == ("words", "meaning")
    assert reciprocal_rank_fusion({}) == []
