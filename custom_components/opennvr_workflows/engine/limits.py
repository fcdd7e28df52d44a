"""A workflow's limits: cooldown, one run at a time, runs and AI calls per hour.

RFC section 2's defaults: cooldown 1 minute per camera, one run at a time per
camera (or per plate or track), 30 runs an hour, 60 AI calls an hour, chain
depth 3. These decisions sit on the hot path of every matching event, so the
state is in memory (dictionaries and short deques) and is rebuilt from the run
database when the engine starts: the runs and model calls of the last hour
are the durable record the counters are derived from.

Runs of a workflow in Test have limit keys of their own (:data:`TEST_KEY` before the
camera, track or plate) and their own hourly window of starts: a Test run waiting half an
hour, or an hour of Test runs, never holds back the first runs once the workflow is On
(the hourly AI allowance stays one: it bounds what the model is asked, whoever asks).
When a limit holds an event back, :meth:`WorkflowLimiter.until` says until when.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal

OneAtATime = Literal["camera", "track", "plate"]
HOUR: Final = 3600.0
#: The limit key prefix of a run of a workflow in Test: its slots, cooldowns and hourly
#: window are apart from the On runs'.
TEST_KEY: Final = "test:"


@dataclass(frozen=True, slots=True)
class LimitSettings:
    """One workflow's limits, with the RFC's defaults."""

    cooldown_s: float = 60.0
    one_at_a_time: OneAtATime = "camera"
    per_hour: int = 30
    ai_per_hour: int = 60
    max_depth: int = 3


@dataclass(frozen=True, slots=True)
class Verdict:
    """What to do with a matching trigger.

    ``action`` is ``"start"`` (a new run), ``"join"`` (a run for the same
    camera, track or plate is still going: count it as seen again on
    ``run_id``) or ``"drop"`` (with ``reason``: cooldown, per_hour,
    chain_depth, own_event)."""

    action: Literal["start", "join", "drop"]
    reason: str | None = None
    run_id: str | None = None


START: Final = Verdict("start")


class WorkflowLimiter:
    """The limit state of one workflow. Times are epoch seconds."""

    __slots__ = ("_ai_calls", "_starts", "_test_starts", "active", "last_start", "settings")

    def __init__(self, settings: LimitSettings) -> None:
        self.settings = settings
        self.active: dict[str, str] = {}
        self.last_start: dict[str, float] = {}
        self._starts: deque[float] = deque()
        #: The starts of Test runs (keys with :data:`TEST_KEY`), counted apart.
        self._test_starts: deque[float] = deque()
        self._ai_calls: deque[float] = deque()

    def _window(self, key: str) -> deque[float]:
        return self._test_starts if key.startswith(TEST_KEY) else self._starts

    def check(self, key: str, depth: int, now: float) -> Verdict:
        """Decide for a trigger whose run would have chain ``depth``
        (1 for an event from the world). Does not record anything."""
        s = self.settings
        if depth > s.max_depth:
            return Verdict("drop", "chain_depth")
        run_id = self.active.get(key)
        if run_id is not None:
            return Verdict("join", run_id=run_id)
        last = self.last_start.get(key)
        if last is not None and now - last < s.cooldown_s:
            return Verdict("drop", "cooldown")
        if _count(self._window(key), now) >= s.per_hour:
            return Verdict("drop", "per_hour")
        return START

    def until(self, key: str, reason: str, now: float) -> float | None:
        """Until when ``reason`` (a drop's) holds events of ``key`` back: the end of the
        cooldown, or when the oldest start of the hour leaves the window; None when no
        time ends it (``chain_depth``, a run that is still going)."""
        if reason == "cooldown":
            last = self.last_start.get(key)
            return None if last is None else last + self.settings.cooldown_s
        if reason == "per_hour":
            window = self._window(key)
            _count(window, now)
            return window[0] + HOUR if window else None
        return None

    def started(self, key: str, run_id: str, at: float) -> None:
        self.active[key] = run_id
        self.last_start[key] = at
        self._window(key).append(at)

    def ended(self, key: str, run_id: str) -> None:
        if self.active.get(key) == run_id:
            del self.active[key]

    def runs_last_hour(self, now: float, *, test: bool = False) -> int:
        """The starts of the last hour, of On runs (``test``: of Test runs)."""
        return _count(self._test_starts if test else self._starts, now)

    # ── AI allowance ───────────────────────────────────────────────────

    def take_ai(self, now: float, calls: int = 1) -> bool:
        if _count(self._ai_calls, now) + calls > self.settings.ai_per_hour:
            return False
        self._ai_calls.extend([now] * calls)
        return True

    def ai_remaining(self, now: float) -> int:
        return max(0, self.settings.ai_per_hour - _count(self._ai_calls, now))

    def ai_calls(self, now: float) -> int:
        """Model calls drawn in the hour before ``now``."""
        return _count(self._ai_calls, now)

    def restore(self, starts: list[tuple[str, float]], ai_calls: list[float]) -> None:
        """Rebuild from the database: ``starts`` are (key, epoch) of the last
        hour's runs, oldest first; ``ai_calls`` the last hour's model calls."""
        for key, at in starts:
            self._window(key).append(at)
            self.last_start[key] = max(at, self.last_start.get(key, at))
        self._ai_calls.extend(sorted(ai_calls))

    def reconfigure(self, settings: LimitSettings) -> None:
        """A new version keeps the counters: editing a workflow must not reset
        its hourly allowance."""
        self.settings = settings


def _count(window: deque[float], now: float) -> int:
    cutoff = now - HOUR
    while window and window[0] <= cutoff:
        window.popleft()
    return len(window)


class Budget:
    """The :class:`~.ports.AiBudget` the engine hands an AI step: draws from
    its workflow's hourly AI allowance."""

    __slots__ = ("_limiter", "_now")

    def __init__(self, limiter: WorkflowLimiter, now: Callable[[], float]) -> None:
        self._limiter = limiter
        self._now = now

    def try_draw(self, calls: int = 1) -> bool:
        return self._limiter.take_ai(self._now(), calls)

    def remaining(self) -> int:
        return self._limiter.ai_remaining(self._now())


class Allowance:
    """A fixed number of model calls, spent by runs outside the hourly window: a trial
    (the try_workflow action) gets one for all its replayed events, so trying a
    workflow never spends the live workflow's hourly allowance, yet cannot run the
    model without bound either."""

    __slots__ = ("_left",)

    def __init__(self, calls: int) -> None:
        if calls < 0:
            raise ValueError("an allowance cannot be negative")
        self._left = calls

    def try_draw(self, calls: int = 1) -> bool:
        if calls > self._left:
            return False
        self._left -= calls
        return True

    def remaining(self) -> int:
        return self._left
