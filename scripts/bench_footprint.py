#!/usr/bin/env python3
"""What the integration costs a running Home Assistant: memory, start-up and idle CPU.

The Home Assistant side of ``scripts/bench_ha.py``'s footprint parts, run in a process of
its own so that nothing else lives in it: the simulator and the Ollama fake run in a
process of theirs (``bench_fakes.py``, started by ``bench_ha.py``), and this process imports
the integration only when it is
measured (importing it is part of what it costs). Home Assistant is started here as in
production (asyncio debug off, logging at WARNING, its own event loop and executor, the
blocking-call detector on; :func:`start_home_assistant`, which ``bench_ha.py`` uses too), and
the packages only the tests install are hidden from it (:data:`DEV_ONLY`); the integration's
bytecode is written at the first start and read at the measured ones, as a production Home
Assistant has it from its second start (``sys.dont_write_bytecode``, set by :func:`main`).

Modes (the parent passes the sites' addresses; the last line printed is one JSON object):

* ``prepare``: the entry set up on the 200-camera site; 1,000 runs parked waiting (half on a
  ``wait``, half on a question), then Home Assistant stopped.
* ``measure``: a fresh Home Assistant, its resident memory (RSS), Python's allocated blocks
  and what the SQLite library holds (C memory Python's figures do not see) with Home
  Assistant's core up (``core``), then with what the integration's manifest declares as
  dependencies set up too (``before``: Home Assistant sets them up before the integration in
  every install), then with each of Home Assistant's own components the entry brings set up in
  turn (:data:`HA_STAGES`: the camera component, what ``default_config`` sets up of the AI
  Task stack, then ``ai_task`` itself; each shown apart, counted in the goal's whole figure),
  after the integration's import, and after the entry's setup (restoring the 1,000 waiting
  runs, over a database holding a 100,000-decision history index); the setup's time, the
  longest the loop went without running a 5 ms ticker during it (the slow-callback figure),
  what HA's blocking-call detector reported; then 1,000 more waiting runs under ``tracemalloc`` (the
  growth per 1,000 waiting runs); then the prepared ``wait`` runs end and each notifies exactly
  once, and no prepared question is asked again (no run lost or repeated). With
  ``BENCH_TRACE=1`` every Python allocation is traced from before the import (its bookkeeping
  swells the RSS figures, so they are not comparable): the traced memory after the setup by
  package and by file, and the traced memory the setup alone added, by package and, for the
  integration's own files, by line; the questions' burst, its peak and what it keeps per
  question, with the allocations near its peak by line.
* ``idle``: the demo site; reads commands on stdin (``setup``, ``window <label> <seconds>``,
  ``parse <frame JSON>``, ``hub <frame JSON>`` (:func:`hub_cost`), ``stats``, and
  ``profile <seconds>``, which ``bench_ha.py`` sends while the unwatched tracks flow when
  ``BENCH_PROFILE_TRACKS`` is set: cProfile's top to stderr) so the parent can change what
  the site sends between windows; each window's CPU seconds of this whole process (loop,
  executor, the store's thread).
"""

from __future__ import annotations

import _sqlite3
import argparse
import asyncio
import contextlib
import ctypes
import gc
import json
import logging
import os
import sqlite3
import sys
import time
import tracemalloc
from collections.abc import Callable, Coroutine, Iterable
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
#: The integration's manifest (its requirements and the components it depends on).
MANIFEST: Final = json.loads(
    (ROOT / "custom_components" / "opennvr_workflows" / "manifest.json").read_text()
)

#: Packages this development environment has only for its tests (``rich`` comes with a
#: pytest plugin, ``pygments`` with pytest) that a production Home Assistant does not
#: install. They matter here because ``httpx`` (which Home Assistant's camera component
#: imports) imports its command-line tool when both are present, about 4 MB more; a
#: production install has neither, so the measured process must not either. Hidden only
#: while neither Home Assistant's requirements nor the integration's lead to them
#: (:func:`dev_only`).
DEV_ONLY: Final = ("rich", "pygments")


def dev_only(names: tuple[str, ...]) -> tuple[str, ...]:
    """Those of ``names`` that no requirement of Home Assistant or of the integration
    (its manifest's), followed down, installs."""
    import importlib.metadata as md
    import re

    todo = ["homeassistant", *MANIFEST["requirements"]]
    seen: set[str] = set()
    while todo:
        name = re.match(r"[A-Za-z0-9_.-]+", todo.pop()).group(0)  # type: ignore[union-attr]
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in seen:
            continue
        seen.add(key)
        try:
            todo.extend(r for r in md.requires(name) or [] if "extra ==" not in r)
        except md.PackageNotFoundError:
            continue
    return tuple(n for n in names if n not in seen)


class _NotInstalled:
    """An import finder that answers as if ``names`` were not installed."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = frozenset(names)

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
        if fullname.partition(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)


#: What :data:`DEV_ONLY` hides in this process (worked out before Home Assistant's loop
#: runs: it reads package metadata from the disk).
HIDDEN: tuple[str, ...] = ()
if __name__ == "__main__":
    HIDDEN = dev_only(DEV_ONLY)
    sys.meta_path.insert(0, _NotInstalled(HIDDEN))

from homeassistant import block_async_io, bootstrap, loader  # noqa: E402
from homeassistant import runner as ha_runner  # noqa: E402
from homeassistant.config_entries import SOURCE_USER, ConfigEntries, ConfigEntry  # noqa: E402
from homeassistant.core import HomeAssistant, ServiceCall, callback  # noqa: E402
from homeassistant.core_config import async_process_ha_core_config  # noqa: E402
from homeassistant.setup import async_setup_component  # noqa: E402

NOTIFY: Final = "bench_capture"
ENTRY_ID: Final = "01BENCHFOOTPRINT0000000000"
PAGE: Final = os.sysconf("SC_PAGE_SIZE")
#: The cameras the waiting runs' workflows watch (``bench_ha.py``'s ``hold_*``/``ask_*``).
HOLD_CAMERAS: Final = 100


def rss_mb() -> float:
    """This process's resident memory, MB (10**6 bytes)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE / 1e6


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_as_in_production[T](main: Coroutine[Any, Any, T]) -> T:
    """Run ``main`` as Home Assistant runs in production, pinned to one core: asyncio debug
    off, logging at WARNING, Home Assistant's own event loop (the test plugin turns debug
    and logging up, and slows Home Assistant 4 to 5 times)."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # one core
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger().setLevel(logging.WARNING)
    return asyncio.run(
        main, debug=False, loop_factory=lambda: ha_runner.create_event_loop(debug=False)
    )


async def start_home_assistant(config_dir: Path) -> HomeAssistant:
    """Home Assistant's core as ``bootstrap.async_from_config_dict`` sets it up, without the
    default integrations (frontend, recorder, discovery...) a benchmark does not need; the
    ``http`` server, which the camera and image platforms need, on a free loopback port."""
    hass = HomeAssistant(str(config_dir))
    loader.async_setup(hass)
    hass.config.skip_pip = True
    hass.config_entries = ConfigEntries(hass, {})
    await loader.async_get_custom_components(hass)
    if not await bootstrap.async_load_base_functionality(hass):
        raise RuntimeError("Home Assistant's registries did not load")
    for domain in sorted(bootstrap.CORE_INTEGRATIONS):
        if not await async_setup_component(hass, domain, {}):
            raise RuntimeError(f"Home Assistant's {domain} did not set up")
    await async_process_ha_core_config(hass, {"time_zone": "UTC"})
    http = {"http": {"server_host": ["127.0.0.1"], "server_port": free_port()}}
    if not await async_setup_component(hass, "http", http):
        raise RuntimeError("Home Assistant's http did not set up")
    block_async_io.enable()
    return hass


def database_path(config_dir: Path) -> Path:
    """Where the entry's engine database lives (as ``host.workflows.database_path``)."""
    return config_dir / ".storage" / f"opennvr_workflows.{ENTRY_ID}.db"


#: The components the integration's manifest declares as ``dependencies``.
DEPENDENCIES: Final[list[str]] = MANIFEST["dependencies"]
#: Home Assistant's own components the entry brings, set up in this order before the
#: integration's import and each measured apart (RSS after it less before it): their cost is
#: Home Assistant's, the same for any integration that needs them.
#:
#: * ``camera``: the component behind the entry's camera entities (it imports numpy, through
#:   PyTurboJPEG, and httpx); the issue's own baseline ("from about 135 MB (the camera
#:   component)"), and ``default_config`` sets it up through ``go2rtc``.
#: * ``default_share``: what ``default_config`` (the configuration every install made by
#:   onboarding starts with) sets up of the AI Task stack: ``conversation`` (with the
#:   ``intent`` and ``llm`` it depends on) and ``media_source``.
#: * ``ai_task``: Home Assistant's integration behind the entry's AI Task entity (AI on).
HA_STAGES: Final[tuple[tuple[str, tuple[str, ...]], ...]] = (
    ("camera", ("camera",)),
    ("default_share", ("conversation", "media_source")),
    ("ai_task", ("ai_task",)),
)


async def set_up_components(hass: HomeAssistant, domains: Iterable[str]) -> None:
    """Set ``domains`` up as Home Assistant does before an integration that needs them:
    what the manifest declares as ``dependencies`` (``http`` is up already, on its loopback
    port), or one of :data:`HA_STAGES`."""
    for domain in domains:
        if not await async_setup_component(hass, domain, {}):
            raise RuntimeError(f"Home Assistant's {domain} did not set up")


async def import_integration(hass: HomeAssistant) -> None:
    """Import the integration as Home Assistant does before a first setup (its loader, in
    its import executor, the config flow with it): :func:`make_entry` imports it again,
    which is then free. Imported on the loop instead, its dependencies' first imports
    (``nats`` reading its package metadata) would be reported by the
    blocking-call detector, against this harness rather than the integration."""
    integration = await loader.async_get_integration(hass, "opennvr_workflows")
    await integration.async_get_component()


def make_entry(args: argparse.Namespace, cameras: int) -> ConfigEntry:
    """The entry the config flow makes for the site (imports the integration: call
    :func:`import_integration` first)."""
    from custom_components.opennvr_workflows.config_flow import OpenNVRWorkflowsConfigFlow
    from custom_components.opennvr_workflows.const import (
        CONF_AI_ENABLED,
        CONF_APPROVERS,
        CONF_CAMERA_ROLES,
        CONF_OLLAMA_URL,
        CONF_TRANSPORT,
        CONF_VERIFY_SSL,
        CONF_VISION_MODEL,
        DOMAIN,
        TRANSPORT_WEBSOCKET,
    )

    flow = OpenNVRWorkflowsConfigFlow
    roles = (
        json.loads(args.roles)
        if args.roles
        else {f"cam{c:03d}": str(c) for c in range(1, cameras + 1)}
    )
    return ConfigEntry(
        data={"url": args.url, "token": args.token, CONF_VERIFY_SSL: True},
        discovery_keys=MappingProxyType({}),
        domain=DOMAIN,
        entry_id=ENTRY_ID,
        minor_version=flow.MINOR_VERSION,
        options={
            CONF_TRANSPORT: TRANSPORT_WEBSOCKET,
            CONF_AI_ENABLED: True,
            CONF_OLLAMA_URL: args.ollama,
            CONF_VISION_MODEL: "qwen2.5vl:3b",
            CONF_CAMERA_ROLES: roles,
            CONF_APPROVERS: {"users": [], "notify": [f"notify.{NOTIFY}"]},
        },
        source=SOURCE_USER,
        subentries_data=None,
        title="OpenNVR bench",
        unique_id=args.site_id,
        version=flow.VERSION,
    )


class Blocking(logging.Handler):
    """Counts what Home Assistant's blocking-call detector (and the loop) report."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if "blocking call" in text.lower() or ("took" in text and "seconds" in text):
            self.messages.append(text[:300])


class Ticker:
    """A 5 ms ticker on the loop: the longest it waited past its time is the longest the loop
    was held by one piece of work (a callback, a task step) while it ran."""

    def __init__(self) -> None:
        self.worst_ms = 0.0
        self.over_100ms = 0
        self._task: asyncio.Task[None] | None = None

    async def _tick(self) -> None:
        while True:
            due = time.perf_counter() + 0.005
            await asyncio.sleep(0.005)
            late = (time.perf_counter() - due) * 1000
            self.worst_ms = max(self.worst_ms, late)
            if late > 100:
                self.over_100ms += 1

    def __enter__(self) -> Ticker:
        self._task = asyncio.get_running_loop().create_task(self._tick())
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()


class Notes:
    """The notify service: every message, in order."""

    def __init__(self) -> None:
        self.messages: list[str] = []
        self.arrived = asyncio.Event()

    @callback
    def handle(self, call: ServiceCall) -> None:
        self.messages.append(str(call.data.get("message", "")))
        self.arrived.set()

    def with_prefix(self, prefix: str) -> list[str]:
        return [m for m in self.messages if m.startswith(prefix)]


def sqlite_memory_used() -> int:
    """Bytes SQLite holds (its page caches, statements, ...): C memory Python's own
    figures do not see; 0 where the library cannot be reached."""
    with contextlib.suppress(OSError, AttributeError):
        used = ctypes.CDLL(_sqlite3.__file__).sqlite3_memory_used
        used.restype = ctypes.c_int64
        return int(used())
    return 0


def snapshot() -> dict[str, float]:
    """Resident memory and allocated blocks after a collection; and the resident memory
    once the C allocator has handed its free pages back (``malloc_trim``): what is left is
    held, the difference was freed but kept by the allocator (a high-water mark)."""
    gc.collect()
    rss = rss_mb()
    trimmed = rss
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)
        trimmed = rss_mb()
    return {
        "rss_mb": round(rss, 1),
        "rss_trimmed_mb": round(trimmed, 1),
        "blocks": sys.getallocatedblocks(),
        "sqlite_mb": round(sqlite_memory_used() / 1e6, 2),
    }


def traced_by_file(
    snap: tracemalloc.Snapshot, since: tracemalloc.Snapshot | None = None
) -> dict[str, Any]:
    """Where the traced memory is: the total, the biggest files, and by package (this
    integration's subpackages apart; site-packages by distribution; the rest as stdlib);
    with ``since``, what was added after that snapshot."""
    stats: list[Any] = (
        snap.statistics("filename")
        if since is None
        else [
            tracemalloc.Statistic(d.traceback, d.size_diff, d.count_diff)
            for d in snap.compare_to(since, "filename")
        ]
    )
    packages: dict[str, int] = {}
    for stat in stats:
        name = stat.traceback[0].filename
        if "/custom_components/opennvr_workflows/" in name:
            rest = name.split("/custom_components/opennvr_workflows/", 1)[1]
            key = "ours:" + (rest.split("/", 1)[0] if "/" in rest else rest)
        elif "site-packages/" in name:
            key = name.split("site-packages/", 1)[1].split("/", 1)[0]
        elif name.startswith("<"):
            key = name
        else:
            key = "stdlib"
        packages[key] = packages.get(key, 0) + stat.size
    top = sorted(packages.items(), key=lambda kv: -kv[1])[:20]
    return {
        "total_mb": round(sum(s.size for s in stats) / 1e6, 1),
        "by_package_mb": {k: round(v / 1e6, 2) for k, v in top},
        "top_files": [str(s)[-140:] for s in stats[:12]],
    }


def counts(db: Path) -> dict[str, Any]:
    """Runs by status, and step rows written more than once for one step (off the loop)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        by_status = dict(
            conn.execute("SELECT status, count(*) FROM workflow_runs GROUP BY status").fetchall()
        )
        repeated = conn.execute(
            "SELECT count(*) FROM (SELECT run_id, path FROM workflow_run_steps "
            "GROUP BY run_id, path HAVING count(*) > 1)"
        ).fetchone()[0]
        asked_twice = conn.execute(
            "SELECT count(*) FROM (SELECT run_id, step_path FROM workflow_approvals "
            "GROUP BY run_id, step_path HAVING count(*) > 1)"
        ).fetchone()[0]
        pending = conn.execute(
            "SELECT count(*) FROM workflow_approvals WHERE status = 'pending'"
        ).fetchone()[0]
    finally:
        conn.close()
    return {
        "runs_by_status": by_status,
        "steps_repeated": repeated,
        "questions_asked_twice": asked_twice,
        "questions_pending": pending,
    }


def hold_alert(alert_id: str, camera: int, alert_type: str) -> Any:
    from datetime import UTC, datetime

    from custom_components.opennvr_workflows.engine import NvrEvent

    return NvrEvent(
        kind="alert",
        source="websocket",
        time=datetime.now(UTC),
        type=alert_type,
        camera_id=str(camera),
        alert_id=alert_id,
        app="bench",
        severity="medium",
        track_id=alert_id,
    )


async def park(
    runtime: Any, prefix: str, n: int, kinds: tuple[str, ...] = ("loitering", "tamper")
) -> None:
    """``n`` alerts that each park a run waiting: on a ``wait`` (loitering alerts), on a
    question (tamper alerts), by turns."""
    hub = runtime.hub
    for i in range(n):
        kind = kinds[i % len(kinds)]
        hub.publish(hold_alert(f"{prefix}{i}", i % HOLD_CAMERAS + 1, kind))
        if i % 100 == 99:
            await asyncio.sleep(0)
    await runtime.workflows.engine.idle()


async def setup_entry(hass: HomeAssistant, entry: ConfigEntry) -> tuple[float, Any]:
    """Set the entry up: added when new, else (a restart) the stored entry, as Home
    Assistant's start sets it up."""
    stored = hass.config_entries.async_get_entry(entry.entry_id)
    t0 = time.perf_counter()
    if stored is None:
        await hass.config_entries.async_add(entry)
    else:
        entry = stored
        await hass.config_entries.async_setup(entry.entry_id)
    took = time.perf_counter() - t0
    runtime = getattr(entry, "runtime_data", None)
    if runtime is None or runtime.workflows is None:
        raise SystemExit(f"the entry did not set up: {entry.state} {entry.reason}")
    return took, runtime


async def prepare(args: argparse.Namespace) -> dict[str, Any]:
    config_dir = Path(args.config)
    hass = await start_home_assistant(config_dir)
    notes = Notes()
    hass.services.async_register("notify", NOTIFY, notes.handle)
    await hass.async_start()
    try:
        await import_integration(hass)
        _took, runtime = await setup_entry(hass, make_entry(args, args.cameras))
        await hass.async_block_till_done()
        loaded = runtime.workflows.summary()["loaded"]
        await park(runtime, "held-", args.waiting)
        await asyncio.sleep(0.5)
        waiting = sum(1 for r in runtime.workflows.engine.active_runs() if r.status == "waiting")
    finally:
        await hass.async_stop()
    found = await asyncio.to_thread(counts, database_path(config_dir))
    return {
        "loaded": len(loaded),
        "waiting": waiting,
        "questions_sent": sum(1 for m in notes.messages if "held-" in m),
        "question_sample": [m for m in notes.messages if "held-" in m][:2],
        **found,
    }


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    config_dir = Path(args.config)
    blocking = Blocking()
    logging.getLogger().addHandler(blocking)
    hass = await start_home_assistant(config_dir)
    notes = Notes()
    hass.services.async_register("notify", NOTIFY, notes.handle)
    await hass.async_start()
    await hass.async_block_till_done()
    await asyncio.sleep(0.5)
    core = snapshot()
    # What the integration's manifest declares as dependencies Home Assistant sets up before
    # it in every install (the frontend, without which no config flow can add it): Home
    # Assistant's own cost, counted in ``before`` rather than as the integration's.
    await set_up_components(hass, DEPENDENCIES)
    await hass.async_block_till_done()
    await asyncio.sleep(0.5)
    before = snapshot()
    # Home Assistant's own components the entry brings (HA_STAGES), each measured apart.
    stages: list[dict[str, Any]] = []
    for name, domains in HA_STAGES:
        await set_up_components(hass, domains)
        await hass.async_block_till_done()
        await asyncio.sleep(0.5)
        stages.append({"name": name, "domains": list(domains), **snapshot()})
    # BENCH_TRACE=1: every Python allocation traced from before the import, to say where
    # the memory goes (by file, by package); its own bookkeeping swells the RSS figures.
    trace = bool(os.environ.get("BENCH_TRACE"))
    if trace:
        tracemalloc.start()
    t0 = time.perf_counter()
    # The import as Home Assistant's loader does it at a start (the component, in its
    # executor), before the setup; what the setup imports later is the setup's.
    integration = await loader.async_get_integration(hass, "opennvr_workflows")
    await integration.async_get_component()
    import_s = time.perf_counter() - t0
    imported = snapshot()
    traced_import = tracemalloc.take_snapshot() if trace else None
    entry = hass.config_entries.async_get_entry(ENTRY_ID)  # stored by ``prepare``
    if entry is None:
        raise SystemExit("no stored entry: run the prepare mode first")
    try:
        with Ticker() as ticker:
            setup_s, runtime = await setup_entry(hass, entry)
            await hass.async_block_till_done()
            settled_s = time.perf_counter() - t0 - import_s
        engine = runtime.workflows.engine
        restored = sum(1 for r in engine.active_runs() if r.status == "waiting")
        open_questions = len(engine.pending_approvals())
        await asyncio.sleep(1.0)
        after = snapshot()
        traced_setup: dict[str, Any] = {}
        if traced_import is not None:
            traced_after = tracemalloc.take_snapshot()
            traced_setup = traced_by_file(traced_after)
            traced_setup["setup_only"] = traced_by_file(traced_after, traced_import)
            traced_setup["setup_only_ours"] = [
                str(d)[-150:]
                for d in traced_after.compare_to(traced_import, "lineno")
                if "/opennvr_workflows/" in d.traceback[0].filename
            ][:40]
        # Growth: more waiting runs, half untraced (resident memory, allocated blocks),
        # half under tracemalloc (the bytes Python keeps for them; its own bookkeeping
        # would swell the resident figure).
        half = args.waiting // 2
        await park(runtime, "more-", half // 2, ("loitering",))
        await asyncio.sleep(0.5)
        grown_waits = snapshot()
        if trace:
            gc.collect()
            questions0 = tracemalloc.take_snapshot()
            tracemalloc.reset_peak()
            held0 = tracemalloc.get_traced_memory()[0]
        asking = asyncio.create_task(park(runtime, "more-q", half // 2, ("tamper",)))
        near_peak: tuple[int, tracemalloc.Snapshot] | None = None
        while trace and not asking.done():
            # Where the burst's memory is while it lasts: a snapshot each time the traced
            # memory passes the last one's by 10 MB (taking one holds the loop a moment).
            now_held = tracemalloc.get_traced_memory()[0]
            if now_held - held0 > 10e6 and (near_peak is None or now_held > near_peak[0] + 10e6):
                near_peak = (now_held, tracemalloc.take_snapshot())
            await asyncio.sleep(0.01)
        await asyncio.wait_for(asking, None)
        await asyncio.sleep(0.5)
        grown = snapshot()
        traced_questions: dict[str, Any] = {}
        if trace:
            held1, peak = tracemalloc.get_traced_memory()
            diff = tracemalloc.take_snapshot().compare_to(questions0, "filename")
            traced_questions = {
                "peak_kb_per_question": round((peak - held0) / 1024 / (half // 2), 1),
                "kept_kb_per_question": round((held1 - held0) / 1024 / (half // 2), 1),
                "kept_top": [str(d)[-150:] for d in diff[:10]],
            }
            if near_peak is not None:
                during = near_peak[1].compare_to(questions0, "lineno")
                traced_questions["near_peak_mb"] = round((near_peak[0] - held0) / 1e6, 1)
                traced_questions["near_peak_top"] = [str(d)[-170:] for d in during[:8]]
        tracemalloc.start()
        traced0 = tracemalloc.get_traced_memory()[0]
        await park(runtime, "traced-", half)
        await asyncio.sleep(0.5)
        gc.collect()
        traced1 = tracemalloc.get_traced_memory()[0]
        top = tracemalloc.take_snapshot().statistics("lineno")[:8]
        tracemalloc.stop()
        waiting_now = sum(1 for r in engine.active_runs() if r.status == "waiting")
        # No run lost or repeated: every prepared wait run ends and notifies once; no
        # prepared question is asked again.
        held_waits = args.waiting // 2
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(args.wait_s + 30):
                while len(notes.with_prefix("Done held-")) < held_waits:
                    await notes.arrived.wait()
                    notes.arrived.clear()
        await asyncio.sleep(1.0)
        done = notes.with_prefix("Done held-")
        asked_again = [m for m in notes.messages if "held-" in m and "Done" not in m]
    finally:
        await hass.async_stop()
    found = await asyncio.to_thread(counts, database_path(config_dir))
    return {
        "core": core,
        "dependencies": DEPENDENCIES,
        "not_installed": list(HIDDEN),
        "before": before,
        "ha_stages": stages,
        "imported": imported,
        "after_setup": after,
        "import_s": round(import_s, 2),
        "setup_s": round(setup_s, 2),
        "settled_s": round(settled_s, 2),
        "setup_worst_loop_stall_ms": round(ticker.worst_ms, 1),
        "setup_loop_stalls_over_100ms": ticker.over_100ms,
        "blocking_reports": blocking.messages[:5],
        "blocking_count": len(blocking.messages),
        "restored_waiting": restored,
        "restored_questions": open_questions,
        "waiting_after_more": waiting_now,
        "traced_kb_per_1000_waiting": round((traced1 - traced0) / 1024 * 1000 / half),
        "rss_mb_per_1000_waiting": round((grown["rss_mb"] - after["rss_mb"]) * 1000 / half, 1),
        "blocks_per_waiting_run": round((grown["blocks"] - after["blocks"]) / half, 1),
        "rss_trimmed_mb_per_1000_waiting": round(
            (grown["rss_trimmed_mb"] - after["rss_trimmed_mb"]) * 1000 / half, 1
        ),
        "rss_mb_per_1000_waits": round(
            (grown_waits["rss_mb"] - after["rss_mb"]) * 1000 / (half // 2), 1
        ),
        "rss_mb_per_1000_questions": round(
            (grown["rss_mb"] - grown_waits["rss_mb"]) * 1000 / (half // 2), 1
        ),
        "blocks_per_wait": round((grown_waits["blocks"] - after["blocks"]) / (half // 2), 1),
        "blocks_per_question": round((grown["blocks"] - grown_waits["blocks"]) / (half // 2), 1),
        "traced_top": [str(s)[-160:] for s in top],
        "traced_setup": traced_setup,
        "traced_questions": traced_questions,
        "held_waits": held_waits,
        "held_waits_done": len(done),
        "held_waits_done_unique": len(set(done)),
        "questions_asked_again": len(asked_again),
        **found,
    }


async def idle(args: argparse.Namespace) -> dict[str, Any]:
    """Commands on stdin, one JSON line out for each."""
    config_dir = Path(args.config)
    hass = await start_home_assistant(config_dir)
    notes = Notes()
    hass.services.async_register("notify", NOTIFY, notes.handle)
    await hass.async_start()
    await hass.async_block_till_done()
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    runtime: Any = None
    out: dict[str, Any] = {}
    try:
        print(json.dumps({"ready": True}), flush=True)
        while line := (await reader.readline()).decode().strip():
            cmd, *rest = line.split()
            if cmd == "setup":
                await import_integration(hass)
                _s, runtime = await setup_entry(hass, make_entry(args, args.cameras))
                await hass.async_block_till_done()
                reply: dict[str, Any] = {"loaded": runtime.workflows.summary()["loaded"]}
            elif cmd == "window":
                label, seconds = rest[0], float(rest[1])
                received0 = _received(runtime)
                wall, cpu = time.perf_counter(), time.process_time()
                await asyncio.sleep(seconds)
                wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
                reply = {
                    "label": label,
                    "wall_s": round(wall, 2),
                    "cpu_s": round(cpu, 4),
                    "cpu_pct": round(cpu / wall * 100, 3),
                    "events": _received(runtime) - received0,
                    "load": [round(x, 2) for x in os.getloadavg()],
                }
            elif cmd == "profile":
                import cProfile
                import pstats

                profiler = cProfile.Profile()
                profiler.enable()
                await asyncio.sleep(float(rest[0]))
                profiler.disable()
                stats = pstats.Stats(profiler, stream=sys.stderr).sort_stats("tottime")
                stats.print_stats(25)
                stats.print_callers("acquire")
                reply = {"profiled": True}
            elif cmd == "parse":
                reply = parse_cost(json.loads(" ".join(rest)))
            elif cmd == "hub":
                reply = await hub_cost(runtime, json.loads(" ".join(rest)))
            elif cmd == "stats":
                reply = _stats(runtime)
            else:
                reply = {"error": f"unknown command {cmd}"}
            out[cmd] = reply
            print(json.dumps(reply), flush=True)
    finally:
        await hass.async_stop()
    return {"done": True}


def _received(runtime: Any) -> int:
    """Events that reached the hub: those it passed on, and the tracks of cameras no
    workflow watches, which it drops (and counts) right after parsing."""
    if runtime is None:
        return 0
    return sum(s.received + getattr(s, "tracks_unwatched", 0) for s in runtime.hub.stats.values())


def _stats(runtime: Any) -> dict[str, Any]:
    engine = runtime.workflows.engine
    return {
        "engine_started": engine.stats.started,
        "sources": {k: v.received for k, v in runtime.hub.stats.items()},
        "tracks_unwatched": {k: v.tracks_unwatched for k, v in runtime.hub.stats.items()},
    }


async def hub_cost(runtime: Any, frame: dict[str, Any]) -> dict[str, Any]:
    """What one parsed ``tracks`` frame costs past parsing, with no transport: the frame's
    event published into the running entry's hub, for the camera the frame names and for
    camera 3 (watched: a person-in-zone trigger names it), 2,000 times each, each with a
    new track id; CPU until the engine is idle again, per frame."""
    from custom_components.opennvr_workflows.nvr.normalize import from_ws_frame

    out: dict[str, Any] = {}
    for label, camera in (("frame_camera", frame["camera_id"]), ("watched_camera", 3)):
        events = []
        for i in range(2_000):
            payload = {**frame["payload"], "camera_id": camera}
            payload["tracks"] = [{**t, "id": 50_000 + i} for t in payload["tracks"]]
            events.extend(from_ws_frame({**frame, "camera_id": camera, "payload": payload}))
        gc.collect()
        t0 = time.process_time()
        for n, event in enumerate(events):
            runtime.hub.publish(event)
            if n % 100 == 99:
                await asyncio.sleep(0)
        await runtime.workflows.engine.idle()
        out[f"hub_us_per_frame_{label}"] = round((time.process_time() - t0) / len(events) * 1e6, 1)
    return out


def parse_cost(frame: dict[str, Any]) -> dict[str, Any]:
    """What parsing one ``tracks`` frame costs: the text to JSON, JSON to events."""
    from custom_components.opennvr_workflows.nvr.normalize import from_ws_frame

    text = json.dumps(frame)
    n = 20_000
    t0 = time.process_time()
    for _ in range(n):
        from_ws_frame(json.loads(text))
    return {"parse_us_per_frame": round((time.process_time() - t0) / n * 1e6, 1)}


def main() -> None:
    # A production Home Assistant writes a custom integration's bytecode (``__pycache__``) at
    # its first start and reads it at every start after: neither its container image nor the
    # Python image under it sets ``PYTHONDONTWRITEBYTECODE``, and Home Assistant's own code
    # and its dependencies come compiled. A development environment that sets it would have
    # this process compile the integration from its source at every start, which a
    # production start does not pay: measured here, the import took 18.8 and 19.1 MB and 0.72
    # and 0.63 s compiling, 16.5 and 16.6 MB and 0.28 and 0.31 s from bytecode. ``prepare``
    # is the first start and writes the bytecode; ``measure`` and ``idle`` read it. Set here,
    # for this script's own process, not where a test imports its helpers.
    sys.dont_write_bytecode = False
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("prepare", "measure", "idle"))
    parser.add_argument("--config", required=True)
    parser.add_argument("--url", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--site-id", required=True)
    parser.add_argument("--ollama", required=True)
    parser.add_argument("--cameras", type=int, default=200)
    parser.add_argument("--roles", default="", help="JSON role -> camera id (default camNNN)")
    parser.add_argument("--waiting", type=int, default=1000)
    parser.add_argument("--wait-s", type=float, default=60.0)
    args = parser.parse_args()
    mode: Callable[[argparse.Namespace], Any] = {
        "prepare": prepare,
        "measure": measure,
        "idle": idle,
    }[args.mode]
    result = run_as_in_production(mode(args))
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
