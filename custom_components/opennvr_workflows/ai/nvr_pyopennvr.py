"""The NVR read port over ``pyopennvr``: what the read tools and Look's inputs run on.

Workflows name cameras by role (``gate``, ``yard-east``) so they travel between sites; the
host maps each role to the site's camera id and hands the map in. Every pyopennvr error,
and every payload that is not the shape the contract promises, becomes an
:class:`NvrReadError` with the camera and the call in its text, so a tool fails cleanly and
the model (and the trace) hear why.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime
from typing import Any, TypeVar

from pyopennvr import OpenNVRClient, OpenNVRError

from .ports import CameraHealth, LiveDetections, NvrReadError, StoredEvent

T = TypeVar("T")


class PyOpenNvrReadPort:
    """:class:`~.ports.NvrReadPort` on one OpenNVR site.

    ``cameras`` maps the names a workflow uses to the site's camera ids; ``correlation_id``
    goes on every request, so OpenNVR's audit log ties the reads to the run."""

    def __init__(
        self,
        client: OpenNVRClient,
        cameras: Mapping[str, int],
        *,
        correlation_id: str | None = None,
    ) -> None:
        self._client = client
        self._cameras = dict(cameras)
        self._names = {cid: name for name, cid in self._cameras.items()}
        self._correlation_id = correlation_id

    def camera_names(self) -> tuple[str, ...]:
        return tuple(self._cameras)

    def _id(self, camera: str) -> int:
        try:
            return self._cameras[camera]
        except KeyError:
            raise NvrReadError(
                f"unknown camera {camera!r}; cameras: {list(self._cameras)}"
            ) from None

    def _name(self, camera_id: Any) -> str:
        try:
            return self._names.get(int(camera_id), f"camera {camera_id}")
        except (TypeError, ValueError):
            return str(camera_id)

    async def _call(self, what: str, call: Callable[[], Awaitable[T]]) -> T:
        try:
            return await call()
        except OpenNVRError as err:
            raise NvrReadError(f"{what}: {type(err).__name__}: {err}") from err
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            raise NvrReadError(f"{what}: unexpected answer from OpenNVR ({err!r})") from err

    async def snapshot(self, camera: str) -> bytes:
        cid = self._id(camera)
        data = await self._call(f"snapshot of {camera}", lambda: self._client.get_snapshot(cid))
        if not isinstance(data, bytes) or not data:
            raise NvrReadError(f"snapshot of {camera}: no picture")
        return data

    async def describe_camera(self, camera: str, question: str | None) -> str | None:
        cid = self._id(camera)
        data = await self._call(
            f"describe {camera}",
            lambda: self._client.describe_camera(
                cid, question, correlation_id=self._correlation_id
            ),
        )
        if not isinstance(data, dict) or not data.get("available") or not data.get("text"):
            return None
        return str(data["text"])

    async def live_objects(self, camera: str) -> dict[str, int]:
        row = await self._live_row(camera)
        return _counts(row.get("objects")) if row else {}

    async def live_detections(self, camera: str) -> LiveDetections:
        row = await self._live_row(camera)
        if row is None:
            raise NvrReadError(f"live state of {camera}: OpenNVR reports no state for it")
        return LiveDetections(
            camera=camera,
            objects=_counts(row.get("objects")),
            frame_at=_str(row.get("last_frame_at")),
            stale=_bool(row.get("stale")),
            online=_bool(row.get("online")),
            motion=_bool(row.get("motion")),
        )

    async def _live_row(self, camera: str) -> dict[str, Any] | None:
        """The camera's row of OpenNVR's live state (``GET /live-state``), if any."""
        cid = self._id(camera)
        data = await self._call(f"live state of {camera}", lambda: self._client.get_live_state(cid))
        return _camera_row(data, cid)

    async def recent_events(
        self, camera: str | None, since: datetime, limit: int
    ) -> list[StoredEvent]:
        cid = self._id(camera) if camera is not None else None
        data = await self._call(
            "recent events",
            lambda: self._client.get_events(camera_id=cid, from_=since.isoformat(), limit=limit),
        )
        return self._events("recent events", data, "events", limit)

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
        cid = self._id(camera) if camera is not None else None
        data = await self._call(
            "search",
            lambda: self._client.search(
                q=query, label=label, camera_id=cid, plate=plate, from_=start, to=end, limit=limit
            ),
        )
        return self._events("search", data, "results", limit)

    async def camera_health(self, camera: str) -> CameraHealth:
        cid = self._id(camera)
        cam = await self._call(f"camera {camera}", lambda: self._client.get_camera(cid))
        live = await self._call(f"live state of {camera}", lambda: self._client.get_live_state(cid))
        row = _camera_row(live, cid) or {}
        online = row.get("online", cam.raw.get("live_online"))
        return CameraHealth(
            camera=camera,
            online=online if isinstance(online, bool) else None,
            active=cam.is_active,
            status=_str(cam.raw.get("status")),
            recording_state=cam.recording_state,
            last_frame_at=_str(row.get("last_frame_at")),
            stale=row.get("stale") if isinstance(row.get("stale"), bool) else None,
        )

    async def event_image(self, event_id: int) -> bytes:
        data = await self._call(
            f"picture of event #{event_id}",
            lambda: self._client.request(
                "GET",
                f"/events/{int(event_id)}/evidence",
                raw=True,
                correlation_id=self._correlation_id,
            ),
        )
        if not isinstance(data, bytes) or not data:
            raise NvrReadError(f"picture of event #{event_id}: none kept")
        return data

    def _events(self, what: str, data: Any, key: str, limit: int) -> list[StoredEvent]:
        rows = data.get(key, []) if isinstance(data, dict) else []
        try:
            return [self._event(r) for r in rows if isinstance(r, dict)][:limit]
        except (KeyError, TypeError, ValueError) as err:
            raise NvrReadError(f"{what}: unexpected event in OpenNVR's answer ({err!r})") from err

    def _event(self, row: Mapping[str, Any]) -> StoredEvent:
        score = row.get("score")
        return StoredEvent(
            id=int(row["id"]),
            camera=self._name(row.get("camera_id")),
            label=str(row.get("label") or row.get("event_type") or "event"),
            started_at=str(row.get("started_at") or ""),
            score=float(score) if isinstance(score, (int, float)) else None,
            plate=_str(row.get("plate_text")),
            caption=_str(row.get("caption")),
        )


def _camera_row(data: Any, camera_id: int) -> dict[str, Any] | None:
    rows = data.get("cameras") if isinstance(data, dict) else None
    for row in rows or []:
        if isinstance(row, dict) and str(row.get("camera_id")) == str(camera_id):
            return row
    return None


def _counts(objects: Any) -> dict[str, int]:
    """The live state's ``objects`` as counts by label (a count, a list, or a dict)."""
    if not isinstance(objects, dict):
        return {}
    return {str(k): _count(v) for k, v in objects.items()}


def _bool(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def _count(value: Any) -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)):
        return int(value)
    if isinstance(value, (list, tuple)):
        return len(value)
    if isinstance(value, dict):
        return _count(value.get("count", 0))
    return 0


def _str(value: Any) -> str | None:
    return None if value in (None, "") else str(value)
