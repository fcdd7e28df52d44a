"""Binary sensors: per camera, whether OpenNVR receives its video; per workflow, whether
it needs a person (the engine parked it in *needs attention*, or its file does not load);
and whether the vision model can be reached.

Each is described once (:class:`OpenNVRBinarySensorEntityDescription`): what it is, and the
functions that make its state and attributes from what it reads.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from homeassistant.components.binary_sensor import (
    BinarySensorDeviceClass,
    BinarySensorEntity,
    BinarySensorEntityDescription,
)
from homeassistant.const import EntityCategory
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from .coordinator import CameraCoordinator, OpenNVRConfigEntry
from .entity import (
    ModelEntity,
    OpenNVRCameraEntity,
    OpenNVREntity,
    WorkflowEntity,
    add_camera_entities,
    add_workflow_entities,
)
from .host.model.watch import ModelHealth
from .host.workflows import WorkflowHost
from .workflow_views import WorkflowViews

# Nothing here asks OpenNVR or the model: states are pushed or read from memory.
PARALLEL_UPDATES = 0


@dataclass(frozen=True, kw_only=True)
class OpenNVRBinarySensorEntityDescription[SourceT](BinarySensorEntityDescription):
    """A binary sensor, and how its state and attributes are made from what it reads."""

    is_on_fn: Callable[[SourceT], bool | None]
    attrs_fn: Callable[[SourceT], Mapping[str, Any] | None] = lambda _: None


class DescribedBinarySensor[SourceT](OpenNVREntity, BinarySensorEntity):
    """A binary sensor whose state is its description's functions of :meth:`source`."""

    entity_description: OpenNVRBinarySensorEntityDescription[SourceT]

    @abstractmethod
    def source(self) -> SourceT:
        """What the state is made from."""

    @property
    def is_on(self) -> bool | None:
        return self.entity_description.is_on_fn(self.source())

    @property
    def extra_state_attributes(self) -> Mapping[str, Any] | None:
        return self.entity_description.attrs_fn(self.source())


@dataclass(frozen=True, slots=True)
class Problem:
    """Why a workflow needs a person (None: it does not)."""

    reason: str | None


#: On while the camera is online, as the coordinator says (pushed, else polled).
CAMERA_CONNECTIVITY: Final = OpenNVRBinarySensorEntityDescription[bool](
    key="connectivity",
    translation_key="camera_connectivity",
    device_class=BinarySensorDeviceClass.CONNECTIVITY,
    entity_category=EntityCategory.DIAGNOSTIC,
    is_on_fn=lambda online: online,
)

WORKFLOW_PROBLEM: Final = OpenNVRBinarySensorEntityDescription[Problem](
    key="problem",
    translation_key="workflow_problem",
    device_class=BinarySensorDeviceClass.PROBLEM,
    is_on_fn=lambda problem: problem.reason is not None,
    attrs_fn=lambda problem: {"reason": problem.reason},
)

#: The model watch's finding, the same that raises and clears the "model unreachable"
#: repair; unknown until the first check.
MODEL_CONNECTIVITY: Final = OpenNVRBinarySensorEntityDescription[ModelHealth](
    key="connectivity",
    translation_key="model_connectivity",
    device_class=BinarySensorDeviceClass.CONNECTIVITY,
    entity_category=EntityCategory.DIAGNOSTIC,
    is_on_fn=lambda health: health.usable,
    attrs_fn=lambda health: {
        "missing": list(health.missing),
        "checked_at": health.checked_at.isoformat() if health.checked_at else None,
    },
)


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
    if (host := entry.runtime_data.workflows) is not None:
        async_add_entities([ModelConnectivity(entry, host)])


class CameraConnectivity(OpenNVRCameraEntity, DescribedBinarySensor[bool]):
    """On while the camera is online; stays available when the camera is offline (that is
    what it reports), unavailable only when OpenNVR itself cannot be read."""

    entity_description = CAMERA_CONNECTIVITY

    def __init__(self, coordinator: CameraCoordinator, camera_id: int) -> None:
        super().__init__(coordinator, camera_id, CAMERA_CONNECTIVITY.key)

    def source(self) -> bool:
        return self.camera_online

    @property
    def available(self) -> bool:
        return self.coordinator.last_update_success and self.nvr_camera is not None


class WorkflowProblem(WorkflowEntity, DescribedBinarySensor[Problem]):
    """On while the workflow needs a person: the engine parked it in *needs attention*
    (a provider it uses is gone; setting its state clears it), or its file does not load.
    The reason is an attribute. Available as long as the file exists."""

    entity_description = WORKFLOW_PROBLEM
    update_kinds = frozenset({"workflow_state"})

    def __init__(self, views: WorkflowViews, workflow_id: str) -> None:
        super().__init__(views, workflow_id, WORKFLOW_PROBLEM.key)

    @property
    def available(self) -> bool:
        return self.views.file(self.workflow_id) is not None

    def source(self) -> Problem:
        loaded = self.views.file(self.workflow_id)
        if loaded is None:
            return Problem(None)
        if loaded.workflow is None:
            first = loaded.errors[0] if loaded.errors else None
            where = f"{loaded.path.name}:{first.line}" if first else loaded.path.name
            return Problem(f"{where}: {first.message if first else 'the file does not load'}")
        status = self.status
        if status is not None and status.state == "needs_attention":
            return Problem(status.reason or "needs attention")
        return Problem(None)


class ModelConnectivity(ModelEntity, DescribedBinarySensor[ModelHealth]):
    """On while Ollama answers and has the configured models."""

    entity_description = MODEL_CONNECTIVITY
    # Changes at every check (every few minutes): shown live, not written to the history.
    _unrecorded_attributes = frozenset({"checked_at"})

    def __init__(self, entry: OpenNVRConfigEntry, host: WorkflowHost) -> None:
        super().__init__(entry, host, MODEL_CONNECTIVITY.key)

    def source(self) -> ModelHealth:
        return self.host.model_watch.health

    async def async_added_to_hass(self) -> None:
        self.async_on_remove(self.host.model_watch.add_listener(self.async_write_ha_state))
