"""``detection.observed.v1`` derived from the detector's tracks, for a site on the websocket.

OpenNVR publishes its contracted events (``opennvr.events.detection.observed.v1.<camera>``)
on NATS and MQTT only; the events websocket carries the detector's ``tracks`` frames but no
contracted event. A site on the default transport would never start a workflow that waits
for a detection (the parcel template does). This module fills the gap: the first time a
track is seen with a label on a camera, and again when it is seen with a label it has not
had before, it publishes the event NATS would have carried, built by the same reader
(:func:`~.normalize.domain_event`), so a workflow cannot tell the two apart.

Each event has a deterministic ``alert_id`` (camera, producer, track, label), so a track
forgotten here and seen again is let through the hub once. A track that flickers between two
labels announces each label once.

Memory is bounded: tracks unseen for ``forget_s`` are forgotten (the hub's deduplication
still catches their return), and at most ``max_tracks`` are kept, the least recently seen
going first. A track without an id cannot be followed from frame to frame and is left out.
Plain Python with an injectable clock, no Home Assistant; :func:`link_observed` hooks it to
the hub.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any, Final

from ..engine.events import NvrEvent
from .hub import EventHub
from .normalize import TRACKS_KIND, domain_event

OBSERVED_SCHEMA: Final = "detection.observed.v1"
#: A track unseen this long is forgotten. Only memory depends on it: a forgotten track
#: that comes back makes the same alert_id again, which the hub drops.
FORGET_S: Final = 300.0
MAX_TRACKS: Final = 4096
#: App overlays (a plate box, an occupancy zone) are drawings, not detections.
_OVERLAY: Final = "overlay"
#: The only source whose tracks stand in for contracted events (NATS and MQTT carry them).
_WEBSOCKET: Final = "websocket"

#: (camera, producer, track id)
_TrackKey = tuple[str, str | None, str]


class _Seen:
    """One followed track: when it was last in a frame and the labels already announced."""

    __slots__ = ("labels", "last_seen")

    def __init__(self, now: float) -> None:
        self.last_seen = now
        self.labels: set[str] = set()


class ObservedDeriver:
    """Tracks in, ``detection.observed.v1`` events out (:meth:`observe`)."""

    def __init__(
        self,
        *,
        forget_s: float = FORGET_S,
        max_tracks: int = MAX_TRACKS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if forget_s <= 0 or max_tracks < 1:
            raise ValueError("forget_s must be positive and max_tracks at least 1")
        self._forget = forget_s
        self._max_tracks = max_tracks
        self._clock = clock
        #: Least recently seen first.
        self._tracks: OrderedDict[_TrackKey, _Seen] = OrderedDict()

    def __len__(self) -> int:
        """How many tracks are remembered."""
        return len(self._tracks)

    def observe(self, event: NvrEvent) -> list[NvrEvent]:
        """Read one hub event; returns the ``detection.observed.v1`` events it causes (one
        per track seen for the first time, or with a label it has not had before)."""
        if event.kind != TRACKS_KIND or event.type == _OVERLAY or event.camera_id is None:
            return []
        tracks = event.payload.get("tracks")
        if not isinstance(tracks, list):
            return []
        now = self._clock()
        self.expire(now)
        out: list[NvrEvent] = []
        for track in tracks:
            if not isinstance(track, Mapping):
                continue
            track_id, label = _text(track.get("id")), _text(track.get("label"))
            if track_id is None or label is None:
                continue
            seen = self._seen((event.camera_id, event.type, track_id), now)
            if label in seen.labels:
                continue
            seen.labels.add(label)
            out.append(observed_event(event, track_id, label, track))
        self._trim()
        return out

    def expire(self, now: float | None = None) -> None:
        """Forget tracks unseen for ``forget_s``."""
        cutoff = (self._clock() if now is None else now) - self._forget
        tracks = self._tracks
        while tracks:
            seen = next(iter(tracks.values()))
            if seen.last_seen >= cutoff:
                break
            tracks.popitem(last=False)

    def _seen(self, key: _TrackKey, now: float) -> _Seen:
        seen = self._tracks.get(key)
        if seen is None:
            seen = self._tracks[key] = _Seen(now)
        else:
            self._tracks.move_to_end(key)
            seen.last_seen = now
        return seen

    def _trim(self) -> None:
        while len(self._tracks) > self._max_tracks:
            self._tracks.popitem(last=False)


def observed_event(
    tracks: NvrEvent, track_id: str, label: str, track: Mapping[str, Any]
) -> NvrEvent:
    """The event NATS would carry for one track of a ``tracks`` event: the contracted
    envelope read by :func:`~.normalize.domain_event`, with the deterministic alert_id.

    The payload holds ``label``, ``score`` (when the detector gave one), ``track`` (the
    name a workflow's ``match`` and placeholders use) and ``track_id`` (the field the
    envelope's reader takes the event's track from), and the ``bbox`` when known."""
    payload: dict[str, Any] = {"label": label, "track": track_id, "track_id": track_id}
    for name in ("score", "bbox"):
        if track.get(name) is not None:
            payload[name] = track[name]
    envelope = {
        "schema": OBSERVED_SCHEMA,
        "camera_id": tracks.camera_id,
        "ts": tracks.time.isoformat(),
        "producer": tracks.type,
        "payload": payload,
    }
    event = domain_event(envelope, source=tracks.source, now=tracks.time)
    alert_id = ":".join(
        ("observed", str(tracks.camera_id), tracks.type or "detector", track_id, label)
    )
    return replace(event, alert_id=alert_id)


def derives_observed(source_names: Iterable[str]) -> bool:
    """Whether an entry's tracks should stand in for contracted events: only when the
    websocket is its one source. With NATS or MQTT running (chosen, and usable), those
    carry OpenNVR's own ``detection.observed.v1`` and nothing is derived."""
    return set(source_names) == {_WEBSOCKET}


def link_observed(hub: EventHub, deriver: ObservedDeriver | None = None) -> Callable[[], None]:
    """Publish into ``hub`` the events ``deriver`` makes of the hub's tracks; returns the
    function that stops it. Only the cameras a ``detection.observed.v1`` trigger may fire
    on are followed (the hub's :attr:`~.hub.EventHub.track_watch`): a camera watched for
    its zones alone makes no detection events nobody waits for."""
    follower = deriver if deriver is not None else ObservedDeriver()

    def _on_event(event: NvrEvent) -> None:
        if event.kind != TRACKS_KIND:
            return
        if event.camera_id is None or not hub.track_watch.observes(event.camera_id):
            return
        for observed in follower.observe(event):
            hub.publish(observed)

    return hub.subscribe(_on_event)


def _text(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | str):
        return None
    text = str(value).strip()
    return text or None
