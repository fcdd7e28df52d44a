#!/usr/bin/env python3
"""The benchmark's fakes (the OpenNVR simulator and the Ollama fake) in a process of their own.

In production the NVR and the model server are processes of their own, most often on other
machines: Home Assistant's loop never runs their work. Served from the benchmark's own
process, they did. Their HTTP serving, the parsing and checking of each chat request, and
the simulator drawing and encoding a 1080p frame for every snapshot (about 8 ms of a Look
run, through megabytes of buffers) ran on Home Assistant's loop and core, in its caches and
under its garbage collector. Only the time inside the two handlers was taken off the
integration's figures; the rest was charged to it. Here they run in a child process, on the
cores the benchmark leaves free (with one core, they share it).

:class:`FakesProcess` starts the child and talks to it. Its :meth:`~FakesProcess.take`
gives the seconds the fakes spent on their own work (drawing frames, handling chats) since
the last take and starts counting again; the benchmark takes once before a timed call and
once after it, and subtracts the second. The child prints one JSON line with its URLs, then
serves until its standard input closes (so it ends with the benchmark however that ends):

    .venv/bin/python scripts/bench_fakes.py --cameras 200 --snapshot 1920x1080
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import logging
import os
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import aiohttp
from aiohttp import web

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fakes.ollama_server import FakeOllama, FromSchema
from tests.fakes.opennvr_sim import OpenNVRSimulator, SimCamera, SimConfig

#: What the fakes' own work is called in :meth:`FakesProcess.take`'s answer.
NVR_RENDER: Final = "nvr_render"
MODEL_SERVER: Final = "model_server"
_STARTED: Final = 30.0
#: Whether this system lets a process choose its cores (Linux does).
AFFINITY: Final = hasattr(os, "sched_getaffinity") and hasattr(os, "sched_setaffinity")


def sim_config(cameras: int, snapshot: tuple[int, int]) -> SimConfig:
    """The simulated site both processes describe: ``cameras`` generic cameras, snapshots
    of ``snapshot`` pixels (the benchmark reads its token and ids from the same config)."""
    return SimConfig(
        cameras=[SimCamera(c, f"Camera {c}") for c in range(1, cameras + 1)],
        snapshot_size=snapshot,
    )


def spare_cores() -> set[int]:
    """The cores this process is not pinned to (empty on a one-core machine, or where this
    process may run anywhere)."""
    if not AFFINITY:
        return set()
    return set(range(os.cpu_count() or 1)) - os.sched_getaffinity(0)


# ── the child ────────────────────────────────────────────────────────────────────────────


@dataclass
class Stopwatch:
    """Seconds spent inside the wrapped calls since the last :meth:`reset`."""

    parts: dict[str, float] = field(default_factory=dict)
    restore: list[Callable[[], None]] = field(default_factory=list)

    def reset(self) -> None:
        self.parts = dict.fromkeys(self.parts, 0.0)

    def take(self) -> dict[str, float]:
        """The seconds since the last reset or take, and a reset."""
        parts, self.parts = self.parts, dict.fromkeys(self.parts, 0.0)
        return parts

    def _add(self, name: str, seconds: float) -> None:
        self.parts[name] = self.parts.get(name, 0.0) + seconds

    def sync(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        self.parts.setdefault(name, 0.0)

        def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self._add(name, time.perf_counter() - t0)

        return timed

    def coro(self, name: str, fn: Callable[..., Awaitable[Any]]) -> Callable[..., Any]:
        self.parts.setdefault(name, 0.0)

        async def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return await fn(*args, **kwargs)
            finally:
                self._add(name, time.perf_counter() - t0)

        return timed

    def patch(self, owner: Any, attr: str, name: str, *, is_coro: bool) -> None:
        """Time ``owner.attr`` (a class, module or instance attribute) until :meth:`undo`."""
        original = owner.__dict__[attr] if attr in vars(owner) else getattr(owner, attr)
        wrap = self.coro if is_coro else self.sync
        setattr(owner, attr, wrap(name, getattr(owner, attr)))
        self.restore.append(lambda: setattr(owner, attr, original))

    def undo(self) -> None:
        for restore in reversed(self.restore):
            restore()
        self.restore.clear()


def body_first(
    handler: Callable[[web.Request], Awaitable[web.StreamResponse]],
) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    """``handler`` once the request's body has arrived. The handler starts when the headers
    have; until the body follows, the time is the client's (building and sending it), not
    the model server's, and must not be taken off the client's figures. aiohttp keeps the
    body it read, so the handler's own read returns at once."""

    async def after_body(request: web.Request) -> web.StreamResponse:
        await request.read()
        return await handler(request)

    return after_body


def control_app(sim: OpenNVRSimulator, ollama: FakeOllama, work: Stopwatch) -> web.Application:
    """What the benchmark asks of the fakes besides their own APIs."""
    draw = sim.draw_frame  # before it is timed: the benchmark's own look is not the fakes'

    async def take(_: web.Request) -> web.Response:
        return web.json_response(work.take())

    async def reply(request: web.Request) -> web.Response:
        ollama.default = FromSchema(dict(await request.json()))
        return web.json_response({})

    async def chats(_: web.Request) -> web.Response:
        sent = ollama.chats
        last = sent[-1] if sent else None
        image = last.images[0] if last is not None and last.images else b""
        return web.json_response(
            {
                "count": len(sent),
                "last_request_bytes": len(json.dumps(last.body)) if last is not None else 0,
                "last_image": base64.b64encode(image).decode(),
            }
        )

    async def frame(_: web.Request) -> web.Response:
        return web.Response(body=draw(sim.config.cameras[0]), content_type="image/jpeg")

    app = web.Application()
    app.router.add_post("/take", take)
    app.router.add_post("/reply", reply)
    app.router.add_get("/chats", chats)
    app.router.add_get("/frame", frame)
    return app


async def serve(args: argparse.Namespace) -> None:
    work = Stopwatch()
    width, _, height = args.snapshot.partition("x")
    sim = OpenNVRSimulator(sim_config(args.cameras, (int(width), int(height))))
    sim.draw_frame = work.sync(NVR_RENDER, sim.draw_frame)  # type: ignore[method-assign]
    ollama = FakeOllama()
    ollama._chat = body_first(work.coro(MODEL_SERVER, ollama._chat))  # type: ignore[method-assign]
    ollama.default = FromSchema(json.loads(args.reply))
    runner = web.AppRunner(control_app(sim, ollama, work), access_log=None)
    await sim.start()
    await ollama.start()
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    server = site._server
    assert server is not None
    port = server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    print(
        json.dumps(
            {
                "sim_url": sim.url,
                "ollama_url": ollama.url,
                "control_url": f"http://127.0.0.1:{port}",
                "cores": sorted(os.sched_getaffinity(0))
                if hasattr(os, "sched_getaffinity")
                else [],
            }
        ),
        flush=True,
    )
    try:
        await asyncio.to_thread(sys.stdin.buffer.read)  # until the benchmark closes it
    finally:
        await runner.cleanup()
        await ollama.stop()
        await sim.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cameras", type=int, default=3)
    parser.add_argument("--snapshot", default="1920x1080", help="WIDTHxHEIGHT")
    parser.add_argument("--reply", default="{}", help="the Ollama fake's answer, a JSON object")
    parser.add_argument("--cores", default="", help="cores to run on, comma-separated")
    args = parser.parse_args()
    if args.cores and AFFINITY:
        os.sched_setaffinity(0, {int(c) for c in args.cores.split(",")})
    logging.basicConfig(level=logging.WARNING)
    asyncio.run(serve(args))


# ── the benchmark's side ─────────────────────────────────────────────────────────────────


@dataclass
class FakesProcess:
    """The fakes' child process, as the benchmark sees it."""

    proc: asyncio.subprocess.Process
    session: aiohttp.ClientSession
    config: SimConfig
    sim_url: str
    ollama_url: str
    control_url: str
    #: The cores the child runs on (those this process is not pinned to, where there are).
    cores: list[int]

    @classmethod
    async def start(
        cls, cameras: int, snapshot: tuple[int, int], reply: dict[str, Any]
    ) -> FakesProcess:
        spare = spare_cores()
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            __file__,
            "--cameras", str(cameras),
            "--snapshot", f"{snapshot[0]}x{snapshot[1]}",
            "--reply", json.dumps(reply),
            "--cores", ",".join(map(str, sorted(spare))),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
        )  # fmt: skip
        assert proc.stdout is not None
        try:
            async with asyncio.timeout(_STARTED):
                line = await proc.stdout.readline()
            urls = json.loads(line)
        except (TimeoutError, ValueError) as err:
            proc.kill()
            await proc.wait()
            raise SystemExit(f"the fakes' process did not start: {err!r}") from err
        return cls(
            proc=proc,
            session=aiohttp.ClientSession(),
            config=sim_config(cameras, snapshot),
            sim_url=urls["sim_url"],
            ollama_url=urls["ollama_url"],
            control_url=urls["control_url"],
            cores=urls["cores"],
        )

    async def take(self) -> dict[str, float]:
        """The fakes' own seconds since the last take (drawing frames, handling chats)."""
        async with self.session.post(f"{self.control_url}/take") as resp:
            return {k: float(v) for k, v in (await resp.json()).items()}

    async def reply(self, values: dict[str, Any]) -> None:
        """The Ollama fake's answer from now on (``FromSchema``'s values)."""
        async with self.session.post(f"{self.control_url}/reply", json=values) as resp:
            resp.raise_for_status()

    async def chats(self) -> tuple[int, int, bytes]:
        """Chats asked so far, the last request's size in bytes and its first picture."""
        async with self.session.get(f"{self.control_url}/chats") as resp:
            got = await resp.json()
        return (
            int(got["count"]),
            int(got["last_request_bytes"]),
            base64.b64decode(got["last_image"]),
        )

    async def frame(self) -> bytes:
        """The first camera's frame, as the simulator draws it for a snapshot."""
        async with self.session.get(f"{self.control_url}/frame") as resp:
            return await resp.read()

    async def stop(self) -> None:
        await self.session.close()
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            async with asyncio.timeout(10):
                await self.proc.wait()
        except TimeoutError:
            self.proc.kill()
            await self.proc.wait()


if __name__ == "__main__":
    main()
