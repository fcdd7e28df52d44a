"""The base entities, and how a platform adds them for each camera and each workflow file.

Every entity of this integration is an :class:`OpenNVREntity`: named by translation under
its device, pushed rather than polled, with a unique id under the site's id. Four families
share it, one per kind of device:

* :class:`OpenNVRCameraEntity`, a camera's (its coordinator says whether the camera is
  online); cameras added in OpenNVR get theirs without a restart (:func:`add_camera_entities`);
* :class:`OpenNVRSiteEntity`, the site's own (site mode, counters, the pause switch);
* :class:`ModelEntity`, the vision model device's, unavailable while AI is off;
* :class:`WorkflowEntity`, a workflow device's: it listens only to the engine updates that
  change what it shows, for its own workflow (see :mod:`.workflow_views`); the ones that
  change on every run (runs today, last outcome, the picture) write their state at most
  once per :data:`WRITE_COOLDOWN_S`, however many runs start, so a busy workflow cannot
  flood the state machine and the recorder (:func:`add_workflow_entities`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Set
from typing import ClassVar, Final

from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers import device_registry as dr
from homeassistant.helpers import entity_registry as er
from homeassistant.helpers.debounce import Debouncer
from homeassistant.helpers.device_registry import DeviceInfo
from homeassistant.helpers.entity import Entity
from homeassistant.helpers.entity_platform import (
    AddConfigEntryEntitiesCallback,
    async_get_current_platform,
)
from homeassistant.helpers.update_coordinator import CoordinatorEntity
from pyopennvr import Camera

from .const import DOMAIN
from .coordinator import CameraCoordinator, OpenNVRConfigEntry
from .devices import MODEL_DEVICE, camera_device_info, model_device_info, site_device_info
from .engine import EngineUpdate, WorkflowStatus
from .host.ids import workflow_device_identifier, workflow_unique_id
from .host.workflows import WorkflowHost
from .workflow import Workflow, ai_steps
from .workflow_views import FILES_CHANGED, WorkflowViews

_LOGGER = logging.getLogger(__name__)

#: The shortest time between two state writes of an entity that changes on every run.
WRITE_COOLDOWN_S: Final = 1.0

EntityFactory = Callable[[WorkflowViews, str], Iterable["WorkflowEntity"]]


class OpenNVREntity(Entity):
    """What every entity of the integration is (see the module docstring)."""

    _attr_has_entity_name = True
    _attr_should_poll = False

    def __init__(self, unique_id: str, device_info: DeviceInfo) -> None:
        self._attr_unique_id = unique_id
        self._attr_device_info = device_info


# ── a camera's ─────────────────────────────────────────────────────────────────────────


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


class OpenNVRCameraEntity(CoordinatorEntity[CameraCoordinator], OpenNVREntity):
    """Ties an entity to its camera's device and to the camera's online state."""

    def __init__(self, coordinator: CameraCoordinator, camera_id: int, key: str) -> None:
        CoordinatorEntity.__init__(self, coordinator)
        entry = coordinator.config_entry
        OpenNVREntity.__init__(
            self,
            f"{entry.runtime_data.info.site_id}_{camera_id}_{key}",
            camera_device_info(entry, camera_id, coordinator.data[camera_id]),
        )
        self.camera_id = camera_id

    @property
    def nvr_camera(self) -> Camera | None:
        return self.coordinator.data.get(self.camera_id)

    @property
    def camera_online(self) -> bool:
        return self.coordinator.is_online(self.camera_id)

    @property
    def available(self) -> bool:
        return super().available and self.nvr_camera is not None and self.camera_online


# ── the site's and its vision model's ───────────────────────────────────────────────────


class OpenNVRSiteEntity(OpenNVREntity):
    """An entity of the site device (site mode, event counters)."""

    def __init__(self, entry: OpenNVRConfigEntry, key: str) -> None:
        super().__init__(f"{entry.runtime_data.info.site_id}_{key}", site_device_info(entry))
        self.entry = entry


class ModelEntity(OpenNVREntity):
    """An entity of the vision model device; unavailable while AI is off in the options.

    A homeowner trusts the AI steps as far as they can see the model: the same watch that
    raises the "model unreachable" repair (:mod:`.host.model.watch`) drives its connectivity
    sensor; the hourly AI budgets the engine keeps count its model calls; the Looks of the
    last hour give its median latency; the evaluation gate's stored measurement gives its
    accuracy (the lower bound of the 95 % Wilson interval, which is what the gate decides
    on). The vision model itself is a select of the models an admin allowed (the options'
    *Webhooks and models* page), and choosing one is an admin's door
    (:mod:`.host.permissions`). The AI Task entity (``ai_task.py``) belongs to it too.
    """

    def __init__(self, entry: OpenNVRConfigEntry, host: WorkflowHost, key: str) -> None:
        super().__init__(
            f"{entry.runtime_data.info.site_id}_{MODEL_DEVICE}_{key}",
            model_device_info(entry, host.settings.vision_model),
        )
        self.entry = entry
        self.host = host

    @property
    def available(self) -> bool:
        return self.host.settings.ai_enabled


# ── a workflow's ───────────────────────────────────────────────────────────────────────


def workflow_views(hass: HomeAssistant, entry: OpenNVRConfigEntry) -> WorkflowViews | None:
    """The entry's views, made by the first platform that asks (None: no workflow host)."""
    runtime = entry.runtime_data
    if runtime.workflow_views is None:
        if runtime.workflows is None:
            return None
        views = WorkflowViews(
            hass,
            entry.entry_id,
            runtime.info.site_id,
            runtime.site_device_id,
            runtime.workflows,
        )
        views.start()
        runtime.workflow_views = views

        @callback
        def _drop() -> None:
            views.stop()
            runtime.workflow_views = None

        entry.async_on_unload(_drop)
    return runtime.workflow_views


def add_workflow_entities(
    hass: HomeAssistant,
    entry: OpenNVRConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
    factory: EntityFactory,
) -> None:
    """Add a platform's entities for every workflow file now and after each reload.

    The entities of a file that went away leave with its device (see
    :class:`~.workflow_views.WorkflowViews`); an entity a loaded workflow no longer has
    (a "Run now" button once the trigger is not a button, the picture and accuracy once it
    has no AI step) is removed here, also one registered before a restart and edited away
    while Home Assistant was stopped. A file that does not load keeps the entities it had,
    unavailable, so an edit with a typo does not lose their history. A platform calls this
    once: its ``factory`` names every entity of that platform a workflow's device has."""
    views = workflow_views(hass, entry)
    if views is None:
        return
    domain = async_get_current_platform().domain
    added: dict[str, dict[str, WorkflowEntity]] = {}

    @callback
    def _sync() -> None:
        current = set(views.workflow_ids())
        for gone in set(added) - current:
            del added[gone]
        new: list[WorkflowEntity] = []
        for workflow_id in sorted(current):
            have = added.setdefault(workflow_id, {})
            wanted = {str(e.unique_id): e for e in factory(views, workflow_id)}
            new.extend(e for uid, e in wanted.items() if uid not in have)
            have.update({uid: e for uid, e in wanted.items() if uid not in have})
            if views.workflow(workflow_id) is None:
                continue
            for uid in have.keys() - wanted.keys():
                del have[uid]
            _remove_unwanted(hass, views, workflow_id, domain, wanted.keys())
        if new:
            async_add_entities(new)

    _sync()
    entry.async_on_unload(views.on_files_changed(_sync))


def _remove_unwanted(
    hass: HomeAssistant,
    views: WorkflowViews,
    workflow_id: str,
    domain: str,
    wanted: Set[str],
) -> None:
    """Remove the registered ``domain`` entities of a workflow's device that it no longer has."""
    found = dr.async_get(hass).async_get_device_by_identifier(
        workflow_device_identifier(views.site_id, workflow_id), views.entry_id
    )
    if found is None:
        return
    registry = er.async_get(hass)
    for registered in er.async_entries_for_device(
        registry, found.id, include_disabled_entities=True
    ):
        if (
            registered.domain == domain
            and registered.platform == DOMAIN
            and registered.unique_id not in wanted
        ):
            registry.async_remove(registered.entity_id)


def has_ai_steps(views: WorkflowViews, workflow_id: str) -> bool:
    """Whether the workflow has an AI step: only then has it an evidence picture and an
    accuracy (a rule-only workflow never has either, so it gets neither entity). A file this
    site cannot run yet is read as it describes itself; one that does not validate anywhere
    gets neither (it keeps those it had, see :func:`add_workflow_entities`)."""
    loaded = views.file(workflow_id)
    workflow = loaded.described if loaded is not None else None
    return workflow is not None and bool(ai_steps(workflow))


class WorkflowEntity(OpenNVREntity):
    """An entity of one workflow's device."""

    #: The engine update kinds that change what this entity shows.
    update_kinds: ClassVar[frozenset[str]] = frozenset()
    #: Whether the entity changes on every run (its writes are then spaced out).
    per_run: ClassVar[bool] = False

    def __init__(self, views: WorkflowViews, workflow_id: str, key: str) -> None:
        super().__init__(
            workflow_unique_id(views.site_id, workflow_id, key), views.device_info(workflow_id)
        )
        self.views = views
        self.workflow_id = workflow_id
        self._writer: Debouncer[object] | None = None
        self._gone = False

    @property
    def workflow(self) -> Workflow | None:
        """The workflow as its file says; None while the file does not load."""
        return self.views.workflow(self.workflow_id)

    @property
    def status(self) -> WorkflowStatus | None:
        """The workflow as the engine holds it (state, version, reason)."""
        return self.views.status(self.workflow_id)

    @property
    def available(self) -> bool:
        return self.status is not None

    async def async_added_to_hass(self) -> None:
        """Listen before the first read (subclasses read after this returns, so no update
        falls between what they read and what they hear)."""
        if self.per_run:
            self._writer = Debouncer(
                self.hass,
                _LOGGER,
                cooldown=WRITE_COOLDOWN_S,
                immediate=True,
                function=self._async_write,
            )
            self.async_on_remove(self._writer.async_shutdown)
        self.async_on_remove(
            self.views.listen(
                self.workflow_id, self.update_kinds | {FILES_CHANGED}, self._on_update
            )
        )

    async def async_will_remove_from_hass(self) -> None:
        self._gone = True

    @callback
    def _on_update(self, update: EngineUpdate) -> None:
        if not self.handle(update):
            return
        if self._writer is not None:
            self._writer.async_schedule_call()
        else:
            self.async_write_ha_state()

    @callback
    def handle(self, update: EngineUpdate) -> bool:
        """Take in an update; return whether the state needs writing."""
        return True

    async def async_refresh(self) -> None:
        """Read what a :attr:`per_run` entity shows before its (spaced out) write; the
        others show what they hold and write at once."""

    async def _async_write(self) -> None:
        await self.async_refresh()
        if not self._gone:
            self.async_write_ha_state()
