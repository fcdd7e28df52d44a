"""What the AI step needs from the world outside it, as small protocols.

The AI package never talks to Home Assistant and never builds its own HTTP clients for the
NVR: the host hands it an :class:`NvrReadPort` (over ``pyopennvr`` in production, an
in-memory fake in tests) and the workflow's :class:`AIBudget` (owned by the engine, which
counts AI calls per workflow and hour). Keeping both as protocols means the tests exercise
the same code paths the product runs, with nothing patched.

Cameras are named as the workflow names them (a role such as ``gate``), never by an NVR id:
the port resolves the name, so a workflow stays portable between sites.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable


class NvrReadError(Exception):
    """A read from the NVR failed; ``str(err)`` says what, for the trace and the model."""


@dataclass(frozen=True)
class StoredEvent:
    """One stored event, reduced to what a model or a person needs to read."""

    id: int
    camera: str
    label: str
    started_at: str
    score: float | None = None
    plate: str | None = None
    caption: str | None = None


@dataclass(frozen=True)
class CameraHealth:
    """What the NVR knows about a camera's state; ``None`` where it does not say."""

    camera: str
    online: bool | None
    active: bool | None
    status: str | None
    recording_state: str | None
    last_frame_at: str | None
    stale: bool | None


@dataclass(frozen=True)
class LiveDetections:
    """What the site's always-on detector reports for a camera's latest frame.

    OpenNVR runs no detection on request; its detector runs on every frame and the live
    state holds the latest result. ``objects`` counts by label; ``frame_at`` is when that
    frame was taken; ``stale`` says the frames stopped coming (the counts are old);
    ``None`` where the NVR does not say."""

    camera: str
    objects: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    frame_at: str | None = None
    stale: bool | None = None
    online: bool | None = None
    motion: bool | None = None

    @property
    def not_current(self) -> str | None:
        """Why these counts are not what the camera sees now, or None when they are."""
        if self.online is False:
            return "the camera is offline"
        if self.stale:
            return "its frames are stale" + (
                f", the last at {self.frame_at}" if self.frame_at else ""
            )
        return None


@runtime_checkable
class NvrReadPort(Protocol):
    """Read-only access to one OpenNVR site. Every method raises :class:`NvrReadError`
    (and nothing else) when the NVR cannot answer; nothing here moves anything."""

    def camera_names(self) -> tuple[str, ...]:
        """The cameras a model may name, in a stable order."""
        ...

    async def snapshot(self, camera: str) -> bytes:
        """A fresh picture from the camera (JPEG or another format Pillow reads)."""
        ...

    async def describe_camera(self, camera: str, question: str | None) -> str | None:
        """The NVR's own caption of the view, or its answer to ``question``; ``None``
        when the site has no caption model (the caller then asks the vision model)."""
        ...

    async def live_objects(self, camera: str) -> dict[str, int]:
        """Object counts from the always-on detection stream, without a new inference."""
        ...

    async def live_detections(self, camera: str) -> LiveDetections:
        """The detector's result for the camera's latest frame, with how current it is."""
        ...

    async def recent_events(
        self, camera: str | None, since: datetime, limit: int
    ) -> list[StoredEvent]:
        """Stored events since ``since``, newest first; ``camera`` None means all."""
        ...

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
        """OpenNVR's search over recorded visits (``GET /search``), newest first."""
        ...

    async def camera_health(self, camera: str) -> CameraHealth:
        """The camera's online state, last frame time and recording state."""
        ...

    async def event_image(self, event_id: int) -> bytes:
        """The kept picture of a stored event."""
        ...


@runtime_checkable
class AIBudget(Protocol):
    """The workflow's AI budget, owned by the engine. The AI step only draws from it:
    one draw per model call, before the call is made."""

    def try_draw(self, calls: int = 1) -> bool:
        """Take ``calls`` model calls from the budget; False (taking nothing) when it
        cannot afford them."""
        ...


def event_line(event: StoredEvent) -> str:
    """One event as one line of model-facing text."""
    parts = [f"[#{event.id}] {event.started_at} {event.camera}: {event.label}"]
    if event.plate:
        parts.append(f"plate {event.plate}")
    if event.score is not None:
        parts.append(f"score {event.score:.2f}")
    if event.caption:
        parts.append(f'"{event.caption}"')
    return ", ".join(parts)


def describe_any(value: Any) -> str:
    """A short, stable text for values a tool reports (None reads as 'unknown')."""
    return "unknown" if value is None else str(value)
