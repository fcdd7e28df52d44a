"""The frame each run's AI step looked at, kept on disk per run, within set bounds.

A person checks a decision against what the model saw: the run's page in the panel, the
workflow's *Last picture* entity and a question's card show that frame. Kept only in
memory it was gone after a restart, and only the workflow's latest survived a busy
minute; so each run's last frame is written to ``.storage/opennvr_workflows.<entry>.
evidence/`` (one JPEG per run, named by a hash of the run id), with a small index in Home
Assistant's storage (``….evidence_index``: which run, workflow and camera, when, how big).

Bounded twice, from the options' *Data kept* page (:class:`..settings.Retention`): a
picture older than ``evidence_days`` is deleted, and when the pictures together pass
``evidence_mb`` the oldest go first. Zero keeps none on disk (the latest per workflow
still shows until a restart). The bound is applied when a picture is added, at start,
and every hour. A home keeps thousands of pictures, and a Look adds one: adding one
within the bounds costs the same however many are kept (the kept pictures' bytes and the
oldest one's time are kept as they change, and the pictures are sorted only when a bound
is passed), and the index is written out by Home Assistant's executor, not on the loop,
from the rows as they were when it was asked for, without the loop copying them.

The latest frame of each workflow, and the last few of any run, are also kept in memory,
so the entity and a question asked right after the step need no disk read.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, fields
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final

from homeassistant.core import CALLBACK_TYPE, HomeAssistant, callback
from homeassistant.helpers.event import async_track_time_interval
from homeassistant.helpers.storage import Store

from ...const import DOMAIN
from ..runs.context import short_key
from ..settings import Retention
from .port import Evidence

_LOGGER = logging.getLogger(__name__)

_VERSION: Final = 1
#: How many recent frames stay in memory besides each workflow's latest.
RECENT: Final = 16
PRUNE_EVERY: Final = timedelta(hours=1)
_MB: Final = 1024 * 1024


def evidence_key(entry_id: str) -> str:
    """The storage key of the index (the removal deletes it); not the folder's name, which
    sits beside it in ``.storage``."""
    return f"{DOMAIN}.{entry_id}.evidence_index"


def evidence_folder(hass: HomeAssistant, entry_id: str) -> Path:
    """Where an entry's evidence pictures are (the removal deletes it)."""
    return Path(hass.config.path(".storage", f"{DOMAIN}.{entry_id}.evidence"))


@dataclass(frozen=True, slots=True)
class Kept:
    """One run's picture on disk."""

    run_id: str
    workflow_id: str
    camera: str | None
    at: float
    file: str
    size: int

    def as_json(self) -> dict[str, Any]:
        """The row as the index stores it (``asdict`` copies every value deeply: a cost
        thousands of rows feel)."""
        return {name: getattr(self, name) for name in _KEPT_FIELDS}


_KEPT_FIELDS: Final = tuple(f.name for f in fields(Kept))


class EvidenceStore:
    """One entry's evidence pictures (see the module docstring)."""

    def __init__(
        self, hass: HomeAssistant, entry_id: str, retention: Callable[[], Retention]
    ) -> None:
        self._hass = hass
        self._retention = retention
        self.folder = evidence_folder(hass, entry_id)
        # Serialized off the loop, from :attr:`_rows` (see there).
        self._index: Store[dict[str, Any]] = Store(
            hass, _VERSION, evidence_key(entry_id), serialize_in_event_loop=False
        )
        #: run id -> its picture on disk, in the order they were written
        self.kept: dict[str, Kept] = {}
        #: The same rows in the same order, for the index's saves. Only ever appended to: a
        #: change that is not an addition makes a new list. So a save hands the executor
        #: this list and its length, and the executor reads that many rows from it, while
        #: the loop goes on adding. A copy of every row at each added picture took 0.7 ms of
        #: the loop (5,000 pictures, in Home Assistant's process: memory all over its heap).
        self._rows: list[Kept] = []
        #: The kept pictures' sizes together, and the oldest one's time (or a time before
        #: it: a picture replaced keeps it until the next sort).
        self._bytes = 0
        self._oldest = math.inf
        #: workflow id -> the last frame one of its runs looked at
        self.latest: dict[str, Evidence] = {}
        self._recent: OrderedDict[str, Evidence] = OrderedDict()
        self._writes: set[asyncio.Task[None]] = set()
        self._unsub: CALLBACK_TYPE | None = None

    # ── lifecycle ──────────────────────────────────────────────────────

    async def async_start(self) -> None:
        """Read the index back, drop what the disk no longer has (and files no row
        names), apply the bounds, and load each workflow's latest frame."""
        data = await self._index.async_load() or {}
        rows = [_kept(raw) for raw in data.get("kept", [])]
        kept = sorted((row for row in rows if row is not None), key=lambda k: k.at)
        present = await self._hass.async_add_executor_job(_reconcile, self.folder, kept)
        self._set_kept(present)
        await self.async_prune()
        latest: dict[str, Kept] = {k.workflow_id: k for k in self.kept.values()}
        for workflow_id, row in latest.items():
            evidence = await self._read(row)
            if evidence is not None:
                self.latest.setdefault(workflow_id, evidence)
        self._unsub = async_track_time_interval(
            self._hass,
            self._tick,
            PRUNE_EVERY,
            name="opennvr_workflows evidence bounds",
            cancel_on_shutdown=True,
        )

    async def async_stop(self) -> None:
        if self._unsub is not None:
            self._unsub()
            self._unsub = None
        await self.async_flush()

    async def async_flush(self) -> None:
        """Finish the pictures being written and write the index now (a stop, a
        backup)."""
        if self._writes:
            await asyncio.gather(*self._writes, return_exceptions=True)
        await self._index.async_save(_index_data(self._rows[:]))

    # ── keeping ────────────────────────────────────────────────────────

    @callback
    def keep(self, workflow_id: str, evidence: Evidence) -> None:
        """An AI step of ``workflow_id`` looked at ``evidence``: shown at once, written
        in the background (a run's later frame replaces its earlier one). A trial's
        picture is kept in memory only, for the trial's answer: it is never the
        workflow's *Last picture* and leaves nothing on disk."""
        if not evidence.trial:
            self.latest[workflow_id] = evidence
        self._recent[evidence.run_id] = evidence
        self._recent.move_to_end(evidence.run_id)
        while len(self._recent) > RECENT:
            self._recent.popitem(last=False)
        if evidence.trial:
            return
        task = self._hass.async_create_task(
            self._write(workflow_id, evidence), "opennvr_workflows evidence", eager_start=False
        )
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)

    async def _write(self, workflow_id: str, evidence: Evidence) -> None:
        bounds = self._retention()
        if bounds.evidence_days <= 0 or bounds.evidence_mb <= 0:
            return
        row = Kept(
            run_id=evidence.run_id,
            workflow_id=workflow_id,
            camera=evidence.camera,
            at=evidence.at.timestamp(),
            file=f"{short_key(evidence.run_id)}.jpg",
            size=len(evidence.image),
        )
        try:
            await self._hass.async_add_executor_job(_write, self.folder / row.file, evidence.image)
        except OSError as err:
            _LOGGER.warning("Could not keep the picture of run %s: %s", evidence.run_id, err)
            return
        replaced = self.kept.pop(row.run_id, None)
        if replaced is not None:
            self._bytes -= replaced.size
            self._rows = [kept for kept in self._rows if kept.run_id != row.run_id]
        self.kept[row.run_id] = row
        self._rows.append(row)
        self._bytes += row.size
        self._oldest = min(self._oldest, row.at)
        await self.async_prune()

    # ── reading ────────────────────────────────────────────────────────

    def row(self, run_id: str) -> Kept | Evidence | None:
        """What is known of ``run_id``'s picture without reading it (its camera)."""
        return self._recent.get(run_id) or self.kept.get(run_id)

    def listed(self) -> list[Kept]:
        """Every picture :meth:`async_read` can give, oldest first: those on disk, and a
        workflow's latest still only in memory (being written, or none kept on disk). The
        media browser lists from this alone, whatever the storage behind it."""
        rows = list(self.kept.values())
        workflow_of = {e.run_id: w for w, e in self.latest.items()}
        for run_id, evidence in self._recent.items():
            if run_id in self.kept or run_id not in workflow_of:
                continue
            at = evidence.at.timestamp()
            rows.append(Kept(run_id, workflow_of[run_id], evidence.camera, at, "", 0))
        return sorted(rows, key=lambda row: row.at)

    async def async_read(self, run_id: str) -> Evidence | None:
        """The picture ``run_id``'s AI step looked at, from memory or the disk."""
        if (evidence := self._recent.get(run_id)) is not None:
            return evidence
        row = self.kept.get(run_id)
        return await self._read(row) if row is not None else None

    async def _read(self, row: Kept) -> Evidence | None:
        try:
            image = await self._hass.async_add_executor_job(_read, self.folder / row.file)
        except OSError:
            return None
        return Evidence(image, datetime.fromtimestamp(row.at, UTC), row.run_id, row.camera)

    # ── bounds ─────────────────────────────────────────────────────────

    async def async_prune(self) -> int:
        """Delete the pictures past the age bound, then the oldest past the size bound;
        returns how many went."""
        bounds = self._retention()
        cutoff = datetime.now(UTC).timestamp() - bounds.evidence_days * 86400.0
        limit = bounds.evidence_mb * _MB
        if self._oldest >= cutoff and self._bytes <= limit:
            self._save_index()  # within both bounds: nothing to sort
            return 0
        rows = sorted(self.kept.values(), key=lambda k: k.at)  # pictures land in any order
        gone = [row for row in rows if row.at < cutoff]
        left = [row for row in rows if row.at >= cutoff]
        total, first = sum(row.size for row in left), 0
        while first < len(left) and total > limit:  # the oldest go first
            total -= left[first].size
            first += 1
        gone += left[:first]
        self._set_kept(left[first:])
        if gone:
            await self._hass.async_add_executor_job(
                _remove, [self.folder / row.file for row in gone]
            )
        self._save_index()
        return len(gone)

    def _set_kept(self, rows: list[Kept]) -> None:
        """Keep ``rows`` (oldest first), with their bytes and oldest time counted again."""
        self.kept = {row.run_id: row for row in rows}
        self._rows = list(rows)
        self._bytes = sum(row.size for row in rows)
        self._oldest = min((row.at for row in rows), default=math.inf)

    def _save_index(self) -> None:
        rows, count = self._rows, len(self._rows)  # the rows as they are now (no copy)
        self._index.async_delay_save(lambda: _index_data(rows[:count]), 1.0)

    @callback
    def _tick(self, _now: datetime) -> None:
        self._hass.async_create_background_task(
            self.async_prune(), "opennvr_workflows evidence bounds"
        )


def _index_data(rows: list[Kept]) -> dict[str, Any]:
    return {"kept": [row.as_json() for row in rows]}


def _kept(raw: Any) -> Kept | None:
    try:
        return Kept(**raw)
    except TypeError:
        return None


def _reconcile(folder: Path, rows: list[Kept]) -> list[Kept]:
    """The rows whose file exists; files no row names are deleted (a crash between a
    write and the index's save) (blocking)."""
    if not folder.is_dir():
        return []
    named = {row.file for row in rows}
    for path in folder.iterdir():
        if path.is_file() and path.name not in named:
            path.unlink(missing_ok=True)
    return [row for row in rows if (folder / row.file).is_file()]


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".part")
    partial.write_bytes(data)
    partial.replace(path)


def _read(path: Path) -> bytes:
    return path.read_bytes()


def _remove(paths: list[Path]) -> None:
    for path in paths:
        path.unlink(missing_ok=True)
