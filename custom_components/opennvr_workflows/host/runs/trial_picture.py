"""What a trial's AI steps look at: the replayed event's own picture, never the camera now.

A trial (the try_workflow action) replays an event OpenNVR stored minutes or days ago. A
Look that asked the camera for a picture would judge the moment of the try, not the
event's: a 09:57 parcel tried at 10:17 would be judged on an empty porch. So in a trial
the read port answers a picture of the event's camera with OpenNVR's picture of that
event (``GET /events/{id}/evidence``), and says plainly when there is none, rather than
looking at the camera now. What only the live view knows (the detector's current
objects) is refused the same way; the site's caption of the live view is not offered, so
the step describes the event's picture with its own model instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ...ai import CameraHealth, LiveDetections, NvrReadError, NvrReadPort, StoredEvent
from ...engine import NvrEvent


class EventPicturePort:
    """A trial's read port: ``inner`` for everything stored, the event's picture for
    the camera's picture (see the module docstring)."""

    def __init__(self, inner: NvrReadPort, event: NvrEvent) -> None:
        self._inner = inner
        self._camera = event.camera_role
        self._event_id = _event_id(event.payload)
        self._kept = event.payload.get("has_evidence") is not False

    def camera_names(self) -> tuple[str, ...]:
        return self._inner.camera_names()

    async def recent_events(
        self, camera: str | None, since: datetime, limit: int
    ) -> list[StoredEvent]:
        return await self._inner.recent_events(camera, since, limit)

    async def search(self, **filters: Any) -> list[StoredEvent]:
        return await self._inner.search(**filters)

    async def camera_health(self, camera: str) -> CameraHealth:
        return await self._inner.camera_health(camera)

    async def event_image(self, event_id: int) -> bytes:
        return await self._inner.event_image(event_id)

    async def snapshot(self, camera: str) -> bytes:
        if camera != self._camera:
            raise NvrReadError(
                f"a trial looks only at the replayed event's own picture, and {camera} has "
                "no picture of that moment; it does not look at the camera now instead"
            )
        if self._event_id is None or not self._kept:
            raise NvrReadError(
                "OpenNVR kept no picture of the replayed event, so the trial cannot see "
                "that moment; it does not look at the camera now instead"
            )
        try:
            return await self._inner.event_image(self._event_id)
        except NvrReadError as err:
            raise NvrReadError(
                f"the picture of event #{self._event_id} could not be read ({err}), so the "
                "trial cannot see that moment; it does not look at the camera now instead"
            ) from err

    async def describe_camera(self, camera: str, question: str | None) -> str | None:
        """None: the site's caption is of the live view, not of the event's moment (the
        step then looks at the event's picture with its own model)."""
        return None

    async def live_objects(self, camera: str) -> dict[str, int]:
        raise NvrReadError(_LIVE)

    async def live_detections(self, camera: str) -> LiveDetections:
        raise NvrReadError(_LIVE)


_LIVE = "a trial replays a past event: the camera's live detections are not of that moment"


def event_picture_port(inner: NvrReadPort, event: NvrEvent) -> NvrReadPort:
    """``inner`` as a trial of ``event`` reads it."""
    return EventPicturePort(inner, event)


def _event_id(payload: Mapping[str, Any]) -> int | None:
    value = payload.get("event_id")
    if isinstance(value, bool):
        return None
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None
