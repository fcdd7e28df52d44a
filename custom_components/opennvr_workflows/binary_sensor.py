"""A connectivity binary sensor per camera: is OpenNVR receiving its video."""

from __future__ import annotations

from homeassistant.components.binary_sensor import (
    BinarySensorDeviceClass,
    BinarySensorEntity,
)
from homeassistant.const import EntityCategory
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

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
        entry, async_add_entities, lambda coordinator, cid: [CameraConnectivity(coordinator, cid)]
    )


class CameraConnectivity(OpenNVRCameraEntity, BinarySensorEntity):
    """On while the camera is online; stays available when the camera is offline (that is
    what it reports), unavailable only when OpenNVR itself cannot be read."""

    _attr_device_class = BinarySensorDeviceClass.CONNECTIVITY
    _attr_entity_category = EntityCategory.DIAGNOSTIC
    _attr_translation_key = "camera_connectivity"

    def __init__(self, coordinator: CameraCoordinator, camera_id: int) -> None:
        super().__init__(coordinator, camera_id, "connectivity")

    @property
    def available(self) -> bool:
        return self.coordinator.last_update_success and self.nvr_camera is not None

    @property
    def is_on(self) -> bool:
        return self.camera_online
