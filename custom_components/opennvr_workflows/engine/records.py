"""The engine's in-memory view of workflows, runs, steps and approvals, and what it
reports (:class:`EngineUpdate`, through the :class:`Updates` feed).

A run that is going or waiting lives here as an :class:`ActiveRun` whose
``steps`` mirror its rows in ``workflow_run_steps``. Resuming a run, in the
same process or after a restart, replays its workflow from the top against
these records: a recorded step is not run again, its outcome is taken as
recorded. That is what makes "every run completes exactly once" hold without
a separate program counter.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ..workflow import model
from .events import NvrEvent

if TYPE_CHECKING:
    from .ports import AiBudget

_LOGGER = logging.getLogger(__name__)

RunStatus = Literal["running", "waiting", "done", "failed", "cancelled"]
WorkflowState = Literal["off", "test", "on", "needs_attention"]

#: Step statuses that need nothing more on a replay.
SETTLED = frozenset({"done", "failed", "unknown", "would_have", "skipped"})


@dataclass(slots=True)
class Entry:
    """A workflow the engine holds (see :mod:`.catalog`)."""

    workflow_id: str
    workflow: model.Workflow
    version: str
    state: WorkflowState
    reason: str | None = None


@dataclass(slots=True)
class StepRecord:
    """One row of ``workflow_run_steps``."""

    path: str
    kind: str
    status: str
    seq: int
    started_at: float
    outcome: str | None = None
    inputs: dict[str, Any] | None = None
    result: dict[str, Any] | None = None
    state: dict[str, Any] | None = None
    ended_at: float | None = None


@dataclass(slots=True)
class ApprovalRecord:
    """One row of ``workflow_approvals``."""

    approval_id: str
    run_id: str
    step_path: str
    workflow_id: str
    who: tuple[str, ...]
    message: str
    replies: tuple[str, ...]
    default: str | None
    camera_id: str | None
    status: str  # pending | answered | timed_out | cancelled | would_have
    created_at: float
    expires_at: float
    reply: str | None = None
    answered_by: str | None = None
    asked: bool = False
    answered_at: float | None = None


@dataclass(slots=True)
class ActiveRun:
    """A run that has not ended."""

    run_id: str
    workflow_id: str
    version: str
    workflow: model.Workflow
    correlation_id: str
    chain: tuple[str, ...]
    event: NvrEvent
    limit_key: str
    test: bool
    started_at: float
    status: RunStatus = "running"
    seen_again: int = 0
    unknown_steps: int = 0
    steps: dict[str, StepRecord] = field(default_factory=dict)
    seq: int = 0
    task: asyncio.Task[None] | None = None
    again: bool = False
    #: Waiting for a slot to be driven in (:class:`.driver.RunDriver`'s bound).
    queued: bool = False
    first_step_at: float | None = None
    #: A trial (try_workflow): a forced Test run outside the workflow's limits, whose
    #: AI steps draw from ``ai_budget`` instead of the hourly allowance.
    trial: bool = False
    ai_budget: AiBudget | None = None
    #: The run has waited (a wait, a person, a restart) and goes on now: the host says
    #: "resumed", not "started", at its first effect after that.
    resumed: bool = False
    #: The placeholders AI steps of ``workflow`` define (:func:`.taint.ai_names`), once.
    ai_names: frozenset[str] | None = None

    @property
    def depth(self) -> int:
        return len(self.chain)

    @property
    def ai_derived(self) -> bool:
        """Started by an event that carries AI output (see :mod:`.taint`): every
        trigger field is AI output, and moving things needs a person's reply."""
        return self.event.ai_derived

    @property
    def supplied_by(self) -> str | None:
        """The user whose own values filled the trigger (see ``NvrEvent.supplied_by``):
        moving things needs a person's reply, as in an AI-derived run."""
        return self.event.supplied_by


@dataclass(frozen=True, slots=True)
class WorkflowStatus:
    """A workflow as the engine holds it."""

    workflow_id: str
    name: str
    state: WorkflowState
    version: str
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class EngineUpdate:
    """Something changed that a host may show: ``kind`` is run_started,
    run_waiting, run_ended, seen_again, approval_opened, approval_closed,
    workflow_state, run_marked, held_back (a limit held an event back: ``detail`` is
    :meth:`HeldBack.as_dict`, said once per hold), or site_paused (``workflow_id`` empty:
    the whole site was paused or resumed, ``detail["paused"]`` says which)."""

    kind: str
    workflow_id: str
    run_id: str | None = None
    detail: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class HeldBack:
    """A limit held one of a workflow's events back, so no run started for it.

    ``limit`` is ``one_at_a_time`` (the event joined ``run_id``, still going: "seen
    again"), ``cooldown``, ``per_hour`` or ``chain_depth``; ``until`` when it lets go (the
    cooldown's end, the hour's oldest start leaving the window, the joined run's wait
    ending), None when no time ends it; ``test`` whether the limit is the Test runs'.
    A person reads it to know why nothing ran, and until when."""

    limit: str
    at: float
    until: float | None = None
    run_id: str | None = None
    test: bool = False

    def holds(self, now: float, active: Callable[[str], bool]) -> bool:
        """Whether it still holds at ``now`` (``active``: whether a run is going): a
        joined run holds while it goes, a cooldown or an hour until it ends."""
        if self.run_id is not None:
            return active(self.run_id)
        return self.until is not None and now < self.until

    def as_dict(self) -> dict[str, Any]:
        return {
            "limit": self.limit,
            "at": self.at,
            "until": self.until,
            "run_id": self.run_id,
            "test": self.test,
        }


@dataclass(slots=True)
class EngineStats:
    """Counters for diagnostics and the benchmark."""

    events: int = 0
    matched: int = 0
    started: int = 0
    joined: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    ended: int = 0
    failed: int = 0
    unknown_steps: int = 0


class Updates:
    """Listeners of :class:`EngineUpdate` and the one place that calls them: what a
    host subscribes to in order to refresh its views. A listener that raises is
    logged and skipped, so one broken view (a sensor, a panel) can never stop a run
    or the other listeners."""

    def __init__(self) -> None:
        self._listeners: list[Callable[[EngineUpdate], None]] = []

    def subscribe(self, listener: Callable[[EngineUpdate], None]) -> Callable[[], None]:
        """Call ``listener`` on every :class:`EngineUpdate`; returns an unsubscribe."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def emit(self, update: EngineUpdate) -> None:
        for listener in self._listeners:
            try:
                listener(update)
            except Exception:
                _LOGGER.exception("engine listener failed")
