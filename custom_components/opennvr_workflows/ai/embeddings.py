"""Embeddings from an Ollama embedding model (``/api/embed``), for the history search.

One client per model and server, on the ``ollama`` package like the AI step's client.
Every failure is an :class:`EmbeddingError` whose text says what went wrong (unreachable,
timed out, Ollama's own error, a reply of the wrong shape), so the history search can
carry on by words alone and say why.
"""

from __future__ import annotations

import math
import ssl
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

import httpx

from .ollama_client import async_client

if TYPE_CHECKING:
    import ollama  # imported where it is used: see .library

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
        client: ollama.AsyncClient | None = None,
    ) -> None:
        self.host = host
        self.model = model
        self._timeout_s = timeout_s
        self._owns_client = client is None
        self._client = client or async_client(host, timeout_s, ssl_context)

    async def aclose(self) -> None:
        """Close the connection pool this embedder opened."""
        if self._owns_client:
            await self._client.close()  # type: ignore[no-untyped-call]  # untyped upstream

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order; :class:`EmbeddingError` when there are none."""
        if not texts:
            return []
        import ollama  # loaded with the client (see .library)

        where = f"Ollama at {self.host} (embedding model {self.model!r})"
        try:
            response = await self._client.embed(
                model=self.model, input=list(texts), keep_alive=KEEP_ALIVE
            )
        except ollama.ResponseError as err:
            raise EmbeddingError(f"{where} answered HTTP {err.status_code}: {err.error}") from err
        except httpx.TimeoutException as err:
            raise EmbeddingError(f"{where} timed out after {self._timeout_s:g}s") from err
        except (ConnectionError, httpx.TransportError) as err:
            raise EmbeddingError(f"{where} is unreachable ({type(err).__name__})") from err
        except Exception as err:  # a reply the client cannot read, or anything else
            raise EmbeddingError(f"{where}: {type(err).__name__}: {err}") from err
        vectors = [list(map(float, v)) for v in response.embeddings or ()]
        if len(vectors) != len(texts):
            raise EmbeddingError(f"{where} sent {len(vectors)} vectors for {len(texts)} texts")
        sizes = {len(v) for v in vectors}
        finite = all(math.isfinite(x) for v in vectors for x in v)
        if len(sizes) != 1 or 0 in sizes or not finite:
            raise EmbeddingError(f"{where} sent vectors of sizes {sorted(sizes)}")
        return vectors
