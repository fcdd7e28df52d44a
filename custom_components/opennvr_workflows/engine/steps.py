"""What every step executor shares: who decided a path, the ways a run stops
early, and the placeholders its trigger defines.

The decider travels down the path walk because the trust rules need it: an
alert on a path an AI step chose is capped by that step's marked accuracy,
while one on a path the world, a rule or a person chose is not. The
:class:`Lineage` around it remembers more than the last decider: whether an AI
step chose a path above this one with no person's answer since, and whether a
person's real answer (not a timeout, not a default) did, since an ``if`` after
either does not change what the path owes to them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal

from ..workflow import model
from ..workflow.vocabulary import trigger_placeholders
from .events import NvrEvent

Decider = tuple[Literal["world", "ai", "person", "rule"], str | None]
WORLD: Final[Decider] = ("world", None)
RULE: Final[Decider] = ("rule", None)
PERSON: Final[Decider] = ("person", None)


@dataclass(frozen=True, slots=True)
class Lineage:
    """How the path a step stands on was chosen.

    ``decider`` chose the innermost branch. ``ai`` is the path of the AI step that
    chose a branch above, with no person's answer since (or of the ``if`` on AI output,
    or the for_each over events, that did: they choose as the AI would); ``person`` the
    path of the Ask a person step whose answer (a person's reply: not a timeout, not the
    default) chose a branch above, with no AI decision since. ``tainted`` names the values
    that are AI output on this path and that no person approved as shown (the validator's
    taint, kept at run time: see :mod:`..workflow.checks.taint`)."""

    decider: Decider = WORLD
    ai: str | None = None
    person: str | None = None
    #: The accuracy key of the AI step ``ai`` names (its marks decide the severity cap).
    ai_key: str | None = None
    tainted: frozenset[str] = frozenset()

    def by_rule(self, reads: frozenset[str] = frozenset(), path: str | None = None) -> Lineage:
        """An ``if`` at ``path`` chose the branch. A plain one (it reads no AI output)
        clears nothing and taints nothing; one that reads AI output chooses as the AI
        would, with no marks of its own, until a person answers."""
        if path is not None and reads & self.tainted:
            return Lineage(("ai", None), path, None, None, self.tainted)
        return Lineage(RULE, self.ai, self.person, self.ai_key, self.tainted)

    def by_ai(self, decider: Decider, path: str, defined: frozenset[str] = frozenset()) -> Lineage:
        """An AI step chose the branch, and ``defined`` its values there: only a later
        person's answer clears it."""
        return Lineage(decider, path, None, decider[1], self.tainted | defined)

    def by_items(self, path: str, defined: frozenset[str]) -> Lineage:
        """A for_each over events runs its steps: the events (among them alerts workflows
        raised from AI decisions) decide whether they run, as an ``if`` on them would."""
        return Lineage(("ai", None), path, None, None, self.tainted | defined)

    def by_person(self, path: str, answered: bool, shown: frozenset[str] = frozenset()) -> Lineage:
        """An Ask a person step's outcome chose the branch; only a person's reply (not the
        default, not no answer) clears, and it approves the values its question showed. A
        default taken or no answer chose nothing: the path is what it was."""
        if answered:
            return Lineage(PERSON, None, path, None, self.tainted - shown)
        return self

    def defining(self, names: frozenset[str], ai: bool) -> Lineage:
        """The same path once ``names`` are defined: AI output (``ai``), or values of
        another provenance that replace any AI output of those names."""
        tainted = self.tainted | names if ai else self.tainted - names
        return Lineage(self.decider, self.ai, self.person, self.ai_key, tainted)


class Waiting(Exception):
    """The run cannot go on until a person answers or a due time passes."""


class ProviderLost(Exception):
    """A step lost its provider; the workflow needs attention."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class Declined(Exception):
    """A person declined, asked again, an action their earlier answer no longer cleared
    (:mod:`.freshness`): the path ends at that action. A person's choice, not a fault."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class Refused(ProviderLost):
    """The engine refused a step (an actuator AI output could reach, a site list,
    camera role or entity that does not exist): the run stops with the reason and
    the workflow needs attention, as when a provider is lost."""


def trigger_values(workflow: model.Workflow, event: NvrEvent) -> dict[str, Any]:
    """What every path of a run starts with: each name the validator says the trigger
    defines (:func:`~..workflow.vocabulary.trigger_placeholders`, so never a placeholder
    it accepted and the run leaves unfilled), None where the event has no value for it
    (a condition on it then fails closed), plus the workflow's name and the event's
    date."""
    values = event_values(event)
    for name in trigger_placeholders(workflow.when):
        values.setdefault(name, None)
    values["workflow"] = workflow.name
    values["date"] = event.iso_time()[:10]
    return values


def to_seconds(iso: str) -> str:
    """An ISO 8601 time as ``isoformat(timespec="seconds")`` writes it: the fraction of
    the second (``.ffffff``, present only when not zero) dropped, the offset kept."""
    return iso[:19] + iso[26:] if iso[19:20] == "." else iso


def event_values(event: NvrEvent) -> dict[str, Any]:
    """The placeholders a trigger defines."""
    values: dict[str, Any] = {}
    for name, value in event.payload.items():
        if isinstance(value, str | int | float | bool):
            values[name] = value
    values.update(
        camera=event.camera_role or event.camera_id,
        camera_id=event.camera_id,
        title=event.title,
        severity=event.severity,
        alert_type=event.type if event.kind == "alert" else None,
        event_type=event.type if event.kind == "event" else None,
        app=event.app,
        alert_id=event.alert_id,
        track=event.track_id,
        plate=event.plate if event.plate is not None else values.get("plate"),
        labels=", ".join(sorted(event.labels)),
        time=to_seconds(event.iso_time()),
    )
    if "description" not in values:
        values["description"] = event.payload.get("description")
    if event.kind == "message":
        values["message"] = event.payload.get("message")
        values["user"] = event.payload.get("user")
    return values
