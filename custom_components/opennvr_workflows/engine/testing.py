"""In-memory fakes of the engine's ports, for tests and the benchmark.

They live in the package (not under ``tests/``) so the engine's tests, the
load benchmark and the Home Assistant tests drive the engine the same way.
Nothing here touches the network or the disk.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from .events import NvrEvent
from .ports import (
    ActionRequest,
    AiContext,
    AiResult,
    AiSuspended,
    AlertRequest,
    ApprovalRequest,
    JsonMap,
    ProviderUnavailable,
    RunContext,
)


class ManualClock:
    """A clock that moves only when told: ``await clock.advance(seconds)``."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 1, 5, 12, 0, tzinfo=UTC)
        self._mono = 0.0
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._seq = itertools.count()

    def now(self) -> datetime:
        return self._now

    def now_ts(self) -> float:
        return self._now.timestamp()

    def monotonic(self) -> float:
        return self._mono

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (self._mono + seconds, next(self._seq), fut))
        await fut

    def set(self, when: datetime) -> None:
        """Jump (forward) without waking sleepers: for "while the engine was down"."""
        delta = (when - self._now).total_seconds()
        self._now = when
        self._mono += max(0.0, delta)

    async def advance(self, seconds: float) -> None:
        """Move forward, waking every sleeper whose time has come, in order."""
        self._now += timedelta(seconds=seconds)
        self._mono += seconds
        while self._sleepers and self._sleepers[0][0] <= self._mono:
            _, _, fut = heapq.heappop(self._sleepers)
            if not fut.done():
                fut.set_result(None)
        for _ in range(5):
            await asyncio.sleep(0)


@dataclass
class Call:
    """One effect the fake saw."""

    method: str
    key: str | None
    request: Any
    ctx: RunContext | None = None


@dataclass
class FakeEffects:
    """Records every effect. ``unavailable`` names methods that raise
    :class:`ProviderUnavailable`; ``failing`` ones that raise RuntimeError.
    ``before``/``after`` hooks run around each recorded effect (a test can
    crash the process there). ``alerts_to`` feeds raised alerts back as
    events, as the host does through OpenNVR (with the run's chain and its
    ``ai_derived`` label). A list not in ``lists`` does not exist (reading it
    raises :class:`ProviderUnavailable`, as the host does); ``camera_roles``, when
    set, are the roles the site maps (:class:`~.ports.SiteCameras`)."""

    site_mode_value: str | None = "disarmed"
    lists: dict[str, list[str]] = field(default_factory=dict)
    events: list[Mapping[str, Any]] = field(default_factory=list)
    unavailable: set[str] = field(default_factory=set)
    failing: set[str] = field(default_factory=set)
    before: Callable[[str, RunContext | None], None] | None = None
    after: Callable[[str, RunContext | None], None] | None = None
    alerts_to: Callable[[NvrEvent], Any] | None = None
    camera_roles: set[str] | None = None
    calls: list[Call] = field(default_factory=list)
    closed: list[tuple[str, str | None, str | None]] = field(default_factory=list)

    def of(self, method: str) -> list[Call]:
        return [c for c in self.calls if c.method == method]

    def _do(self, method: str, ctx: RunContext | None, request: Any) -> None:
        if self.before is not None:
            self.before(method, ctx)
        if method in self.unavailable:
            raise ProviderUnavailable(f"{method} is not available")
        if method in self.failing:
            raise RuntimeError(f"{method} failed")
        self.calls.append(Call(method, ctx.key if ctx else None, request, ctx))
        if self.after is not None:
            self.after(method, ctx)

    async def alert(self, ctx: RunContext, request: AlertRequest) -> JsonMap | None:
        self._do("alert", ctx, request)
        if self.alerts_to is not None:
            event = NvrEvent(
                kind="alert",
                source="engine",
                time=ctx.trigger.time,
                type="workflow",
                camera_id=ctx.trigger.camera_id,
                camera_role=ctx.trigger.camera_role,
                severity=request.severity,
                title=request.title,
                correlation_id=ctx.correlation_id,
                chain=ctx.chain,
                ai_derived=ctx.ai_derived,
            )
            asyncio.get_running_loop().call_soon(self.alerts_to, event)
        return {"alert": len(self.calls)}

    async def notify(self, ctx: RunContext, request: ActionRequest) -> JsonMap | None:
        self._do("notify", ctx, request)
        return None

    async def log(self, ctx: RunContext, message: str) -> None:
        self._do("log", ctx, message)

    async def save_clip(self, ctx: RunContext, request: ActionRequest) -> JsonMap | None:
        self._do("save_clip", ctx, request)
        return {"clip": "clip-1"}

    async def ptz_preset(self, ctx: RunContext, request: ActionRequest) -> JsonMap | None:
        self._do("ptz_preset", ctx, request)
        return None

    async def webhook(self, ctx: RunContext, request: ActionRequest) -> JsonMap | None:
        self._do("webhook", ctx, request)
        return {"status": 200}

    async def call_action(self, ctx: RunContext, request: ActionRequest) -> JsonMap | None:
        self._do("call_action", ctx, request)
        return None

    async def set_site_mode(self, ctx: RunContext, request: ActionRequest) -> JsonMap | None:
        self._do("set_site_mode", ctx, request)
        return None

    async def app_action(self, ctx: RunContext, request: ActionRequest) -> JsonMap | None:
        self._do("app_action", ctx, request)
        return {"ok": True}

    async def reply(self, ctx: RunContext, message: str) -> None:
        self._do("reply", ctx, message)

    async def ask_person(self, ctx: RunContext, request: ApprovalRequest) -> None:
        self._do("ask_person", ctx, request)

    async def approval_closed(
        self, approval_id: str, status: str, reply: str | None, by: str | None
    ) -> None:
        self.closed.append((approval_id, reply, by))

    async def snapshot(self, camera_id: str) -> bytes | None:
        return b"\xff\xd8jpeg"

    async def frames(self, camera_id: str, count: int, interval_s: float) -> Sequence[bytes]:
        return [b"\xff\xd8jpeg"] * count

    async def site_mode(self) -> str | None:
        return self.site_mode_value

    async def site_list(self, name: str) -> Sequence[str]:
        if name not in self.lists:
            raise ProviderUnavailable(f"the site list {name!r} does not exist")
        return list(self.lists[name])

    def mapped_camera_roles(self) -> Collection[str] | None:
        return None if self.camera_roles is None else frozenset(self.camera_roles)

    async def recent_events(
        self, cameras: Sequence[str], within_s: float
    ) -> Sequence[Mapping[str, Any]]:
        return [e for e in self.events if not cameras or e.get("camera") in cameras]


AiScript = Callable[[Any, AiContext], Awaitable[AiResult | AiSuspended] | AiResult | AiSuspended]


@dataclass
class FakeAi:
    """An AI port that answers from a script.

    ``decide(step, ctx)`` returns the result (default: the step's first
    option, with one traced model call). ``on_resume(step, state, answer,
    ctx)`` carries on a suspended step (default: decide "unsure" with the
    answer as the reason). Each call draws one model call from the budget;
    a refused draw answers ``unsure``/``over_budget`` like the real port."""

    decide: AiScript | None = None
    on_resume: Callable[[Any, JsonMap, str, AiContext], AiResult | AiSuspended] | None = None
    unavailable: bool = False
    runs: list[tuple[Any, AiContext]] = field(default_factory=list)
    resumes: list[tuple[JsonMap, str]] = field(default_factory=list)
    _ids: itertools.count[int] = field(default_factory=itertools.count)

    def _row(self, ctx: AiContext) -> dict[str, Any]:
        return {
            "id": f"trace-{next(self._ids)}",
            "kind": "llm",
            "name": "fake-model",
            "status": "ok",
            "started_at": ctx.run.trigger.time.timestamp(),
            "ms": 1,
            "args_asked": None,
            "result": "{}",
            "mode": None,
            "tokens_in": 10,
            "tokens_out": 5,
        }

    async def run(self, step: Any, ctx: AiContext) -> AiResult | AiSuspended:
        if self.unavailable:
            raise ProviderUnavailable("the vision model is not installed")
        self.runs.append((step, ctx))
        if not ctx.budget.try_draw(1):
            return AiResult(outcome="unsure", unsure_reason="over_budget")
        if self.decide is not None:
            out = self.decide(step, ctx)
            if asyncio.iscoroutine(out) or isinstance(out, asyncio.Future):
                out = await out
            assert isinstance(out, AiResult | AiSuspended)
            return out
        return AiResult(
            outcome=step.decision[0],
            reason="a fake decision",
            confidence=0.9,
            confidence_source="agreement",
            model="fake-model",
            trace=(self._row(ctx),),
        )

    async def resume(
        self, step: Any, state: JsonMap, answer: str, ctx: AiContext
    ) -> AiResult | AiSuspended:
        self.resumes.append((state, answer))
        if self.on_resume is not None:
            return self.on_resume(step, state, answer, ctx)
        return AiResult(outcome="unsure", reason=answer, trace=(self._row(ctx),))


def event(
    kind: str = "alert",
    *,
    time: datetime | None = None,
    camera_id: str = "cam-1",
    camera_role: str | None = "yard",
    type: str | None = "intrusion",
    **kwargs: Any,
) -> NvrEvent:
    """A test event with sensible defaults."""
    return NvrEvent(
        kind=kind,
        source=kwargs.pop("source", "websocket"),
        time=time or datetime(2026, 1, 5, 12, 0, tzinfo=UTC),
        type=type,
        camera_id=camera_id,
        camera_role=camera_role,
        **kwargs,
    )
