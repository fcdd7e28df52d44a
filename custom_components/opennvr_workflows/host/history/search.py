"""History search (spec 001's hybrid retrieval) over one site: the engine's index of its AI
decisions, by words and by meaning, fused with OpenNVR's own ``/search`` of recorded events.

Three ranked lists, each already limited to what the asker may see:

* ``words``: the decisions' full-text index (bm25), filtered by camera in the query;
* ``meaning``: the decisions nearest the query's embedding, when an Ollama embedding model
  is set in the options (``embedding_model``), filtered the same way;
* ``nvr``: OpenNVR's ``/search`` (captions, labels, plates), through
  :class:`~.nvr.NvrHistorySearch`, which keeps only visible cameras.

They are merged by reciprocal rank fusion (:mod:`...ai.fusion`): only positions count, so
bm25, cosine and OpenNVR's order never have to be compared. A decision is then shown only
when its whole run may be: a run that also touched a camera the asker may not see (a Look
elsewhere, a tool call) is left out (:func:`..read_scope.may_see_run`). A list that fails (Ollama or
OpenNVR unreachable) is left out and the answer says so in ``searched``; the others still
answer.

The index is read on a connection of its own, in an executor thread: a search never waits
behind the engine's writes, and the engine never waits behind a search. Embeddings are
added in the background (:meth:`HistorySearch.catch_up`), newest decisions first, so a
site that sets a model later has its recent history searchable by meaning first.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any, Final

from homeassistant.core import HomeAssistant
from homeassistant.util.ssl import get_default_context

from ...ai.embeddings import BATCH, EmbeddingError, OllamaEmbedder
from ...ai.fusion import reciprocal_rank_fusion
from ...engine.history import Decision, Scope, index_stats, search_text
from ...engine.history_vectors import pending, search_vectors, store_embeddings
from ..asker import Asker
from ..read_scope import visible_run
from ..workflows import WorkflowHost
from .nvr import Hit, NvrHistorySearch

_LOGGER = logging.getLogger(__name__)

#: Seconds between the background passes that embed new decisions.
EMBED_INTERVAL_S: Final = 30.0
#: Each list hands this many candidates (at least) to the fusion.
CANDIDATES: Final = 20
#: How long a search waits for the index file (the engine's writer holds it briefly).
READ_TIMEOUT_S: Final = 5.0


@dataclass(frozen=True, slots=True)
class Found:
    """One result: an AI decision (``run_id`` set) or an OpenNVR event (``kind`` event)."""

    kind: str  # decision | event
    score: float  # reciprocal rank fusion
    found_by: tuple[str, ...]  # words | meaning | nvr
    at: str  # ISO time
    camera: str | None
    camera_id: int | None
    event_id: int | None
    run_id: str | None = None
    step: str | None = None
    workflow_id: str | None = None
    workflow: str | None = None
    decision: str | None = None
    reason: str | None = None
    fields: str | None = None
    alert_id: str | None = None
    test: bool = False
    label: str | None = None
    caption: str | None = None
    plate: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON for an action's response or a tool's result (empty values left out)."""
        out: dict[str, Any] = {
            "kind": self.kind,
            "score": round(self.score, 5),
            "found_by": list(self.found_by),
            "at": self.at,
        }
        for key in (
            "camera",
            "camera_id",
            "event_id",
            "run_id",
            "step",
            "workflow_id",
            "workflow",
            "decision",
            "reason",
            "fields",
            "alert_id",
            "label",
            "caption",
            "plate",
        ):
            value = getattr(self, key)
            if value not in (None, ""):
                out[key] = value
        if self.test:
            out["test"] = True
        return out


@dataclass(slots=True)
class HistoryAnswer:
    """The results, best first, and how each list fared (``ok``, ``off``, or the error)."""

    results: list[Found]
    searched: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "results": [r.as_dict() for r in self.results],
            "found": len(self.results),
            "searched": dict(self.searched),
        }


class HistorySearch:
    """One site's history search and the background task that embeds its decisions."""

    def __init__(self, hass: HomeAssistant, host: WorkflowHost) -> None:
        self._hass = hass
        self._host = host
        settings = host.settings
        self.model = settings.embedding_model if settings.ai_enabled else ""
        self._embedder: OllamaEmbedder | None = (
            OllamaEmbedder(settings.ollama_url, self.model, ssl_context=get_default_context())
            if self.model
            else None
        )
        self._task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        #: Decisions embedded since start, and the last embedding failure (None: none).
        self.embedded = 0
        self.last_error: str | None = None

    # ── lifecycle ──────────────────────────────────────────────────────

    def start(self, spawn: Callable[[Any, str], asyncio.Task[None]]) -> None:
        """Start the background embedding (only with an embedding model)."""
        if self._embedder is not None and self._task is None:
            self._task = spawn(self._embed_forever(), "history embeddings")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        if self._embedder is not None:
            await self._embedder.aclose()

    # ── searching ──────────────────────────────────────────────────────

    async def search(
        self,
        asker: Asker,
        query: str,
        *,
        camera_id: int | None = None,
        since: datetime | None = None,
        limit: int = 10,
    ) -> HistoryAnswer:
        """The fused results for ``query`` that ``asker`` may see (see the module)."""
        scope = Scope(
            cameras=None if asker.sees_all else frozenset(str(c) for c in asker.cameras),
            since=since.timestamp() if since is not None else None,
            camera=str(camera_id) if camera_id is not None else None,
        )
        wanted = max(CANDIDATES, limit * 2)
        searched: dict[str, str] = {}
        words, meaning, nvr = await asyncio.gather(
            self._words(query, scope, wanted, searched),
            self._meaning(query, scope, wanted, searched),
            self._nvr(asker, query, camera_id, since, wanted, searched),
        )
        decisions = {f"decision:{d.id}": d for d in (*words, *meaning)}
        events = {f"event:{h.event_id}": h for h in nvr}
        fused = reciprocal_rank_fusion(
            {
                "words": [f"decision:{d.id}" for d in words],
                "meaning": [f"decision:{d.id}" for d in meaning],
                "nvr": list(events),
            }
        )
        results: list[Found] = []
        for key, score, by in fused:
            if len(results) == limit:
                break
            if key not in decisions:
                results.append(_event(events[key], asker, score, by))
            elif await self._run_shown(asker, decisions[key].run_id):
                results.append(self._decision(decisions[key], asker, score, by))
        return HistoryAnswer(results, searched)

    async def _run_shown(self, asker: Asker, run_id: str) -> bool:
        """Whether ``asker`` may see the run a decision came from (every camera of it)."""
        if asker.is_admin:
            return True
        caller = asker.caller
        return caller is not None and await visible_run(caller, self._host, run_id) is not None

    async def stats(self) -> dict[str, Any]:
        """How many decisions are indexed and embedded, and the embedder's state."""
        counts = await self._read(index_stats)
        return {**counts, "model": self.model or None, "last_error": self.last_error}

    async def _words(
        self, query: str, scope: Scope, limit: int, searched: dict[str, str]
    ) -> list[Decision]:
        try:
            found = await self._read(lambda conn: search_text(conn, query, scope, limit))
        except sqlite3.Error as err:
            _LOGGER.warning("History search by words failed: %s", err)
            searched["words"] = f"failed: {err}"
            return []
        searched["words"] = "ok"
        return [d for d, _ in found]

    async def _meaning(
        self, query: str, scope: Scope, limit: int, searched: dict[str, str]
    ) -> list[Decision]:
        if self._embedder is None or not self._host.ai.may_send():
            searched["meaning"] = "off"
            return []
        try:
            (vector,) = await self._embedder.embed([query])
            model = self.model
            found = await self._read(lambda conn: search_vectors(conn, model, vector, scope, limit))
        except (EmbeddingError, sqlite3.Error) as err:
            _LOGGER.debug("History search by meaning failed: %s", err)
            searched["meaning"] = f"failed: {err}"
            return []
        searched["meaning"] = "ok"
        self._wake.set()  # decisions recorded since the last pass get their embeddings
        return [d for d, _ in found]

    async def _nvr(
        self,
        asker: Asker,
        query: str,
        camera_id: int | None,
        since: datetime | None,
        limit: int,
        searched: dict[str, str],
    ) -> list[Hit]:
        try:
            hits = await NvrHistorySearch(self._host).search(
                asker,
                query,
                camera_id=camera_id,
                since=since.isoformat() if since is not None else None,
                limit=limit,
            )
        except Exception as err:  # OpenNVR down or refusing: the local lists still answer
            _LOGGER.debug("OpenNVR search failed: %s", err)
            searched["nvr"] = f"failed: {err}"
            return []
        searched["nvr"] = "ok"
        return list(hits)

    def _decision(self, d: Decision, asker: Asker, score: float, by: tuple[str, ...]) -> Found:
        camera_id = _int(d.camera_id)
        loaded = self._host.files.get(d.workflow_id)
        name = loaded.workflow.name if loaded is not None and loaded.workflow else d.workflow_id
        return Found(
            kind="decision",
            score=score,
            found_by=by,
            at=datetime.fromtimestamp(d.at, UTC).isoformat(),
            camera=asker.cameras.get(camera_id, d.camera_id)
            if camera_id is not None
            else d.camera_id,
            camera_id=camera_id,
            event_id=d.event_id,
            run_id=d.run_id,
            step=d.step_path,
            workflow_id=d.workflow_id,
            workflow=name,
            decision=d.decision,
            reason=d.reason,
            fields=d.fields,
            alert_id=d.alert_id,
            test=d.test,
        )

    # ── the index file ─────────────────────────────────────────────────

    async def _read[T](self, query: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``query`` on a connection of its own, off the event loop."""
        return await self._hass.async_add_executor_job(_read_file, self._host.db_path, query)

    # ── embeddings ─────────────────────────────────────────────────────

    async def _embed_forever(self) -> None:
        while True:
            try:
                await self.catch_up()
            except EmbeddingError as err:
                if str(err) != self.last_error:
                    _LOGGER.warning("Embedding the decision history failed: %s", err)
                self.last_error = str(err)
            except Exception:  # never let the loop die: log, wait, try again
                if self._host.engine.started:
                    _LOGGER.exception("Embedding the decision history failed")
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), EMBED_INTERVAL_S)

    async def catch_up(self) -> int:
        """Embed the decisions that have no embedding from this model, a batch at a time;
        returns how many were embedded."""
        embedder = self._embedder
        engine = self._host.engine
        # The decisions' texts (plates, reasons) go only to a server that may have them.
        if embedder is None or not engine.started or not self._host.ai.may_send():
            return 0
        model = self.model
        done = 0
        while True:
            batch: list[Decision] = await engine.store.submit(
                lambda conn: pending(conn, model, BATCH)
            )
            if not batch:
                return done
            vectors = await embedder.embed([d.text for d in batch])
            pairs = [(d.id, v) for d, v in zip(batch, vectors, strict=True)]
            await engine.store.submit(partial(store_embeddings, model=model, vectors=pairs))
            done += len(pairs)
            self.embedded += len(pairs)
            self.last_error = None


def _read_file[T](path: Path, query: Callable[[sqlite3.Connection], T]) -> T:
    conn = sqlite3.connect(path, timeout=READ_TIMEOUT_S, isolation_level=None)
    try:
        conn.execute("PRAGMA query_only=1")
        return query(conn)
    finally:
        conn.close()


def _event(hit: Hit, asker: Asker, score: float, by: tuple[str, ...]) -> Found:
    camera_id = next((cid for cid, name in asker.cameras.items() if name == hit.camera), None)
    return Found(
        kind="event",
        score=score,
        found_by=by,
        at=hit.at,
        camera=hit.camera,
        camera_id=camera_id,
        event_id=hit.event_id,
        label=hit.label,
        caption=hit.caption,
        plate=hit.plate,
    )


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


# ── one per loaded entry ───────────────────────────────────────────────────────────────


def async_start_history(
    hass: HomeAssistant,
    host: WorkflowHost,
    spawn: Callable[[Any, str], asyncio.Task[None]],
) -> HistorySearch:
    """Make an entry's history search and start its embeddings (the entry keeps it in its
    runtime data and stops it with :meth:`HistorySearch.stop` on unload)."""
    search = HistorySearch(hass, host)
    search.start(spawn)
    return search
