"""Embeddings from an Ollama embedding model (``/api/embed``), for the history search.

One client per model and server, on :class:`.ollama_api.OllamaApi` like the AI step's.
Every failure is an :class:`EmbeddingError` whose text says what went wrong (unreachable,
timed out, Ollama's own error, a reply of the wrong shape), so the history search can
carry on by words alone and say why.
"""

from __future__ import annotations

import math
import ssl
from collections.abc import Sequence
from typing import Final

import aiohttp

from .ollama_api import OllamaApi, OllamaHTTPError

#: Seconds an embedding call may take: a query waits on it, so it is short.
DEFAULT_TIMEOUT_S: Final = 15.0
#: Texts sent in one call while the index catches up.
BATCH: Final = 32
#: Keep the embedding model loaded between queries (it is small).
KEEP_ALIVE: Final = "30m"


class EmbeddingError(Exception):
    """The embedding model could not answer; the text says why."""


class OllamaEmbedder:
    """Embeds texts with ``model`` on the Ollama server at ``host``."""

    def __init__(
        self,
        host: str,
        model: str,
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        ssl_context: ssl.SSLContext | None = None,
        session: aiohttp.ClientSession | None = None,
    ) -> None:
        self.host = host
        self.model = model
        self._timeout_s = timeout_s
        self._api = OllamaApi(
            host, timeout_seconds=timeout_s, ssl_context=ssl_context, session=session
        )

    async def aclose(self) -> None:
        """Close the session this embedder opened (never one handed in)."""
        await self._api.aclose()

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order; :class:`EmbeddingError` when there are none."""
        if not texts:
            return []
        where = f"Ollama at {self.host} (embedding model {self.model!r})"
        try:
            reply = await self._api.post(
                "/api/embed", {"model": self.model, "input": list(texts), "keep_alive": KEEP_ALIVE}
            )
            vectors = [[float(x) for x in v] for v in reply.get("embeddings") or ()]
        except OllamaHTTPError as err:
            raise EmbeddingError(f"{where} answered HTTP {err.status}: {err.error}") from err
        except TimeoutError as err:  # before connection errors: aiohttp's are both
            raise EmbeddingError(f"{where} timed out after {self._timeout_s:g}s") from err
        except (ConnectionError, aiohttp.ClientConnectionError) as err:
            raise EmbeddingError(f"{where} is unreachable ({type(err).__name__})") from err
        except Exception as err:  # a reply of the wrong shape, or anything else
            raise EmbeddingError(f"{where}: {type(err).__name__}: {err}") from err
        if len(vectors) != len(texts):
            raise EmbeddingError(f"{where} sent {len(vectors)} vectors for {len(texts)} texts")
        sizes = {len(v) for v in vectors}
        finite = all(math.isfinite(x) for v in vectors for x in v)
        if len(sizes) != 1 or 0 in sizes or not finite:
            raise EmbeddingError(f"{where} sent vectors of sizes {sorted(sizes)}")
        return vectors
