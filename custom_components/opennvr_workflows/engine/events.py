"""The one event shape every trigger source produces.

OpenNVR's websocket, NATS and MQTT sources, the scheduler, buttons, Assist
messages and the engine itself (alerts a run raised) all arrive here as an
:class:`NvrEvent`. Normalising at the edge keeps the trigger index to plain
dictionary look-ups on a few well-known fields, and lets a loop between two
workflows be cut by reading one tuple (``chain``) instead of every payload.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any, Final, Literal

#: Where an event came from; ``action`` is a person or an automation starting a run by
#: name (the run_workflow and try_workflow actions).
EventSource = Literal[
    "websocket", "nats", "mqtt", "schedule", "button", "assist", "engine", "action"
]

#: Event kinds the trigger index knows. Sources may use others; they simply
#: match no trigger (and cost one dictionary miss).
KNOWN_KINDS: Final = frozenset(
    {
        "alert",
        "event",
        "camera_offline",
        "camera_online",
        "schedule",
        "button",
        "message",
        "person_in_zone",
    }
)

_NOT_NAME: Final = re.compile(r"[^0-9a-z]+")

_EMPTY: Final[Mapping[str, Any]] = MappingProxyType({})
_NO_LABELS: Final[frozenset[str]] = frozenset()

#: How a host found that a start by name carries AI output (``NvrEvent.ai_origin``):
#: ``lineage``: what started it descends from AI output (an automation set off by a
#: run's AI-derived effect, through any helpers between); ``untraced``: an automation
#: whose start nothing records (a time trigger) started a workflow that moves things,
#: which an admin did not mark as started only by trusted triggers.
AI_ORIGINS: Final = frozenset({"lineage", "untraced"})


def zone_key(name: str) -> str:
    """The form a zone name is matched in: lower case, every run of other characters one
    ``_``. A workflow names zones as lower-case slugs (``loading-bay``) while OpenNVR's
    zones carry display names (``Loading bay``); both reduce to ``loading_bay``."""
    return _NOT_NAME.sub("_", name.casefold()).strip("_")


@dataclass(frozen=True, slots=True)
class NvrEvent:
    """A normalised trigger event.

    ``kind`` is the broad family ("alert", "event", "camera_offline", ...);
    ``type`` is the specific alert or contracted event type within it (an
    app's alert type such as ``"intrusion"``, or a contract name such as
    ``"plate.recognized.v1"``); for ``schedule``/``button``/``message`` it may
    name the workflow the event is for. ``app`` is the alert's source app.
    A message's text and sender go in ``payload["message"]`` and
    ``payload["user"]``; an event's contracted fields in ``payload``.
    A ``person_in_zone`` event (a tracked person's dwell crossed a threshold)
    has the zone's :func:`zone_key` as ``type`` (``None``: anywhere in the
    camera's zones), the track in ``track_id``, the label in ``labels`` and
    ``payload`` ``{zone, seconds, threshold, label}``.

    ``chain`` is the tuple of correlation ids of the workflow runs that caused
    this event, oldest first: an alert a run raised carries its run's chain
    plus the run's own id. Its length is the event's chain depth; the engine
    refuses to start a run deeper than the workflow's limit and a workflow
    ignores events whose last link is one of its own runs.

    ``ai_derived`` says the event carries an AI's decision or text: an alert a run raised
    on a path an AI step chose, or rendering what an AI step said, or anything a run
    started by such an event raised. A run it starts reads its trigger's fields as
    AI output, so nothing in that run moves things without a person's reply in it (see
    :mod:`.taint`).

    ``supplied_by`` names the user (by id) whose own values filled this event: a person
    who is not an admin started the workflow by name with variables. Those values are
    theirs, not the world's, so the run moves nothing without a person's reply in it,
    as for AI output.

    ``ai_origin`` says, for the trace, how a start by name came to be marked when the
    host found the mark (:data:`AI_ORIGINS`); None when the engine's own record of the
    event and its chain marked it.
    """

    kind: str
    source: EventSource
    time: datetime
    type: str | None = None
    camera_id: str | None = None
    camera_role: str | None = None
    alert_id: str | None = None
    app: str | None = None
    severity: str | None = None
    title: str | None = None
    labels: frozenset[str] = frozenset()
    plate: str | None = None
    track_id: str | None = None
    correlation_id: str | None = None
    chain: tuple[str, ...] = ()
    payload: Mapping[str, Any] = field(default=_EMPTY)
    ai_derived: bool = False
    supplied_by: str | None = None
    ai_origin: str | None = None
    #: :attr:`time` in ISO 8601, worked out on first use (:meth:`iso_time`).
    _iso: str | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.time.tzinfo is None:
            raise ValueError("NvrEvent.time must be timezone-aware")
        if not isinstance(self.labels, frozenset):
            object.__setattr__(self, "labels", frozenset(self.labels))
        if not isinstance(self.chain, tuple):
            object.__setattr__(self, "chain", tuple(self.chain))

    def iso_time(self) -> str:
        """:attr:`time` in ISO 8601, as ``isoformat()`` writes it. A run writes it twice
        (its trigger's record and its ``time`` value), and the formatting was a good part
        of what starting a run cost, so it is done once per event."""
        iso = self._iso
        if iso is None:
            iso = self.time.isoformat()
            object.__setattr__(self, "_iso", iso)
        return iso

    @property
    def depth(self) -> int:
        """How many workflow runs led to this event (0: it came from the world)."""
        return len(self.chain)

    def summary(self) -> dict[str, Any]:
        """A JSON-safe record of the event, stored as a run's trigger."""
        out: dict[str, Any] = {"kind": self.kind, "source": self.source}
        out["time"] = self.iso_time()
        for name in (
            "type",
            "camera_id",
            "camera_role",
            "alert_id",
            "app",
            "severity",
            "title",
            "plate",
            "track_id",
            "correlation_id",
        ):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        if self.labels:
            out["labels"] = sorted(self.labels)
        if self.chain:
            out["chain"] = list(self.chain)
        if self.payload:
            out["payload"] = dict(self.payload)
        if self.ai_derived:
            out["ai_derived"] = True
        if self.supplied_by is not None:
            out["supplied_by"] = self.supplied_by
        if self.ai_origin is not None:
            out["ai_origin"] = self.ai_origin
        return out

    @classmethod
    def from_summary(cls, data: Mapping[str, Any]) -> NvrEvent:
        """Rebuild an event from :meth:`summary` (used when a run resumes).

        The words a site repeats on every event (its kinds, sources, types, cameras, apps,
        severities) are interned and an event without labels or payload shares the empty
        ones, as the events a source builds do: a thousand runs restored waiting then hold
        one copy of each, not a thousand."""
        labels = data.get("labels")
        payload = data.get("payload")
        return cls(
            kind=word(str(data["kind"])),
            source=word(data.get("source", "engine")),
            time=datetime.fromisoformat(str(data["time"])),
            type=word(data.get("type")),
            camera_id=word(data.get("camera_id")),
            camera_role=word(data.get("camera_role")),
            alert_id=data.get("alert_id"),
            app=word(data.get("app")),
            severity=word(data.get("severity")),
            title=data.get("title"),
            labels=frozenset(map(word, labels)) if labels else _NO_LABELS,
            plate=data.get("plate"),
            track_id=data.get("track_id"),
            correlation_id=data.get("correlation_id"),
            chain=tuple(data.get("chain", ())),
            payload=MappingProxyType(dict(payload)) if payload else _EMPTY,
            ai_derived=data.get("ai_derived") is True,
            supplied_by=_text_or_none(data.get("supplied_by")),
            ai_origin=_text_or_none(data.get("ai_origin")),
        )


def word[T](value: T) -> T:
    """``value`` interned when it is a string, else as it is: for the words a site and its
    workflows repeat on every run (kinds, statuses, paths, ids of workflows and cameras), so
    that what is rebuilt from the file shares one copy of each, as what is made live does."""
    return sys.intern(value) if type(value) is str else value  # type: ignore[return-value]


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
