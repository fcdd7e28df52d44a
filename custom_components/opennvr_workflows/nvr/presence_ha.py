"""The presence tracker hosted in Home Assistant: the site's zones, the hub, the clock.

:func:`async_start_presence` feeds the hub's ``tracks`` events (and cameras going offline)
to a :class:`~.presence.PresenceTracker` and publishes the ``person_in_zone`` events it
makes back into the hub, where the engine picks them up like any other trigger.

Only the cameras a person-in-zone trigger names are looked at (the hub's
:attr:`~.hub.EventHub.track_watch`; the hub drops the tracks of cameras no workflow
watches before they get here). Zones are read with ``get_zones``, per watched camera:
for each when there is a threshold to watch for, again every few minutes (an operator may
redraw them), and at once for a camera whose tracks arrive before its zones are known (a
camera added since). A camera whose zones cannot be read is left out until a later attempt
succeeds rather than taken as having none, which would make its whole view a zone. The
thresholds are asked of the caller at most once a second, so workflows loaded or edited
meanwhile are followed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Collection, Coroutine
from datetime import datetime, timedelta
from typing import Any, Final

import aiohttp
from homeassistant.core import CALLBACK_TYPE, HomeAssistant, callback
from homeassistant.helpers.event import async_track_time_interval
from pyopennvr import OpenNVRClient, OpenNVRError, OpenNVRNotFoundError

from ..engine.events import NvrEvent
from .hub import EventHub
from .normalize import TRACKS_KIND
from .presence import PresenceTracker

_LOGGER = logging.getLogger(__name__)

#: How often every known camera's zones are read again.
ZONE_REFRESH: Final = timedelta(minutes=5)
#: After a failed read, how long before a camera's zones are asked for again.
RETRY_S: Final = 60.0
#: The thresholds are asked of the caller at most this often.
THRESHOLD_REFRESH_S: Final = 1.0

Thresholds = Callable[[], Collection[float]]
#: What a failed zone read can raise: pyopennvr's errors, the transport's, and a reply
#: pyopennvr could not read (``Zone.from_dict`` on an unexpected shape).
_READ_ERRORS: Final = (
    OpenNVRError,
    aiohttp.ClientError,
    TimeoutError,
    KeyError,
    TypeError,
    ValueError,
)


class PresenceLink:
    """The running presence tracker. Calling it (or :meth:`stop`) stops it."""

    def __init__(
        self,
        hass: HomeAssistant,
        client: OpenNVRClient,
        hub: EventHub,
        thresholds: Thresholds,
        tracker: PresenceTracker,
    ) -> None:
        self.hass = hass
        self.tracker = tracker
        self._client = client
        self._hub = hub
        self._thresholds = thresholds
        self._thresholds_at = -THRESHOLD_REFRESH_S
        self._pending: set[str] = set()
        self._retry_at: dict[str, float] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._failing = False
        self._unsubscribers: list[CALLBACK_TYPE] = []
        self._stopped = False

    def __call__(self) -> None:
        self.stop()

    @callback
    def start(self, zone_refresh: timedelta) -> None:
        self._unsubscribers = [
            self._hub.subscribe(self._on_event),
            async_track_time_interval(
                self.hass, self._on_tick, zone_refresh, name="opennvr_workflows zones"
            ),
        ]
        self.refresh_thresholds()

    @callback
    def stop(self) -> None:
        """Stop listening and cancel any zone read in flight (idempotent)."""
        self._stopped = True
        for unsubscribe in self._unsubscribers:
            unsubscribe()
        self._unsubscribers.clear()
        for task in list(self._tasks):
            task.cancel()

    @callback
    def refresh_thresholds(self) -> None:
        """Ask the caller for the thresholds now (also done by itself once a second)."""
        self._thresholds_at = self.hass.loop.time()
        had = bool(self.tracker.thresholds)
        try:
            self.tracker.set_thresholds(self._thresholds())
        except Exception:  # the caller's code: keep the last thresholds
            _LOGGER.exception("Reading the person-in-zone thresholds failed")
            return
        if self.tracker.thresholds and not had and self._unsubscribers:
            # The first zone trigger: read every camera's zones rather than lose the first
            # moments of each camera's first stay to a late read.
            self._spawn(self.async_refresh_zones(), "zones")

    async def async_refresh_zones(self) -> None:
        """Read the zones of every camera a person-in-zone trigger names now (the zones of
        a camera no trigger names are never used, so they are not asked for)."""
        try:
            cameras = await self._client.get_cameras()
        except _READ_ERRORS as err:
            self._failed("the camera list", err)
            return
        for camera in cameras:
            if self._hub.track_watch.in_zones(str(camera.id)):
                await self._read_zones(str(camera.id))

    # ── internals ────────────────────────────────────────────────────────

    @callback
    def _on_event(self, event: NvrEvent) -> None:
        if event.kind == "camera_offline":
            self.tracker.observe(event)
            return
        if event.kind != TRACKS_KIND:
            return
        if event.camera_id is None or not self._hub.track_watch.in_zones(event.camera_id):
            return  # watched for its detections only: no zone of it is read or matched
        if self.hass.loop.time() - self._thresholds_at >= THRESHOLD_REFRESH_S:
            self.refresh_thresholds()
        if not self.tracker.thresholds:
            return
        if not self.tracker.knows(event.camera_id):
            self._want(event.camera_id)
            return
        for lingered in self.tracker.observe(event):
            self._hub.publish(lingered)

    @callback
    def _on_tick(self, _: datetime) -> None:
        self.tracker.expire()
        self.refresh_thresholds()
        if self.tracker.thresholds:
            self._spawn(self.async_refresh_zones(), "zones")

    @callback
    def _want(self, camera_id: str) -> None:
        if camera_id in self._pending or self.hass.loop.time() < self._retry_at.get(camera_id, 0):
            return
        self._spawn(self._read_zones(camera_id), f"zones of camera {camera_id}")

    async def _read_zones(self, camera_id: str) -> None:
        if camera_id in self._pending:
            return
        if not camera_id.isdigit():
            # A handle OpenNVR did not map to a camera id: it has no zones to read.
            self.tracker.set_zones(camera_id, [])
            return
        self._pending.add(camera_id)
        try:
            zones = await self._client.get_zones(int(camera_id))
        except OpenNVRNotFoundError:
            # No zones route (an older OpenNVR): the camera's whole view is its zone.
            self.tracker.set_zones(camera_id, [])
        except _READ_ERRORS as err:
            self._retry_at[camera_id] = self.hass.loop.time() + RETRY_S
            self._failed(f"the zones of camera {camera_id}", err)
        else:
            self.tracker.set_zones(camera_id, zones)
            self._retry_at.pop(camera_id, None)
            if self._failing:
                self._failing = False
                _LOGGER.info("OpenNVR's zones can be read again")
        finally:
            self._pending.discard(camera_id)

    def _failed(self, what: str, err: BaseException) -> None:
        if self._failing:
            _LOGGER.debug("Reading %s failed: %r", what, err)
            return
        self._failing = True
        _LOGGER.warning(
            "Cannot read %s from OpenNVR (%s); person-in-zone triggers wait for it and "
            "it is retried in the background",
            what,
            err or type(err).__name__,
        )

    def _spawn(self, coro: Coroutine[Any, Any, None], what: str) -> None:
        if self._stopped:
            coro.close()
            return
        task = self.hass.async_create_background_task(coro, f"opennvr_workflows {what}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


async def async_start_presence(
    hass: HomeAssistant,
    client: OpenNVRClient,
    hub: EventHub,
    thresholds: Thresholds,
    *,
    tracker: PresenceTracker | None = None,
    zone_refresh: timedelta = ZONE_REFRESH,
) -> PresenceLink:
    """Start turning the hub's tracks into ``person_in_zone`` events.

    ``thresholds`` returns the ``min_seconds`` of the On and Test workflows' person-in-zone
    triggers (empty: nothing is watched, no zone is read). The returned link stops it
    when called; ``link.tracker`` is the tracker, ``link.async_refresh_zones()`` reads
    every camera's zones again now.
    """
    link = PresenceLink(
        hass, client, hub, thresholds, tracker if tracker is not None else PresenceTracker()
    )
    link.start(zone_refresh)
    return link
