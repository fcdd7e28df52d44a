"""Where a Home Assistant context comes from: the AI mark and the runs behind it, followed
through automations, scripts and helpers.

Home Assistant links its contexts. An automation triggered by a state change or an event
runs under a new context whose ``parent_id`` is the triggering context's id; a script runs
under its caller's context; a helper's state change carries the context of the action that
set it; a template entity takes the context of the change it was rendered again on. This
module follows those links forward, as Home Assistant fires its events, so that a start of
a workflow (``run_workflow``, the Run now button, a message) knows what led to it:

* a context is **marked** when a run's effect carried AI output (the run's own context),
  when it called the look or investigate action (its caller now holds the model's answer),
  when something this integration wrote from AI output was written under it, or when its
  parent is marked;
* a context that descends from a run's context carries that run's chain, so the engine's
  own provenance (:mod:`...engine.taint`, which remembers the runs that emitted AI output)
  and its depth limit see through any number of hops;
* a context is **untraced** when an automation or a script started under it with no parent
  and no user (a time, sun, template or persistent-notification trigger: Home Assistant
  records nothing that led to it), when its parent is untraced, or when it may have been
  forgotten (older than what is remembered).

Bounded in memory and time: each table keeps at most :data:`LIMIT` contexts, none longer
than :data:`REMEMBER_S`. A context without a user that was made before what is remembered
counts as untraced, never as clean.

One tracker serves the whole Home Assistant instance (a run of one site may set off an
automation that starts a workflow of another), listening while any site's workflows run.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Final

from homeassistant.const import MATCH_ALL
from homeassistant.core import Context, Event, HomeAssistant, callback
from homeassistant.util.hass_dict import HassKey
from homeassistant.util.ulid import ulid_to_bytes_or_none

from ...const import DOMAIN

#: Contexts remembered per table (marked, untraced); the oldest go first.
LIMIT: Final = 16_384
#: How long a context is remembered: longer than any automation's delay is expected to be.
REMEMBER_S: Final = 24 * 3600.0
#: Events that start an automation or a script run under its context (Home Assistant's
#: ``automation_triggered`` and ``script_started``).
_STARTS: Final = frozenset({"automation_triggered", "script_started"})

_KEY: HassKey[ContextLineage] = HassKey(f"{DOMAIN}_context_lineage")


@dataclass(frozen=True, slots=True)
class Origin:
    """What led to a context: the runs it descends from (``chain``, oldest first), whether
    AI output is among its ancestors (``ai``), and whether its start could be traced."""

    chain: tuple[str, ...] = ()
    ai: bool = False
    traced: bool = True


@dataclass(frozen=True, slots=True)
class _Mark:
    chain: tuple[str, ...]
    ai: bool
    at: float


class ContextLineage:
    """The marked and untraced contexts of one Home Assistant (see the module docstring)."""

    def __init__(
        self,
        *,
        limit: int = LIMIT,
        remember_s: float = REMEMBER_S,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._limit = limit
        self._remember_s = remember_s
        self._clock = clock
        self._marks: dict[str, _Mark] = {}
        self._untraced: dict[str, float] = {}
        #: Contexts made before this (wall-clock seconds, to the millisecond of a context
        #: id) may have been forgotten, or were made while nothing listened.
        self._forgotten_before = _to_ms(clock())
        self._listeners = 0
        self._unsubscribe: Callable[[], None] | None = None

    # ── what runs and actions tell it ──────────────────────────────────

    def run(self, context_id: str, chain: tuple[str, ...], ai: bool) -> None:
        """A run acts under ``context_id``; ``ai``: what it emits carries AI output."""
        known = self._marks.get(context_id)
        if known is not None and known.chain == chain and (known.ai or not ai):
            return
        self._put(context_id, _Mark(chain, ai or (known is not None and known.ai), self._clock()))

    def mark(self, context_id: str) -> None:
        """What happens under ``context_id`` from now on holds AI output."""
        known = self._marks.get(context_id)
        if known is not None and known.ai:
            return
        self._put(context_id, _Mark(known.chain if known else (), True, self._clock()))

    # ── following Home Assistant ───────────────────────────────────────

    @callback
    def observe(self, event: Event) -> None:
        """Carry the marks from a parent context to its child (every event passes here:
        two dictionary look-ups)."""
        context = event.context
        if context.id in self._marks or context.id in self._untraced:
            return
        parent = context.parent_id
        if parent is not None:
            if (mark := self._marks.get(parent)) is not None:
                self._put(context.id, _Mark(mark.chain, mark.ai, self._clock()))
            elif parent in self._untraced:
                self._put_untraced(context.id)
        elif context.user_id is None and event.event_type in _STARTS:
            self._put_untraced(context.id)

    def origin(self, context: Context, also: Iterable[str] = ()) -> Origin:
        """What led to ``context``; ``also``: ids of contexts the caller says it descends
        from too (they can add a mark, never take one away)."""
        self._expire()
        chain: tuple[str, ...] = ()
        ai = untraced = False
        for context_id in (context.id, context.parent_id, *also):
            if not context_id:
                continue
            if (mark := self._marks.get(context_id)) is not None:
                chain = chain or mark.chain
                ai = ai or mark.ai
            untraced = untraced or context_id in self._untraced
        if context.user_id is None and not chain and not ai and not untraced:
            # Nothing known of it or of its parent: fine if both are newer than what is
            # remembered; made before, they may have been marked and forgotten.
            untraced = any(
                self._older_than_remembered(i) for i in (context.id, context.parent_id) if i
            )
        return Origin(chain, ai, not untraced)

    # ── listening ──────────────────────────────────────────────────────

    @callback
    def async_listen(self, hass: HomeAssistant) -> Callable[[], None]:
        """Follow every event while at least one site's workflows run; returns the
        release. A gap in listening counts as forgotten."""
        if self._unsubscribe is None:
            self._forgotten_before = max(self._forgotten_before, _to_ms(self._clock()))
            self._unsubscribe = hass.bus.async_listen(MATCH_ALL, self.observe)
        self._listeners += 1
        released = False

        @callback
        def release() -> None:
            nonlocal released
            if released:
                return
            released = True
            self._listeners -= 1
            if self._listeners == 0 and self._unsubscribe is not None:
                self._unsubscribe()
                self._unsubscribe = None

        return release

    # ── bounds ─────────────────────────────────────────────────────────

    def _put(self, context_id: str, mark: _Mark) -> None:
        self._marks.pop(context_id, None)
        self._marks[context_id] = mark
        self._trim(self._marks, lambda m: m.at)

    def _put_untraced(self, context_id: str) -> None:
        self._untraced[context_id] = self._clock()
        self._trim(self._untraced, lambda at: at)

    def _trim[V](self, table: dict[str, V], at: Callable[[V], float]) -> None:
        """The oldest out past the limit; what was made until it went in (its descendants
        among them) may be forgotten from then on."""
        while len(table) > self._limit:
            gone = table.pop(next(iter(table)))
            self._forgotten_before = max(self._forgotten_before, _to_ms(at(gone)) + 0.001)

    def _expire(self) -> None:
        """Forget what is older than :data:`REMEMBER_S` (tables are in insertion order)."""
        cutoff = self._clock() - self._remember_s
        self._forgotten_before = max(self._forgotten_before, cutoff)
        _drop_older(self._marks, cutoff, lambda m: m.at)
        _drop_older(self._untraced, cutoff, lambda at: at)

    def _older_than_remembered(self, context_id: str) -> bool:
        made = made_at(context_id)
        return made is not None and made < self._forgotten_before


def _to_ms(seconds: float) -> float:
    """Seconds to the millisecond a context id holds (down)."""
    return math.floor(seconds * 1000) / 1000


def _drop_older[V](table: dict[str, V], cutoff: float, at: Callable[[V], float]) -> None:
    while table:
        first = next(iter(table))
        if at(table[first]) >= cutoff:
            return
        del table[first]


def made_at(context_id: str) -> float | None:
    """When a context was made (its id is a ULID: the first 48 bits are milliseconds);
    None for an id that is not one."""
    raw = ulid_to_bytes_or_none(context_id)
    return int.from_bytes(raw[:6], "big") / 1000 if raw else None


@callback
def context_lineage(hass: HomeAssistant) -> ContextLineage:
    """The instance's tracker (made on first use; it listens once a host starts it)."""
    lineage = hass.data.get(_KEY)
    if lineage is None:
        lineage = hass.data[_KEY] = ContextLineage()
    return lineage
