#!/usr/bin/env python3
"""Would a writer outside Python's GIL make durable runs faster? A model of the flood.

The engine writes its database from one thread of Home Assistant's process, so the writer and
the event loop share one GIL. This script models ``bench_flood.py``'s flood without the
engine, to say what a writer with a GIL of its own would change before anyone builds one:
at most 64 runs at once, each spending ``--before`` µs of pure Python, queueing two rows (its
run and its step's intent), waiting for a synced commit, spending ``--after`` µs more and
queueing two more rows (the step done, the run's end). The defaults split the engine's own
loop CPU per run in the flood (about 110 µs).

Three writers, each in its own process, by turns, ``--rounds`` times:

- ``thread``: a thread of this process (as the engine's store): operations on a queue, the
  batch that waits committed as one transaction, the waiting futures settled on the loop;
- ``subinterpreter``: the same writer in a subinterpreter with its own GIL (Python 3.14's
  ``concurrent.interpreters``), handed each run's rows as one ``marshal`` blob when the run
  asks for its commit, answering through a pipe the loop reads (so it never takes this
  interpreter's GIL);
- ``none``: no writer (every commit answered at once): the floor.

``--cores 1`` pins each process to one core, as ``bench_ha.py`` and ``bench_flood.py`` do;
``--cores 2`` leaves it on two. It prints, for each writer, the median of µs of wall time per
run and runs/s, and the ratios to the thread writer, with the load average.

    .venv/bin/python scripts/bench_writer_model.py [--cores 1|2] [--rounds N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import marshal
import os
import queue
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final, Protocol

WRITERS: Final = ("thread", "subinterpreter", "none")
#: Runs driven at once, as the engine's ``MAX_DRIVING``.
AT_ONCE: Final = 64
SCHEMA: Final = """
PRAGMA journal_mode=WAL;
CREATE TABLE runs (id TEXT PRIMARY KEY, workflow TEXT, trigger TEXT, status TEXT,
                   started REAL, ended REAL);
CREATE INDEX runs_by_workflow ON runs (workflow, started);
CREATE INDEX runs_by_start ON runs (started);
CREATE TABLE steps (run TEXT, path TEXT, status TEXT, inputs TEXT, result TEXT, started REAL,
                    ended REAL, PRIMARY KEY (run, path)) WITHOUT ROWID;
"""
SQL: Final = (
    "INSERT INTO runs VALUES (?,?,?,?,?,NULL)",
    "INSERT OR REPLACE INTO steps VALUES (?,?,?,?,?,?,?)",
    "UPDATE runs SET status=?, ended=? WHERE id=?",
)
#: The subinterpreter's side: it reads blobs of ``(statement, params)`` rows, commits each
#: lot synced, and writes the last run's number to the pipe the loop reads.
SUB_WRITER: Final = """
import marshal, os, sqlite3
def serve(path, blobs, wake, done, sql):
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA synchronous=FULL")
    while True:
        os.read(wake, 65536)
        rows, last, stop = [], -1, False
        while True:
            try:
                blob = blobs.get_nowait()
            except Exception:
                break
            if blob is None:
                stop = True
                break
            number, lot = marshal.loads(blob)
            rows.extend(lot)
            last = number
        if rows:
            conn.execute("BEGIN IMMEDIATE")
            for index, params in rows:
                conn.execute(sql[index], params)
            conn.execute("COMMIT")
        if last >= 0:
            os.write(done, last.to_bytes(8, "little"))
        if stop:
            conn.close()
            return
"""


class Writer(Protocol):
    def write(self, index: int, params: Sequence[Any]) -> None: ...
    def commit(self) -> asyncio.Future[None]: ...
    def close(self) -> None: ...


class ThreadWriter:
    """The engine's shape: a thread, a queue, one transaction per waiting batch."""

    def __init__(self, loop: asyncio.AbstractEventLoop, path: str) -> None:
        self._loop = loop
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._conn.execute("PRAGMA synchronous=FULL")
        self._thread = threading.Thread(target=self._run)
        self._thread.start()

    def write(self, index: int, params: Sequence[Any]) -> None:
        self._queue.put((index, params, None))

    def commit(self) -> asyncio.Future[None]:
        fut: asyncio.Future[None] = self._loop.create_future()
        self._queue.put((-1, (), fut))
        return fut

    def _run(self) -> None:
        while True:
            items = [self._queue.get()]
            while True:
                try:
                    items.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            stop = any(item is None for item in items)
            self._conn.execute("BEGIN IMMEDIATE")
            waiting = []
            for item in items:
                if item is None:
                    continue
                index, params, fut = item
                if index >= 0:
                    self._conn.execute(SQL[index], params)
                if fut is not None:
                    waiting.append(fut)
            self._conn.execute("COMMIT")
            self._loop.call_soon_threadsafe(_settle, waiting)
            if stop:
                return

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join()
        self._conn.close()


class SubinterpreterWriter:
    """The same writer with a GIL of its own: rows cross as ``marshal`` blobs on an
    interpreters queue, wake-ups and answers as bytes on two pipes."""

    def __init__(self, loop: asyncio.AbstractEventLoop, path: str) -> None:
        from concurrent import interpreters  # Python 3.14's, imported only where used

        self._loop = loop
        self._rows: list[tuple[int, Sequence[Any]]] = []
        self._number = 0
        self._waiting: dict[int, asyncio.Future[None]] = {}
        self._blobs = interpreters.create_queue()
        self._done_r, done_w = os.pipe()
        os.set_blocking(self._done_r, False)
        wake_r, self._wake_w = os.pipe()
        self._interp = interpreters.create()
        self._interp.exec(SUB_WRITER)
        self._interp.prepare_main(blobs=self._blobs)
        code = f"serve({path!r}, blobs, {wake_r}, {done_w}, {SQL!r})"
        self._thread = threading.Thread(target=self._interp.exec, args=(code,))
        self._thread.start()
        loop.add_reader(self._done_r, self._answered)

    def write(self, index: int, params: Sequence[Any]) -> None:
        self._rows.append((index, params))

    def commit(self) -> asyncio.Future[None]:
        self._number += 1
        self._blobs.put(marshal.dumps((self._number, self._rows)))
        self._rows = []
        os.write(self._wake_w, b"w")
        fut: asyncio.Future[None] = self._loop.create_future()
        self._waiting[self._number] = fut
        return fut

    def _answered(self) -> None:
        data = os.read(self._done_r, 65536)
        last = int.from_bytes(data[-8:], "little")
        for number in [n for n in self._waiting if n <= last]:
            self._waiting.pop(number).set_result(None)

    def close(self) -> None:
        self._blobs.put(None)
        os.write(self._wake_w, b"w")
        self._thread.join()
        self._loop.remove_reader(self._done_r)
        self._interp.close()


class NoWriter:
    """The floor: every commit answered on the loop's next turn, nothing written."""

    def __init__(self, loop: asyncio.AbstractEventLoop, path: str) -> None:
        self._loop = loop

    def write(self, index: int, params: Sequence[Any]) -> None:
        return None

    def commit(self) -> asyncio.Future[None]:
        fut: asyncio.Future[None] = self._loop.create_future()
        self._loop.call_soon(fut.set_result, None)
        return fut

    def close(self) -> None:
        return None


def _settle(waiting: list[asyncio.Future[None]]) -> None:
    for fut in waiting:
        if not fut.done():
            fut.set_result(None)


def busy(us: float) -> None:
    """Pure Python for ``us`` microseconds: a run's own work on the loop."""
    end = time.perf_counter() + us / 1e6
    while time.perf_counter() < end:
        pass


async def flood(kind: str, runs: int, before_us: float, after_us: float) -> float:
    """Microseconds of wall time per run for ``runs`` runs through ``kind``'s writer."""
    with tempfile.TemporaryDirectory(prefix="writer_model_") as tmp:
        path = str(Path(tmp) / "model.db")
        with sqlite3.connect(path) as conn:
            conn.executescript(SCHEMA)
        loop = asyncio.get_running_loop()
        writer: Writer
        if kind == "thread":
            writer = ThreadWriter(loop, path)
        elif kind == "subinterpreter":
            writer = SubinterpreterWriter(loop, path)
        else:
            writer = NoWriter(loop, path)
        slots = asyncio.Semaphore(AT_ONCE)

        async def run(number: int) -> None:
            async with slots:
                busy(before_us)
                run_id, now = f"r{number:08d}", time.time()
                writer.write(0, (run_id, "w", '{"camera": "front"}', "running", now))
                writer.write(1, (run_id, "then.1", "intent", '{"light": "on"}', None, now, None))
                await writer.commit()
                busy(after_us)
                writer.write(1, (run_id, "then.1", "done", '{"light": "on"}', "{}", now, now))
                writer.write(2, ("done", time.time(), run_id))

        start = time.perf_counter()
        await asyncio.gather(*(run(n) for n in range(runs)))
        await writer.commit()
        wall = time.perf_counter() - start
        writer.close()
        return wall / runs * 1e6


def one(kind: str, runs: int, before_us: float, after_us: float, cores: int) -> float:
    """One flood in a fresh process (``--one``), pinned as asked."""
    if cores == 1 and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    return asyncio.run(flood(kind, runs, before_us, after_us))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--cores", type=int, choices=(1, 2), default=1)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--before", type=float, default=80.0, help="µs of work before")
    parser.add_argument("--after", type=float, default=30.0, help="µs of work after")
    parser.add_argument("--one", choices=WRITERS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.runs, args.before, args.after, args.cores)))
        return
    if args.cores == 2 and len(os.sched_getaffinity(0)) < 2:
        raise SystemExit("--cores 2 needs two cores")
    us: dict[str, list[float]] = {kind: [] for kind in WRITERS}
    for _ in range(args.rounds):
        for kind in WRITERS:
            out = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    *("--one", kind, "--cores", str(args.cores), "--runs", str(args.runs)),
                    *("--before", str(args.before), "--after", str(args.after)),
                ],
                check=True,
                capture_output=True,
                text=True,
            )
            us[kind].append(json.loads(out.stdout))
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"{args.runs:,} runs, {args.before:.0f} + {args.after:.0f} µs of work each, "
        f"{args.cores} core(s), {args.rounds} rounds; load {load}"
    )
    thread = statistics.median(us["thread"])
    for kind in WRITERS:
        med = statistics.median(us[kind])
        print(
            f"  {kind:15s} {med:6.0f} µs/run ({min(us[kind]):.0f} to {max(us[kind]):.0f}), "
            f"{1e6 / med:7,.0f} runs/s, {med / thread:.2f} of the thread writer's time"
        )


if __name__ == "__main__":
    main()
