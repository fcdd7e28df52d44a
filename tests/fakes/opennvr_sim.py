"""An OpenNVR simulator: the part of OpenNVR's ``/api/v1`` that ``pyopennvr`` speaks.

Shared by the tests (started on a real loopback port, so the integration talks to it over
HTTP exactly as it would to a site) and by ``scripts/develop`` (a demo NVR for a newcomer).
Response shapes follow OpenNVR's own fixtures (``shared/opennvr/fixtures``) and what
``pyopennvr.models`` parses; auth follows OpenNVR's API tokens: 401 for a missing or wrong
token, 403 naming the missing scope.

Run it alone: ``python -m tests.fakes.opennvr_sim --port 8765``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import logging
import math
import secrets
import ssl
import uuid
from collections import deque
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from aiohttp import WSMsgType, web
from PIL import Image, ImageDraw

_LOGGER = logging.getLogger(__name__)

API = "/api/v1"
DEMO_TOKEN = "onvr_demo0001_simulatorsecret"
ALL_SCOPES = (
    "cameras.view",
    "cameras.manage",
    "live.view",
    "ptz.control",
    "recordings.view",
    "recordings.pause",
    "alerts.view",
    "alerts.manage",
    "events.create",
    "apps.actions",
    "settings.view",
)
#: What the integration's default token carries (the fixture's scopes plus control ones).
DEFAULT_SCOPES = ALL_SCOPES
ALERT_KINDS = ("person", "vehicle", "parcel", "loitering", "intrusion")
SEVERITIES = ("low", "medium", "high", "critical")
SITE_MODES = ("disarmed", "armed_home", "armed_away")
#: How long the websocket replays missed frames after a reconnect.
REPLAY_WINDOW = 2000
#: The frame the simulated detector runs at (``tracks`` frames carry it).
DETECT_FRAME = (1280, 720)
#: What a scene draws into the camera's picture, in colours nothing else in a frame has, so
#: the demo model (``tests.fakes.demo_model``) can see it the way a vision model would: from
#: the pixels, not from a side channel.
PARCEL_COLOUR = (150, 100, 45)
PERSON_COLOUR = (220, 40, 40)
CAR_COLOUR = (40, 170, 210)
#: Where the doorstep parcel lies (its centre, in fractions of the frame).
DOORSTEP = (0.55, 0.82)
#: A detection's label and the scene its picture shows.
SCENE_OF_LABEL = {"package": "parcel", "parcel": "parcel", "person": "person", "car": "car"}
#: Where a car waits in a camera's picture (its centre, in fractions of the frame): at the
#: camera's "Gate" zone when it has one, else here.
CAR_SPOT = (0.45, 0.6)
#: The plate a car shows when the demo is not told one.
DEMO_PLATE = "XY98 ZYX"
#: The contracted event an ALPR app publishes for a plate it read (NATS and MQTT carry it).
PLATE_SCHEMA = "plate.recognized.v1"

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass
class SimZone:
    """A zone drawn on a camera, corners in fractions of the frame (as OpenNVR's editor
    draws them); ``labels`` None: it counts every label."""

    name: str
    polygon: tuple[tuple[float, float], ...]
    labels: tuple[str, ...] | None = None

    @property
    def centre(self) -> tuple[float, float]:
        xs, ys = zip(*self.polygon, strict=True)
        return (sum(xs) / len(xs), sum(ys) / len(ys))


def rectangle(name: str, x1: float, y1: float, x2: float, y2: float) -> SimZone:
    return SimZone(name, ((x1, y1), (x2, y1), (x2, y2), (x1, y2)))


@dataclass
class SimCamera:
    """One simulated camera; ``online`` drives snapshots, status frames and ``live_online``."""

    id: int
    name: str
    location: str = ""
    online: bool = True
    is_active: bool = True
    ptz_presets: tuple[str, ...] = ()
    zones: list[SimZone] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "location": self.location,
            "status": "online" if self.online else "offline",
            "is_active": self.is_active,
            "live_online": self.online if self.is_active else None,
            "recording_state": "recording" if self.online else "stopped",
            "detection_enabled": True,
        }


def default_cameras() -> list[SimCamera]:
    return [
        SimCamera(1, "Front Door", "porch", ptz_presets=()),
        SimCamera(
            2,
            "Driveway",
            "drive",
            ptz_presets=("home", "gate"),
            zones=[rectangle("Gate", 0.6, 0.3, 0.95, 0.9)],
        ),
        SimCamera(
            3,
            "Back Garden",
            "garden",
            zones=[
                rectangle("Fence line", 0.0, 0.0, 0.3, 1.0),
                rectangle("Patio", 0.5, 0.5, 1.0, 1.0),
            ],
        ),
    ]


@dataclass
class SimConfig:
    """What the simulated site is and what its token may do."""

    token: str = DEMO_TOKEN
    scopes: tuple[str, ...] = DEFAULT_SCOPES
    site_id: str = "0755a940-1ff5-4861-ac08-1f57bb29a180"
    name: str = "OpenNVR Demo"
    version: str = "0.1.5"
    contract_version: str = "1.1.0"
    cameras: list[SimCamera] = field(default_factory=default_cameras)
    #: Scripted alerts per second across all cameras (0: only what tests emit).
    alert_rate: float = 0.0
    alert_kinds: tuple[str, ...] = ALERT_KINDS
    heartbeat_s: float = 25.0
    #: Whether ``/streams/{id}/info`` advertises RTSPS URLs (at ``rtsps_port``). Off by
    #: default: the simulator serves no stream, and advertising one that does not exist
    #: gives a dead player; tests that want a stream start ``tests/fakes/rtsp_server.py``.
    rtsps_exposed: bool = False
    rtsps_port: int = 8322
    #: Installed apps and the actions (buttons) each declares, served by ``/entities``.
    apps: dict[str, tuple[str, ...]] = field(
        default_factory=lambda: {"gate_controller": ("open", "close")}
    )
    snapshot_size: tuple[int, int] = (640, 360)
    #: The demo site's own life (on in the command line's demo, off in tests unless
    #: asked): every ``activity_every_s`` seconds, by turns, a parcel lies at the front
    #: door for ``parcel_s`` seconds, a person lingers at the back garden's fence line
    #: for ``linger_s`` seconds, or a car (plate :data:`DEMO_PLATE`) waits at the
    #: driveway's gate for ``car_s`` seconds; each is also stored in ``/events`` with its
    #: label (and the car's plate).
    activity: bool = False
    activity_every_s: float = 40.0
    parcel_s: float = 30.0
    linger_s: float = 20.0
    car_s: float = 30.0


def _now() -> datetime:
    return datetime.now(UTC)


def _iso(ts: datetime) -> str:
    return ts.isoformat()


class OpenNVRSimulator:
    """The simulated site. ``await sim.start()`` binds 127.0.0.1; ``sim.url`` is its base URL."""

    def __init__(self, config: SimConfig | None = None) -> None:
        self.config = config or SimConfig()
        self.epoch = uuid.uuid4().hex[:12]
        self.seq = 0
        self.site_mode = {"mode": "disarmed", "changed_at": None, "changed_by": None}
        self.events: list[dict[str, Any]] = []
        self.alerts: list[dict[str, Any]] = []
        self.ptz_calls: list[tuple[int, str]] = []
        self.protected: list[int] = []
        self.requests: list[tuple[str, str]] = []
        #: (method, path, X-Correlation-Id) of every request that carried one.
        self.correlated: list[tuple[str, str, str]] = []
        #: (entity key, args, correlation id) of every app action command.
        self.commands: list[tuple[str, dict[str, Any], str | None]] = []
        #: The contracted events the site published (``plate.recognized.v1`` envelopes),
        #: oldest first: OpenNVR carries them on NATS and MQTT, not on the events websocket.
        self.domain_events: list[dict[str, Any]] = []
        #: Called with each contracted event as it is published (a test relays it to a
        #: broker).
        self.domain_listeners: list[Callable[[dict[str, Any]], Awaitable[None]]] = []
        self.tracks_seq = 0
        #: The demo's next track id (fresh per scene, as a detector's tracker numbers them).
        self.next_track_id = 9001
        self._frames: deque[dict[str, Any]] = deque(maxlen=REPLAY_WINDOW)
        #: Where each events socket asked to resume: its ``since`` and ``epoch`` (or None).
        self.ws_resumes: list[tuple[str | None, str | None]] = []
        #: Every stream token handed out, with its stream's name (a stream server checks them).
        self.stream_tokens: dict[str, str] = {}
        self._tickets: set[str] = set()
        self._media: dict[str, bytes] = {}
        self._sockets: set[web.WebSocketResponse] = set()
        self._runner: web.AppRunner | None = None
        self._tasks: list[asyncio.Task[None]] = []
        #: What each camera shows now beyond its empty scene: camera id -> "parcel",
        #: "person" or "car" (see :meth:`draw_frame`).
        self.showing: dict[int, str] = {}
        self._scene_tasks: set[asyncio.Task[Any]] = set()
        self.port = 0
        self._scheme = "http"

    # ── lifecycle ────────────────────────────────────────────────────────

    @property
    def url(self) -> str:
        return f"{self._scheme}://127.0.0.1:{self.port}"

    def camera(self, camera_id: int) -> SimCamera | None:
        return next((c for c in self.config.cameras if c.id == camera_id), None)

    def build_app(self) -> web.Application:
        app = web.Application(middlewares=[self._record])
        r = app.router
        r.add_get("/health", self._health)
        routes: list[tuple[str, str, Handler, str | None]] = [
            ("GET", "/system/info", self._system_info, None),
            ("GET", "/cameras/", self._cameras, "cameras.view"),
            ("GET", "/cameras/{id}", self._camera, "cameras.view"),
            ("GET", "/cameras/{id}/snapshot", self._snapshot, "live.view"),
            ("GET", "/cameras/{id}/zones", self._zones, "cameras.view"),
            ("POST", "/cameras/{id}/describe", self._describe, "live.view"),
            ("GET", "/cameras/{id}/ptz/presets", self._ptz_presets, "cameras.view"),
            ("POST", "/cameras/{id}/ptz/presets/{token}/goto", self._ptz_goto, "ptz.control"),
            ("GET", "/streams/{id}/info", self._stream_info, "live.view"),
            ("GET", "/live-state", self._live_state, "live.view"),
            ("GET", "/events", self._events, "recordings.view"),
            ("POST", "/events", self._create_event, "events.create"),
            ("GET", "/events/{id}/evidence", self._evidence, "recordings.view"),
            ("POST", "/events/{id}/protect", self._protect, "events.create"),
            ("GET", "/alerts-inbox", self._alerts, "alerts.view"),
            ("POST", "/alerts-inbox/ack", self._ack, "alerts.manage"),
            ("GET", "/site-mode", self._get_site_mode, "settings.view"),
            ("PUT", "/site-mode", self._put_site_mode, "alerts.manage"),
            ("GET", "/search", self._search, "recordings.view"),
            ("POST", "/media/sign", self._sign, "recordings.view"),
            ("POST", "/events/ws-ticket", self._ws_ticket, None),
            ("GET", "/entities", self._entities, "cameras.view"),
            ("POST", "/entities/{key}/command", self._command, "apps.actions"),
        ]
        for method, path, handler, scope in routes:
            r.add_route(method, API + path, self._guard(handler, scope))
        # Neither takes the API token: the ticket and the signature are the credential.
        r.add_get(API + "/events/ws", self._ws)
        r.add_get(API + "/media/s/{token}", self._signed_media)
        # The demo's own control, outside OpenNVR's API: make a scene happen now.
        r.add_post("/demo/scene", self._demo_scene)
        r.add_get("/demo/commands", self._demo_commands)
        return app

    async def _demo_scene(self, request: web.Request) -> web.Response:
        """``POST /demo/scene`` ``{"scene": "parcel" | "person" | "car", "seconds": 30}``:
        the scene now, as the demo's own timer plays it (a guided tour, a browser test). A
        car also takes ``"plate"`` (default :data:`DEMO_PLATE`) and ``"camera"`` (an id or
        a name; default the Driveway)."""
        body = await _json_body(request)
        scene = str(body.get("scene"))
        seconds = float(body.get("seconds") or self.config.parcel_s)
        scenes = ("car", "parcel", "person")
        if scene not in scenes:
            return web.json_response({"detail": f"scene is one of {list(scenes)}"}, status=422)
        reply: dict[str, Any] = {"scene": scene, "seconds": seconds}
        play: Awaitable[Any]
        if scene == "car":
            cam = self._camera_named(body.get("camera"))
            if cam is None:
                names = [c.name for c in self.config.cameras]
                return web.json_response(
                    {"detail": f"camera is an id or one of {names}"}, status=422
                )
            plate = str(body.get("plate") or DEMO_PLATE).strip() or DEMO_PLATE
            play = self.car_at_camera(seconds, plate=plate, camera_id=cam.id)
            reply |= {"camera_id": cam.id, "camera": cam.name, "plate": plate}
        elif scene == "parcel":
            play = self.parcel_at_door(seconds)
        else:
            play = self.person_at_fence(seconds)
        task = asyncio.ensure_future(play)
        self._scene_tasks.add(task)
        task.add_done_callback(self._scene_tasks.discard)
        await asyncio.sleep(0)
        return web.json_response(reply)

    async def _demo_commands(self, request: web.Request) -> web.Response:
        """``GET /demo/commands``: the app actions the site was told to do (the gate
        opening), oldest first."""
        return web.json_response(
            {
                "commands": [
                    {"key": key, "args": args, "correlation_id": cid}
                    for key, args, cid in self.commands
                ]
            }
        )

    def _camera_named(self, value: Any) -> SimCamera | None:
        """A camera by id or name (any case); the Driveway (else the first active camera)
        when ``value`` is empty."""
        cams = [c for c in self.config.cameras if c.is_active]
        if value is None or str(value).strip() == "":
            return next((c for c in cams if c.name == "Driveway"), cams[0] if cams else None)
        text = str(value).strip()
        if text.isdigit():
            return self.camera(int(text))
        return next((c for c in cams if c.name.casefold() == text.casefold()), None)

    async def start(
        self, port: int = 0, host: str = "127.0.0.1", ssl_context: ssl.SSLContext | None = None
    ) -> None:
        """Serve on ``host:port`` (0: any free port), over TLS when given a context."""
        self._scheme = "https" if ssl_context else "http"
        # A short shutdown: a test that stops the "NVR" must not wait for open handlers.
        self._runner = web.AppRunner(self.build_app(), access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port, ssl_context=ssl_context)
        await site.start()
        server = site._server
        assert server is not None
        self.port = server.sockets[0].getsockname()[1]
        if self.config.alert_rate > 0:
            self._tasks.append(asyncio.create_task(self._scripted_alerts()))
        if self.config.activity:
            self._tasks.append(asyncio.create_task(self._scripted_activity()))
        self._tasks.append(asyncio.create_task(self._heartbeats()))

    async def stop(self) -> None:
        self._tasks.extend(self._scene_tasks)
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks.clear()
        for ws in list(self._sockets):
            await ws.close()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    def forget_replay(self) -> None:
        """Let the replay window pass: frames sent so far can no longer be replayed."""
        self._frames.clear()

    async def drop_websockets(self) -> None:
        """Close every events socket, as a server restart or a network cut would."""
        for ws in list(self._sockets):
            await ws.close(code=1012)

    # ── auth ─────────────────────────────────────────────────────────────

    @web.middleware
    async def _record(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        self.requests.append((request.method, request.path))
        if cid := request.headers.get("X-Correlation-Id"):
            self.correlated.append((request.method, request.path, cid))
        return await handler(request)

    def _guard(self, handler: Handler, scope: str | None) -> Handler:
        async def guarded(request: web.Request) -> web.StreamResponse:
            auth = request.headers.get("Authorization", "")
            if auth != f"Bearer {self.config.token}":
                return web.json_response({"detail": "Invalid or revoked API token"}, status=401)
            if scope is not None and scope not in self.config.scopes:
                return web.json_response(
                    {"detail": f"API token lacks the scope {scope}"},
                    status=403,
                    headers={"X-OpenNVR-Error": "missing_scope"},
                )
            return await handler(request)

        return guarded

    # ── site ─────────────────────────────────────────────────────────────

    def _app_entities(self) -> list[dict[str, Any]]:
        return [
            {
                "key": f"{app}.{action}",
                "platform": "button",
                "name": action,
                "device": {"name": app},
                "required_scope": "apps.actions",
                "origin": f"app:{app}",
                "enabled_default": True,
                "command": {"kind": "press"},
            }
            for app, actions in self.config.apps.items()
            for action in actions
        ]

    async def _entities(self, request: web.Request) -> web.Response:
        return web.json_response({"etag": "sim-1", "entities": self._app_entities()})

    async def _command(self, request: web.Request) -> web.Response:
        key = request.match_info["key"]
        if key not in {e["key"] for e in self._app_entities()}:
            return web.json_response({"detail": f"no entity {key}"}, status=404)
        body = await request.json()
        self.commands.append(
            (key, dict(body.get("args") or {}), request.headers.get("X-Correlation-Id"))
        )
        return web.json_response({"ok": True, "key": key})

    async def _health(self, request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    async def _system_info(self, request: web.Request) -> web.Response:
        c = self.config
        return web.json_response(
            {
                "site_id": c.site_id,
                "name": c.name,
                "version": c.version,
                "contract_version": c.contract_version,
                "features": [
                    "correlation_id",
                    "api_tokens",
                    "ws_v2",
                    "site_mode",
                    "caller_info",
                    "network_info",
                    "search_summary",
                    "camera_describe",
                ],
                "recording_pause_enabled": False,
                "uptime_s": 3600,
                "latest_version": None,
                "caller": {
                    "kind": "token",
                    "name": "home-assistant",
                    "scopes": list(c.scopes),
                    "camera_ids": None,
                    "expires_at": None,
                },
                "server_time": _iso(_now()),
                "network": {"webrtc_ice_hosts": True, "rtsps_exposed": c.rtsps_exposed},
                "passthrough_allowlist": [API + "/cameras/", API + "/events", API + "/site-mode"],
                "mqtt_discovery": False,
            }
        )

    async def _get_site_mode(self, request: web.Request) -> web.Response:
        return web.json_response({**self.site_mode, "modes": list(SITE_MODES)})

    async def _put_site_mode(self, request: web.Request) -> web.Response:
        body = await _json_body(request)
        mode = body.get("mode")
        if mode not in SITE_MODES:
            return web.json_response({"detail": f"unknown mode {mode!r}"}, status=422)
        await self.set_site_mode(mode, by="token:home-assistant")
        return web.json_response({**self.site_mode, "modes": list(SITE_MODES)})

    async def set_site_mode(self, mode: str, *, by: str = "user:admin") -> None:
        """Change the mode (as OpenNVR's UI would) and push a ``site_mode`` frame."""
        self.site_mode = {"mode": mode, "changed_at": _iso(_now()), "changed_by": by}
        await self._broadcast({"event_type": "site_mode", **self.site_mode})

    # ── cameras ──────────────────────────────────────────────────────────

    def _camera_or_404(self, request: web.Request) -> SimCamera | web.Response:
        try:
            cam = self.camera(int(request.match_info["id"]))
        except ValueError:
            cam = None
        if cam is None:
            return web.json_response({"detail": "Camera not found"}, status=404)
        return cam

    async def _cameras(self, request: web.Request) -> web.Response:
        active_only = request.query.get("active_only", "true") == "true"
        skip = int(request.query.get("skip", 0))
        limit = int(request.query.get("limit", 100))
        cams = [c for c in self.config.cameras if c.is_active or not active_only]
        page = cams[skip : skip + limit]
        return web.json_response({"cameras": [c.as_json() for c in page], "total": len(cams)})

    async def _camera(self, request: web.Request) -> web.Response:
        cam = self._camera_or_404(request)
        return cam if isinstance(cam, web.Response) else web.json_response(cam.as_json())

    async def _snapshot(self, request: web.Request) -> web.Response:
        cam = self._camera_or_404(request)
        if isinstance(cam, web.Response):
            return cam
        if not cam.online:
            return web.json_response({"detail": "No frame available"}, status=503)
        return web.Response(body=self.draw_frame(cam), content_type="image/jpeg")

    def draw_frame(
        self, cam: SimCamera, at: datetime | None = None, scene: str | None = None
    ) -> bytes:
        """A JPEG with the camera's name, the time, a shape that moves each second and what
        the camera shows (``scene``; by default what it shows now, :attr:`showing`): a
        parcel on the doorstep, a person at the fence line (or the middle of the frame on
        a camera without zones), a car at the gate (:func:`car_spot`)."""
        at = at or _now()
        scene = scene if scene is not None else self.showing.get(cam.id)
        w, h = self.config.snapshot_size
        img = Image.new("RGB", (w, h), (30 + 40 * (cam.id % 4), 60, 90))
        draw = ImageDraw.Draw(img)
        t = at.timestamp()
        x = int((w - 80) * (0.5 + 0.5 * math.sin(t / 3)))
        y = int((h - 80) * (0.5 + 0.5 * math.cos(t / 5)))
        draw.ellipse((x, y, x + 80, y + 80), fill=(230, 200, 40))
        if scene == "parcel":
            cx, cy = DOORSTEP
            draw.rectangle(
                (
                    int((cx - 0.07) * w),
                    int((cy - 0.08) * h),
                    int((cx + 0.07) * w),
                    int((cy + 0.08) * h),
                ),
                fill=PARCEL_COLOUR,
            )
        elif scene == "person":
            zone = next((z for z in cam.zones if z.name == "Fence line"), None)
            cx, cy = zone.centre if zone is not None else (0.5, 0.5)
            draw.ellipse(
                (
                    int((cx - 0.025) * w),
                    int((cy - 0.3) * h),
                    int((cx + 0.025) * w),
                    int((cy - 0.2) * h),
                ),
                fill=PERSON_COLOUR,
            )
            draw.rectangle(
                (
                    int((cx - 0.04) * w),
                    int((cy - 0.2) * h),
                    int((cx + 0.04) * w),
                    int((cy + 0.25) * h),
                ),
                fill=PERSON_COLOUR,
            )
        elif scene == "car":
            cx, cy = car_spot(cam)
            # A car seen from the side: its body, its cabin, two dark wheels.
            draw.rectangle(
                (
                    int((cx - 0.14) * w),
                    int((cy - 0.06) * h),
                    int((cx + 0.14) * w),
                    int((cy + 0.08) * h),
                ),
                fill=CAR_COLOUR,
            )
            draw.rectangle(
                (
                    int((cx - 0.08) * w),
                    int((cy - 0.14) * h),
                    int((cx + 0.06) * w),
                    int((cy - 0.06) * h),
                ),
                fill=CAR_COLOUR,
            )
            for wx in (cx - 0.09, cx + 0.09):
                draw.ellipse(
                    (
                        int((wx - 0.03) * w),
                        int((cy + 0.05) * h),
                        int((wx + 0.03) * w),
                        int((cy + 0.13) * h),
                    ),
                    fill=(20, 20, 20),
                )
        draw.text(
            (10, 10), f"{cam.name}  {at.strftime('%Y-%m-%d %H:%M:%S')}Z", fill=(255, 255, 255)
        )
        out = io.BytesIO()
        img.save(out, format="JPEG", quality=80)
        return out.getvalue()

    async def _zones(self, request: web.Request) -> web.Response:
        cam = self._camera_or_404(request)
        if isinstance(cam, web.Response):
            return cam
        zones = [
            {
                "id": cam.id * 100 + i,
                "camera_id": cam.id,
                "name": zone.name,
                "polygon": [list(corner) for corner in zone.polygon],
                "labels": list(zone.labels) if zone.labels else None,
            }
            for i, zone in enumerate(cam.zones, start=1)
        ]
        return web.json_response({"zones": zones})

    def set_zones(self, camera_id: int, zones: Sequence[SimZone]) -> None:
        """Redraw a camera's zones (as an operator would in OpenNVR)."""
        cam = self.camera(camera_id)
        if cam is None:
            raise KeyError(camera_id)
        cam.zones = list(zones)

    async def _describe(self, request: web.Request) -> web.Response:
        cam = self._camera_or_404(request)
        if isinstance(cam, web.Response):
            return cam
        body = await _json_body(request)
        return web.json_response(
            {
                "camera_id": cam.id,
                "available": cam.online,
                "question": body.get("question"),
                "text": f"A quiet view of the {cam.location or cam.name}." if cam.online else None,
            }
        )

    async def _stream_info(self, request: web.Request) -> web.Response:
        cam = self._camera_or_404(request)
        if isinstance(cam, web.Response):
            return cam
        name = f"cam{cam.id}"
        token = secrets.token_urlsafe(12)
        self.stream_tokens[token] = name
        host = request.url.host
        urls = {
            "webrtc": f"https://localhost/webrtc/{name}/whep?token={token}",
            "hls": f"https://{host}/hls/{name}/index.m3u8?token={token}",
            "rtsps": f"rtsps://{host}:{self.config.rtsps_port}/{name}?token={token}"
            if self.config.rtsps_exposed
            else None,
            "rtsp": None,
        }
        return web.json_response(
            {
                "camera_id": cam.id,
                "stream_name": name,
                "token": token,
                "expires_in": 3600,
                "urls": urls,
            }
        )

    async def _live_state(self, request: web.Request) -> web.Response:
        return web.json_response({"cameras": self._camera_states()})

    def _camera_states(self) -> list[dict[str, Any]]:
        return [
            {
                "camera_id": c.id,
                "stale": not c.online,
                "last_frame_at": None,
                "motion": False,
                "objects": {},
                "zones": [],
                "online": c.online,
            }
            for c in self.config.cameras
        ]

    async def _ptz_presets(self, request: web.Request) -> web.Response:
        cam = self._camera_or_404(request)
        if isinstance(cam, web.Response):
            return cam
        return web.json_response(
            {"presets": [{"token": p, "name": p.title()} for p in cam.ptz_presets]}
        )

    async def _ptz_goto(self, request: web.Request) -> web.Response:
        cam = self._camera_or_404(request)
        if isinstance(cam, web.Response):
            return cam
        token = request.match_info["token"]
        if token not in cam.ptz_presets:
            return web.json_response({"detail": "Preset not found"}, status=404)
        self.ptz_calls.append((cam.id, token))
        return web.json_response({"ok": True, "camera_id": cam.id, "preset": token})

    # ── events, alerts, media, search ───────────────────────────────────

    def add_event(
        self,
        camera_id: int,
        label: str,
        *,
        plate: str | None = None,
        score: float = 0.9,
        track_id: int | None = None,
    ) -> dict[str, Any]:
        event_id = len(self.events) + 1
        at = _now()
        event = {
            "id": event_id,
            "camera_id": camera_id,
            "source": "tier0",
            "event_type": "track",
            "label": label,
            "score": score,
            "track_id": track_id if track_id is not None else 8800 + event_id,
            "started_at": _iso(at),
            "ended_at": _iso(at + timedelta(seconds=6)),
            "plate_text": plate,
            "has_evidence": True,
            "evidence_url": f"{API}/events/{event_id}/evidence",
            "payload": {},
        }
        self.events.append(event)
        return event

    async def _events(self, request: web.Request) -> web.Response:
        q = request.query
        rows = list(reversed(self.events))
        if "camera_id" in q:
            rows = [e for e in rows if str(e["camera_id"]) == q["camera_id"]]
        if "label" in q:
            rows = [e for e in rows if e["label"] == q["label"]]
        if "plate" in q:
            rows = [e for e in rows if e["plate_text"] == q["plate"]]
        skip, limit = int(q.get("skip", 0)), int(q.get("limit", 50))
        page = rows[skip : skip + limit]
        return web.json_response({"events": page, "count": len(page), "total": len(rows)})

    async def _create_event(self, request: web.Request) -> web.Response:
        body = await _json_body(request)
        if "camera_id" not in body:
            return web.json_response({"detail": "camera_id is required"}, status=422)
        return web.json_response(
            self.add_event(int(body["camera_id"]), str(body.get("label", "manual"))), status=201
        )

    def _event_or_404(self, request: web.Request) -> dict[str, Any] | web.Response:
        try:
            idx = int(request.match_info["id"])
        except ValueError:
            idx = 0
        if not 1 <= idx <= len(self.events):
            return web.json_response({"detail": "Event not found"}, status=404)
        return self.events[idx - 1]

    async def _evidence(self, request: web.Request) -> web.Response:
        event = self._event_or_404(request)
        if isinstance(event, web.Response):
            return event
        # The picture of the event's moment: its time, and what its detection saw.
        cam = self.camera(int(event["camera_id"])) or SimCamera(0, "Unknown")
        at = datetime.fromisoformat(str(event["started_at"]))
        scene = SCENE_OF_LABEL.get(str(event["label"]), "")
        return web.Response(body=self.draw_frame(cam, at, scene), content_type="image/jpeg")

    async def _protect(self, request: web.Request) -> web.Response:
        event = self._event_or_404(request)
        if isinstance(event, web.Response):
            return event
        body = await _json_body(request)
        self.protected.append(int(event["id"]))
        return web.json_response(
            {
                "id": event["id"],
                "protected": True,
                "pre_s": body.get("pre_s", 10),
                "post_s": body.get("post_s", 10),
            }
        )

    async def _alerts(self, request: web.Request) -> web.Response:
        q = request.query
        rows = list(reversed(self.alerts))
        if q.get("unacked") == "true":
            rows = [a for a in rows if a["acknowledged_at"] is None]
        if "severity" in q:
            rows = [a for a in rows if a["severity"] == q["severity"]]
        if "camera_id" in q:
            rows = [a for a in rows if a["camera_id"] == q["camera_id"]]
        skip, limit = int(q.get("skip", 0)), int(q.get("limit", 50))
        unacked = sum(1 for a in self.alerts if a["acknowledged_at"] is None)
        return web.json_response(
            {"alerts": rows[skip : skip + limit], "unacked_count": unacked, "total": len(rows)}
        )

    async def _ack(self, request: web.Request) -> web.Response:
        body = await _json_body(request)
        ids = body.get("ids")
        acked = 0
        for alert in self.alerts:
            if alert["acknowledged_at"] is None and (ids is None or alert["id"] in ids):
                alert["acknowledged_at"] = _iso(_now())
                acked += 1
        return web.json_response({"acknowledged": acked})

    async def _search(self, request: web.Request) -> web.Response:
        q = request.query
        rows = list(reversed(self.events))
        if "label" in q:
            rows = [e for e in rows if e["label"] == q["label"]]
        if "plate" in q:
            rows = [e for e in rows if e["plate_text"] == q["plate"]]
        limit = int(q.get("limit", 20))
        results = []
        for e in rows[:limit]:
            cam = self.camera(int(e["camera_id"]))
            results.append(
                {
                    "id": e["id"],
                    "camera_id": e["camera_id"],
                    "camera_name": cam.name if cam else None,
                    "label": e["label"],
                    "score": e["score"],
                    "started_at": e["started_at"],
                    "ended_at": e["ended_at"],
                    "plate_text": e["plate_text"],
                    "caption": f"a {e['label']} at the {cam.name if cam else 'camera'}",
                    "attributes": None,
                    "claims": [],
                    "source": "tier0",
                    "event_type": e["event_type"],
                    "evidence_url": e["evidence_url"],
                    "anchor": {"camera_id": e["camera_id"], "at": e["started_at"]},
                }
            )
        return web.json_response(
            {
                "query": q.get("q", ""),
                "interpretation": {
                    "source": "parsed",
                    "labels": [q["label"]] if "label" in q else [],
                    "camera_ids": [],
                    "text": "",
                    "plate": q.get("plate", ""),
                    "attrs": [],
                    "zone_id": None,
                    "from": q.get("from"),
                    "to": q.get("to"),
                    "overridden": [],
                },
                "results": results,
                "count": len(results),
                "total": len(rows),
            }
        )

    async def _sign(self, request: web.Request) -> web.Response:
        body = await _json_body(request)
        kind = body.get("kind")
        if kind not in ("event", "alert_image", "clip"):
            return web.json_response({"detail": f"unknown kind {kind!r}"}, status=422)
        token = f"m1.{secrets.token_urlsafe(16)}"
        cam = self.camera(int(body.get("camera_id") or 1)) or SimCamera(0, "Unknown")
        self._media[token] = self.draw_frame(cam)
        expires = _now() + timedelta(seconds=int(body.get("ttl_s") or 600))
        return web.json_response(
            {"url": f"{API}/media/s/{token}", "token": token, "expires_at": _iso(expires)}
        )

    async def _signed_media(self, request: web.Request) -> web.Response:
        data = self._media.get(request.match_info["token"])
        if data is None:
            return web.json_response({"detail": "Link expired or invalid"}, status=404)
        return web.Response(body=data, content_type="image/jpeg")

    # ── events websocket v2 ──────────────────────────────────────────────

    async def _ws_ticket(self, request: web.Request) -> web.Response:
        ticket = secrets.token_urlsafe(16)
        self._tickets.add(ticket)
        return web.json_response({"ticket": ticket, "expires_in": 30})

    async def _ws(self, request: web.Request) -> web.StreamResponse:
        ticket = request.query.get("ticket", "")
        if ticket not in self._tickets:
            return web.json_response({"detail": "Invalid or used ticket"}, status=401)
        self._tickets.discard(ticket)
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        self._sockets.add(ws)  # before anything is sent, so stop() always finds it
        await ws.send_json(
            {"v": 2, "event_type": "subscribed", "epoch": self.epoch, "seq": self.seq}
        )
        since, epoch = request.query.get("since"), request.query.get("epoch")
        self.ws_resumes.append((since, epoch))
        replay = [f for f in self._frames if since is not None and f["seq"] > int(since)]
        if (
            epoch == self.epoch
            and since is not None
            # Everything after ``since`` is still held (or nothing came after it).
            and (
                int(since) >= self.seq
                or (bool(self._frames) and self._frames[0]["seq"] <= int(since) + 1)
            )
        ):
            for frame in replay:
                await ws.send_json(frame)
        else:
            await ws.send_json(self._snapshot_frame(resync=since is not None))
        try:
            async for msg in ws:
                if msg.type == WSMsgType.ERROR:
                    break
        finally:
            self._sockets.discard(ws)
        return ws

    def _snapshot_frame(self, *, resync: bool) -> dict[str, Any]:
        return {
            "v": 2,
            "event_type": "state_snapshot",
            "seq": self.seq,
            "resync": resync,
            "cameras": self._camera_states(),
            "site_mode": dict(self.site_mode),
            "entity_states": {},
        }

    async def _broadcast(self, frame: dict[str, Any], *, replayable: bool = True) -> dict[str, Any]:
        """Number the frame, keep it for replay, and send it to every open socket."""
        if replayable:
            self.seq += 1
        frame = {"v": 2, "seq": self.seq, "ts": _iso(_now()), **frame}
        if replayable:
            self._frames.append(frame)
        await asyncio.gather(*(_send(ws, frame) for ws in list(self._sockets) if not ws.closed))
        return frame

    async def emit_alert(
        self,
        camera_id: int,
        kind: str = "person",
        *,
        severity: str = "medium",
        title: str | None = None,
        alert_id: str | None = None,
        source: tuple[str, str] = ("app", "intrusion"),
    ) -> dict[str, Any]:
        """Raise an app alert: stored in the inbox and pushed as an ``app_alert`` frame."""
        alert_id = alert_id or f"alrt_{secrets.token_hex(6)}"
        correlation_id = uuid.uuid4().hex
        cam = self.camera(camera_id)
        title = title or f"{kind.title()} on {cam.name if cam else camera_id}"
        row = {
            "id": len(self.alerts) + 1,
            "alert_id": alert_id,
            "fired_at": _iso(_now()),
            "severity": severity,
            "title": title,
            "description": "",
            "source_kind": source[0],
            "source_name": source[1],
            "camera_id": f"cam{camera_id}",
            "correlation_id": correlation_id,
            "evidence": {},
            "tags": [kind],
            "acknowledged_at": None,
        }
        self.alerts.append(row)
        await self._broadcast(
            {
                "event_type": "app_alert",
                "camera_id": camera_id,
                "task": source[1],
                "payload": {
                    "severity": severity,
                    "alert_type": kind,
                    "title": title,
                    "alert_id": alert_id,
                    "source": {"kind": source[0], "name": source[1]},
                    "correlation_id": correlation_id,
                    "images": [],
                },
            }
        )
        return row

    async def set_camera_online(self, camera_id: int, online: bool) -> None:
        cam = self.camera(camera_id)
        if cam is None:
            raise KeyError(camera_id)
        cam.online = online
        await self._broadcast(
            {
                "event_type": "camera_status",
                "camera_id": camera_id,
                "online": online,
                "status": "online" if online else "offline",
            }
        )

    async def emit_tracks(
        self, camera_id: int, tracks: Sequence[dict[str, Any]], *, task: str = "tier0"
    ) -> dict[str, Any]:
        """Push one frame of detector tracks as core's overlay bridge does: a ``tracks``
        frame, boxes ``[x, y, w, h]`` in 0..1, not kept for replay (as in core), and only
        to a token with ``live.view`` (core's ``TOKEN_EVENT_SCOPES``)."""
        self.tracks_seq += 1
        w, h = DETECT_FRAME
        payload = {
            "schema": "opennvr.overlay.tracks.v1",
            "seq": self.tracks_seq,
            "wall_ts": _now().timestamp(),
            "calibrating": False,
            "frame": {"w": w, "h": h},
            "tracks": list(tracks),
        }
        frame = {"event_type": "tracks", "camera_id": camera_id, "task": task, "payload": payload}
        if "live.view" not in self.config.scopes:
            return frame
        return await self._broadcast(frame, replayable=False)

    async def linger(
        self,
        camera_id: int,
        zone: str,
        seconds: float,
        track_id: int | str = 8812,
        *,
        label: str = "person",
        fps: float = 4.0,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> int:
        """A ``label`` standing in ``zone`` of a camera for ``seconds``: ``tracks`` frames
        at ``fps`` from the first sight to ``seconds`` later. ``sleep`` paces them (a test
        with its own clock passes one that moves it). Returns how many frames were sent."""
        cam = self.camera(camera_id)
        if cam is None:
            raise KeyError(camera_id)
        found = next((z for z in cam.zones if z.name.casefold() == zone.casefold()), None)
        if found is None:
            raise KeyError(f"camera {camera_id} has no zone {zone!r}")
        track = person_track(track_id, found.centre, label=label)
        return await self.hold(camera_id, track, seconds, fps=fps, sleep=sleep)

    async def hold(
        self,
        camera_id: int,
        track: dict[str, Any],
        seconds: float,
        *,
        fps: float = 4.0,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> int:
        """One track in view of a camera for ``seconds``: ``tracks`` frames at ``fps`` from
        the first sight to ``seconds`` later. Returns how many frames were sent."""
        frames = max(1, math.ceil(seconds * fps))
        await self.emit_tracks(camera_id, [track])
        for _ in range(frames):
            await sleep(seconds / frames)
            await self.emit_tracks(camera_id, [track])
        return frames + 1

    def _new_track_id(self) -> int:
        track_id = self.next_track_id
        self.next_track_id += 1
        return track_id

    async def parcel_at_door(self, seconds: float, *, fps: float = 2.0) -> dict[str, Any] | None:
        """A parcel left on the Front Door camera's doorstep (the first camera when none is
        called so) for ``seconds``, stored as a ``package`` event. Returns the event."""
        cams = [c for c in self.config.cameras if c.is_active]
        cam = next((c for c in cams if c.name == "Front Door"), cams[0] if cams else None)
        if cam is None:
            return None
        track_id = self._new_track_id()
        event = self.add_event(cam.id, "package", score=0.81, track_id=track_id)
        _LOGGER.info("A parcel at camera %s (%s) for %g s", cam.id, cam.name, seconds)
        with self._showing(cam.id, "parcel"):
            await self.hold(cam.id, parcel_track(track_id, DOORSTEP), seconds, fps=fps)
        return event

    @contextlib.contextmanager
    def _showing(self, camera_id: int, scene: str) -> Iterator[None]:
        """The camera's picture shows ``scene`` while the detector sees it."""
        self.showing[camera_id] = scene
        try:
            yield
        finally:
            if self.showing.get(camera_id) == scene:
                del self.showing[camera_id]

    async def person_at_fence(self, seconds: float, *, fps: float = 2.0) -> dict[str, Any] | None:
        """A person lingering in the Back Garden's "Fence line" zone (the first zone of any
        camera when no camera has one) for ``seconds``, stored as a ``person`` event."""
        cams = [c for c in self.config.cameras if c.is_active and c.zones]
        place = next(
            ((c, z) for c in cams for z in c.zones if z.name == "Fence line"),
            (cams[0], cams[0].zones[0]) if cams else None,
        )
        if place is None:
            return None
        cam, zone = place
        track_id = self._new_track_id()
        event = self.add_event(cam.id, "person", score=0.88, track_id=track_id)
        _LOGGER.info("A person in %r of camera %s for %g s", zone.name, cam.id, seconds)
        with self._showing(cam.id, "person"):
            await self.linger(cam.id, zone.name, seconds, track_id, fps=fps)
        return event

    async def car_at_camera(
        self,
        seconds: float,
        *,
        plate: str = DEMO_PLATE,
        camera_id: int | None = None,
        fps: float = 2.0,
    ) -> dict[str, Any] | None:
        """A car with ``plate`` waiting in view of a camera (the Driveway's gate when none
        is given) for ``seconds``: stored as a ``car`` event with its ``plate_text``, its
        track in ``tracks`` frames, and the ``plate.recognized.v1`` event an ALPR app
        publishes for it (:meth:`publish_domain_event`). Returns the stored event."""
        cam = self.camera(camera_id) if camera_id is not None else self._camera_named(None)
        if cam is None:
            return None
        track_id = self._new_track_id()
        event = self.add_event(cam.id, "car", plate=plate, score=0.9, track_id=track_id)
        _LOGGER.info(
            "A car (plate %s) at camera %s (%s) for %g s", plate, cam.id, cam.name, seconds
        )
        with self._showing(cam.id, "car"):
            await self.publish_domain_event(
                cam.id,
                PLATE_SCHEMA,
                {
                    "plate_text": plate,
                    "confidence": 0.94,
                    "vehicle_label": "car",
                    "event_id": event["id"],
                },
                producer="alpr",
            )
            await self.hold(cam.id, car_track(track_id, car_spot(cam)), seconds, fps=fps)
        return event

    async def publish_domain_event(
        self, camera_id: int, schema: str, payload: dict[str, Any], *, producer: str
    ) -> dict[str, Any]:
        """A contracted event as OpenNVR publishes it on NATS
        (``opennvr.events.<schema>.<camera_id>``) and MQTT: the envelope ``{id, schema,
        correlation_id, camera_id, ts, producer, payload}``, kept in :attr:`domain_events`
        and handed to each of :attr:`domain_listeners`."""
        envelope = {
            "id": uuid.uuid4().hex,
            "schema": schema,
            "correlation_id": uuid.uuid4().hex,
            "camera_id": camera_id,
            "ts": _iso(_now()),
            "producer": producer,
            "payload": dict(payload),
        }
        self.domain_events.append(envelope)
        for listener in list(self.domain_listeners):
            try:
                await listener(envelope)
            except Exception:
                _LOGGER.exception("A listener of %s failed", schema)
        return envelope

    async def _heartbeats(self) -> None:
        while True:
            await asyncio.sleep(self.config.heartbeat_s)
            await self._broadcast({"event_type": "heartbeat"}, replayable=False)

    async def _scripted_alerts(self) -> None:
        """The scripted stream: alerts round-robin over cameras and kinds at the set rate."""
        i = 0
        cams = [c for c in self.config.cameras if c.is_active]
        while cams:
            await asyncio.sleep(1.0 / self.config.alert_rate)
            cam = cams[i % len(cams)]
            kind = self.config.alert_kinds[i % len(self.config.alert_kinds)]
            self.add_event(cam.id, kind)
            await self.emit_alert(cam.id, kind, severity=SEVERITIES[i % 3])
            i += 1

    async def _scripted_activity(self) -> None:
        """The demo's detections, by turns: a parcel at the door, a person at the fence, a
        car with a plate at the driveway's gate."""
        scenes = (
            lambda: self.parcel_at_door(self.config.parcel_s),
            lambda: self.person_at_fence(self.config.linger_s),
            lambda: self.car_at_camera(self.config.car_s),
        )
        i = 0
        while True:
            await asyncio.sleep(self.config.activity_every_s)
            await scenes[i % len(scenes)]()
            i += 1


def person_track(
    track_id: int | str, centre: tuple[float, float], *, label: str = "person"
) -> dict[str, Any]:
    """One overlay track: a standing figure's box (``[x, y, w, h]`` in 0..1) around
    ``centre``."""
    w, h = 0.06, 0.2
    x, y = centre[0] - w / 2, centre[1] - h / 2
    return {
        "id": track_id,
        "label": label,
        "score": 0.88,
        "box": [round(x, 4), round(y, 4), w, h],
        "stationary": False,
    }


def car_spot(cam: SimCamera) -> tuple[float, float]:
    """Where a car waits in a camera's picture: in its "Gate" zone, else :data:`CAR_SPOT`."""
    gate = next((z for z in cam.zones if z.name.casefold() == "gate"), None)
    return gate.centre if gate is not None else CAR_SPOT


def car_track(track_id: int | str, centre: tuple[float, float]) -> dict[str, Any]:
    """One overlay track: a car's box (``[x, y, w, h]`` in 0..1) around ``centre``, waiting
    still."""
    w, h = 0.28, 0.27
    x, y = centre[0] - w / 2, centre[1] - 0.14
    return {
        "id": track_id,
        "label": "car",
        "score": 0.9,
        "box": [round(x, 4), round(y, 4), w, h],
        "stationary": True,
    }


def parcel_track(track_id: int | str, centre: tuple[float, float]) -> dict[str, Any]:
    """One overlay track: a parcel's box (``[x, y, w, h]`` in 0..1) around ``centre``, lying
    still as parcels do."""
    w, h = 0.08, 0.07
    x, y = centre[0] - w / 2, centre[1] - h / 2
    return {
        "id": track_id,
        "label": "package",
        "score": 0.81,
        "box": [round(x, 4), round(y, 4), w, h],
        "stationary": True,
    }


async def _send(ws: web.WebSocketResponse, frame: dict[str, Any]) -> None:
    with contextlib.suppress(ConnectionError, RuntimeError):
        await ws.send_str(json.dumps(frame))


async def _json_body(request: web.Request) -> dict[str, Any]:
    if not request.can_read_body:
        return {}
    try:
        body = await request.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


async def _serve(args: argparse.Namespace) -> None:
    config = SimConfig(
        token=args.token,
        alert_rate=args.alert_rate,
        activity=args.activity_every > 0,
        activity_every_s=max(args.activity_every, 1.0),
    )
    if args.cameras:
        config.cameras = [SimCamera(i + 1, f"Camera {i + 1}") for i in range(args.cameras)]
    sim = OpenNVRSimulator(config)
    await sim.start(port=args.port, host=args.host)
    print(
        f"OpenNVR demo simulator on http://{args.host}:{sim.port}  token: {config.token}",
        flush=True,
    )
    try:
        await asyncio.Event().wait()
    finally:
        await sim.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description="Run the OpenNVR simulator.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--token", default=DEMO_TOKEN)
    parser.add_argument(
        "--cameras", type=int, default=0, help="N generic cameras (default 3 named)"
    )
    parser.add_argument(
        "--alert-rate", type=float, default=0.05, help="scripted alerts per second (0 for none)"
    )
    parser.add_argument(
        "--activity-every",
        type=float,
        default=40.0,
        help="seconds between the demo's detections, by turns a parcel at the front door, "
        "a person lingering at the back garden's fence and a car with a plate at the "
        "driveway's gate (0 for none)",
    )
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(args))


if __name__ == "__main__":
    main()
