"""Base entities: one for things that belong to a camera, one for the site itself."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from homeassistant.core import callback
from homeassistant.helpers.device_registry import DeviceInfo
from homeassistant.helpers.entity import Entity
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback
from homeassistant.helpers.update_coordinator import CoordinatorEntity
from pyopennvr import Camera

from .const import DOMAIN
from .nvr.coordinator import CameraCoordinator
from .runtime import OpenNVRConfigEntry


def camera_device_id(site_id: str, camera_id: int) -> tuple[str, str]:
    """The device registry identifier of a camera: stable across renames and URL changes."""
    return (DOMAIN, f"{site_id}_camera_{camera_id}")


def site_device_info(entry: OpenNVRConfigEntry) -> DeviceInfo:
    """The OpenNVR site as a device: the hub its cameras belong to."""
    info = entry.runtime_data.info
    return DeviceInfo(
        identifiers={(DOMAIN, info.site_id)},
        name=info.name,
        manufacturer="OpenNVR",
        model="OpenNVR site",
        sw_version=info.version,
        configuration_url=entry.runtime_data.client.base_url,
    )


def add_camera_entities(
    entry: OpenNVRConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
    factory: Callable[[CameraCoordinator, int], Iterable[Entity]],
) -> None:
    """Add a platform's entities for every camera now, and for cameras added later
    (OpenNVR cameras appear without a restart; removed ones lose their device, see
    ``devices.py``)."""
    coordinator = entry.runtime_data.cameras
    known: set[int] = set()

    @callback
    def _add_new() -> None:
        new = [cid for cid in coordinator.data if cid not in known]
        known.update(new)
        entities = [entity for cid in new for entity in factory(coordinator, cid)]
        if entities:
            async_add_entities(entities)

    _add_new()
    entry.async_on_unload(coordinator.async_add_listener(_add_new))


class OpenNVRCameraEntity(CoordinatorEntity[CameraCoordinator]):
    """Ties an entity to its camera's device and to the camera's online state."""

    _attr_has_entity_name = True

    def __init__(self, coordinator: CameraCoordinator, camera_id: int, key: str) -> None:
        super().__init__(coordinator)
        self.camera_id = camera_id
        entry = coordinator.config_entry
        site_id = entry.runtime_data.info.site_id
        self._attr_unique_id = f"{site_id}_{camera_id}_{key}"
        cam = coordinator.data[camera_id]
        self._attr_device_info = DeviceInfo(
            identifiers={camera_device_id(site_id, camera_id)},
            name=cam.name,
            manufacturer="OpenNVR",
            model="Camera",
            suggested_area=cam.raw.get("location") or None,
            via_device_id=entry.runtime_data.site_device_id,
            configuration_url=coordinator.client.base_url,
        )

    @property
    def nvr_camera(self) -> Camera | None:
        return self.coordinator.data.get(self.camera_id)

    @property
    def camera_online(self) -> bool:
        return self.coordinator.is_online(self.camera_id)

    @property
    def available(self) -> bool:
        return super().available and self.nvr_camera is not None and self.camera_online


class OpenNVRSiteEntity(Entity):
    """An entity of the site device (site mode, event counters)."""

    _attr_has_entity_name = True
    _attr_should_poll = False

    def __init__(self, entry: OpenNVRConfigEntry, key: str) -> None:
        self.entry = entry
        self._attr_unique_id = f"{entry.runtime_data.info.site_id}_{key}"
        self._attr_device_info = site_device_info(entry)
