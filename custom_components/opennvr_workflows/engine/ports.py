"""What the engine needs from its host, as protocols.

The engine decides; the host acts. Home Assistant implements :class:`Effects`
(notifications, alerts, service calls, OpenNVR app actions, approvals on a
phone), the ``ai`` package implements :class:`AiPort`, and tests use the
in-memory fakes in :mod:`.testing`. Keeping these as narrow protocols is what
lets the whole engine run, and be killed and restarted, without Home
Assistant.

Every effect receives a :class:`RunContext`. Its ``key`` is stable for one
step of one run (``run_id`` plus the step's path), so a host can drop a
repeat of a notification the engine re-sent after a restart. Its
``correlation_id`` and ``chain`` must travel on everything the effect emits,
so an alert a run raised comes back as an event the engine can trace to it.
Its ``ai_derived`` says the effect carries an AI's decision or text; an event the
effect emits must carry it too (``NvrEvent.ai_derived``), so a workflow that
starts on it treats what it reads as AI output.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Collection, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from types import MappingProxyType
from typing import Any, Literal, Protocol, runtime_checkable

from .events import NvrEvent

JsonMap = Mapping[str, Any]
Severity = Literal["low", "medium", "high", "critical"]
SEVERITIES: tuple[Severity, ...] = ("low", "medium", "high", "critical")

_EMPTY: JsonMap = MappingProxyType({})


class ProviderUnavailable(Exception):
    """A step's provider is gone (an app uninstalled, a service removed, no model).

    Raised by an :class:`Effects` or :class:`AiPort` method. The engine ends
    the run, records the reason, and puts the workflow in ``needs_attention``
    so it stops starting runs until a person looks at it (RFC section 2).
    """


@dataclass(frozen=True, slots=True)
class RunContext:
    """Who is asking for an effect, so the host can label and trace it."""

    workflow_id: str
    workflow_name: str
    version: str
    run_id: str
    correlation_id: str
    chain: tuple[str, ...]
    step_path: str
    test: bool
    trigger: NvrEvent
    ai_derived: bool = False
    #: The run was started by AI output (an alert or event a run raised from an AI
    #: decision) and no person's reply in this run stands before this step: nothing that
    #: moves things may act here. The engine refuses what the contract calls an actuator
    #: itself; a host that finds an action moves things by its effect (a notify service
    #: behind a speaker) refuses it when this is set.
    needs_person: bool = False
    #: A trial (the try_workflow action): the host looks at the event's own picture, not
    #: the camera's now, and keeps nothing of it as the workflow's.
    trial: bool = False
    #: The run waited and goes on now (see ``ActiveRun.resumed``).
    resumed: bool = False

    @property
    def key(self) -> str:
        """Stable per step of a run: an idempotency key for the host."""
        return f"{self.run_id}:{self.step_path}"


@dataclass(frozen=True, slots=True)
class AlertRequest:
    """Raise an alert. ``severity`` is what the engine allows (after the AI
    severity cap); ``requested`` is what the workflow asked for."""

    severity: Severity
    requested: Severity
    title: str
    message: str = ""
    camera: str | None = None
    camera_id: str | None = None
    attach: tuple[str, ...] = ()
    capped_by: str | None = None
    ai_derived: bool = False
    #: ``message`` where it is shown as markdown: the workflow's text as written, every
    #: value in it escaped (:func:`.render.render_markdown`). None: the message is all
    #: plain text, to escape whole where markdown shows it.
    markdown: str | None = None


@dataclass(frozen=True, slots=True)
class ActionRequest:
    """Any other action: ``kind`` is the workflow's action name (notify, log,
    save_clip, ptz_preset, webhook, home_assistant, site_mode, app_action,
    reply) and ``params`` its arguments with ``{placeholders}`` filled in.
    ``camera`` is the camera role the action is about (the step's, or the
    run's current camera); ``camera_id`` is the trigger's OpenNVR camera id
    when that role is the trigger's camera."""

    kind: str
    params: JsonMap = field(default=_EMPTY)
    camera: str | None = None
    camera_id: str | None = None
    moves_things: bool = False
    #: A notify's message where it is shown as markdown (as :attr:`AlertRequest.markdown`).
    markdown: str | None = None


@dataclass(frozen=True, slots=True)
class PlannedAction:
    """One action that moves things, as it would run now: written on a question so the
    person sees what a reply does. ``kind`` is the action's name in the workflow
    (``home_assistant``, ``app_action``, ``site_mode``, or a ``webhook`` the site marked
    as moving); ``action`` what it does (``lock.unlock``, ``gate_controller.open``,
    ``disarmed``, the destination's name); ``target`` and ``data`` its target and data
    with the run's values filled in. ``maybe``: it stands behind a condition or in a loop
    on the reply's path, so it may not run (or may run more than once)."""

    kind: str
    action: str
    target: JsonMap = field(default=_EMPTY)
    data: JsonMap = field(default=_EMPTY)
    maybe: bool = False


@dataclass(frozen=True, slots=True)
class ReplyPlan:
    """What one outcome of a question does: a reply, or ``no_answer`` (the question
    timed out with no default). No actions: it moves nothing."""

    reply: str
    actions: tuple[PlannedAction, ...] = ()


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """A question for a person. The answer comes back through
    ``Engine.answer_approval(approval_id, reply, user)``; if none comes by
    ``expires_at`` the engine takes ``default`` (None means "no answer").

    ``plans``: for a question one of whose outcomes leads to an action that moves
    things, what each outcome will do (:mod:`.reply_plans`), to be shown before the
    ``message`` (whose AI text is bounded in length); empty when no outcome moves
    anything."""

    approval_id: str
    who: tuple[str, ...]
    message: str
    replies: tuple[str, ...]
    expires_at: datetime
    default: str | None
    camera_id: str | None = None
    seen_again: int = 0
    plans: tuple[ReplyPlan, ...] = ()


@runtime_checkable
class Clock(Protocol):
    """Time, injectable so tests can cross hours and restarts instantly."""

    def now(self) -> datetime:
        """The current time, timezone-aware."""

    def now_ts(self) -> float:
        """:meth:`now` as a POSIX timestamp (what every row of the database holds)."""

    def monotonic(self) -> float:
        """Seconds on a clock that never goes back, for durations."""

    async def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` of this clock's time."""


class SystemClock:
    """The real clock."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def now_ts(self) -> float:
        """The value ``now().timestamp()`` gives (whole microseconds over 10**6, as a
        ``datetime`` holds them), without building the ``datetime``: a run reads the time
        five or six times, and the ``datetime`` was most of what that cost."""
        return time.time_ns() // 1000 / 1_000_000

    def monotonic(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))


@dataclass(frozen=True, slots=True)
class SiteClock:
    """The host's clock with the site's time zone: the one way the engine's parts
    read the time, so a test's clock moves all of them together."""

    clock: Clock
    tz: tzinfo

    def now(self) -> datetime:
        return self.clock.now()

    def now_ts(self) -> float:
        """Now, as the POSIX timestamp every row of the database holds."""
        return self.clock.now_ts()

    def local_now(self) -> datetime:
        """Now on the site's wall clock (time windows and schedules read it)."""
        return self.clock.now().astimezone(self.tz)

    def local(self, ts: float) -> datetime:
        """A stored timestamp on the site's wall clock."""
        return datetime.fromtimestamp(ts, self.tz)

    def monotonic(self) -> float:
        return self.clock.monotonic()

    async def sleep(self, seconds: float) -> None:
        await self.clock.sleep(seconds)


#: Starts a task for the engine: ``spawn(coro, name) -> task``. Home Assistant's
#: spawner tracks them as its config entry's background tasks.
TaskSpawner = Callable[[Coroutine[Any, Any, None], str], "asyncio.Task[None]"]


def loop_task(coro: Coroutine[Any, Any, None], name: str) -> asyncio.Task[None]:
    """The default :data:`TaskSpawner`: a plain task on the running loop."""
    return asyncio.get_running_loop().create_task(coro, name=name)


@runtime_checkable
class Effects(Protocol):
    """Everything a run does to the world, implemented by the host.

    A method either returns (the effect happened; an optional JSON-safe
    result is stored on the step), raises :class:`ProviderUnavailable`
    (the step lost its provider), or raises another exception (the step
    failed; the run goes on along the step's path). None of these is called
    in Test mode except the read methods (``snapshot``, ``frames``,
    ``site_mode``, ``site_list``).
    """

    async def alert(self, ctx: RunContext, request: AlertRequest) -> JsonMap | None:
        """Raise an OpenNVR/Home Assistant alert carrying ``ctx.correlation_id``."""

    async def notify(self, ctx: RunContext, request: ActionRequest) -> JsonMap | None:
        """Send a notification (``params``: who, message, severity, title)."""

    async def log(self, ctx: RunContext, message: str) -> None:
        """Write a line to the site's logbook."""

    async def save_clip(self, ctx: RunContext, request: ActionRequest) -> JsonMap | None:
        """Keep a clip of ``request.camera_id`` (``params``: seconds before/after)."""

    async def ptz_preset(self, ctx: RunContext, request: ActionRequest) -> JsonMap | None:
        """Move a camera to a preset (moves things)."""

    async def webhook(self, ctx: RunContext, request: ActionRequest) -> JsonMap | None:
        """POST to an admin-approved destination."""

    async def call_action(self, ctx: RunContext, request: ActionRequest) -> JsonMap | None:
        """Call a Home Assistant action (``params``: action, data, target)."""

    async def set_site_mode(self, ctx: RunContext, request: ActionRequest) -> JsonMap | None:
        """Change the site mode (arming: moves things)."""

    async def app_action(self, ctx: RunContext, request: ActionRequest) -> JsonMap | None:
        """Run an OpenNVR app's action, such as opening a gate."""

    async def reply(self, ctx: RunContext, message: str) -> None:
        """Answer the message that started the run (message triggers)."""

    async def ask_person(self, ctx: RunContext, request: ApprovalRequest) -> None:
        """Deliver the question (an actionable notification) and return at once.

        The engine has already stored the approval; a second call with the
        same ``approval_id`` after a restart must not create a second one."""

    async def approval_closed(
        self, approval_id: str, status: str, reply: str | None, by: str | None
    ) -> None:
        """The approval was answered, timed out or cancelled (``status``): say so where
        it was asked, then clear its card."""

    async def snapshot(self, camera_id: str) -> bytes | None:
        """The camera's picture now (read)."""

    async def frames(self, camera_id: str, count: int, interval_s: float) -> Sequence[bytes]:
        """``count`` pictures ``interval_s`` apart (read)."""

    async def site_mode(self) -> str | None:
        """The current site mode, for ``if: site_mode`` (read)."""

    async def site_list(self, name: str) -> Sequence[str]:
        """A site list's entries, for ``if: in_list`` and ``for_each`` (read).

        A list the site does not have raises :class:`ProviderUnavailable`, never
        reads as empty: ``not_in`` an empty list is true for everything, so a rule
        meant to keep blocked plates out would let them in."""

    async def recent_events(
        self, cameras: Sequence[str], within_s: float
    ) -> Sequence[Mapping[str, Any]]:
        """Stored events of the last ``within_s`` seconds on these camera roles
        (empty: all), for ``for_each: events`` (read). Each mapping should have
        ``camera`` (role) and ``event_type``."""


@runtime_checkable
class SiteCameras(Protocol):
    """Optionally implemented by :class:`Effects`: the camera roles the site maps.

    When the host implements it, a condition or a ``for_each`` on a role that is
    not mapped stops the run (the workflow needs attention) instead of quietly
    reading as false or as no events."""

    def mapped_camera_roles(self) -> Collection[str] | None:
        """The camera roles mapped to a camera on this site now (None: not known)."""


@dataclass(frozen=True, slots=True)
class AiContext:
    """What an AI step runs with. ``inputs`` are the placeholder values the
    step may read (the trigger's fields and earlier steps' results); they go
    in the step's data block, never its instructions."""

    run: RunContext
    inputs: JsonMap
    budget: AiBudget


@dataclass(frozen=True, slots=True)
class AiResult:
    """An AI step's finished answer, stored as its step row (spec 000, "AI
    step schema and executor", section 4). ``trace`` holds the SDK's
    ``TraceRow.as_row()`` dictionaries unchanged."""

    outcome: str
    fields: JsonMap = field(default=_EMPTY)
    reason: str = ""
    confidence: float = 0.0
    confidence_source: str = ""
    self_reported: float | None = None
    unsure_reason: str | None = None
    rule: int | None = None
    model: str | None = None
    usage: JsonMap = field(default=_EMPTY)
    evidence: tuple[str, ...] = ()
    trace: tuple[JsonMap, ...] = ()


@dataclass(frozen=True, slots=True)
class AiSuspended:
    """An AI step waiting for a person to answer an ask tool.

    ``state`` is plain JSON: the engine persists it and later calls
    :meth:`AiPort.resume` with it. ``pending`` is the ask call
    (``{"id", "name", "arguments"}``); its arguments may carry ``who``,
    ``message`` (or ``question``) and ``replies``."""

    pending: JsonMap
    state: JsonMap
    trace: tuple[JsonMap, ...] = ()


@runtime_checkable
class AiBudget(Protocol):
    """The workflow's hourly AI allowance, owned by the engine."""

    def try_draw(self, calls: int = 1) -> bool:
        """Take ``calls`` model calls; False (taking nothing) when the hour's
        allowance cannot afford them."""

    def remaining(self) -> int:
        """Model calls left this hour."""


@runtime_checkable
class AiPort(Protocol):
    """Runs AI steps. Must never raise except :class:`ProviderUnavailable`:
    a model that is down, slow or over budget answers ``unsure``."""

    async def run(self, step: Any, ctx: AiContext) -> AiResult | AiSuspended:
        """Run the workflow model's AI step."""

    async def resume(
        self, step: Any, state: JsonMap, answer: str, ctx: AiContext
    ) -> AiResult | AiSuspended:
        """Carry on a suspended step with the person's answer."""
