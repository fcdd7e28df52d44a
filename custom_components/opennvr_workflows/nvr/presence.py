"""Who has been in which zone, and for how long: the person-in-zone trigger's source.

OpenNVR's detector publishes each frame's tracks with no zones (RFC, correction 1); the
zones are drawn per camera in OpenNVR and read with ``get_zones``. This tracker joins the
two: for every track of a watched label (a person) it finds the zones its box centre lies
in (the SDK's own geometry: ``bbox_center``, ``scale_vertices``, ``Zone.contains``),
measures how long it has stayed, and publishes a ``person_in_zone`` event the first time
a stay reaches each threshold a workflow asks for.

A stay is measured per track and zone, and once more for "anywhere in the camera's
zones" (a person walking from one zone into the next keeps lingering). A camera with no
zone drawn counts its whole view as one. Like the SDK's own dwell rule, a stay runs from
the first frame inside to the latest; a track unseen inside for ``absence_s`` has left,
and a later return starts a new stay. The detector does not match every object in every
frame, so a short gap is not a departure.

Memory is bounded: tracks unseen for ``absence_s`` are forgotten, at most ``max_tracks``
are kept (the least recently seen go first), and a camera going offline drops its tracks.
Plain Python with an injectable clock, no Home Assistant: :mod:`.presence_ha` hosts it.
"""

from __future__ import annotations

import logging
import math
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final

from opennvr_app_sdk.geometry import Zone as Shape
from opennvr_app_sdk.geometry import bbox_center, scale_vertices
from pyopennvr import Zone

from ..engine.events import NvrEvent, zone_key
from .normalize import TRACKS_KIND
from .tracks import frame_size

_LOGGER = logging.getLogger(__name__)

PRESENCE_KIND: Final = "person_in_zone"
#: What the trigger counts: ``detect.person_in_zone`` is about people.
DEFAULT_LABELS: Final = frozenset({"person"})
#: A track unseen (or unseen inside a zone) this long has left. Tier-0 re-matches a
#: present object every few frames, not every frame; core's overlay waits 8 s.
ABSENCE_S: Final = 10.0
MAX_TRACKS: Final = 4096
#: App overlays (a plate box, an occupancy zone) are drawings, not detections.
_OVERLAY: Final = "overlay"

_TrackKey = tuple[str, str | None, str]
_Size = tuple[int, int] | None


@dataclass(frozen=True, slots=True)
class _Area:
    """One zone as OpenNVR draws it: pixels or fractions of the frame."""

    name: str
    key: str
    vertices: tuple[tuple[float, float], ...]
    labels: frozenset[str] | None

    @property
    def normalised(self) -> bool:
        return all(0.0 <= x <= 1.0 and 0.0 <= y <= 1.0 for x, y in self.vertices)

    def counts(self, label: str) -> bool:
        return self.labels is None or label in self.labels


@dataclass(slots=True)
class _Stay:
    started: float
    last: float
    fired: set[float] = field(default_factory=set)


@dataclass(slots=True)
class _Track:
    last_seen: float
    stays: dict[str | None, _Stay] = field(default_factory=dict)


class PresenceTracker:
    """Tracks in, ``person_in_zone`` events out (:meth:`observe`)."""

    def __init__(
        self,
        *,
        labels: Iterable[str] = DEFAULT_LABELS,
        absence_s: float = ABSENCE_S,
        max_tracks: int = MAX_TRACKS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if absence_s <= 0 or max_tracks < 1:
            raise ValueError("absence_s must be positive and max_tracks at least 1")
        self._labels = frozenset(label.casefold() for label in labels)
        self._absence = absence_s
        self._max_tracks = max_tracks
        self._clock = clock
        self._thresholds: tuple[float, ...] = ()
        self._areas: dict[str, tuple[_Area, ...]] = {}
        #: Per camera, the zones as SDK shapes for the last frame size seen.
        self._shapes: dict[str, tuple[_Size, list[tuple[_Area, Shape]]]] = {}
        #: Least recently seen first.
        self._tracks: OrderedDict[_TrackKey, _Track] = OrderedDict()

    # ── what to watch ────────────────────────────────────────────────────

    @property
    def thresholds(self) -> tuple[float, ...]:
        return self._thresholds

    def set_thresholds(self, seconds: Iterable[float]) -> None:
        """The dwell times (seconds) the workflows' triggers ask for; an event is published
        when a stay first reaches each. None at all: the tracker does nothing."""
        self._thresholds = tuple(sorted({float(s) for s in seconds if math.isfinite(s) and s > 0}))

    def set_zones(self, camera_id: str, zones: Iterable[Zone]) -> None:
        """A camera's zones (``pyopennvr.Zone``); an empty list: its whole view counts.
        Until this is called for a camera, its tracks are ignored (see :meth:`knows`)."""
        areas: list[_Area] = []
        for zone in zones:
            if len(zone.polygon) < 3:
                _LOGGER.debug("Zone %r of camera %s has no area; ignored", zone.name, camera_id)
                continue
            labels = frozenset(x.casefold() for x in zone.labels) if zone.labels else None
            areas.append(_Area(zone.name, zone_key(zone.name), tuple(zone.polygon), labels))
        self._areas[camera_id] = tuple(areas)
        self._shapes.pop(camera_id, None)

    def knows(self, camera_id: str) -> bool:
        """Whether the camera's zones have been set."""
        return camera_id in self._areas

    @property
    def cameras(self) -> frozenset[str]:
        """The cameras whose zones are known."""
        return frozenset(self._areas)

    def forget_camera(self, camera_id: str) -> None:
        """Drop a camera's zones (unknown again) and its tracks."""
        self._areas.pop(camera_id, None)
        self._shapes.pop(camera_id, None)
        self._drop_tracks(camera_id)

    def __len__(self) -> int:
        """How many tracks are remembered."""
        return len(self._tracks)

    # ── events ───────────────────────────────────────────────────────────

    def observe(self, event: NvrEvent) -> list[NvrEvent]:
        """Read one hub event; returns the ``person_in_zone`` events it causes."""
        if event.kind == "camera_offline" and event.camera_id is not None:
            self._drop_tracks(event.camera_id)
            return []
        if event.kind != TRACKS_KIND or event.type == _OVERLAY or not self._thresholds:
            return []
        camera = event.camera_id
        if camera is None or camera not in self._areas:
            return []
        now = self._clock()
        self.expire(now)
        size, shapes = self._shapes_for(camera, event.payload.get("frame"))
        whole_view = not self._areas[camera]
        tracks = event.payload.get("tracks")
        if not isinstance(tracks, list):
            return []
        out: list[NvrEvent] = []
        for raw in tracks:
            if not isinstance(raw, dict):
                continue
            label = str(raw.get("label", "")).casefold()
            bbox = raw.get("bbox")
            if label not in self._labels or not isinstance(bbox, dict):
                continue
            point = bbox_center(bbox, *(size or (1, 1)))
            inside = {
                area.key: area.name
                for area, shape in shapes
                if area.counts(label) and shape.contains(point)
            }
            track_id = str(raw["id"]) if raw.get("id") not in (None, "") else None
            track = self._seen((camera, event.type, track_id or label), now)
            seen = _Seen(event, camera, track_id, label, now)
            for key, name in inside.items():
                out.extend(self._stay(track, key, name, seen))
            if inside or whole_view:
                out.extend(self._stay(track, None, next(iter(inside.values()), ""), seen))
        self._trim()
        return out

    def expire(self, now: float | None = None) -> None:
        """Forget tracks unseen for ``absence_s``."""
        cutoff = (self._clock() if now is None else now) - self._absence
        tracks = self._tracks
        while tracks:
            key, track = next(iter(tracks.items()))
            if track.last_seen >= cutoff:
                break
            del tracks[key]

    # ── internals ────────────────────────────────────────────────────────

    def _seen(self, key: _TrackKey, now: float) -> _Track:
        track = self._tracks.get(key)
        if track is None:
            track = self._tracks[key] = _Track(now)
        else:
            self._tracks.move_to_end(key)
            track.last_seen = now
            cutoff = now - self._absence
            for area in [a for a, stay in track.stays.items() if stay.last < cutoff]:
                del track.stays[area]
        return track

    def _stay(self, track: _Track, area: str | None, name: str, seen: _Seen) -> list[NvrEvent]:
        now = seen.now
        stay = track.stays.get(area)
        if stay is None or now - stay.last > self._absence:
            stay = track.stays[area] = _Stay(now, now)
        stay.last = now
        dwell = now - stay.started
        out: list[NvrEvent] = []
        for threshold in self._thresholds:
            if threshold > dwell:
                break
            if threshold not in stay.fired:
                stay.fired.add(threshold)
                out.append(seen.lingered(area, name, max(threshold, round(dwell, 1)), threshold))
        return out

    def _shapes_for(self, camera: str, frame: Any) -> tuple[_Size, list[tuple[_Area, Shape]]]:
        size = frame_size(frame)
        cached = self._shapes.get(camera)
        if cached is not None and cached[0] == size:
            return cached
        shapes: list[tuple[_Area, Shape]] = []
        for area in self._areas[camera]:
            if size is None and not area.normalised:
                # Pixel corners and no frame size: it cannot be placed over a box.
                continue
            vertices = scale_vertices(area.vertices, *(size or (1, 1)))
            shapes.append((area, Shape.from_config(area.name, vertices)))
        self._shapes[camera] = (size, shapes)
        return size, shapes

    def _drop_tracks(self, camera: str) -> None:
        for key in [k for k in self._tracks if k[0] == camera]:
            del self._tracks[key]

    def _trim(self) -> None:
        while len(self._tracks) > self._max_tracks:
            self._tracks.popitem(last=False)


@dataclass(frozen=True, slots=True)
class _Seen:
    """One track in one frame: what a ``person_in_zone`` event says about it."""

    event: NvrEvent
    camera: str
    track_id: str | None
    label: str
    now: float

    def lingered(self, area: str | None, zone: str, seconds: float, threshold: float) -> NvrEvent:
        return NvrEvent(
            kind=PRESENCE_KIND,
            source=self.event.source,
            time=self.event.time,
            type=area,
            camera_id=self.camera,
            track_id=self.track_id,
            labels=frozenset({self.label}),
            payload=MappingProxyType(
                {"zone": zone, "seconds": seconds, "threshold": threshold, "label": self.label}
            ),
        )
