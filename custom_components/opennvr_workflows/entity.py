"""Base entity for everything that belongs to one OpenNVR camera."""

from __future__ import annotations

from homeassistant.helpers.device_registry import DeviceInfo
from homeassistant.helpers.update_coordinator import CoordinatorEntity
from pyopennvr import Camera

from .const import DOMAIN
from .nvr.coordinator import CameraCoordinator, camera_online


def camera_device_id(site_id: str, camera_id: int) -> tuple[str, str]:
    """The device registry identifier of a camera: stable across renames and URL changes."""
    return (DOMAIN, f"{site_id}_camera_{camera_id}")


class OpenNVRCameraEntity(CoordinatorEntity[CameraCoordinator]):
    """Ties an entity to its camera's device and to the camera's online state."""

    _attr_has_entity_name = True

    def __init__(self, coordinator: CameraCoordinator, camera_id: int, key: str) -> None:
        super().__init__(coordinator)
        self.camera_id = camera_id
        site = coordinator.config_entry.runtime_data.info
        self._attr_unique_id = f"{site.site_id}_{camera_id}_{key}"
        cam = coordinator.data[camera_id]
        self._attr_device_info = DeviceInfo(
            identifiers={camera_device_id(site.site_id, camera_id)},
            name=cam.name,
            manufacturer="OpenNVR",
            model="Camera",
            suggested_area=cam.raw.get("location") or None,
            configuration_url=coordinator.client.base_url,
        )

    @property
    def nvr_camera(self) -> Camera | None:
        return self.coordinator.data.get(self.camera_id)

    @property
    def available(self) -> bool:
        cam = self.nvr_camera
        return super().available and cam is not None and camera_online(cam)
