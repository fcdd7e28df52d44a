"""An NVR read port that answers from a case's fixtures, so only the model varies.

It implements ``ai.ports.NvrReadPort`` as the pyopennvr-backed port does, so the AI step
library and its read tools run unchanged: a tool result a model reads in an eval is made by
the same code from the same kind of data as on a real site. What a case does not give is an
``NvrReadError`` naming what is missing, which the model hears as a failed tool, as it would
on a site whose NVR cannot answer.
"""

from __future__ import annotations

import io
from collections import defaultdict
from datetime import datetime

from PIL import Image

from ..ai import (
    CameraHealth,
    LiveDetections,
    NvrReadError,
    StoredEvent,
)
from .case_model import StepCase


class FixtureNvr:
    """The NVR of one case: its cameras, pictures (a camera's pictures in turn, the last
    repeated, as frames), captions, detections, stored events, search results, health and
    event pictures. ``calls`` records what the step read, for reports and tests."""

    def __init__(self, case: StepCase) -> None:
        self.case = case
        fx = case.fixtures
        names = [*fx.cameras, *case.pictures, *fx.captions, *fx.detections, *fx.health]
        if case.camera:
            names.insert(0, case.camera)
        self._cameras = tuple(dict.fromkeys(names))
        self._shown: dict[str, int] = defaultdict(int)
        self.calls: list[tuple[str, str | int | None]] = []

    def camera_names(self) -> tuple[str, ...]:
        return self._cameras

    def _known(self, camera: str) -> str:
        if camera not in self._cameras:
            raise NvrReadError(f"unknown camera {camera!r}; cameras: {list(self._cameras)}")
        return camera

    async def snapshot(self, camera: str) -> bytes:
        self.calls.append(("snapshot", camera))
        pictures = self.case.pictures.get(self._known(camera))
        if not pictures and self.case.fixtures.ping.get(camera) is False:
            raise NvrReadError(f"{camera}: no frame (the camera does not answer)")
        if not pictures:
            if self.case.fixtures.ping.get(camera):
                return _PING_FRAME
            raise NvrReadError(f"{camera}: the NVR returned no picture")
        index = min(self._shown[camera], len(pictures) - 1)
        self._shown[camera] += 1
        return pictures[index].read()

    async def describe_camera(self, camera: str, question: str | None) -> str | None:
        self.calls.append(("describe_camera", camera))
        return self.case.fixtures.captions.get(self._known(camera))

    async def live_objects(self, camera: str) -> dict[str, int]:
        return dict((await self.live_detections(camera)).objects)

    async def live_detections(self, camera: str) -> LiveDetections:
        self.calls.append(("live_detections", camera))
        found = self.case.fixtures.detections.get(self._known(camera))
        if found is None:
            raise NvrReadError(f"{camera}: the NVR has no live detection state")
        return found

    async def recent_events(
        self, camera: str | None, since: datetime, limit: int
    ) -> list[StoredEvent]:
        self.calls.append(("recent_events", camera))
        rows = [
            e
            for e in self.case.fixtures.events
            if (camera is None or e.camera == camera) and _at(e) >= since
        ]
        return sorted(rows, key=_at, reverse=True)[:limit]

    async def search(
        self,
        *,
        query: str | None = None,
        label: str | None = None,
        camera: str | None = None,
        plate: str | None = None,
        start: str | None = None,
        end: str | None = None,
        limit: int = 10,
    ) -> list[StoredEvent]:
        self.calls.append(("search", query or label or plate))
        lo = datetime.fromisoformat(start) if start else None
        hi = datetime.fromisoformat(end) if end else None
        rows = [
            e
            for e in self.case.fixtures.search
            if (camera is None or e.camera == camera)
            and (label is None or e.label == label)
            and (plate is None or (e.plate or "").replace(" ", "") == plate.replace(" ", ""))
            and (lo is None or _at(e) >= _aware(lo))
            and (hi is None or _at(e) <= _aware(hi))
        ]
        return sorted(rows, key=_at, reverse=True)[:limit]

    async def camera_health(self, camera: str) -> CameraHealth:
        self.calls.append(("camera_health", camera))
        found = self.case.fixtures.health.get(self._known(camera))
        if found is None:
            raise NvrReadError(f"{camera}: the NVR reports no health for this camera")
        return found

    async def event_image(self, event_id: int) -> bytes:
        self.calls.append(("event_image", event_id))
        picture = self.case.fixtures.event_pictures.get(event_id)
        if picture is None:
            raise NvrReadError(f"event {event_id} has no kept picture")
        return picture.read()


def _aware(at: datetime) -> datetime:
    return at if at.tzinfo is not None else at.astimezone()


def _at(event: StoredEvent) -> datetime:
    return _aware(datetime.fromisoformat(event.started_at))


def _ping_frame() -> bytes:
    """A tiny valid JPEG for a ping to a camera that answers but has no picture in the case."""
    out = io.BytesIO()
    Image.new("RGB", (16, 16), (90, 90, 90)).save(out, format="JPEG")
    return out.getvalue()


_PING_FRAME = _ping_frame()
