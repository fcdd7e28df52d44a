"""Find the workflows an event may start, by dictionary look-ups.

Every On or Test workflow's trigger is filed under ``(kind, type, camera
role)``, with ``None`` standing for "any". An event is looked up under at most
four keys (its type and role, each or "any"). The workflows under one key are
then sorted once more, by the fields their triggers filter on, into tables an
event reads by its own field values:

* alerts: by ``app`` and then by the event's severity, each table entry the
  finished answer (``min_severity`` folded in);
* contracted events: by one ``match`` field of each trigger (its narrowest)
  and the value the event carries there, or each of a detection frame's track
  labels; only triggers that filter on several fields are checked further;
* person in zone: by the dwell threshold (or, when the event names none, the
  dwells it reached), a sorted list cut by bisection;
* buttons by workflow id; offline triggers need nothing more.

So the cost of an event does not grow with the number of workflows, with or
without camera lists: an event that starts nothing costs a few dictionary
misses, one that starts runs costs a few look-ups and the runs it starts. Only
a message without a workflow named (a sentence to the assistant) is checked
against every message trigger's words; messages come at a person's pace.

The tables under a key are built on the first event that reads them after a
workflow was filed or removed there, so loading hundreds of workflows does not
rebuild them hundreds of times.

A person-in-zone trigger is filed under its zone's key as the type, or under
"any" when it names no zone. The tracker publishes one event per zone a person
lingers in (typed by that zone) and one for "anywhere in the camera's zones"
(untyped); a trigger without a zone fits only the untyped ones, so a person in
two overlapping zones starts it once.

:func:`residual_match` states, trigger by trigger, what the tables answer; the
tables are an index over it, and the tests compare the two on random sites.

Schedules are not here: they are due-time rows (see :mod:`.schedule`).
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

from ..workflow import model
from .events import NvrEvent, zone_key
from .ports import SEVERITIES

_Key = tuple[str, str | None, str | None]
_NO_CANDIDATES: Final[tuple[Candidate, ...]] = ()
_RANK: Final[Mapping[str, int]] = {name: i for i, name in enumerate(SEVERITIES)}


@dataclass(frozen=True, slots=True)
class Candidate:
    """A workflow whose trigger an event fits (or, for :func:`residual_match`, whose
    key it hit)."""

    workflow_id: str
    trigger: model.Trigger


def trigger_keys(workflow_id: str, trigger: model.Trigger) -> list[_Key]:
    """The index keys a trigger is filed under (none for schedules and for
    triggers this integration does not support), each once."""
    match trigger:
        case model.AlertTrigger(alert_type=alert_type, cameras=cameras):
            keys = [("alert", alert_type, role) for role in (cameras or (None,))]
        case model.EventTrigger(event=event, cameras=cameras):
            keys = [("event", event, role) for role in (cameras or (None,))]
        case model.CameraOfflineTrigger(cameras=cameras):
            keys = [("camera_offline", None, role) for role in (cameras or (None,))]
        case model.ButtonTrigger():
            keys = [("button", workflow_id, None)]
        case model.MessageTrigger():
            keys = [("message", None, None)]
        case model.PersonInZoneTrigger(cameras=cameras, zone=zone):
            zone_type = zone_key(zone) if zone is not None else None
            keys = [("person_in_zone", zone_type, role) for role in (cameras or (None,))]
        case _:
            keys = []
    return list(dict.fromkeys(keys))


def residual_match(candidate: Candidate, event: NvrEvent) -> bool:
    """What the key cannot say: does the event, which hit the trigger's key, fit it?"""
    match candidate.trigger:
        case model.AlertTrigger(app=app, min_severity=min_severity):
            if app is not None and event.app != app:
                return False
            if min_severity is not None:
                if event.severity not in SEVERITIES:
                    return False
                return SEVERITIES.index(event.severity) >= SEVERITIES.index(min_severity)
            return True
        case model.EventTrigger(match=wanted):
            for name, allowed in wanted.items():
                value = event.payload.get(name)
                if value is None and name == "label" and event.labels:
                    # A detection frame lists its tracks, each with a label, rather than
                    # one label: it matches when any of them is allowed.
                    if not event.labels & set(allowed):
                        return False
                    continue
                if value is None or str(value) not in allowed:
                    return False
            return True
        case model.MessageTrigger(contains=words):
            if event.type is not None and event.type != candidate.workflow_id:
                return False
            if not words:
                return True
            text = str(event.payload.get("message", "")).casefold()
            return any(word.casefold() in text for word in words)
        case model.PersonInZoneTrigger(min_s=min_s, zone=zone):
            return _person_lingered(event, min_s, zone)
        case _:
            return True


def _person_lingered(event: NvrEvent, min_s: float, zone: str | None) -> bool:
    """A person, in the trigger's zone (or anywhere in the camera's zones when it names
    none), for ``min_s`` seconds. An event that says which threshold it crossed fits only
    the trigger of that threshold: a person who stays on fires a 5 s trigger once, not
    again when a 30 s trigger of another workflow is reached."""
    if "person" not in event.labels:
        return False
    if zone is None and event.type is not None:
        return False
    if zone is not None and event.type != zone_key(zone):
        return False
    seconds = _number(event.payload.get("seconds"))
    if seconds is None or seconds < min_s:
        return False
    threshold = _number(event.payload.get("threshold"))
    return threshold is None or math.isclose(threshold, min_s, abs_tol=1e-6)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


# ── the tables under one key ─────────────────────────────────────────────────────────────


class _Plan(Protocol):
    def find(self, event: NvrEvent) -> Sequence[Candidate]:
        """The candidates filed under the key that the event fits, in filing order."""
        ...


def _in_order(found: Iterable[Candidate], rank: Mapping[str, int]) -> list[Candidate]:
    """Each candidate once, in filing order (the order runs are started in)."""
    unique = {c.workflow_id: c for c in found}
    return sorted(unique.values(), key=lambda c: rank[c.workflow_id])


class _Plain:
    """Triggers a key says everything about (offline, button)."""

    __slots__ = ("_members",)

    def __init__(self, members: tuple[Candidate, ...]) -> None:
        self._members = members

    def find(self, event: NvrEvent) -> Sequence[Candidate]:
        return self._members


class _Checked:
    """Each trigger checked in turn: for what no table covers (a trigger type filed
    under an unexpected kind, which :func:`trigger_keys` never does)."""

    __slots__ = ("_members",)

    def __init__(self, members: tuple[Candidate, ...]) -> None:
        self._members = members

    def find(self, event: NvrEvent) -> Sequence[Candidate]:
        return [c for c in self._members if residual_match(c, event)]


_SeverityTable = dict[str | None, tuple[Candidate, ...]]


def _by_severity(members: Sequence[tuple[Candidate, model.AlertTrigger]]) -> _SeverityTable:
    """For each severity an event may carry (``None``: none, or one not known), the
    triggers whose ``min_severity`` it reaches."""
    table: _SeverityTable = {
        severity: tuple(
            c for c, t in members if t.min_severity is None or rank >= _RANK[t.min_severity]
        )
        for rank, severity in enumerate(SEVERITIES)
    }
    table[None] = tuple(c for c, t in members if t.min_severity is None)
    return table


class _Alerts:
    """Alert triggers by app (``None``: any app), then by the event's severity."""

    __slots__ = ("_any_app", "_by_app")

    def __init__(self, members: tuple[Candidate, ...]) -> None:
        alerts = [(c, c.trigger) for c in members if isinstance(c.trigger, model.AlertTrigger)]
        apps = dict.fromkeys(t.app for _, t in alerts if t.app is not None)
        self._any_app = _by_severity([(c, t) for c, t in alerts if t.app is None])
        self._by_app = {
            app: _by_severity([(c, t) for c, t in alerts if t.app in (None, app)]) for app in apps
        }

    def find(self, event: NvrEvent) -> Sequence[Candidate]:
        table = self._any_app if event.app is None else self._by_app.get(event.app, self._any_app)
        found = table.get(event.severity)
        return table[None] if found is None else found


def _narrowest(wanted: Mapping[str, tuple[str, ...]]) -> str:
    """The match field a trigger is filed by: the one allowing the fewest values."""
    return min(wanted, key=lambda name: (len(wanted[name]), name))


class _Events:
    """Contracted-event triggers by one of their match fields and its allowed values."""

    __slots__ = ("_always", "_by_value", "_fields", "_more", "_rank")

    def __init__(self, members: tuple[Candidate, ...]) -> None:
        always: list[Candidate] = []
        by_value: dict[tuple[str, str], list[Candidate]] = {}
        fields: dict[str, None] = {}
        self._more: set[str] = set()
        for c in members:
            if not isinstance(c.trigger, model.EventTrigger):
                continue
            wanted = c.trigger.match
            if not wanted:
                always.append(c)
                continue
            name = _narrowest(wanted)
            fields[name] = None
            for value in dict.fromkeys(wanted[name]):
                by_value.setdefault((name, value), []).append(c)
            if len(wanted) > 1:
                self._more.add(c.workflow_id)
        self._always = tuple(always)
        self._by_value = {key: tuple(found) for key, found in by_value.items()}
        self._fields = tuple(fields)
        self._rank = {c.workflow_id: i for i, c in enumerate(members)}

    def find(self, event: NvrEvent) -> Sequence[Candidate]:
        by_value = self._by_value
        payload = event.payload
        hits: list[Candidate] = []
        for name in self._fields:
            value = payload.get(name)
            if value is not None:
                hits.extend(by_value.get((name, str(value)), _NO_CANDIDATES))
            elif name == "label" and event.labels:
                # A detection frame's tracks, each with a label (see residual_match).
                for label in event.labels:
                    hits.extend(by_value.get((name, label), _NO_CANDIDATES))
        if not hits:
            return self._always
        more = self._more
        if more:
            hits = [c for c in hits if c.workflow_id not in more or residual_match(c, event)]
        if len(hits) == 1 and not self._always:
            return hits
        return _in_order((*self._always, *hits), self._rank)


class _Messages:
    """Message triggers: by workflow id when the message names one, else by their words."""

    __slots__ = ("_by_id", "_members")

    def __init__(self, members: tuple[Candidate, ...]) -> None:
        self._members = members
        self._by_id = {c.workflow_id: c for c in members}

    def find(self, event: NvrEvent) -> Sequence[Candidate]:
        if event.type is not None:
            c = self._by_id.get(event.type)
            return (c,) if c is not None and residual_match(c, event) else _NO_CANDIDATES
        return [c for c in self._members if residual_match(c, event)]


class _Dwells:
    """Person-in-zone triggers of one zone key (or of none), sorted by their dwell."""

    __slots__ = ("_dwells", "_odd", "_rank", "_sorted", "_zoned")

    def __init__(self, members: tuple[Candidate, ...], zoned: bool) -> None:
        dwelling = [
            (c.trigger.min_s, c)
            for c in members
            if isinstance(c.trigger, model.PersonInZoneTrigger) and math.isfinite(c.trigger.min_s)
        ]
        dwelling.sort(key=lambda pair: pair[0])
        self._dwells = [min_s for min_s, _ in dwelling]
        self._sorted = [c for _, c in dwelling]
        sorted_ids = {c.workflow_id for c in self._sorted}
        # A dwell that does not sort (not finite) is checked on every event.
        self._odd = tuple(c for c in members if c.workflow_id not in sorted_ids)
        self._rank = {c.workflow_id: i for i, c in enumerate(members)}
        self._zoned = zoned

    def find(self, event: NvrEvent) -> Sequence[Candidate]:
        if "person" not in event.labels or (not self._zoned and event.type is not None):
            return _NO_CANDIDATES
        seconds = _number(event.payload.get("seconds"))
        if seconds is None:
            return _NO_CANDIDATES
        threshold = _number(event.payload.get("threshold"))
        dwells = self._dwells
        if threshold is None:
            span = self._sorted[: bisect_right(dwells, seconds)]
        else:
            # A little wider than math.isclose's tolerance; the check below is exact.
            slack = 1e-5 + 1e-8 * abs(threshold)
            lo = bisect_left(dwells, threshold - slack)
            span = self._sorted[lo : bisect_right(dwells, threshold + slack)]
        found = [c for c in (*span, *self._odd) if residual_match(c, event)]
        return found if len(found) < 2 else _in_order(found, self._rank)


def _plan(key: _Key, members: tuple[Candidate, ...]) -> _Plan:
    kind = key[0]
    if kind == "alert":
        return _Alerts(members)
    if kind == "event":
        return _Events(members)
    if kind == "message":
        return _Messages(members)
    if kind == "person_in_zone":
        return _Dwells(members, zoned=key[1] is not None)
    if kind in ("camera_offline", "button"):
        return _Plain(members)
    return _Checked(members)


class _Bucket:
    """The triggers filed under one key, and their tables (built when first read)."""

    __slots__ = ("_plan", "key", "members")

    def __init__(self, key: _Key) -> None:
        self.key = key
        self.members: dict[str, Candidate] = {}
        self._plan: _Plan | None = None

    def changed(self) -> None:
        self._plan = None

    def find(self, event: NvrEvent) -> Sequence[Candidate]:
        plan = self._plan
        if plan is None:
            plan = self._plan = _plan(self.key, tuple(self.members.values()))
        return plan.find(event)


# ── the index ────────────────────────────────────────────────────────────────────────────


class TriggerIndex:
    """The index over the workflows that may start runs (On and Test)."""

    __slots__ = ("_buckets", "_keys_of")

    def __init__(self) -> None:
        self._buckets: dict[_Key, _Bucket] = {}
        self._keys_of: dict[str, list[_Key]] = {}

    def __len__(self) -> int:
        return len(self._keys_of)

    def put(self, workflow_id: str, trigger: model.Trigger) -> None:
        """File (or re-file) a workflow's trigger."""
        self.remove(workflow_id)
        keys = trigger_keys(workflow_id, trigger)
        candidate = Candidate(workflow_id, trigger)
        for key in keys:
            bucket = self._buckets.get(key)
            if bucket is None:
                bucket = self._buckets[key] = _Bucket(key)
            bucket.members[workflow_id] = candidate
            bucket.changed()
        self._keys_of[workflow_id] = keys

    def remove(self, workflow_id: str) -> None:
        for key in self._keys_of.pop(workflow_id, ()):
            bucket = self._buckets.get(key)
            if bucket is None:
                continue
            bucket.members.pop(workflow_id, None)
            if bucket.members:
                bucket.changed()
            else:
                del self._buckets[key]

    def dwell_thresholds(self) -> frozenset[float]:
        """The ``min_seconds`` of the person-in-zone triggers filed: the dwell times the
        presence tracker must report for these workflows to start."""
        return frozenset(
            c.trigger.min_s
            for bucket in self._buckets.values()
            for c in bucket.members.values()
            if isinstance(c.trigger, model.PersonInZoneTrigger)
        )

    def match(self, event: NvrEvent) -> list[Candidate]:
        """The workflows the event fits, each once: those filed under its exact key
        first, then any role, then any type, then any of both; in filing order within
        each. A workflow is filed under one of these keys at most."""
        buckets = self._buckets
        kind, type_, role = event.kind, event.type, event.camera_role
        found: list[Candidate] = []
        bucket = buckets.get((kind, type_, role))
        if bucket is not None:
            found.extend(bucket.find(event))
        if role is not None:
            bucket = buckets.get((kind, type_, None))
            if bucket is not None:
                found.extend(bucket.find(event))
        if type_ is not None:
            bucket = buckets.get((kind, None, role))
            if bucket is not None:
                found.extend(bucket.find(event))
            if role is not None:
                bucket = buckets.get((kind, None, None))
                if bucket is not None:
                    found.extend(bucket.find(event))
        return found

    def match_role(self, event: NvrEvent) -> list[Candidate]:
        """The workflows that name the event's camera role itself (not "any camera"):
        for offering one event again under a second role its camera plays."""
        role = event.camera_role
        if role is None:
            return []
        buckets = self._buckets
        found: list[Candidate] = []
        bucket = buckets.get((event.kind, event.type, role))
        if bucket is not None:
            found.extend(bucket.find(event))
        if event.type is not None:
            bucket = buckets.get((event.kind, None, role))
            if bucket is not None:
                found.extend(bucket.find(event))
        return found
