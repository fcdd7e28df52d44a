#!/usr/bin/env python3
"""Workflows in a running Home Assistant: the figures a user feels, next to native automations.

Home Assistant is started here as it runs in production (asyncio debug mode off, logging at
WARNING, Home Assistant's own event loop and executor, the blocking-call detector on), not
inside pytest, whose fixtures turn debug mode on and logging to INFO. One process, on one core.
It loads the real config entry against the OpenNVR simulator (200 cameras, 1080p snapshots)
and the Ollama-API fake, with 51 workflow files in ``<config>/opennvr_workflows/``. The two
fakes run in a process of their own (``bench_fakes.py``), on the other cores where there are
any, as production's NVR and model server do: served from this process, their HTTP serving
and the simulator's drawing of a 1080p frame for every snapshot ran on Home Assistant's
loop and core and were charged to the integration (only the time inside their two handlers
was taken off).

1. **Events through Home Assistant.** 50 rule-only workflows (each on 4 of the 200 cameras, a
   notify as first step) against 50 native automations doing the same (4 ``event`` triggers
   each, filtered on ``event_data``; action: the same notify service), every event matching
   one of them. Ours: an alert published into the integration's event hub (so the transport
   is not what is measured) -> the engine (run row, limits, first step) -> the Home Assistant
   Effects -> ``notify.bench_capture``. Theirs: the same event fired on Home Assistant's bus ->
   automation -> ``notify.bench_capture``. The notify service notes when each alert's
   notification arrived. Measured: events/s as fast as they come, and p50/p99
   event-to-notification at 200 and 2,000 events/s offered (from each event's intended send
   time, so a stall counts against every event it delays), each side in turn in the same
   Home Assistant, and the ratios ours/automations. Each workflow has no cooldown, the
   contract's highest ``per_hour`` (360; no run of this script sends a workflow more) and one
   run per track (every alert its own track), as ``mode: parallel`` automations; both
   messages name the alert (``{alert_id}``, a template in the automation).
2. **The Look step's own overhead, model excluded.** Real Look runs, one at a time: an alert
   -> the engine -> the AI port fetches a 1080p snapshot from the simulator, prepares it, asks
   the Ollama fake (which answers at once) -> the decision is recorded in the step's row ->
   the decided branch's first step (a logbook line) reaches Home Assistant. The time the two
   fakes spend on their own work (the simulator drawing and encoding its 1080p frame, the
   Ollama fake handling the chat, from the moment the request's body has arrived) is timed
   inside them and subtracted; the rest is ours.
   The entry starts with 5,000 pictures kept from earlier Look runs (their index as a busy
   month leaves it, within the default bounds), as a home has them.
3. **The AI Task entity's overhead over the look action, model excluded.** The same question
   about the same camera, asked by turns through ``opennvr_workflows.look`` (three frames,
   a decision) and through ``ai_task.generate_data`` on the site's AI Task entity (a camera
   attachment and a structure with a decision: three frames), each awaited from the call to
   its response. The fakes' own time is subtracted from both, and the frames are taken
   without their one-second gap on both sides (the gap is waiting, not work). The AI Task's
   extra: Home Assistant's AI Task and chat log, its fetch of the attached picture through
   the camera entity, the structure's mapping, and the run, trace and evidence it keeps.

4. **Memory** (run first, like 5 to 7, in a Home Assistant process of its own,
   ``bench_footprint.py``, while this one waits): the resident memory (RSS)
   and Python's allocated blocks of a running Home Assistant before the integration is
   imported, after the import (by Home Assistant's loader, in its executor), and after the
   entry's setup on the 200 cameras with 50 workflow files (42 rule-only ones, 4 whose runs
   ``wait`` and 4 whose runs ask a question), 1,000 waiting runs to restore (half on a
   ``wait``, half on a question) and a 100,000-decision history index in the database
   (``bench_history.py``'s synthetic decisions). Then the growth with more waiting runs:
   RSS and blocks for waits and for questions apart, and the bytes Python keeps for them
   under ``tracemalloc``. RSS is also shown once the C allocator has handed its free pages
   back (``malloc_trim``): the difference is memory freed but kept as a high-water mark.
5. **Start-up**: that entry's setup (the 1,000 waiting runs restored) timed, with Home
   Assistant's blocking-call detector on (what it reports is counted) and a 5 ms ticker on
   the loop (the longest the loop was held by one piece of work: the slow-callback figure);
   no run lost or repeated: the restored ``wait`` runs each notify exactly once when their
   wait ends, the questions are open again and none is asked twice, no step row is
   written twice.
6. **Idle**: the demo site (the simulator's three cameras, an alert every 20 s, Front Door,
   Driveway and Back Garden mapped) with the parcel template (a ``detection.observed.v1``
   on the front door), a person-in-zone workflow on the back garden's fence line and an
   alert workflow; the CPU % of one core of that Home Assistant process over a window (60 s;
   20 s with ``--quick``): Home Assistant alone, the entry set up and quiet, and the demo
   (tracks on all three cameras at the simulator's detector rate, 4 frames/s each). Then
   tracks no workflow watches (a fourth camera no role names, 40 frames/s) and what one
   frame costs, next to what parsing it costs (JSON and the integration's reader) and what
   it costs past parsing (2,000 parsed frames published into the entry's hub, no
   transport: the unwatched camera's, and the watched garden camera's).
   A camera's tracks are *watched* when a loaded workflow in Test or On has a
   ``detect.person_in_zone`` trigger naming the camera (its people are matched against the
   camera's zones) or a ``detection.observed.v1`` trigger naming it or no camera at all;
   the hub drops the others' right after parsing (``nvr/watch.py``).
7. **Cost per run against the flood's length** (``bench_flood.py``): durable runs with an
   ``if`` and an actuator (power-cut safe), floods of 1,000, 10,000 and 1,000 again, three
   times by turns (once with ``--quick``), CPU per run and runs/s (the median of each
   length and the range of the ratio), beside 50 automations doing the same in the same
   Home Assistant; the goal: 10,000 within 15 % of 1,000. ``bench_flood.py --levers``
   measures the levers before and after.

The load average is printed beside each figure: the machine's load changes every figure, so
compare the ratios measured in the same run. The last line printed is one JSON object.
``--quick`` takes about three minutes, the full run about eight.

    .venv/bin/python scripts/bench_ha.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import io
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench_fakes import MODEL_SERVER, NVR_RENDER, FakesProcess, Stopwatch  # noqa: E402
from bench_footprint import (  # noqa: E402  (bench_engine imports them here)
    run_as_in_production,
    start_home_assistant,
)
from homeassistant.config_entries import SOURCE_USER, ConfigEntry  # noqa: E402
from homeassistant.const import CONF_TOKEN, CONF_URL  # noqa: E402
from homeassistant.const import __version__ as HA_VERSION  # noqa: E402
from homeassistant.core import Event, HomeAssistant, ServiceCall, callback  # noqa: E402
from homeassistant.helpers import entity_registry as er  # noqa: E402
from homeassistant.setup import async_setup_component  # noqa: E402
from PIL import Image  # noqa: E402

import custom_components.opennvr_workflows.ai.executor as look_executor  # noqa: E402
import custom_components.opennvr_workflows.ai.inputs as look_inputs  # noqa: E402
from custom_components.opennvr_workflows.ai.nvr_pyopennvr import PyOpenNvrReadPort  # noqa: E402
from custom_components.opennvr_workflows.ai.ollama_client import OllamaLLMClient  # noqa: E402
from custom_components.opennvr_workflows.config_flow import (  # noqa: E402
    OpenNVRWorkflowsConfigFlow,
)
from custom_components.opennvr_workflows.const import (  # noqa: E402
    CONF_AI_ENABLED,
    CONF_APPROVERS,
    CONF_CAMERA_ROLES,
    CONF_DEFAULT_LIMITS,
    CONF_OLLAMA_URL,
    CONF_TRANSPORT,
    CONF_VERIFY_SSL,
    CONF_VISION_MODEL,
    DOMAIN,
    TRANSPORT_WEBSOCKET,
    WORKFLOW_FOLDER,
)
from custom_components.opennvr_workflows.coordinator import OpenNVRRuntime  # noqa: E402
from custom_components.opennvr_workflows.engine import NvrEvent  # noqa: E402
from custom_components.opennvr_workflows.host.ids import camera_unique_id  # noqa: E402
from custom_components.opennvr_workflows.host.model.evidence_store import (  # noqa: E402
    Kept,
    evidence_folder,
    evidence_key,
)
from tests.fakes.ollama_server import FakeOllama, FromSchema  # noqa: E402
from tests.fakes.opennvr_sim import OpenNVRSimulator, SimCamera, SimConfig  # noqa: E402

CAMERAS: Final = 200
WORKFLOWS: Final = 50
PER_WORKFLOW: Final = CAMERAS // WORKFLOWS
#: The contract's ceiling on a workflow's runs per hour: a run never offers more than this.
PER_HOUR_MAX: Final = 360
#: The Ollama fake's answers: to the Look runs (part 2), then to the look action and the AI
#: Task (part 3).
LOOK_REPLY: Final = {"decision": "visitor", "reason": "a courier", "confidence": 0.9}
TASK_REPLY: Final = {"decision": "parcel", "reason": "a box", "confidence": 0.9}
#: The pictures the Look runs find kept (a busy month's, within the default bounds).
PICTURES_KEPT: Final = 5_000
NOTIFY: Final = "bench_capture"
BUS_EVENT: Final = "opennvr_bench_alert"
LOOK_WORKFLOW: Final = "look_bench"
VISION_MODEL: Final = "qwen2.5vl:3b"
LOOK_GOAL_MS: Final = 15.0
TASK_GOAL_MS: Final = 5.0
TASK_QUESTION: Final = "Is a parcel lying on the doorstep?"


def role(camera: int) -> str:
    """The role mapped to OpenNVR camera ``camera`` (1..200)."""
    return f"cam{camera:03d}"


def cameras_of(workflow: int) -> list[int]:
    return list(range(workflow * PER_WORKFLOW + 1, (workflow + 1) * PER_WORKFLOW + 1))


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f}"


def quantile(ordered: list[float], q: float) -> float:
    """The ``q`` quantile of sorted values, as bench_engine.py reads p99 (rounded to 0.01)."""
    if q == 0.5:
        return round(statistics.median(ordered), 2)
    return round(ordered[max(0, int(len(ordered) * q) - 1)], 2)


# ── the site: workflow files and automations ──────────────────────────────────────────────


def rule_workflow(workflow: int) -> str:
    """One of the 50 rule-only workflows: its 4 cameras' intrusion alerts, a notify first.

    Runs are serialised per track (every event is its own track), so no event joins another's
    run, as no automation run waits for another in ``parallel`` mode."""
    cams = ", ".join(role(c) for c in cameras_of(workflow))
    return (
        "contract: workflow.v1\n"
        f"name: Intrusion {workflow:02d}\n"
        "state: on\n"
        f"limits: {{ cooldown: 0s, per_hour: {PER_HOUR_MAX}, one_at_a_time: track }}\n"
        "when:\n"
        f"  alert: {{ alert_type: intrusion, cameras: [{cams}] }}\n"
        "then:\n"
        '  - notify: { who: role:household, message: "Intrusion {alert_id}" }\n'
    )


LOOK_FILE: Final = f"""\
contract: workflow.v1
name: Look benchmark
state: on
needs: [vision_model]
limits: {{ cooldown: 0s, per_hour: {PER_HOUR_MAX}, ai_per_hour: 720, one_at_a_time: track }}
when:
  alert: {{ alert_type: person, cameras: [{role(1)}] }}
then:
  - ai:
      mode: look
      prompt: Is somebody waiting at the door?
      input: picture
      decision: [visitor, nobody]
      visitor: [ log: "Look {{alert_id}}: visitor" ]
      nobody: [ log: "Look {{alert_id}}: nobody" ]
      unsure: [ log: "Look {{alert_id}}: unsure" ]
"""


def automations() -> list[dict[str, Any]]:
    """50 native automations doing what the 50 workflows do."""
    return [
        {
            "id": f"bench{w:02d}",
            "alias": f"Intrusion {w:02d}",
            "triggers": [
                {
                    "trigger": "event",
                    "event_type": BUS_EVENT,
                    "event_data": {"camera": role(c), "type": "intrusion"},
                }
                for c in cameras_of(w)
            ],
            "mode": "parallel",
            "max": 10_000,
            "actions": [
                {
                    "action": f"notify.{NOTIFY}",
                    "data": {"message": "Intrusion {{ trigger.event.data.alert_id }}"},
                }
            ],
        }
        for w in range(WORKFLOWS)
    ]


def make_config_dir() -> Path:
    """A fresh config folder holding the workflow files (called off the event loop)."""
    config_dir = Path(tempfile.mkdtemp(prefix="bench_ha_"))
    folder = config_dir / WORKFLOW_FOLDER
    folder.mkdir(parents=True)
    for w in range(WORKFLOWS):
        (folder / f"intrusion_{w:02d}.yaml").write_text(rule_workflow(w), encoding="utf-8")
    (folder / f"{LOOK_WORKFLOW}.yaml").write_text(LOOK_FILE, encoding="utf-8")
    return config_dir


# ── Home Assistant, started as in production ──────────────────────────────────────────────


def site_entry(fakes: FakesProcess) -> ConfigEntry:
    """The entry the config flow makes for the simulated site, AI on the Ollama fake, every
    camera mapped to a role, the approvers' phone the benchmark's notify service."""
    flow = OpenNVRWorkflowsConfigFlow
    return ConfigEntry(
        data={CONF_URL: fakes.sim_url, CONF_TOKEN: fakes.config.token, CONF_VERIFY_SSL: True},
        discovery_keys=MappingProxyType({}),
        domain=DOMAIN,
        minor_version=flow.MINOR_VERSION,
        options={
            CONF_TRANSPORT: TRANSPORT_WEBSOCKET,
            CONF_AI_ENABLED: True,
            CONF_OLLAMA_URL: fakes.ollama_url,
            CONF_VISION_MODEL: VISION_MODEL,
            CONF_CAMERA_ROLES: {role(c): str(c) for c in range(1, CAMERAS + 1)},
            CONF_APPROVERS: {"users": [], "notify": [f"notify.{NOTIFY}"]},
            # The AI Task's hourly budget: more than part 3 asks.
            CONF_DEFAULT_LIMITS: {"ai_per_hour": 3600},
        },
        source=SOURCE_USER,
        subentries_data=None,
        title=fakes.config.name,
        unique_id=fakes.config.site_id,
        version=flow.VERSION,
    )


class Notifications:
    """The notify service both sides call: when each alert's notification arrived."""

    def __init__(self) -> None:
        self.at: dict[str, float] = {}
        self._pending: set[str] = set()
        self._done = asyncio.Event()

    @callback
    def handle(self, call: ServiceCall) -> None:
        now = time.perf_counter()
        alert_id = str(call.data.get("message", "")).rpartition(" ")[2]
        self.at.setdefault(alert_id, now)
        self._pending.discard(alert_id)
        if not self._pending:
            self._done.set()

    def expect(self, ids: Iterable[str]) -> None:
        self._pending = set(ids) - set(self.at)
        self._done = asyncio.Event()
        if not self._pending:
            self._done.set()

    async def wait(self, seconds: float, what: str) -> None:
        try:
            async with asyncio.timeout(seconds):
                await self._done.wait()
        except TimeoutError:
            raise SystemExit(
                f"{what}: {len(self._pending)} notifications missing after {seconds:.0f} s"
            ) from None


# ── part 1: events through Home Assistant ─────────────────────────────────────────────────

Send = Callable[[Any], object]


@dataclass
class Side:
    """One way of turning an event into a notification: how to send item ``i``."""

    name: str
    send: Send
    make: Callable[[str, int], Any]
    settle: Callable[[], Awaitable[None]]


def items(side: Side, phase: str, n: int) -> list[tuple[str, Any]]:
    out = []
    for i in range(n):
        alert_id = f"{side.name}-{phase}-{i}"
        out.append((alert_id, side.make(alert_id, i % CAMERAS + 1)))
    return out


async def flood(side: Side, work: list[tuple[str, Any]], notes: Notifications) -> float:
    """Events/s when every event is sent at once: sent to last notification."""
    notes.expect(a for a, _ in work)
    gc.collect()
    send = side.send
    t0 = time.perf_counter()
    for _, item in work:
        send(item)
    await notes.wait(max(60.0, len(work) / 50), f"{side.name} flood")
    last = max(notes.at[a] for a, _ in work)
    await side.settle()
    return len(work) / (last - t0)


async def offered(
    side: Side, work: list[tuple[str, Any]], rate: float, notes: Notifications
) -> dict[str, float]:
    """p50/p99 event-to-notification at ``rate`` events/s offered, from the intended times."""
    notes.expect(a for a, _ in work)
    gc.collect()
    send = side.send
    sent: dict[str, float] = {}
    n = len(work)
    start = time.perf_counter() + 0.01
    i = 0
    while i < n:
        now = time.perf_counter()
        while i < n and start + i / rate <= now:
            alert_id, item = work[i]
            sent[alert_id] = start + i / rate
            send(item)
            i += 1
        await asyncio.sleep(0.0002)
    await notes.wait(max(60.0, n / 50), f"{side.name} at {rate:.0f}/s")
    latencies = sorted((notes.at[a] - t) * 1000 for a, t in sent.items())
    last = max(notes.at[a] for a in sent)
    await side.settle()
    return {
        "p50_ms": quantile(latencies, 0.5),
        "p99_ms": quantile(latencies, 0.99),
        "max_ms": round(latencies[-1], 2),
        "done_per_s": round(n / (last - start)),
    }


# ── part 2: the Look step's overhead ──────────────────────────────────────────────────────


def picture_size(data: bytes) -> str:
    with Image.open(io.BytesIO(data)) as img:
        return f"{img.width}x{img.height} JPEG, {len(data) / 1024:.0f} KiB"


def look_alert(alert_id: str) -> NvrEvent:
    return NvrEvent(
        kind="alert",
        source="websocket",
        time=datetime.now(UTC),
        type="person",
        camera_id="1",
        alert_id=alert_id,
        app="intrusion",
        severity="medium",
        track_id=alert_id,
    )


async def time_looks(
    hass: HomeAssistant,
    runtime: OpenNVRRuntime,
    watch: Stopwatch,
    fakes: FakesProcess,
    runs: int,
    warmup: int,
) -> list[dict[str, float]]:
    """Look runs one at a time: each run's seconds, in all, inside each timed part, and
    in the fakes' own work."""
    ended: dict[str, float] = {}
    done = asyncio.Event()

    @callback
    def branch_started(event: Event) -> None:
        message = str(event.data.get("message", ""))
        if message.startswith("Look "):
            ended[message.split()[1].rstrip(":")] = time.perf_counter()
            done.set()

    unsubscribe = hass.bus.async_listen("logbook_entry", branch_started)
    watch.patch(PyOpenNvrReadPort, "snapshot", "fetch", is_coro=True)
    watch.patch(look_inputs, "prepare_image_off_loop", "prepare", is_coro=True)
    watch.patch(OllamaLLMClient, "chat", "model_call", is_coro=True)
    rows: list[dict[str, float]] = []
    try:
        for i in range(warmup + runs):
            alert_id = f"look-{i}"
            event = look_alert(alert_id)
            await fakes.take()  # their count starts from this run
            await asyncio.sleep(0.005)  # the previous run's writes and updates settle
            done.clear()
            watch.reset()
            t0 = time.perf_counter()
            runtime.hub.publish(event)
            async with asyncio.timeout(30):
                while alert_id not in ended:
                    await done.wait()
                    done.clear()
            if i >= warmup:
                total = ended[alert_id] - t0
                rows.append({"total": total, **watch.parts, **await fakes.take()})
    finally:
        unsubscribe()
        watch.undo()
    return rows


async def look_overhead(
    hass: HomeAssistant,
    runtime: OpenNVRRuntime,
    fakes: FakesProcess,
    watch: Stopwatch,
    sizes: Sizes,
) -> dict[str, Any]:
    """Part 2: the Look runs' time less the fakes' own, checked to have decided through the
    model, with what the model was sent."""
    host = runtime.workflows
    assert host is not None
    chats_before, _, _ = await fakes.chats()
    rows = await time_looks(hass, runtime, watch, fakes, sizes.look_runs, sizes.look_warmup)
    await host.engine.idle()
    every = sizes.look_runs + sizes.look_warmup
    outcomes = []
    for run in await host.engine.runs(LOOK_WORKFLOW, limit=every):
        detail = await host.engine.run_detail(run["id"])
        outcomes += [s["outcome"] for s in detail["steps"] if s["path"] == "then.0"]
    if outcomes != ["visitor"] * every:
        raise SystemExit(f"Look runs did not all decide through the model: {outcomes[:5]}")
    chats, request_bytes, sent = await fakes.chats()

    def ms(key: Callable[[dict[str, float]], float]) -> list[float]:
        return sorted(key(r) * 1000 for r in rows)

    ours = ms(lambda r: r["total"] - r[NVR_RENDER] - r[MODEL_SERVER])
    parts = {
        "fetch": ms(lambda r: r["fetch"] - r[NVR_RENDER]),
        "prepare": ms(lambda r: r["prepare"]),
        "model_call": ms(lambda r: r["model_call"] - r[MODEL_SERVER]),
        # The fetch and the model call include the fakes' time, so this is ours alone.
        "engine": ms(lambda r: r["total"] - r["fetch"] - r["prepare"] - r["model_call"]),
        "fakes": ms(lambda r: r[NVR_RENDER] + r[MODEL_SERVER]),
        "total": ms(lambda r: r["total"]),
    }
    return {
        "look_runs": len(rows),
        "look_model_calls_per_run": round((chats - chats_before) / every, 2),
        "look_overhead_p50_ms": quantile(ours, 0.5),
        "look_overhead_p99_ms": quantile(ours, 0.99),
        **{f"look_{k}_p50_ms": quantile(v, 0.5) for k, v in parts.items()},
        "look_source_picture": picture_size(await fakes.frame()),
        "look_sent_picture": picture_size(sent) if sent else "none",
        "look_request_kib": round(request_bytes / 1024, 1),
        "fakes_cores": fakes.cores,
    }


# ── part 3: the AI Task entity against the look action ───────────────────────────────────


def without_frame_gap() -> Callable[[], None]:
    """Frames taken back to back on both sides (the one-second gap is waiting, not work);
    returns the undo."""
    original = look_executor.gather_pictures

    async def back_to_back(ctx: Any, camera: Any, count: int, **kwargs: Any) -> Any:
        return await original(replace(ctx, frame_interval_s=0.0), camera, count, **kwargs)

    look_executor.gather_pictures = back_to_back  # type: ignore[assignment]

    def undo() -> None:
        look_executor.gather_pictures = original  # type: ignore[assignment]

    return undo


async def task_overhead(
    hass: HomeAssistant, runtime: OpenNVRRuntime, fakes: FakesProcess, sizes: Sizes
) -> dict[str, Any]:
    """Part 3: the look action and the AI Task, by turns, each less the fakes' own time."""
    site_id = runtime.info.site_id
    registry = er.async_get(hass)
    camera = registry.async_get_entity_id("camera", DOMAIN, camera_unique_id(site_id, 1))
    task = registry.async_get_entity_id("ai_task", DOMAIN, f"{site_id}_vision_model_ai_task")
    if camera is None or task is None:
        raise SystemExit("the AI Task entity or the first camera is not registered")
    look_data = {
        "camera": camera,
        "prompt": TASK_QUESTION,
        "decision": ["parcel", "no_parcel"],
        "frames": 3,
    }
    task_data = {
        "task_name": "bench",
        "entity_id": task,
        "instructions": TASK_QUESTION,
        "attachments": [
            {"media_content_id": f"media-source://camera/{camera}", "media_content_type": ""}
        ],
        "structure": {"decision": {"selector": {"select": {"options": ["parcel", "no_parcel"]}}}},
    }
    calls = {
        "look": (DOMAIN, "look", look_data),
        "task": ("ai_task", "generate_data", task_data),
    }
    timed: dict[str, list[float]] = {"look": [], "task": []}
    answers: dict[str, Any] = {}
    undo = without_frame_gap()
    try:
        for i in range(sizes.task_warmup + sizes.task_runs):
            for side, (domain, service, data) in calls.items():
                await fakes.take()  # their count starts from this call
                await asyncio.sleep(0.005)  # the previous call's writes settle
                t0 = time.perf_counter()
                answers[side] = await hass.services.async_call(
                    domain, service, data, blocking=True, return_response=True
                )
                spent = time.perf_counter() - t0
                if i >= sizes.task_warmup:
                    own = sum((await fakes.take()).values())
                    timed[side].append((spent - own) * 1000)
    finally:
        undo()
    answer = answers["task"]["data"] if answers.get("task") else None
    if not isinstance(answer, dict) or answer.get("decision") != "parcel":
        raise SystemExit(f"the AI Task did not decide through the model: {answer}")
    look, ai_task = sorted(timed["look"]), sorted(timed["task"])
    pairs = sorted(t - lk for t, lk in zip(timed["task"], timed["look"], strict=True))
    return {
        "task_runs": len(ai_task),
        "task_look_p50_ms": quantile(look, 0.5),
        "task_look_p99_ms": quantile(look, 0.99),
        "task_entity_p50_ms": quantile(ai_task, 0.5),
        "task_entity_p99_ms": quantile(ai_task, 0.99),
        "task_overhead_p50_ms": round(quantile(ai_task, 0.5) - quantile(look, 0.5), 2),
        "task_overhead_p99_ms": round(quantile(ai_task, 0.99) - quantile(look, 0.99), 2),
        # Each pair's own difference: the jitter of both calls lands on it.
        "task_pairs_p50_ms": quantile(pairs, 0.5),
        "task_pairs_p99_ms": quantile(pairs, 0.99),
    }


def task_rows(task: dict[str, Any], report: Report, where: str) -> None:
    goal = f"goal < {TASK_GOAL_MS:.0f}"
    for q in ("p50", "p99"):
        report.row(f"look action {q} (ms, model excluded)", task[f"task_look_{q}_ms"], "", where)
        report.row(
            f"AI Task entity {q} (ms, model excluded)", task[f"task_entity_{q}_ms"], "", where
        )
    for q in ("p50", "p99"):
        report.row(f"AI Task overhead {q} (ms)", task[f"task_overhead_{q}_ms"], goal, where)
    for q in ("p50", "p99"):
        report.row(f"  each pair's difference {q} (ms)", task[f"task_pairs_{q}_ms"])


# ── parts 4 to 7: memory, start-up, idle and the flood's length, in processes of their own ──

SCRIPTS: Final = Path(__file__).resolve().parent
#: The footprint site: 42 rule-only workflows, 4 that park a run on a ``wait`` and 4 on a
#: question (each on 25 of the first 100 cameras): 50 workflow files.
FOOTPRINT_RULES: Final = 42
HOLDS: Final = 4
HOLD_CAMERAS: Final = 25
MEMORY_GOAL_MB: Final = 60.0
SETUP_GOAL_S: Final = 2.0
IDLE_GOAL_PCT: Final = 1.0
FLOOD_GOAL: Final = 1.15
#: The detector's frame rate in the simulator (``OpenNVRSimulator.hold``'s default).
TRACKS_FPS: Final = 4.0
#: The unwatched camera's tracks, sent faster than the detector's rate so their cost shows.
UNWATCHED_FPS: Final = 40.0


def hold_workflow(k: int, wait_s: int) -> str:
    """A workflow whose runs wait ``wait_s`` seconds, then notify (on loitering alerts)."""
    cams = ", ".join(role(c) for c in range(k * HOLD_CAMERAS + 1, (k + 1) * HOLD_CAMERAS + 1))
    return (
        "contract: workflow.v1\n"
        f"name: Hold {k}\n"
        "state: on\n"
        f"limits: {{ cooldown: 0s, per_hour: {PER_HOUR_MAX}, one_at_a_time: track }}\n"
        "when:\n"
        f"  alert: {{ alert_type: loitering, cameras: [{cams}] }}\n"
        "then:\n"
        f"  - wait: {wait_s}s\n"
        '  - notify: { who: role:household, message: "Done {alert_id}" }\n'
    )


def ask_workflow(k: int) -> str:
    """A workflow whose runs wait for a person's answer (on tamper alerts)."""
    cams = ", ".join(role(c) for c in range(k * HOLD_CAMERAS + 1, (k + 1) * HOLD_CAMERAS + 1))
    return (
        "contract: workflow.v1\n"
        f"name: Ask {k}\n"
        "state: on\n"
        f"limits: {{ cooldown: 0s, per_hour: {PER_HOUR_MAX}, one_at_a_time: track }}\n"
        "when:\n"
        f"  alert: {{ alert_type: tamper, cameras: [{cams}] }}\n"
        "then:\n"
        "  - ask_person:\n"
        "      who: role:household\n"
        '      message: "Question {alert_id}"\n'
        "      replies: [Yes, No]\n"
        "      timeout: 1h\n"
        "      default: No\n"
        '    Yes: [ log: "Yes {alert_id}" ]\n'
        "    No: []\n"
    )


DEMO_WORKFLOWS: Final = {
    # The demo's parcel template, as shipped (state test).
    "parcel_at_door.yaml": None,
    "fence_watch.yaml": (
        "contract: workflow.v1\n"
        "name: Somebody at the fence\n"
        "state: on\n"
        "needs: [detector]\n"
        "when:\n"
        "  detect.person_in_zone: { cameras: [garden], zone: fence_line, min_seconds: 20 }\n"
        "then:\n"
        '  - notify: { who: role:household, message: "Somebody at the fence {track}" }\n'
    ),
    "door_alerts.yaml": (
        "contract: workflow.v1\n"
        "name: Person at the door\n"
        "state: on\n"
        "when:\n"
        "  alert: { alert_type: person, cameras: [front_door] }\n"
        "then:\n"
        '  - notify: { who: role:household, message: "Person {alert_id}" }\n'
    ),
}


def footprint_config(wait_s: int) -> Path:
    """The footprint site's config folder, and its engine database already holding the
    history index (called off the event loop)."""
    config_dir = Path(tempfile.mkdtemp(prefix="bench_fp_"))
    folder = config_dir / WORKFLOW_FOLDER
    folder.mkdir(parents=True)
    for w in range(FOOTPRINT_RULES):
        (folder / f"intrusion_{w:02d}.yaml").write_text(rule_workflow(w), encoding="utf-8")
    for k in range(HOLDS):
        (folder / f"hold_{k}.yaml").write_text(hold_workflow(k, wait_s), encoding="utf-8")
        (folder / f"ask_{k}.yaml").write_text(ask_workflow(k), encoding="utf-8")
    return config_dir


def fill_history(db: Path, decisions: int) -> dict[str, float]:
    """``decisions`` finished AI steps, indexed as the recorder's hook does, in the last
    days (retention keeps them): ``bench_history.py``'s synthetic runs."""
    import random
    import sqlite3

    from bench_history import fill_runs

    from custom_components.opennvr_workflows.engine.history import index_step
    from custom_components.opennvr_workflows.engine.store import Store

    async def migrate() -> None:
        store = await Store.open(db)
        await store.close()

    t0 = time.perf_counter()
    db.parent.mkdir(parents=True, exist_ok=True)
    asyncio.run(migrate())
    keys = fill_runs(db, decisions, random.Random(2026))
    conn = sqlite3.connect(db, isolation_level=None)
    now = time.time()
    conn.execute("BEGIN")
    for table, key in (("workflow_runs", "id"), ("workflow_run_steps", "run_id")):
        conn.execute(
            f"UPDATE {table} SET started_at = ? - (? - CAST(substr({key}, 4) AS INTEGER)) * 15,"
            f" ended_at = ? - (? - CAST(substr({key}, 4) AS INTEGER)) * 15 + 4",
            (now, decisions, now, decisions),
        )
    for run_id, path in keys:
        index_step(conn, run_id, path)
    conn.execute("COMMIT")
    conn.close()
    return {
        "history_fill_s": round(time.perf_counter() - t0, 1),
        "db_mb": round(db.stat().st_size / 1e6, 1),
    }


async def child(mode: str, config_dir: Path, fakes: FakesProcess, *extra: str) -> dict[str, Any]:
    """Run ``bench_footprint.py <mode>`` against the fakes' process; its last line (one
    JSON object)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(SCRIPTS / "bench_footprint.py"),
        mode,
        *site_args(config_dir, fakes.sim_url, fakes.config, fakes.ollama_url),
        *extra,
        stdout=asyncio.subprocess.PIPE,
    )
    out, _ = await proc.communicate()
    if proc.returncode != 0:
        raise SystemExit(f"bench_footprint.py {mode} failed ({proc.returncode})")
    return dict(json.loads(out.decode().strip().splitlines()[-1]))


def site_args(config_dir: Path, sim_url: str, site: SimConfig, ollama_url: str) -> list[str]:
    return [
        "--config", str(config_dir),
        "--url", sim_url,
        "--token", site.token,
        "--site-id", site.site_id,
        "--ollama", ollama_url,
        "--cameras", str(len(site.cameras)),
    ]  # fmt: skip


async def footprint_part(fakes: FakesProcess, sizes: Sizes, report: Report) -> None:
    """Parts 4 and 5: memory and start-up, in a Home Assistant of their own."""
    from bench_footprint import ENTRY_ID

    config_dir = await asyncio.to_thread(footprint_config, sizes.wait_s)
    db = config_dir / ".storage" / f"{DOMAIN}.{ENTRY_ID}.db"
    try:
        filled = await asyncio.to_thread(fill_history, db, sizes.history)
        n = str(sizes.waiting)
        wait_s = str(sizes.wait_s)
        prepared = await child("prepare", config_dir, fakes, "--waiting", n, "--wait-s", wait_s)
        got = await child("measure", config_dir, fakes, "--waiting", n, "--wait-s", wait_s)
    finally:
        await asyncio.to_thread(shutil.rmtree, config_dir, True)
    res = report.result
    res.update(footprint_prepared=prepared, footprint=got, **filled)
    core, before = got["core"], got["before"]
    stages = {stage["name"]: stage for stage in got["ha_stages"]}
    camera, share, ai_task = stages["camera"], stages["default_share"], stages["ai_task"]
    imported, after = got["imported"], got["after_setup"]
    added = round(after["rss_mb"] - before["rss_mb"], 1)
    where = load()
    res.update(
        memory_added_mb=added,
        memory_added_to_core_mb=round(after["rss_mb"] - core["rss_mb"], 1),
        memory_dependencies_mb=round(before["rss_mb"] - core["rss_mb"], 1),
        memory_ha_stages_mb={
            name: round(stage["rss_mb"] - prev["rss_mb"], 1)
            for (name, stage), prev in zip(stages.items(), [before, *stages.values()], strict=False)
        },
        memory_past_camera_mb=round(after["rss_mb"] - camera["rss_mb"], 1),
        memory_past_default_config_mb=round(after["rss_mb"] - share["rss_mb"], 1),
        memory_past_ai_task_mb=round(after["rss_mb"] - ai_task["rss_mb"], 1),
        memory_import_mb=round(imported["rss_mb"] - ai_task["rss_mb"], 1),
        memory_blocks_added=after["blocks"] - before["blocks"],
        setup_s_restore=got["setup_s"],
    )
    report.row("memory: HA's core (RSS MB)", core["rss_mb"], "", where)
    deps = ", ".join(got["dependencies"])
    report.row(f"  + the manifest's dependencies ({deps})", res["memory_dependencies_mb"])
    report.row("memory: HA before the integration (RSS MB)", before["rss_mb"], "", where)
    what = {
        "camera": "for the camera entities; default_config has it, through go2rtc",
        "default_share": "default_config sets them up",
        "ai_task": "for the AI Task entity",
    }
    for name, mb in res["memory_ha_stages_mb"].items():
        domains = ", ".join(stages[name]["domains"])
        label = f"memory: HA's {domains} ({what.get(name, name)}; RSS MB)"
        report.row(label, mb, "", where)
    report.row("memory: added by the import (RSS MB)", res["memory_import_mb"], "", where)
    goal = f"goal < {MEMORY_GOAL_MB:.0f}"
    report.row("memory: added by the entry, HA's components with it (RSS MB)", added, goal, where)
    report.row(
        "  the same on HA with its camera component (the issue's baseline)",
        res["memory_past_camera_mb"],
        goal,
    )
    report.row(
        "  the same on HA running default_config (camera, conversation, media_source)",
        res["memory_past_default_config_mb"],
        goal,
    )
    report.row(
        "  the integration's own: its import + setup (RSS MB)", res["memory_past_ai_task_mb"]
    )
    res["memory_added_trimmed_mb"] = round(after["rss_trimmed_mb"] - before["rss_trimmed_mb"], 1)
    report.row("  all of it, allocator's free pages returned (MB)", res["memory_added_trimmed_mb"])
    report.row("  all of it against HA's core (dependencies in it)", res["memory_added_to_core_mb"])
    report.row("  Python's allocated blocks added", res["memory_blocks_added"])
    res["memory_sqlite_mb"] = round(after["sqlite_mb"] - before["sqlite_mb"], 2)
    report.row("  of it, SQLite's own (page caches, statements; MB)", res["memory_sqlite_mb"])
    report.row(
        "memory: per 1,000 more waiting runs (traced KiB)",
        got["traced_kb_per_1000_waiting"],
        "",
        where,
    )
    report.row("  per 1,000 more waiting runs (RSS MB)", got["rss_mb_per_1000_waiting"])
    report.row(
        "  the same, allocator's free pages returned (MB)",
        got["rss_trimmed_mb_per_1000_waiting"],
    )
    report.row("  per 1,000 more waits (RSS MB)", got["rss_mb_per_1000_waits"])
    report.row("  per 1,000 more questions (RSS MB)", got["rss_mb_per_1000_questions"])
    report.row("  allocated blocks per wait / per question",
               f"{got['blocks_per_wait']} / {got['blocks_per_question']}")  # fmt: skip
    report.row("start-up: import of the integration (s)", got["import_s"], "", where)
    report.row(
        f"start-up: entry's setup, {sizes.waiting:,} waiting (s)",
        got["setup_s"],
        f"goal < {SETUP_GOAL_S:.0f}",
        where,
    )
    report.row("  setup until Home Assistant settled (s)", got["settled_s"])
    report.row("  longest loop stall during setup (ms)", got["setup_worst_loop_stall_ms"])
    report.row("  blocking calls reported (HA's detector)", got["blocking_count"], "goal 0")
    report.row("  waiting runs restored", got["restored_waiting"], f"= {prepared['waiting']}")
    report.row(
        "  waits ended after restart: notified / once each",
        f"{got['held_waits_done']} / {got['held_waits_done_unique']}",
        f"= {got['held_waits']}",
    )
    report.row(
        "  questions open after restart",
        got["restored_questions"],
        f"= {prepared['questions_pending']}",
    )
    report.row("  questions asked twice (rows)", got["questions_asked_twice"], "goal 0")
    report.row("  step rows written twice", got["steps_repeated"], "goal 0")


async def idle_part(sizes: Sizes, report: Report) -> None:
    """Part 6: the demo site idle, and tracks no workflow watches."""
    from tests.fakes.opennvr_sim import default_cameras, parcel_track, person_track

    cameras = [*default_cameras(), SimCamera(4, "Side Path", "side")]
    sim = OpenNVRSimulator(
        SimConfig(cameras=cameras, alert_rate=0.05, site_id="11111111-2222-4333-8444-555555555555")
    )
    ollama = FakeOllama()
    ollama.default = FromSchema({"decision": "parcel", "reason": "a box", "confidence": 0.9})
    config_dir = Path(await asyncio.to_thread(tempfile.mkdtemp, prefix="bench_idle_"))

    def write() -> None:
        from custom_components.opennvr_workflows.workflow.template_library import template_text

        folder = config_dir / WORKFLOW_FOLDER
        folder.mkdir(parents=True)
        for name, text in DEMO_WORKFLOWS.items():
            body = text if text is not None else template_text(name.removesuffix(".yaml"))
            (folder / name).write_text(body, encoding="utf-8")

    await asyncio.to_thread(write)
    await sim.start()
    await ollama.start()
    roles = json.dumps({"front_door": "1", "drive": "2", "garden": "3"})
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(SCRIPTS / "bench_footprint.py"), "idle",
        *site_args(config_dir, sim.url, sim.config, ollama.url), "--roles", roles,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdin is not None
    assert proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout

    async def ask(command: str) -> dict[str, Any]:
        stdin.write(command.encode() + b"\n")
        await stdin.drain()
        while True:
            line = (await stdout.readline()).decode().strip()
            if not line:
                raise SystemExit(f"bench_footprint.py idle ended on {command!r}")
            if line.startswith("{"):
                return dict(json.loads(line))

    def demo_tracks() -> list[tuple[int, list[dict[str, Any]]]]:
        return [
            (1, [parcel_track(9001, (0.55, 0.82))]),
            (2, [person_track(9002, (0.3, 0.5), label="car")]),
            (3, [person_track(9003, (0.15, 0.5))]),
        ]

    sending: dict[str, Any] = {"tracks": [], "fps": TRACKS_FPS}

    async def emitter() -> None:
        while True:
            started = time.perf_counter()
            for cam, tracks in sending["tracks"]:
                await sim.emit_tracks(cam, tracks)
            await asyncio.sleep(max(0.0, 1 / sending["fps"] - (time.perf_counter() - started)))

    rows: dict[str, dict[str, Any]] = {}
    task = asyncio.create_task(emitter())
    try:
        await stdout.readline()  # ready
        w = sizes.idle_s
        rows["ha_alone"] = await ask(f"window ha_alone {w / 2}")
        setup = await ask("setup")
        await asyncio.sleep(3.0)
        rows["quiet"] = await ask(f"window quiet {w}")
        sending.update(tracks=demo_tracks(), fps=TRACKS_FPS)
        rows["demo"] = await ask(f"window demo {w}")
        sending.update(tracks=[(4, [person_track(9004, (0.5, 0.5))])], fps=UNWATCHED_FPS)
        await asyncio.sleep(1.0)
        rows["unwatched"] = await ask(f"window unwatched {w / 2}")
        if os.environ.get("BENCH_PROFILE_TRACKS"):
            await ask("profile 5")
        sending.update(tracks=[])
        frame = {
            "event_type": "tracks", "camera_id": 4, "task": "tier0",
            "payload": {"schema": "opennvr.overlay.tracks.v1", "seq": 1, "camera_id": 4,
                        "ts": datetime.now(UTC).isoformat(), "frame": {"w": 1280, "h": 720},
                        "tracks": [person_track(9004, (0.5, 0.5))]},
        }  # fmt: skip
        parsed = await ask("parse " + json.dumps(frame))
        parsed.update(await ask("hub " + json.dumps(frame)))
        stdin.write(b"\n")
        await stdin.drain()
        await proc.wait()
    finally:
        task.cancel()
        if proc.returncode is None:
            proc.kill()
        await sim.stop()
        await ollama.stop()
        await asyncio.to_thread(shutil.rmtree, config_dir, True)
    quiet, demo, unwatched = rows["quiet"], rows["demo"], rows["unwatched"]
    # The frames that reached the hub (the alerts every 20 s are in the quiet window too).
    demo_frames = max(1, demo["events"] - quiet["events"] * demo["wall_s"] / quiet["wall_s"])
    unwatched_frames = max(1, unwatched["events"])
    q_rate = quiet["cpu_s"] / quiet["wall_s"]
    per_watched = (demo["cpu_s"] - q_rate * demo["wall_s"]) / demo_frames * 1e6
    per_unwatched = (unwatched["cpu_s"] - q_rate * unwatched["wall_s"]) / unwatched_frames * 1e6
    res = report.result
    res.update(
        idle_rows=rows,
        idle_loaded=setup.get("loaded"),
        idle_demo_cpu_pct=demo["cpu_pct"],
        idle_added_cpu_pct=round(demo["cpu_pct"] - rows["ha_alone"]["cpu_pct"], 3),
        idle_us_per_watched_frame=round(per_watched),
        idle_us_per_unwatched_frame=round(per_unwatched),
        **parsed,
    )
    for key in ("ha_alone", "quiet", "demo", "unwatched"):
        r = rows[key]
        report.row(
            f"idle: {key} ({r['wall_s']:.0f} s, {r['events']} events): CPU % of a core",
            r["cpu_pct"],
            f"goal < {IDLE_GOAL_PCT:.0f}" if key == "demo" else "",
            f"load {' '.join(map(str, r['load']))}",
        )
    report.row("  demo less Home Assistant alone (CPU %)", res["idle_added_cpu_pct"])
    report.row("  CPU per tracks frame, watched cameras (us)", res["idle_us_per_watched_frame"])
    report.row("  CPU per tracks frame, unwatched camera (us)", res["idle_us_per_unwatched_frame"])
    report.row("  of which parsing it (JSON + normalize, us)", parsed["parse_us_per_frame"])
    report.row(
        "  past parsing, unwatched camera (hub on, us)",
        parsed["hub_us_per_frame_frame_camera"],
        "goal ~0",
    )
    report.row(
        "  past parsing, watched camera (hub on, us)", parsed["hub_us_per_frame_watched_camera"]
    )


async def flood_length_part(report: Report, rounds: int | None) -> None:
    """Part 7: cost per durable run, 1,000 against 10,000 runs, ``rounds`` times (None:
    ``bench_flood.py``'s default), in a process of its own, beside Home Assistant's
    automations."""
    args = [] if rounds is None else ["--rounds", str(rounds)]
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(SCRIPTS / "bench_flood.py"), *args, stdout=asyncio.subprocess.PIPE
    )
    out, _ = await proc.communicate()
    if proc.returncode != 0:
        raise SystemExit(f"bench_flood.py failed ({proc.returncode})")
    got = json.loads(out.decode().strip().splitlines()[-1])["plain"]
    report.result["flood_length"] = got
    loads = [row["load"][0] for row in got["rows"]]
    where = f"load {min(loads)}-{max(loads)} (1 min)"
    for n in sorted({row["n"] for row in got["rows"]}):
        med, (low, high) = got[f"medians_{n}"], got[f"ratio_runs_per_s_{n}_range"]
        count = got[f"floods_{n}"]
        floods = f"median of {count} flood{'s' if count != 1 else ''}"
        report.row(
            f"flood {n:,}: runs/s engine / automations ({floods}; range)",
            f"{got[f'ratio_runs_per_s_{n}']} ({low}-{high})",
            ">= 2",
            where,
        )
        report.row(
            f"flood {n:,}: runs/s engine, automations (medians)",
            f"{med['engine_runs_per_s']:,.0f}, {med['ha_runs_per_s']:,.0f}",
        )
        report.row(
            f"flood {n:,}: CPU per run, engine / automations (us, medians)",
            f"{med['engine_us_per_run']:.0f} / {med['ha_us_per_run']:.0f}",
        )
        report.row(
            "  engine: loop idle, % of the flood (of it while the store wrote, %)",
            f"{med['engine_loop_idle_pct']:.0f} ({med['engine_loop_idle_in_store_pct']:.0f})",
        )
        report.row(
            "  engine: store writing, % of the flood (of it on the CPU, %)",
            f"{med['engine_store_busy_pct']:.0f} ({med['engine_store_busy_cpu_pct']:.0f})",
        )
        report.row(
            "  engine: synced commits, % of the flood (of the loop's idle in them, %)",
            f"{med['engine_store_synced_pct']:.0f} ({med['engine_loop_idle_in_sync_pct']:.0f})",
        )
        report.row(
            "  engine: loop / store CPU per run (us, medians)",
            f"{med['engine_loop_cpu_us_per_run']:.0f} / {med['engine_store_cpu_us_per_run']:.0f}",
        )
    report.row(
        "engine CPU per run, 10,000 / 1,000 floods",
        got["engine_ratio_10000_1000"],
        f"<= {FLOOD_GOAL}",
    )
    report.row("HA automations CPU per run, 10,000 / 1,000", got["ha_ratio_10000_1000"])


# ── the run ───────────────────────────────────────────────────────────────────────────────


@dataclass
class Sizes:
    """How much each part sends; every workflow stays within its runs an hour."""

    flood: int
    slow_rate: float
    slow_s: float
    fast_rate: float
    fast_s: float
    look_runs: int
    look_warmup: int
    task_runs: int
    task_warmup: int
    #: Parts 4 to 6: waiting runs, the history index, the waits' length, an idle window.
    waiting: int = 1_000
    history: int = 100_000
    wait_s: int = 60
    idle_s: float = 60.0
    #: Part 7: how many times its floods run, by turns (``bench_flood.py --rounds``; None:
    #: that script's own default).
    flood_rounds: int | None = None

    @property
    def per_side(self) -> int:
        return self.flood + int(self.slow_rate * self.slow_s) + int(self.fast_rate * self.fast_s)

    def check(self) -> None:
        if self.per_side > WORKFLOWS * PER_HOUR_MAX:
            raise SystemExit(f"{self.per_side} events pass {PER_HOUR_MAX} runs a workflow")
        if self.look_runs + self.look_warmup > PER_HOUR_MAX:
            raise SystemExit(f"more Look runs than the workflow's {PER_HOUR_MAX} an hour")


QUICK = Sizes(1_000, 200.0, 2.0, 2_000.0, 1.0, 30, 5, 30, 5, idle_s=20.0, flood_rounds=1)
FULL = Sizes(6_000, 200.0, 15.0, 2_000.0, 4.0, 300, 10, 200, 10)


@dataclass
class Report:
    """Every figure (for the JSON line) and the table rows, each with the load beside it."""

    result: dict[str, Any] = field(default_factory=dict)
    rows: list[tuple[str, Any, str, str]] = field(default_factory=list)

    def row(self, label: str, value: Any, target: str = "", where: str = "") -> None:
        self.rows.append((label, value, target, where))

    def ratio(self, label: str, key: str, ours: str, theirs: str) -> None:
        a, b = self.result[ours], self.result[theirs]
        value = round(a / b, 2) if b else float("nan")
        self.result[key] = value
        self.row(f"ratio ours/automations: {label}", value)


async def start_site(hass: HomeAssistant, fakes: FakesProcess, report: Report) -> OpenNVRRuntime:
    """The config entry and the 50 automations, then Home Assistant's start."""
    t0 = time.perf_counter()
    entry = site_entry(fakes)
    await asyncio.to_thread(keep_pictures, hass, entry.entry_id, PICTURES_KEPT)
    await hass.config_entries.async_add(entry)
    if not await async_setup_component(hass, "automation", {"automation": automations()}):
        raise SystemExit("the automations did not set up")
    await hass.async_start()
    await hass.async_block_till_done()
    runtime: OpenNVRRuntime | None = getattr(entry, "runtime_data", None)
    if runtime is None or runtime.workflows is None:
        raise SystemExit(f"the entry did not set up: {entry.state} {entry.reason}")
    summary = runtime.workflows.summary()
    loaded = summary["loaded"]
    rules = [w for w in loaded if w.startswith("intrusion_")]
    if len(rules) != WORKFLOWS or LOOK_WORKFLOW not in loaded:
        raise SystemExit(f"workflows not loaded: {summary['invalid']}")
    report.result.update(
        setup_s=round(time.perf_counter() - t0, 1),
        workflows_loaded=len(loaded),
        other_workflows_loaded=[w for w in loaded if w not in rules and w != LOOK_WORKFLOW],
        entities=len(hass.states.async_all()),
    )
    return runtime


def keep_pictures(hass: HomeAssistant, entry_id: str, n: int) -> None:
    """The pictures a home's Look runs have kept over 20 days, as the entry finds them at
    its start: their index, and a small stand-in file for each (the index's sizes, 30 KB
    each, are what the bounds count) (blocking)."""
    folder = evidence_folder(hass, entry_id)
    folder.mkdir(parents=True)
    start = time.time() - 20 * 86400
    rows = [
        Kept(f"kept{i:05d}", LOOK_WORKFLOW, "1", start + i * 20 * 86400 / n, f"k{i}.jpg", 30_000)
        for i in range(n)
    ]
    for row in rows:
        (folder / row.file).write_bytes(b"\xff\xd8")
    key = evidence_key(entry_id)
    data = {"kept": [row.as_json() for row in rows]}
    index = {"version": 1, "minor_version": 1, "key": key, "data": data}
    (folder.parent / key).write_text(json.dumps(index), encoding="utf-8")


def sides(hass: HomeAssistant, runtime: OpenNVRRuntime) -> tuple[Side, Side]:
    """Ours (an alert into the hub) and the automations' (the same alert on the bus)."""
    host = runtime.workflows
    assert host is not None

    def alert(alert_id: str, camera: int) -> NvrEvent:
        return NvrEvent(
            kind="alert",
            source="websocket",
            time=datetime.now(UTC),
            type="intrusion",
            camera_id=str(camera),
            alert_id=alert_id,
            app="intrusion",
            severity="medium",
            track_id=alert_id,
        )

    def bus_event(alert_id: str, camera: int) -> dict[str, str]:
        return {"camera": role(camera), "type": "intrusion", "alert_id": alert_id}

    async def settle_ours() -> None:
        await host.engine.idle()
        await asyncio.sleep(0.05)

    async def settle_automations() -> None:
        await asyncio.sleep(0.05)

    fire = hass.bus.async_fire
    return (
        Side("ours", runtime.hub.publish, alert, settle_ours),
        Side("automations", lambda d: fire(BUS_EVENT, d), bus_event, settle_automations),
    )


async def events_part(
    both: tuple[Side, Side], sizes: Sizes, notes: Notifications, report: Report
) -> None:
    """Part 1. Each phase runs both sides in turn, so each pair of figures shares the load."""
    res = report.result
    for side in both:
        rate = await flood(side, items(side, "flood", sizes.flood), notes)
        res[f"{side.name}_events_per_s"] = round(rate)
        report.row(f"{side.name}: events/s, all at once", round(rate), "", load())
    report.ratio("events/s", "ratio_events_per_s", "ours_events_per_s", "automations_events_per_s")
    for rate, seconds in ((sizes.slow_rate, sizes.slow_s), (sizes.fast_rate, sizes.fast_s)):
        tag = f"{rate:.0f}"
        for side in both:
            got = await offered(side, items(side, tag, int(rate * seconds)), rate, notes)
            where = load()
            for k, v in got.items():
                res[f"{side.name}_at_{tag}_{k}"] = v
            for k in ("p50_ms", "p99_ms"):
                report.row(f"{side.name}: {k[:3]} event->notify @ {tag}/s (ms)", got[k], "", where)
            report.row(f"{side.name}: done/s @ {tag}/s", got["done_per_s"], "", where)
        for k in ("p50_ms", "p99_ms"):
            report.ratio(
                f"{k[:3]} @ {tag}/s",
                f"ratio_at_{tag}_{k}",
                f"ours_at_{tag}_{k}",
                f"automations_at_{tag}_{k}",
            )


def look_rows(look: dict[str, Any], report: Report) -> None:
    where = load()
    goal = f"goal < {LOOK_GOAL_MS:.0f}"
    for q in ("p50", "p99"):
        report.row(
            f"Look overhead {q} (ms, model excluded)", look[f"look_overhead_{q}_ms"], goal, where
        )
    for part in ("fetch", "prepare", "model_call", "engine"):
        report.row(f"  of which {part} p50 (ms)", look[f"look_{part}_p50_ms"])
    report.row("  the fakes' own time p50 (ms, subtracted)", look["look_fakes_p50_ms"])


async def bench(sizes: Sizes) -> Report:
    sizes.check()
    report = Report()
    config_dir = await asyncio.to_thread(make_config_dir)
    watch = Stopwatch()
    # The simulator and the Ollama fake in a process of their own, as production's NVR and
    # model server are: their work is not Home Assistant's (bench_fakes.py).
    fakes = await FakesProcess.start(CAMERAS, (1920, 1080), LOOK_REPLY)
    hass: HomeAssistant | None = None
    try:
        # Parts 4 to 7 first, each Home Assistant in a process of its own (this one's own
        # Home Assistant is not started yet, so it takes no CPU).
        await footprint_part(fakes, sizes, report)
        await idle_part(sizes, report)
        await flood_length_part(report, sizes.flood_rounds)
        hass = await start_home_assistant(config_dir)
        notes = Notifications()
        hass.services.async_register("notify", NOTIFY, notes.handle)
        runtime = await start_site(hass, fakes, report)
        await events_part(sides(hass, runtime), sizes, notes, report)
        assert runtime.workflows is not None
        stats = runtime.workflows.engine.stats
        report.result.update(engine_started=stats.started, engine_dropped=dict(stats.dropped))
        look = await look_overhead(hass, runtime, fakes, watch, sizes)
        report.result.update(look)
        look_rows(look, report)
        await fakes.reply(TASK_REPLY)
        task = await task_overhead(hass, runtime, fakes, sizes)
        report.result.update(task)
        task_rows(task, report, load())
    finally:
        if hass is not None:
            await hass.async_stop()
        await fakes.stop()
        # Off the loop: Home Assistant's blocking-call detector watches this thread.
        await asyncio.to_thread(shutil.rmtree, config_dir, True)
    return report


def print_report(report: Report) -> None:
    res = report.result
    print(
        f"Home Assistant {HA_VERSION}, asyncio debug off, logging WARNING, one core; "
        f"{CAMERAS} cameras, {WORKFLOWS} workflow files and {WORKFLOWS} automations "
        f"(other workflows loaded: {', '.join(res['other_workflows_loaded']) or 'none'}); "
        f"set up in {res['setup_s']} s with {res['entities']} entities."
    )
    print(
        "Ours starts at the integration's event hub (the transport is not measured) and pays\n"
        "for what an alert costs there (dedupe, the camera's event entity, the run row, the\n"
        "workflow entities); the automations start at a bus event. Both end in the same notify\n"
        "service. Latencies from each event's intended send time. Workflows: no cooldown,\n"
        f"per_hour {PER_HOUR_MAX} (never passed), one run per track; automations: parallel."
    )
    for name, value, target, where in report.rows:
        shown = f"{value:,}" if isinstance(value, int) else f"{value}"
        print(f"{name:<50} {shown:>10} {target:<12} {where}")
    print(
        f"Look method: a {res['look_source_picture']} picture from the simulator becomes a "
        f"{res['look_sent_picture']} picture in a {res['look_request_kib']} KiB chat "
        f"request; {res['look_model_calls_per_run']} model call(s) a run. Each run, one at a "
        "time, is timed from the alert to the decided branch's first step (the decision is in "
        "the step's row by then), minus the time the simulator spends drawing its frame and the "
        "Ollama fake spends handling the chat once its body has arrived (both timed inside "
        "them, in a process of their "
        f"own on core(s) {res['fakes_cores'] or 'shared'}), with {PICTURES_KEPT:,} pictures "
        "kept from earlier runs. The parts: fetch = "
        "the snapshot request less the drawing; prepare = decode, downscale, encode; "
        "model_call = the Ollama client's call less the fake's handling (request build, "
        "loopback, parse); engine = the rest (run start, decision, rows, the branch)."
    )
    print(
        "AI Task method: the same question about the same camera, asked by turns through the "
        "look action (three frames) and ai_task.generate_data on the site's AI Task entity "
        "(a camera attachment and a structure with a decision: three frames), each timed "
        "from the call to its response, less the fakes' own time; frames back to back on "
        f"both sides. {res['task_runs']} pairs, one after the other. Overhead = the AI "
        "Task's quantile less the look action's; each pair's difference (AI Task less the "
        "look action just before it) is shown too, with the jitter of both calls in it."
    )
    print(json.dumps(res))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller counts, about 3 minutes")
    args = parser.parse_args()
    started = time.perf_counter()
    report = run_as_in_production(bench(QUICK if args.quick else FULL))
    report.result.update(
        home_assistant=HA_VERSION,
        asyncio_debug=False,
        log_level="WARNING",
        cameras=CAMERAS,
        workflows=WORKFLOWS,
        automations=WORKFLOWS,
        quick=args.quick,
        wall_s=round(time.perf_counter() - started, 1),
    )
    print_report(report)


if __name__ == "__main__":
    main()
