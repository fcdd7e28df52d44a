"""Binary sensors: per camera, whether OpenNVR receives its video; per workflow, whether
it needs a person (the engine parked it in *needs attention*, or its file does not load).
"""

from __future__ import annotations

from typing import Any

from homeassistant.components.binary_sensor import (
    BinarySensorDeviceClass,
    BinarySensorEntity,
)
from homeassistant.const import EntityCategory
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from .entity import OpenNVRCameraEntity, add_camera_entities
from .model_device import model_binary_sensors
from .nvr.coordinator import CameraCoordinator
from .runtime import OpenNVRConfigEntry
from .workflow_entity import WorkflowEntity, add_workflow_entities
from .workflow_views import WorkflowViews

PARALLEL_UPDATES = 0


async def async_setup_entry(
    hass: HomeAssistant,
    entry: OpenNVRConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    add_camera_entities(
        entry, async_add_entities, lambda coordinator, cid: [CameraConnectivity(coordinator, cid)]
    )
    add_workflow_entities(
        hass, entry, async_add_entities, lambda views, wid: [WorkflowProblem(views, wid)]
    )
    async_add_entities(model_binary_sensors(entry))


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


class WorkflowProblem(WorkflowEntity, BinarySensorEntity):
    """On while the workflow needs a person: the engine parked it in *needs attention*
    (a provider it uses is gone; setting its state clears it), or its file does not load.
    The reason is an attribute. Available as long as the file exists."""

    _attr_device_class = BinarySensorDeviceClass.PROBLEM
    _attr_translation_key = "workflow_problem"
    update_kinds = frozenset({"workflow_state"})

    def __init__(self, views: WorkflowViews, workflow_id: str) -> None:
        super().__init__(views, workflow_id, "problem")

    @property
    def available(self) -> bool:
        return self.views.file(self.workflow_id) is not None

    @property
    def is_on(self) -> bool:
        return self._reason is not None

    @property
    def _reason(self) -> str | None:
        loaded = self.views.file(self.workflow_id)
        if loaded is None:
            return None
        if loaded.workflow is None:
            first = loaded.errors[0] if loaded.errors else None
            where = f"{loaded.path.name}:{first.line}" if first else loaded.path.name
            return f"{where}: {first.message if first else 'the file does not load'}"
        status = self.status
        if status is not None and status.state == "needs_attention":
            return status.reason or "needs attention"
        return None

    @property
    def extra_state_attributes(self) -> dict[str, Any]:
        return {"reason": self._reason}
