"""A camera entity per OpenNVR camera: snapshots from OpenNVR, streams via its RTSPS URL."""

from __future__ import annotations

from homeassistant.components.camera import Camera, CameraEntityFeature
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback
from pyopennvr import OpenNVRError

from .const import DOMAIN, LOGGER
from .entity import OpenNVRCameraEntity, add_camera_entities
from .nvr.coordinator import CameraCoordinator
from .runtime import OpenNVRConfigEntry

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
    _attr_supported_features = CameraEntityFeature.STREAM

    def __init__(self, coordinator: CameraCoordinator, camera_id: int) -> None:
        OpenNVRCameraEntity.__init__(self, coordinator, camera_id, "camera")
        Camera.__init__(self)

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
        """OpenNVR's RTSPS URL (with its short-lived token); None when not exposed."""
        try:
            info = await self.coordinator.client.get_stream_info(self.camera_id)
        except OpenNVRError as err:
            raise HomeAssistantError(
                translation_domain=DOMAIN,
                translation_key="stream_unavailable",
                translation_placeholders={"error": str(err)},
            ) from err
        return info.rtsps_url or info.raw.get("urls", {}).get("rtsp")
