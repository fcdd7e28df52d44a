"""Find the workflows an event may start, by dictionary look-up.

Every On or Test workflow's trigger is filed under ``(kind, type, camera
role)``, with ``None`` standing for "any". An event is looked up under at most
four keys (its type and role, each or "any"), so the cost of an event that
starts nothing does not grow with the number of workflows: with 200 cameras
and 50 workflows most events miss every key. The few candidates found are then
checked against what a key cannot express (the app, a minimum severity, payload
matches, words in a message, how long a person has been in a zone).

A person-in-zone trigger is filed under its zone's key as the type, or under
"any" when it names no zone. The tracker publishes one event per zone a person
lingers in (typed by that zone) and one for "anywhere in the camera's zones"
(untyped); the residual check keeps a trigger without a zone to the untyped
ones, so a person in two overlapping zones starts it once.

Schedules are not here: they are due-time rows (see :mod:`.schedule`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

from ..workflow import model
from .events import NvrEvent, zone_key
from .ports import SEVERITIES

_Key = tuple[str, str | None, str | None]
_NO_CANDIDATES: Final[tuple[Candidate, ...]] = ()


@dataclass(frozen=True, slots=True)
class Candidate:
    """A workflow whose trigger is filed under a key the event hit."""

    workflow_id: str
    trigger: model.Trigger


def trigger_keys(workflow_id: str, trigger: model.Trigger) -> list[_Key]:
    """The index keys a trigger is filed under (none for schedules and for
    triggers this integration does not support)."""
    match trigger:
        case model.AlertTrigger(alert_type=alert_type, cameras=cameras):
            return [("alert", alert_type, role) for role in (cameras or (None,))]
        case model.EventTrigger(event=event, cameras=cameras):
            return [("event", event, role) for role in (cameras or (None,))]
        case model.CameraOfflineTrigger(cameras=cameras):
            return [("camera_offline", None, role) for role in (cameras or (None,))]
        case model.ButtonTrigger():
            return [("button", workflow_id, None)]
        case model.MessageTrigger():
            return [("message", None, None)]
        case model.PersonInZoneTrigger(cameras=cameras, zone=zone):
            zone_type = zone_key(zone) if zone is not None else None
            return [("person_in_zone", zone_type, role) for role in (cameras or (None,))]
        case _:
            return []


def residual_match(candidate: Candidate, event: NvrEvent) -> bool:
    """What the key cannot say: does the event still fit the trigger?"""
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


class TriggerIndex:
    """The index over the workflows that may start runs (On and Test)."""

    __slots__ = ("_by_key", "_keys_of")

    def __init__(self) -> None:
        self._by_key: dict[_Key, tuple[Candidate, ...]] = {}
        self._keys_of: dict[str, list[_Key]] = {}

    def __len__(self) -> int:
        return len(self._keys_of)

    def put(self, workflow_id: str, trigger: model.Trigger) -> None:
        """File (or re-file) a workflow's trigger."""
        self.remove(workflow_id)
        keys = trigger_keys(workflow_id, trigger)
        candidate = Candidate(workflow_id, trigger)
        for key in keys:
            self._by_key[key] = (*self._by_key.get(key, ()), candidate)
        self._keys_of[workflow_id] = keys

    def remove(self, workflow_id: str) -> None:
        for key in self._keys_of.pop(workflow_id, ()):
            left = tuple(c for c in self._by_key.get(key, ()) if c.workflow_id != workflow_id)
            if left:
                self._by_key[key] = left
            else:
                self._by_key.pop(key, None)

    def dwell_thresholds(self) -> frozenset[float]:
        """The ``min_seconds`` of the person-in-zone triggers filed: the dwell times the
        presence tracker must report for these workflows to start."""
        return frozenset(
            c.trigger.min_s
            for filed in self._by_key.values()
            for c in filed
            if isinstance(c.trigger, model.PersonInZoneTrigger)
        )

    def candidates(self, event: NvrEvent) -> tuple[Candidate, ...]:
        """The workflows whose key the event hits (before the residual check)."""
        by_key = self._by_key
        kind, type_, role = event.kind, event.type, event.camera_role
        exact = by_key.get((kind, type_, role), _NO_CANDIDATES)
        any_role = by_key.get((kind, type_, None), _NO_CANDIDATES) if role is not None else ()
        any_type = by_key.get((kind, None, role), _NO_CANDIDATES) if type_ is not None else ()
        anything = (
            by_key.get((kind, None, None), _NO_CANDIDATES)
            if type_ is not None or role is not None
            else ()
        )
        if not (any_role or any_type or anything):
            return exact
        return _unique((*exact, *any_role, *any_type, *anything))

    def match_role(self, event: NvrEvent) -> list[Candidate]:
        """The workflows that name the event's camera role itself (not "any camera"):
        for offering one event again under a second role its camera plays."""
        if event.camera_role is None:
            return []
        by_key = self._by_key
        kind, role = event.kind, event.camera_role
        found = _unique(
            (
                *by_key.get((kind, event.type, role), _NO_CANDIDATES),
                *(by_key.get((kind, None, role), _NO_CANDIDATES) if event.type else ()),
            )
        )
        return [c for c in found if residual_match(c, event)]

    def match(self, event: NvrEvent) -> list[Candidate]:
        """The workflows the event fits."""
        found = self.candidates(event)
        if not found:
            return []
        return [c for c in found if residual_match(c, event)]


def _unique(candidates: Iterable[Candidate]) -> tuple[Candidate, ...]:
    seen: set[str] = set()
    out: list[Candidate] = []
    for c in candidates:
        if c.workflow_id not in seen:
            seen.add(c.workflow_id)
            out.append(c)
    return tuple(out)
