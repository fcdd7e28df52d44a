"""Where each value a run holds came from, kept beside the value.

The safety rule (the README's "Writing a workflow": AI informs, people and plain rules move
things) is about values as much as paths: an AI's words may be shown, logged and alerted on,
but an action that moves things may carry them only once a person's reply approved them as
shown. The validator reasons about every path a file could take; the run-time monitor
(:mod:`.monitor`) judges the one path a run took on the values it actually holds. So every
value carries its provenance (:class:`Provenance`), made of one or more :class:`Source`:

* the world: the triggering event (``world``), or, when that event carries AI output or
  was started by name with a person's own values, ``ai_trigger`` or ``supplied``; a site
  list (``site``); the file itself (``constant``: the workflow's name, a camera a loop
  names);
* an AI step (``ai``: everything it defines), the events a loop reads (``events``: among
  them the alerts workflows raise from AI decisions);
* a person's answer (``answer``: ``{answer}``, ``{answered_by}``).

A derived value inherits what it was made from: a loop's item is what its list is, a
``collect`` is every item and every AI reason in it. A person's reply approves the values
its question showed (:meth:`Held.approve`), until they are defined again.

:class:`Held` is the run's values themselves (a ``dict``, so every executor, the renderer
and the AI port read them as before) with the provenance beside them. Kept cheap: every
value the trigger defines shares one provenance (``base``), the common ones are shared
constants, and a lookup is one dictionary access. A write that does not say where its value
came from (a plain ``values[name] = ...``) records it as ``unknown``, which is never plain:
a place that forgets provenance fails closed, it never opens a gate.

Written from the README's rule, apart from the validator's taint
(``workflow/checks/taint.py``) on purpose: two locks that share a helper share its holes.
Only the model and the placeholder tokenizer are shared.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Final, Literal

from ..workflow import model

__all__ = [
    "AI_TRIGGER",
    "ANSWER_NAMES",
    "CONSTANT",
    "SITE",
    "SUPPLIED",
    "UNKNOWN",
    "WORLD",
    "Approval",
    "Held",
    "Provenance",
    "Source",
    "condition_reads",
    "made_by",
]

Kind = Literal[
    "constant", "world", "site", "supplied", "answer", "ai", "events", "ai_trigger", "unknown"
]

#: Sources whose values are not AI output: a person approves nothing to use them. A value a
#: person supplied by name is plain as a value; the run it starts is held to a person's
#: reply before it moves anything (:mod:`.monitor`).
PLAIN_KINDS: Final = frozenset({"constant", "world", "site", "supplied", "answer"})

#: The values a question's outcome defines on its paths.
ANSWER_NAMES: Final = ("answer", "answered_by")

#: What every run's common placeholders are: the workflow's own name is the file's, the
#: event's time and date are the world's, whatever started the run.
_COMMON_KINDS: Final[Mapping[str, Kind]] = {
    "workflow": "constant",
    "time": "world",
    "date": "world",
}


@dataclass(frozen=True, slots=True)
class Source:
    """One place a value came from: ``kind``, and the step path that defined it (``at``;
    empty for the trigger, the site and the file)."""

    kind: Kind
    at: str = ""

    @property
    def label(self) -> str:
        """How a trace names it: ``world``, ``ai then.0``."""
        return f"{self.kind} {self.at}" if self.at else self.kind


@dataclass(frozen=True, slots=True)
class Approval:
    """A person's reply ``reply`` to the question at ``at``, whose message showed the value."""

    at: str
    reply: str

    def covers(self, path: str) -> bool:
        """Whether the step at ``path`` stands on this reply's path (approvals follow the
        path: a step after the question in the same list is not behind the reply)."""
        return path.startswith(f"{self.at}.{self.reply}.")


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where one value came from (every source it was made from), and the replies that
    approved it as shown since it was defined. ``plain``: no source is AI output."""

    sources: frozenset[Source]
    plain: bool
    #: How a trace names the sources: ``world``, ``ai then.0 + constant``.
    made: str
    approvals: tuple[Approval, ...] = ()

    @property
    def label(self) -> str:
        """How a trace names it: ``ai then.0, shown at then.0.yes.0 (Open)``."""
        if not self.approvals:
            return self.made
        return self.made + "".join(f", shown at {a.at} ({a.reply})" for a in self.approvals)

    def approved_on(self, path: str) -> Approval | None:
        """The latest reply on the path of the step at ``path`` that approved this value."""
        for approval in reversed(self.approvals):
            if approval.covers(path):
                return approval
        return None

    def cleared_on(self, path: str) -> bool:
        """Whether a step at ``path`` may read this value as plain: it is, or a reply on
        that step's path approved it as shown."""
        return self.plain or self.approved_on(path) is not None


def made_by(*sources: Source) -> Provenance:
    """The provenance of a value made from ``sources``."""
    found = frozenset(sources)
    made = " + ".join(sorted(s.label for s in found)) or "nothing"
    return Provenance(found, all(s.kind in PLAIN_KINDS for s in found), made)


def merged(provenances: Iterable[Provenance]) -> Provenance:
    """The provenance of a value made from values of these provenances (a ``collect``)."""
    sources: set[Source] = set()
    for provenance in provenances:
        sources |= provenance.sources
    return made_by(*sources)


CONSTANT: Final = made_by(Source("constant"))
WORLD: Final = made_by(Source("world"))
SITE: Final = made_by(Source("site"))
SUPPLIED: Final = made_by(Source("supplied"))
AI_TRIGGER: Final = made_by(Source("ai_trigger"))
UNKNOWN: Final = made_by(Source("unknown"))
_COMMON: Final = {name: made_by(Source(kind)) for name, kind in _COMMON_KINDS.items()}


class Held(dict[str, Any]):
    """A path's values with the provenance of each (see the module docstring).

    ``base`` is the provenance of every value the trigger defined (until it is defined
    again); ``before`` keeps, per question answered on this path, the answer values as
    they were when it was asked (what its card could show, see :mod:`.monitor`)."""

    __slots__ = ("_prov", "_writer", "base", "before")

    def __init__(self, values: Mapping[str, Any] | None = None, base: Provenance = UNKNOWN) -> None:
        super().__init__(values or {})
        self._prov: dict[str, Provenance] = {}
        self._writer = UNKNOWN
        self.base = base
        self.before: dict[str, dict[str, Any]] = {}

    @classmethod
    def of_trigger(cls, values: Mapping[str, Any], base: Provenance) -> Held:
        """The values a trigger defines, all of ``base`` but the common ones."""
        held = cls(values, base)
        held._prov.update(_COMMON)
        return held

    def __setitem__(self, name: str, value: Any) -> None:
        super().__setitem__(name, value)
        self._prov[name] = self._writer

    def define(self, name: str, value: Any, provenance: Provenance) -> None:
        """Hold ``value`` under ``name``, made from ``provenance``."""
        super().__setitem__(name, value)
        self._prov[name] = provenance

    def provenance(self, name: str) -> Provenance:
        """Where the value under ``name`` came from."""
        return self._prov.get(name, self.base)

    @contextmanager
    def written_by(self, provenance: Provenance) -> Iterator[None]:
        """Every value written while this holds (an AI step's, an answer's) is made from
        ``provenance``."""
        self._writer = provenance
        try:
            yield
        finally:
            self._writer = UNKNOWN

    def approve(self, names: Iterable[str], approval: Approval) -> None:
        """A person's reply approved these values as its question showed them."""
        for name in names:
            if name not in self:
                continue
            found = self.provenance(name)
            self._prov[name] = Provenance(
                found.sources, found.plain, found.made, (*found.approvals, approval)
            )

    def copy(self) -> Held:
        """The same values and provenance, for a scope of its own (a loop's item)."""
        held = Held(self, self.base)
        held._prov.update(self._prov)
        held.before.update(self.before)
        return held


def condition_reads(condition: model.Condition) -> tuple[str, ...]:
    """The values a condition reads: a value or a list test the named value, a camera
    test the current ``{camera}``. A time or a site mode reads the world (the clock, the
    site), never a value a step defined. Kept here, not shared with the validator's own
    reading of conditions: the two locks are written apart."""
    if isinstance(condition, model.ValueCondition | model.ListCondition):
        return (condition.name,)
    if isinstance(condition, model.CameraCondition):
        return ("camera",)
    return ()
