"""How long a Look takes, model included: the last hour's durations and their median.

A homeowner sizing a vision model for a small machine wants one figure: how long does it
take from "look at the door" to the answer. Each Look that reached the model (a workflow's
Look step, or the AI Task) adds its duration here; one that never asked it (the model was
down, the hourly budget spent, the server not allowed) would only drag the median toward
zero, so it is left out. Kept in memory, bounded: a restart starts the hour again.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from statistics import median
from typing import Final

#: The window the median covers.
WINDOW_S: Final = 3600.0
#: At most this many durations are kept (a busy site's hour of Looks, many times over).
MOST: Final = 4096
#: Unsure reasons of a Look that did not ask the model.
NOT_ASKED: Final = frozenset({"llm_down", "over_budget", "not_local", "error"})


class LookLatency:
    """The durations of the Looks of the last :data:`WINDOW_S` seconds."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._seen: deque[tuple[float, float]] = deque(maxlen=MOST)

    def add(self, seconds: float, unsure_reason: str | None = None) -> None:
        """A Look took ``seconds``; left out when it never asked the model."""
        if unsure_reason in NOT_ASKED:
            return
        self._seen.append((self._clock(), seconds))

    def p50(self) -> float | None:
        """The median duration in seconds over the window (None: no Look in it)."""
        durations = self._recent()
        return median(durations) if durations else None

    def count(self) -> int:
        return len(self._recent())

    def _recent(self) -> list[float]:
        cutoff = self._clock() - WINDOW_S
        while self._seen and self._seen[0][0] <= cutoff:
            self._seen.popleft()
        return [seconds for _, seconds in self._seen]
