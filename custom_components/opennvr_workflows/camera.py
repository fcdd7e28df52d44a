"""A camera entity per OpenNVR camera: still pictures from OpenNVR, and its live stream
once that stream is known to open (see ``camera_stream``)."""

from __future__ import annotations

from datetime import datetime

from homeassistant.components.camera import Camera, CameraEntityFeature
from homeassistant.core import HomeAssistant, callback
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback
from homeassistant.helpers.event import async_track_time_interval
from pyopennvr import OpenNVRError

from .camera_stream import (
    STREAM_RECHECK,
    StreamCheck,
    advertised_url,
    async_check_stream,
    clear_stream_issue,
    raise_stream_issue,
    redact_stream_logs,
)
from .const import DOMAIN, LOGGER
from .coordinator import CameraCoordinator, OpenNVRConfigEntry
from .entity import OpenNVRCameraEntity, add_camera_entities

PARALLEL_UPDATES = 0


async def async_setup_entry(
    hass: HomeAssistant,
    entry: OpenNVRConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    add_camera_entities(
        entry, async_add_entities, lambda coordinator, cid: [OpenNVRCamera(coordinator, cid)]
    )


class OpenNVRCamera(OpenNVRCameraEntity, Camera):
    """The camera itself: named after its device, so its name is None."""

    _attr_name = None

    def __init__(self, coordinator: CameraCoordinator, camera_id: int) -> None:
        OpenNVRCameraEntity.__init__(self, coordinator, camera_id, "camera")
        Camera.__init__(self)
        #: The last check's answer: None until one ran with the camera online.
        self._stream: StreamCheck | None = None
        self._checking = False
        self._removed = False

    @property
    def supported_features(self) -> CameraEntityFeature:
        """STREAM only for a stream that opened: otherwise the frontend would show a player
        that never plays, and Home Assistant's stream worker would retry it forever."""
        if self._stream is not None and self._stream.ok:
            return CameraEntityFeature.STREAM
        return CameraEntityFeature(0)

    async def async_added_to_hass(self) -> None:
        await super().async_added_to_hass()
        self.async_on_remove(redact_stream_logs(self.entity_id))
        self.async_on_remove(
            async_track_time_interval(self.hass, self._async_recheck, STREAM_RECHECK)
        )
        self.async_on_remove(self._forget_stream)
        self._schedule_check()

    @callback
    def _forget_stream(self) -> None:
        self._removed = True
        clear_stream_issue(self.hass, self.coordinator.config_entry.entry_id, self.camera_id)

    @callback
    def _handle_coordinator_update(self) -> None:
        if self._stream is None:  # never checked while online: the camera may be now
            self._schedule_check()
        super()._handle_coordinator_update()

    @callback
    def _async_recheck(self, _now: datetime) -> None:
        self._schedule_check()

    @callback
    def _schedule_check(self) -> None:
        """Check the stream unless a check runs or the camera is offline (an offline
        camera's stream fails for a reason the user already sees)."""
        if self._checking or not self.available:
            return
        self._checking = True
        self.coordinator.config_entry.async_create_task(
            self.hass, self._async_check_stream(), f"{DOMAIN} stream of camera {self.camera_id}"
        )

    async def _async_check_stream(self) -> None:
        try:
            check = await async_check_stream(self.coordinator.client, self.camera_id)
        finally:
            self._checking = False
        if check is None or self._removed:
            return
        previous, self._stream = self._stream, check
        entry_id = self.coordinator.config_entry.entry_id
        camera = cam.name if (cam := self.nvr_camera) is not None else str(self.camera_id)
        if check.result is None or check.ok:
            clear_stream_issue(self.hass, entry_id, self.camera_id)
        else:
            address = check.address or ""
            raise_stream_issue(self.hass, entry_id, self.camera_id, camera, address, check.result)
        if previous is None or previous.result != check.result:
            self._log_change(camera, check)
        if previous is None or previous.ok != check.ok:
            self.async_write_ha_state()

    @staticmethod
    def _log_change(camera: str, check: StreamCheck) -> None:
        """Once per change, naming ``host:port`` only (the URL carries a token)."""
        if check.result is None:
            LOGGER.debug("Camera %s: OpenNVR advertises no stream; still pictures", camera)
        elif check.ok:
            LOGGER.debug("Camera %s: its stream at %s opens", camera, check.address)
        else:
            LOGGER.warning(
                "Camera %s: its stream at %s cannot be opened (%s: %s); showing still "
                "pictures until it can",
                camera,
                check.address,
                check.result.problem,
                check.result.detail,
            )

    async def async_camera_image(
        self, width: int | None = None, height: int | None = None
    ) -> bytes | None:
        """The latest frame, from OpenNVR (which answers 503 when it has none)."""
        try:
            return await self.coordinator.client.get_snapshot(self.camera_id)
        except OpenNVRError as err:
            LOGGER.debug("No snapshot for camera %s: %s", self.camera_id, err)
            return None

    async def stream_source(self) -> str | None:
        """A fresh URL (its token lasts an hour) for a stream that opened; None otherwise."""
        if not (self._stream is not None and self._stream.ok):
            return None
        try:
            info = await self.coordinator.client.get_stream_info(self.camera_id)
        except OpenNVRError as err:
            raise HomeAssistantError(
                translation_domain=DOMAIN,
                translation_key="stream_unavailable",
                translation_placeholders={"error": str(err)},
            ) from err
        return advertised_url(info)
