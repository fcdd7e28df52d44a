"""An in-memory NVR read port for the AI step's tests: scriptable failures, hangs and data.

It implements ``ai.ports.NvrReadPort`` structurally, like the pyopennvr-backed port does,
so the executor and the read tools run unchanged against it.
"""

from __future__ import annotations

import asyncio
import io
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from PIL import Image

from custom_components.opennvr_workflows.ai.ports import (
    CameraHealth,
    LiveDetections,
    NvrReadError,
    StoredEvent,
)


def jpeg(
    size: tuple[int, int] = (1920, 1080),
    colour: tuple[int, int, int] = (40, 90, 160),
    fmt: str = "JPEG",
) -> bytes:
    out = io.BytesIO()
    Image.new("RGB" if fmt == "JPEG" else "RGBA", size, colour).save(out, format=fmt)
    return out.getvalue()


@dataclass
class FakeNvr:
    """``fail`` maps a method name to an error message (raises NvrReadError); ``hang``
    names methods that never return; ``delay`` maps a method name to seconds it takes;
    ``boom`` names methods that raise a plain bug."""

    cameras: tuple[str, ...] = ("gate", "yard")
    picture: bytes = field(default_factory=jpeg)
    caption: str | None = "A person in a hi-vis vest stands at the gate."
    objects: dict[str, int] = field(default_factory=lambda: {"person": 1, "car": 0})
    #: the live state's other fields, by camera: ``stale``, ``online``, ``frame_at``, ...
    live: dict[str, dict[str, Any]] = field(default_factory=dict)
    events: list[StoredEvent] = field(default_factory=list)
    fail: dict[str, str] = field(default_factory=dict)
    hang: set[str] = field(default_factory=set)
    delay: dict[str, float] = field(default_factory=dict)
    boom: set[str] = field(default_factory=set)
    calls: list[tuple[str, Any]] = field(default_factory=list)

    async def _enter(self, name: str, arg: Any = None) -> None:
        self.calls.append((name, arg))
        if name in self.hang:
            await asyncio.Event().wait()
        if name in self.delay:
            await asyncio.sleep(self.delay[name])
        if name in self.boom:
            raise RuntimeError(f"bug in {name}")
        if name in self.fail:
            raise NvrReadError(self.fail[name])

    def camera_names(self) -> tuple[str, ...]:
        return self.cameras

    async def snapshot(self, camera: str) -> bytes:
        await self._enter("snapshot", camera)
        return self.picture

    async def describe_camera(self, camera: str, question: str | None) -> str | None:
        await self._enter("describe_camera", (camera, question))
        return self.caption

    async def live_objects(self, camera: str) -> dict[str, int]:
        await self._enter("live_objects", camera)
        return dict(self.objects)

    async def live_detections(self, camera: str) -> LiveDetections:
        await self._enter("live_detections", camera)
        state: dict[str, Any] = {"stale": False, "online": True, "frame_at": "2026-11-29T02:14:00Z"}
        state.update(self.live.get(camera, {}))
        return LiveDetections(camera=camera, objects=dict(self.objects), **state)

    async def recent_events(
        self, camera: str | None, since: datetime, limit: int
    ) -> list[StoredEvent]:
        await self._enter("recent_events", (camera, since))
        return [e for e in self.events if camera in (None, e.camera)][:limit]

    async def search(self, **kwargs: Any) -> list[StoredEvent]:
        """Like OpenNVR's ``/search`` as far as a fake can be: the camera and the start
        time filter; the words are recorded, not read."""
        await self._enter("search", kwargs)
        start = kwargs.get("start")
        found = [
            e
            for e in self.events
            if kwargs.get("camera") in (None, e.camera)
            and (
                start is None
                or datetime.fromisoformat(e.started_at) >= datetime.fromisoformat(start)
            )
        ]
        return found[: int(kwargs.get("limit") or 10)]

    async def camera_health(self, camera: str) -> CameraHealth:
        await self._enter("camera_health", camera)
        return CameraHealth(
            camera=camera,
            online=False,
            active=True,
            status="offline",
            recording_state="stopped",
            last_frame_at="2026-11-29T01:58:00Z",
            stale=True,
        )

    async def event_image(self, event_id: int) -> bytes:
        await self._enter("event_image", event_id)
        return self.picture
