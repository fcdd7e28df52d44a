"""A read port that reads only the cameras it has names for.

The port underneath names every camera it knows (:class:`.PyOpenNvrReadPort`: the names it
was given, ``camera N`` for the rest), and a read over "any camera" (recent events, a
search) answers with events of every camera of the site. Wrapped in :class:`VisiblePort`,
a read names only the cameras the wrapper was built with: an event of another camera is
left out as if it had never happened, and an event's picture is given only for an event
this port itself returned, so a model that guesses an event id learns nothing of a camera
it was not given.

Which cameras those are is the host's decision (the person asking and what they may see);
this module only keeps to it.
"""

from __future__ import annotations

from datetime import datetime

from .ports import CameraHealth, LiveDetections, NvrReadError, NvrReadPort, StoredEvent

#: How many more events an "any camera" read asks for, since some are left out.
_WIDER = 5


class VisiblePort:
    """:class:`.NvrReadPort` over ``inner``, limited to ``inner``'s own camera names."""

    def __init__(self, inner: NvrReadPort) -> None:
        self._inner = inner
        self._names = frozenset(inner.camera_names())
        self._shown: set[int] = set()

    def camera_names(self) -> tuple[str, ...]:
        return self._inner.camera_names()

    async def snapshot(self, camera: str) -> bytes:
        return await self._inner.snapshot(self._known(camera))

    async def describe_camera(self, camera: str, question: str | None) -> str | None:
        return await self._inner.describe_camera(self._known(camera), question)

    async def live_objects(self, camera: str) -> dict[str, int]:
        return await self._inner.live_objects(self._known(camera))

    async def live_detections(self, camera: str) -> LiveDetections:
        return await self._inner.live_detections(self._known(camera))

    async def recent_events(
        self, camera: str | None, since: datetime, limit: int
    ) -> list[StoredEvent]:
        asked = limit if camera is not None else limit * _WIDER
        events = await self._inner.recent_events(
            self._known(camera) if camera else None, since, asked
        )
        return self._keep(events, limit)

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
        events = await self._inner.search(
            query=query,
            label=label,
            camera=self._known(camera) if camera else None,
            plate=plate,
            start=start,
            end=end,
            limit=limit if camera else limit * _WIDER,
        )
        return self._keep(events, limit)

    async def camera_health(self, camera: str) -> CameraHealth:
        return await self._inner.camera_health(self._known(camera))

    async def event_image(self, event_id: int) -> bytes:
        if event_id not in self._shown:
            raise NvrReadError(f"no event #{event_id} among the events shown so far")
        return await self._inner.event_image(event_id)

    def _known(self, camera: str) -> str:
        if camera not in self._names:
            raise NvrReadError(f"unknown camera {camera!r}; cameras: {sorted(self._names)}")
        return camera

    def _keep(self, events: list[StoredEvent], limit: int) -> list[StoredEvent]:
        """The events of the cameras this port names, remembered for their pictures."""
        kept = [e for e in events if e.camera in self._names][:limit]
        self._shown.update(e.id for e in kept)
        return kept
