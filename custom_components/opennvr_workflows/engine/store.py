"""One SQLite file, one connection, one thread: the engine's durable memory.

Every read and write goes through a single worker thread that owns the only
connection, so the event loop never blocks on disk and there is exactly one
writer (RFC section 8: "written off the event loop by a single writer").
Operations queue up while a transaction commits; the worker takes everything
that is waiting and runs it as one transaction. Under a flood that turns
thousands of small writes into a few commits a second, which is what lets a
run be durable before its first step without a disk round trip per run.

Durability. Ordinary commits run with ``synchronous=NORMAL``: they survive
a crash of the process, and a power cut at worst loses the last few of them
(the file itself stays consistent). A write whose loss would do harm (the
record that an actuator is about to act) is followed by ``flush(durable=True)``:
the transaction that carries it runs with ``synchronous=FULL``, so it is on
the disk before the future resolves. This is group commit: every durable
request that queued while the previous commit was syncing shares the next
commit and its one sync.

Bounded memory. Each connection's page cache is bounded (:data:`PAGE_CACHE_KIB`): on a
small box SQLite's default would hold a few megabytes more, for pages a writer that appends
does not read again.

Bounded disk. The WAL is kept to a few megabytes at any sustained rate: a
second connection, on its own thread, copies the WAL into the database
(``PASSIVE`` checkpoints, so the disk syncs they need rarely stall a run);
the writer's own ``wal_autocheckpoint`` finishes the job once the WAL passes
:data:`WAL_AUTOCHECKPOINT_PAGES`, so the next commit starts the WAL over from
its beginning (a checkpoint running beside a busy writer alone never catches
up, and the WAL would only grow); ``journal_size_limit`` trims the file when
it starts over after a burst; and after :data:`IDLE_CHECKPOINT_S` without
work the writer truncates the WAL to nothing. Reads run inside the writer's
short transactions, so no read transaction outlives a batch and pins the WAL.

Backups. :meth:`Store.hold` folds the WAL into the database and then keeps the writer
(and the checkpointer) still until :meth:`Store.release`: while it holds, the database
file is complete on its own and does not change, so a copy taken meanwhile (Home
Assistant's backup) is the state of one commit. Writes queue up in memory and are
committed, in order, once the hold ends; a caller awaiting a commit waits with them.

The file is opened in WAL mode, and the engine holds an advisory lock on
``<file>.lock``: the engine is the file's only writer, and a second process
that tries to open it gets :class:`StoreLockedError` at once instead of two
engines racing on the same runs. A damaged file is refused with
:class:`StoreCorruptError`; the engine never starts over on a fresh file and
silently loses runs.
"""

from __future__ import annotations

import asyncio
import fcntl
import logging
import os
import queue
import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future as ThreadFuture
from pathlib import Path
from typing import Any, Final

from .errors import StoreCorruptError, StoreError, StoreLockedError, StoreVersionError
from .schema import MIGRATIONS, SCHEMA_VERSION

_LOGGER = logging.getLogger(__name__)

#: The most operations one transaction takes; bounds how long a commit holds
#: the worker when a flood has queued a great many.
MAX_BATCH: Final = 2000
#: Commits after which the checkpointer copies the WAL into the database, and
#: the longest it waits between checks.
CHECKPOINT_EVERY: Final = 100
CHECKPOINT_INTERVAL_S: Final = 0.5
#: WAL pages (4 KiB each) after which the writer's commit checkpoints itself:
#: the WAL's bound under load.
WAL_AUTOCHECKPOINT_PAGES: Final = 500
#: The size SQLite trims the WAL file to when it starts over after a burst.
JOURNAL_SIZE_LIMIT_BYTES: Final = 4 * 1024 * 1024
#: The name of the thread that writes the file (the one that checkpoints it adds a suffix):
#: what a profile or a thread dump shows of the store.
WRITER_THREAD: Final = "opennvr-workflows-db"
#: The writer's page cache, in KiB (SQLite's default is about 2 MB a connection). Its
#: writes append at the end of each table and index, and a start reads the file once;
#: measured with ``scripts/bench_ha.py`` (200 cameras, 1,000 waiting runs, 100,000 AI
#: decisions), 512 KiB held 2 MB less resident memory than the default, and
#: ``scripts/bench_flood.py`` ran as fast. The checkpointer's connection only copies the WAL
#: into the file, and keeps the smallest cache.
PAGE_CACHE_KIB: Final = 512
CHECKPOINT_PAGE_CACHE_KIB: Final = 64
#: Seconds without work after which the writer truncates the WAL to nothing.
IDLE_CHECKPOINT_S: Final = 1.0
#: The longest a hold (:meth:`Store.hold`) keeps the writer still when nobody releases it.
HOLD_MAX_S: Final = 1800.0

Op = Callable[[sqlite3.Connection], Any]


class _Statement:
    """One queued statement: one object while it waits (a closure would be a function and
    two cells), and no cursor kept until the batch settles. Under a flood thousands wait
    at once, and the garbage collector walks every object they hold at each collection."""

    __slots__ = ("params", "sql")

    def __init__(self, sql: str, params: Sequence[Any]) -> None:
        self.sql = sql
        self.params = params

    def __call__(self, conn: sqlite3.Connection) -> Any:
        conn.execute(self.sql, self.params)
        return None


class _Counted(_Statement):
    """A queued statement whose future resolves with its ``rowcount``."""

    __slots__ = ()

    def __call__(self, conn: sqlite3.Connection) -> Any:
        return conn.execute(self.sql, self.params).rowcount


class Kept(_Statement):
    """A queued statement that keeps its own outcome instead of resolving a future.

    A durable dispatch must know whether its run's row was written, but a future per row
    costs a future, its callback and a copy of the context while thousands of rows wait in
    a flood. The row's :attr:`error` is set (on the loop, when its batch settles) if it
    failed. ``key`` names what it wrote (the run's id), for whoever reads the outcome."""

    __slots__ = ("error", "key")

    def __init__(self, sql: str, params: Sequence[Any], key: str) -> None:
        super().__init__(sql, params)
        self.key = key
        self.error: BaseException | None = None


#: An operation, the future that waits on it, and whether its commit must be synced.
_Item = tuple[Op, "asyncio.Future[Any] | None", bool]
_STOP: Final = object()


class _Hold:
    """A request, queued like a write, to keep the writer still between two batches."""

    __slots__ = ("held", "max_s", "release")

    def __init__(self, held: asyncio.Future[None], max_s: float) -> None:
        #: Resolved (on the loop) once the WAL is folded in and the writer waits.
        self.held = held
        self.max_s = max_s
        self.release = threading.Event()


def _classify(path: Path, err: sqlite3.Error) -> StoreError:
    text = str(err).lower()
    if "locked" in text or "busy" in text:
        return StoreLockedError(
            path,
            "the database is in use by another process (is another Home Assistant "
            "or a database tool using this file?)",
        )
    if "not a database" in text or "malformed" in text or "corrupt" in text:
        return StoreCorruptError(
            path,
            f"the database file is damaged ({err}); move it aside or restore a backup "
            "to start again",
        )
    return StoreError(path, f"database error: {err}")


class Store:
    """The engine's database. Create with :meth:`open`; close with :meth:`close`."""

    def __init__(self, path: Path, loop: asyncio.AbstractEventLoop) -> None:
        self.path = path
        self._loop = loop
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._conn: sqlite3.Connection | None = None
        self._closed = False
        self.commits = 0
        self.failed: StoreError | None = None
        self._lock_fd: int | None = None
        self._checkpointed = 0
        #: Whether ``flush(durable=True)`` syncs; False only to measure what the sync costs.
        self.sync_durable = True
        #: Commits made with a sync, and the durable requests they served.
        self.synced_commits = 0
        self.durable_requests = 0
        self._full = False  # the connection's synchronous setting is FULL
        self._unsynced = True  # commits since the last sync (a previous process's too)
        self._wal_dirty = False  # written since the WAL was last truncated
        self._busy_ms = 1000  # the writer's busy timeout, set on connecting
        self._checkpoint_lock = threading.Lock()
        self._checkpoint_wake = threading.Event()
        self._checkpoint_stop = threading.Event()
        self._checkpoint_thread: threading.Thread | None = None
        #: Writes queued so far, and how many of them are settled (committed, or failed
        #: and reported): the write queued as number ``n`` is settled once ``settled >= n``.
        #: Both move on the event loop only, so a caller there can tell without waiting
        #: whether what it rests on is already on disk.
        self.queued = 0
        self.settled = 0
        self._hold: _Hold | None = None

    # ── lifecycle ──────────────────────────────────────────────────────

    @classmethod
    async def open(cls, path: Path | str, *, lock_timeout_s: float = 1.0) -> Store:
        """Open (creating if needed) and migrate the file; raise a
        :class:`StoreError` subclass naming the file if it cannot be used."""
        loop = asyncio.get_running_loop()
        store = cls(Path(path), loop)
        # Creating and locking the lock file is file I/O: keep it off the event loop.
        await loop.run_in_executor(None, store._take_file_lock)
        ready: ThreadFuture[None] = ThreadFuture()
        store._thread = threading.Thread(
            target=store._run,
            args=(ready, lock_timeout_s),
            name=WRITER_THREAD,
            daemon=True,
        )
        store._thread.start()
        try:
            await asyncio.wrap_future(ready)
        except BaseException:
            store._thread.join()
            store._release_file_lock()
            raise
        return store

    def _take_file_lock(self) -> None:
        """One engine per file: an advisory lock on ``<file>.lock``, so a
        second Home Assistant on the same config folder is told at once."""
        lock_path = f"{self.path}.lock"
        try:
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as err:
            raise StoreError(self.path, f"cannot create the lock file {lock_path}: {err}") from err
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as err:
            os.close(fd)
            raise StoreLockedError(
                self.path,
                "the database is in use by another process (another Home Assistant "
                "or engine holds its lock file)",
            ) from err
        self._lock_fd = fd

    def _release_file_lock(self) -> None:
        if self._lock_fd is not None:
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
            os.close(self._lock_fd)
            self._lock_fd = None

    async def close(self) -> None:
        """Commit what is queued, then close the file."""
        if self._closed:
            return
        self._closed = True
        self.release()  # a hold never outlives the file
        self._queue.put(_STOP)
        thread = self._thread
        if thread is not None:
            await asyncio.get_running_loop().run_in_executor(None, thread.join)
        await asyncio.get_running_loop().run_in_executor(None, self._release_file_lock)

    # ── operations ─────────────────────────────────────────────────────

    def submit(self, op: Op) -> asyncio.Future[Any]:
        """Queue ``op(connection)``; the future resolves with its return
        value once the transaction holding it has committed."""
        fut: asyncio.Future[Any] = self._loop.create_future()
        self._put(op, fut, durable=False)
        return fut

    def submit_nowait(self, op: Op) -> None:
        """Queue ``op`` without a future, for writes nobody waits on (their
        failure is logged and recorded in :attr:`failed`)."""
        self._put(op, None, durable=False)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> asyncio.Future[Any]:
        """Queue one statement; resolves with ``cursor.rowcount``."""
        return self.submit(_Counted(sql, params))

    def execute_nowait(self, sql: str, params: Sequence[Any] = ()) -> None:
        self.submit_nowait(_Statement(sql, params))

    def execute_kept(self, sql: str, params: Sequence[Any], key: str) -> Kept:
        """Queue one statement whose outcome is kept on the returned :class:`Kept` (no
        future): its failure is not logged as a background write's, its reader raises it."""
        kept = Kept(sql, params, key)
        self._put(kept, None, durable=False)
        return kept

    def flush(self, *, durable: bool = False) -> asyncio.Future[Any]:
        """Resolves when everything queued before it has committed; with
        ``durable``, once it is also synced to the disk, so it survives a power
        cut (one sync serves every durable request waiting at that moment)."""
        fut: asyncio.Future[Any] = self._loop.create_future()
        self._put(_noop, fut, durable=durable and self.sync_durable)
        return fut

    async def hold(self, *, max_s: float = HOLD_MAX_S) -> None:
        """Commit what is queued, fold the WAL into the database, then keep every
        write waiting until :meth:`release` (or ``max_s`` seconds, with a warning): a
        copy of the file taken meanwhile is consistent on its own. Returns once the
        writer waits. Holding again while held is a no-op."""
        if self._hold is not None and not self._hold.release.is_set():
            await asyncio.shield(self._hold.held)
            return
        if self._closed:
            raise StoreError(self.path, "the database is closed")
        hold = self._hold = _Hold(self._loop.create_future(), max_s)
        self._queue.put(hold)
        await asyncio.shield(hold.held)

    def release(self) -> None:
        """Let the writer go on after :meth:`hold` (a no-op when nothing holds it)."""
        hold, self._hold = self._hold, None
        if hold is not None:
            hold.release.set()
            _resolve(hold.held)  # a hold asked for just before a close waits no more

    @property
    def holding(self) -> bool:
        """Whether a hold keeps the writer still (or is about to)."""
        return self._hold is not None and not self._hold.release.is_set()

    def _put(self, op: Op, fut: asyncio.Future[Any] | None, *, durable: bool) -> None:
        if self._closed:
            raise StoreError(self.path, "the database is closed")
        if self.failed is not None:
            raise self.failed
        self.queued += 1
        self._queue.put((op, fut, durable))

    # ── the worker thread ──────────────────────────────────────────────

    def _connect(self, lock_timeout_s: float) -> sqlite3.Connection:
        conn = sqlite3.connect(
            self.path, timeout=lock_timeout_s, isolation_level=None, check_same_thread=False
        )
        try:
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()
            if mode is None or str(mode[0]).lower() != "wal":
                raise StoreLockedError(self.path, "could not switch the database to WAL mode")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(f"PRAGMA cache_size=-{PAGE_CACHE_KIB}")
            conn.execute(f"PRAGMA wal_autocheckpoint={WAL_AUTOCHECKPOINT_PAGES}")
            conn.execute(f"PRAGMA journal_size_limit={JOURNAL_SIZE_LIMIT_BYTES}")
            self._busy_ms = int(lock_timeout_s * 1000)
            conn.execute("PRAGMA foreign_keys=OFF")
            # Take the write lock once now, so a file another process holds is
            # reported at start, not at the first run.
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("COMMIT")
            check = conn.execute("PRAGMA quick_check").fetchone()
            if check is None or check[0] != "ok":
                raise StoreCorruptError(
                    self.path,
                    f"the database file is damaged ({check[0] if check else '?'}); "
                    "move it aside or restore a backup to start again",
                )
            self._migrate(conn)
        except sqlite3.Error as err:
            conn.close()
            raise _classify(self.path, err) from err
        except StoreError:
            conn.close()
            raise
        return conn

    def _migrate(self, conn: sqlite3.Connection) -> None:
        row = conn.execute("PRAGMA user_version").fetchone()
        version = int(row[0]) if row else 0
        if version > SCHEMA_VERSION:
            raise StoreVersionError(
                self.path,
                f"schema version {version} is newer than this integration "
                f"understands ({SCHEMA_VERSION}); update the integration",
            )
        for number in range(version + 1, SCHEMA_VERSION + 1):
            conn.execute("BEGIN IMMEDIATE")
            try:
                for statement in _statements(MIGRATIONS[number - 1]):
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version={number}")
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            _LOGGER.info("%s: database migrated to schema version %s", self.path, number)

    def _run(self, ready: ThreadFuture[None], lock_timeout_s: float) -> None:
        try:
            self._conn = self._connect(lock_timeout_s)
        except BaseException as err:  # handed to the opener, not lost
            ready.set_exception(err)
            return
        ready.set_result(None)
        conn = self._conn
        stopping = False
        self._checkpoint_thread = threading.Thread(
            target=self._checkpointer, name=f"{WRITER_THREAD}-checkpoint", daemon=True
        )
        self._checkpoint_thread.start()
        while not stopping:
            try:
                first = self._queue.get(timeout=IDLE_CHECKPOINT_S if self._wal_dirty else None)
            except queue.Empty:
                self._truncate_wal(conn)
                continue
            if first is _STOP:
                break
            if isinstance(first, _Hold):
                self._held(conn, first)
                continue
            batch: list[_Item] = [first]
            hold: _Hold | None = None
            while len(batch) < MAX_BATCH:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is _STOP:
                    stopping = True
                    break
                if isinstance(item, _Hold):
                    hold = item  # after this batch: what was queued before it is in
                    break
                batch.append(item)
            self._run_batch(conn, batch)
            if hold is not None:
                self._held(conn, hold)
        self._stop_checkpointer()
        try:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.Error:
            _LOGGER.warning("%s: checkpoint on close failed", self.path, exc_info=True)
        conn.close()

    def _held(self, conn: sqlite3.Connection, hold: _Hold) -> None:
        """Fold the WAL into the database, tell the loop, and wait for the release.

        The checkpoint lock is kept for the whole hold, so the checkpointer stays still
        too: nothing writes to the database or its WAL until the release."""
        with self._checkpoint_lock:
            try:
                row = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            except sqlite3.Error as err:
                row = None
                _LOGGER.warning("%s: checkpoint before the hold failed: %s", self.path, err)
            if row is not None and row[0] == 0:
                self._wal_dirty = False
                self._unsynced = False
            self._loop.call_soon_threadsafe(_resolve, hold.held)
            if not hold.release.wait(hold.max_s):
                _LOGGER.warning(
                    "%s: held for %.0f s without a release; writing again (a copy of the "
                    "file taken after this moment may not be consistent)",
                    self.path,
                    hold.max_s,
                )

    def _checkpointer(self) -> None:
        """Copy the WAL into the database from a second connection.

        A checkpoint syncs the disk (tens of milliseconds on slow storage).
        Run inside the writer, it would stall every run queued behind it;
        a PASSIVE checkpoint on its own connection runs beside the writer."""
        try:
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            conn.execute(f"PRAGMA cache_size=-{CHECKPOINT_PAGE_CACHE_KIB}")
        except sqlite3.Error:
            _LOGGER.warning("%s: no checkpoint connection", self.path, exc_info=True)
            return
        try:
            while not self._checkpoint_stop.is_set():
                self._checkpoint_wake.wait(CHECKPOINT_INTERVAL_S)
                self._checkpoint_wake.clear()
                commits = self.commits
                if commits == self._checkpointed or self._checkpoint_stop.is_set():
                    continue
                try:
                    with self._checkpoint_lock:
                        conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                except sqlite3.Error:
                    _LOGGER.warning("%s: checkpoint failed", self.path, exc_info=True)
                self._checkpointed = commits
        finally:
            conn.close()

    def _truncate_wal(self, conn: sqlite3.Connection) -> None:
        """Idle: copy what is left into the database and cut the WAL to nothing.

        Only the writer runs this, between batches, so no run waits on it; it
        waits for no reader either (busy timeout 0): a database tool holding a
        read open just leaves the WAL for the next idle moment."""
        try:
            with self._checkpoint_lock:
                conn.execute("PRAGMA busy_timeout=0")
                try:
                    row = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
                finally:
                    conn.execute(f"PRAGMA busy_timeout={self._busy_ms}")
        except sqlite3.Error as err:
            _LOGGER.debug("%s: idle checkpoint not done: %s", self.path, err)
            return
        if row is not None and row[0] == 0:
            self._wal_dirty = False
            self._unsynced = False  # a complete checkpoint synced the database

    def _stop_checkpointer(self) -> None:
        self._checkpoint_stop.set()
        self._checkpoint_wake.set()
        if self._checkpoint_thread is not None:
            self._checkpoint_thread.join()

    def _run_batch(self, conn: sqlite3.Connection, batch: list[_Item]) -> None:
        durable = any(item[2] for item in batch)
        if durable != self._full:
            conn.execute(f"PRAGMA synchronous={'FULL' if durable else 'NORMAL'}")
            self._full = durable
        changes = conn.total_changes
        synced = durable
        values: list[Any] = []
        # Set only when the batch failed and ran one operation at a time.
        results: list[tuple[bool, Any]] | None = None
        try:
            conn.execute("BEGIN IMMEDIATE")
            values = [op(conn) for op, _, _ in batch]
            if durable:
                self._carry_sync(conn, changes)
            conn.execute("COMMIT")
            self.commits += 1
        except Exception:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            # Run them one transaction each, so one bad operation fails alone.
            results = [self._run_one(conn, op) for op, _, _ in batch]
            if durable:
                # Each of those commits synced what it wrote; make sure the
                # earlier batches' writes are synced too, or say it failed.
                self._unsynced = True
                synced, err = self._run_one(conn, lambda c: self._carry_sync(c, c.total_changes))
                if not synced:
                    results = [
                        (False, err) if item[2] else result
                        for item, result in zip(batch, results, strict=True)
                    ]
        self._note_commit(conn, synced, changes)
        if durable:
            self.durable_requests += sum(1 for item in batch if item[2])
        if results is None:
            self._loop.call_soon_threadsafe(_settle_committed, batch, values, self)
        else:
            self._loop.call_soon_threadsafe(_settle, batch, results, self)

    def _carry_sync(self, conn: sqlite3.Connection, changes_before: int) -> None:
        """Make this durable commit write a page, so that its sync happens.

        A commit that writes nothing syncs nothing, yet the writes it must make
        durable may have committed (unsynced) in an earlier batch. Setting
        ``user_version`` to the value it has rewrites the database's first page
        and changes nothing else."""
        if self._unsynced and conn.total_changes == changes_before:
            row = conn.execute("PRAGMA user_version").fetchone()
            conn.execute(f"PRAGMA user_version={int(row[0]) if row else 0}")

    def _note_commit(self, conn: sqlite3.Connection, synced: bool, changes_before: int) -> None:
        """Track whether the file holds commits not yet synced, and wake the checkpointer."""
        if synced:
            self.synced_commits += 1
            self._unsynced = False
            self._wal_dirty = True
        elif conn.total_changes != changes_before:
            self._unsynced = True
            self._wal_dirty = True
        if self.commits - self._checkpointed >= CHECKPOINT_EVERY:
            self._checkpoint_wake.set()

    def _run_one(self, conn: sqlite3.Connection, op: Op) -> tuple[bool, Any]:
        try:
            conn.execute("BEGIN IMMEDIATE")
            value = op(conn)
            conn.execute("COMMIT")
            self.commits += 1
            return True, value
        except Exception as err:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            if isinstance(err, sqlite3.Error):
                return False, _classify(self.path, err)
            return False, err


class StoreSlot:
    """Where the engine's parts find the open store.

    The parts are wired once, when the engine is built; the store opens at start and
    closes at stop (and may open again). Each part holds this slot, never the engine,
    so the database is all it can reach through it."""

    __slots__ = ("current",)

    def __init__(self) -> None:
        #: The open store; None before start and after stop.
        self.current: Store | None = None

    @property
    def started(self) -> bool:
        """Whether the engine has read its file back and runs (the store is set)."""
        return self.current is not None

    @property
    def store(self) -> Store:
        """The open store; ``RuntimeError`` while the engine is not started."""
        store = self.current
        if store is None:
            raise RuntimeError("the engine is not started")
        return store


def _noop(_: sqlite3.Connection) -> None:
    return None


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _settle_committed(batch: list[_Item], values: list[Any], store: Store) -> None:
    """A batch that committed as one transaction: every operation succeeded, so only the
    futures waiting on them need their values (a batch holds up to :data:`MAX_BATCH`
    operations, in a flood most of them with no future; this runs on the loop)."""
    store.settled += len(batch)
    for (_, fut, _), value in zip(batch, values, strict=True):
        if fut is not None and not fut.done():
            fut.set_result(value)


def _settle(batch: list[_Item], results: list[tuple[bool, Any]], store: Store) -> None:
    store.settled += len(batch)
    for (op, fut, _), (ok, value) in zip(batch, results, strict=True):
        if fut is None:
            if isinstance(op, Kept):
                if not ok:
                    op.error = value
                    if isinstance(value, StoreCorruptError):
                        store.failed = value
                continue
            if not ok:
                _LOGGER.error("%s: a background write failed: %s", store.path, value)
                if isinstance(value, StoreCorruptError):
                    store.failed = value
            continue
        if fut.done():
            continue
        if ok:
            fut.set_result(value)
        else:
            fut.set_exception(value)


def _statements(script: str) -> list[str]:
    """Split a migration into statements (no statement in it contains ';')."""
    lines = [line.split("--", 1)[0] for line in script.splitlines()]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]


def chunks(items: list[str], size: int) -> Iterable[list[str]]:
    """``items`` in slices of ``size``: SQLite caps the parameters of one statement."""
    for i in range(0, len(items), size):
        yield items[i : i + size]
