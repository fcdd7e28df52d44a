"""A SQLite VFS that remembers only what was synced: a power cut, on demand.

The VFS wraps SQLite's own ``unix`` VFS inside the very ``libsqlite3`` that
Python's ``sqlite3`` module is linked against (found in ``/proc/self/maps``),
and is registered as the default VFS, so the engine's store and its
checkpointer use it without knowing. Every file works as usual; the only
change is that each ``xSync`` of a file also takes a copy of the file's
bytes at that instant. Those copies are what the disk would hold after a
power cut: anything written but not yet synced is gone. :meth:`cut` takes
that image; :meth:`restore_to` writes it out as files a restarted engine can
open (no ``-shm``: shared memory does not outlive a power cut).

``apsw`` (which has a Python VFS API) is not used: its wheels carry their own
copy of SQLite, and a VFS registered there is invisible to the ``sqlite3``
module the engine uses.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

c_int64 = ctypes.c_int64
_FILE_P = ctypes.c_void_p

_XSYNC = ctypes.CFUNCTYPE(ctypes.c_int, _FILE_P, ctypes.c_int)
_XCLOSE = ctypes.CFUNCTYPE(ctypes.c_int, _FILE_P)
# File names stay raw pointers: the unix VFS keeps the pointer it is given as the
# file's name, so it must be SQLite's own string, not a copy that ctypes frees.
_XOPEN = ctypes.CFUNCTYPE(
    ctypes.c_int,
    ctypes.c_void_p,
    ctypes.c_void_p,
    _FILE_P,
    ctypes.c_int,
    ctypes.POINTER(ctypes.c_int),
)
_XDELETE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int)


class _IoMethods(ctypes.Structure):
    """``sqlite3_io_methods`` (version 3); only xClose and xSync are called from here."""

    _fields_ = [
        ("iVersion", ctypes.c_int),
        ("xClose", ctypes.c_void_p),
        ("xRead", ctypes.c_void_p),
        ("xWrite", ctypes.c_void_p),
        ("xTruncate", ctypes.c_void_p),
        ("xSync", ctypes.c_void_p),
        ("xFileSize", ctypes.c_void_p),
        ("xLock", ctypes.c_void_p),
        ("xUnlock", ctypes.c_void_p),
        ("xCheckReservedLock", ctypes.c_void_p),
        ("xFileControl", ctypes.c_void_p),
        ("xSectorSize", ctypes.c_void_p),
        ("xDeviceCharacteristics", ctypes.c_void_p),
        ("xShmMap", ctypes.c_void_p),
        ("xShmLock", ctypes.c_void_p),
        ("xShmBarrier", ctypes.c_void_p),
        ("xShmUnmap", ctypes.c_void_p),
        ("xFetch", ctypes.c_void_p),
        ("xUnfetch", ctypes.c_void_p),
    ]


class _File(ctypes.Structure):
    """The head every ``sqlite3_file`` shares: its methods."""

    _fields_ = [("pMethods", ctypes.POINTER(_IoMethods))]


class _Vfs(ctypes.Structure):
    """``sqlite3_vfs`` (version 3)."""


_Vfs._fields_ = [
    ("iVersion", ctypes.c_int),
    ("szOsFile", ctypes.c_int),
    ("mxPathname", ctypes.c_int),
    ("pNext", ctypes.POINTER(_Vfs)),
    ("zName", ctypes.c_char_p),
    ("pAppData", ctypes.c_void_p),
    ("xOpen", ctypes.c_void_p),
    ("xDelete", ctypes.c_void_p),
    ("xAccess", ctypes.c_void_p),
    ("xFullPathname", ctypes.c_void_p),
    ("xDlOpen", ctypes.c_void_p),
    ("xDlError", ctypes.c_void_p),
    ("xDlSym", ctypes.c_void_p),
    ("xDlClose", ctypes.c_void_p),
    ("xRandomness", ctypes.c_void_p),
    ("xSleep", ctypes.c_void_p),
    ("xCurrentTime", ctypes.c_void_p),
    ("xGetLastError", ctypes.c_void_p),
    ("xCurrentTimeInt64", ctypes.c_void_p),
    ("xSetSystemCall", ctypes.c_void_p),
    ("xGetSystemCall", ctypes.c_void_p),
    ("xNextSystemCall", ctypes.c_void_p),
]


def _linked_sqlite() -> ctypes.CDLL:
    """The ``libsqlite3`` this process's ``sqlite3`` module uses (dlopen hands back the
    same loaded copy, so a VFS registered through it is the module's too)."""
    import sqlite3  # noqa: F401  (loads the library)

    for line in Path("/proc/self/maps").read_text().splitlines():
        path = line.split()[-1]
        if "libsqlite3" in Path(path).name:
            return ctypes.CDLL(path)
    raise RuntimeError(
        "the sqlite3 module is not linked against a shared libsqlite3; "
        "the power-cut VFS cannot reach it"
    )


class PowerCutVfs:
    """Default SQLite VFS while active: files behave normally; synced bytes are kept.

    ``images`` maps each file's path to its bytes as of its last sync (``None`` once
    SQLite deleted it). ``syncs`` counts the syncs each file had."""

    NAME = b"powercut"

    def __init__(self) -> None:
        self._lib = _linked_sqlite()
        self._lib.sqlite3_vfs_find.restype = ctypes.POINTER(_Vfs)
        self._lib.sqlite3_vfs_find.argtypes = [ctypes.c_char_p]
        self._lib.sqlite3_vfs_register.argtypes = [ctypes.POINTER(_Vfs), ctypes.c_int]
        self._lib.sqlite3_vfs_unregister.argtypes = [ctypes.POINTER(_Vfs)]
        self._unix = self._lib.sqlite3_vfs_find(b"unix")
        if not self._unix:
            raise RuntimeError("SQLite has no unix VFS to wrap")
        real = self._unix.contents
        self._unix_addr = ctypes.addressof(real)
        self._real_open = _XOPEN(real.xOpen)
        self._real_delete = _XDELETE(real.xDelete)
        self._lock = threading.Lock()
        self.images: dict[str, bytes | None] = {}
        self.syncs: dict[str, int] = {}
        self.opened: set[str] = set()
        self._paths: dict[int, str] = {}  # sqlite3_file address -> its path
        # One wrapped method table per real one; real xSync/xClose by wrapped table address.
        self._tables: dict[int, _IoMethods] = {}
        self._real_sync: dict[int, Any] = {}
        self._real_close: dict[int, Any] = {}
        self._callbacks = (
            _XOPEN(self._open),
            _XDELETE(self._delete),
            _XSYNC(self._sync),
            _XCLOSE(self._close),
        )
        self._vfs = _Vfs.from_buffer_copy(real)  # every field as unix has it
        self._vfs.zName = self.NAME
        self._vfs.pNext = ctypes.POINTER(_Vfs)()
        self._vfs.xOpen = ctypes.cast(self._callbacks[0], ctypes.c_void_p).value
        self._vfs.xDelete = ctypes.cast(self._callbacks[1], ctypes.c_void_p).value

    # ── the VFS ────────────────────────────────────────────────────────

    def _open(self, _vfs: int, name: int | None, file: int, flags: int, out: Any) -> int:
        rc: int = self._real_open(self._unix_addr, name, file, flags, out)
        if rc != 0 or name is None:
            return rc
        head = _File.from_address(file)
        if not head.pMethods:
            return rc
        real_addr = ctypes.addressof(head.pMethods.contents)
        path = ctypes.string_at(name).decode()
        with self._lock:
            table = self._tables.get(real_addr)
            if table is None:
                table = _IoMethods.from_buffer_copy(head.pMethods.contents)
                table.xSync = ctypes.cast(self._callbacks[2], ctypes.c_void_p).value
                table.xClose = ctypes.cast(self._callbacks[3], ctypes.c_void_p).value
                self._tables[real_addr] = table
                wrapped = ctypes.addressof(table)
                self._real_sync[wrapped] = _XSYNC(head.pMethods.contents.xSync)
                self._real_close[wrapped] = _XCLOSE(head.pMethods.contents.xClose)
            self._paths[file] = path
            self.opened.add(path)
        head.pMethods = ctypes.pointer(table)
        return rc

    def _delete(self, _vfs: int, name: int, sync_dir: int) -> int:
        rc: int = self._real_delete(self._unix_addr, name, sync_dir)
        if rc == 0:
            with self._lock:
                self.images[ctypes.string_at(name).decode()] = None
        return rc

    def _table_of(self, file: int) -> int:
        return ctypes.addressof(_File.from_address(file).pMethods.contents)

    def _sync(self, file: int, flags: int) -> int:
        rc: int = self._real_sync[self._table_of(file)](file, flags)
        if rc == 0:
            path = self._paths.get(file)
            if path is not None:
                data = Path(path).read_bytes()
                with self._lock:
                    self.images[path] = data
                    self.syncs[path] = self.syncs.get(path, 0) + 1
        return rc

    def _close(self, file: int) -> int:
        close = self._real_close[self._table_of(file)]
        with self._lock:
            self._paths.pop(file, None)
        rc: int = close(file)
        return rc

    # ── the test's side ────────────────────────────────────────────────

    def cut(self) -> dict[str, bytes | None]:
        """What the disk holds if the power goes now."""
        with self._lock:
            return dict(self.images)

    @staticmethod
    def restore_to(image: dict[str, bytes | None], source_db: Path, target_db: Path) -> None:
        """Write the database and its WAL as the cut left them, under ``target_db``'s name."""
        for suffix in ("", "-wal"):
            data = image.get(f"{source_db}{suffix}")
            if data is not None:
                Path(f"{target_db}{suffix}").write_bytes(data)

    @contextmanager
    def installed(self) -> Iterator[PowerCutVfs]:
        """Be the default VFS inside the block; ``unix`` again after it."""
        self._lib.sqlite3_vfs_register(ctypes.pointer(self._vfs), 1)
        try:
            yield self
        finally:
            self._lib.sqlite3_vfs_unregister(ctypes.pointer(self._vfs))
            self._lib.sqlite3_vfs_register(self._unix, 1)
