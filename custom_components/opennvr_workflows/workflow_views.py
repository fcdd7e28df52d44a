"""What a workflow's entities read, and the one feed that tells them when to look again.

One :class:`WorkflowViews` per config entry (made by the first platform that asks,
:func:`.entity.workflow_views`) sits between the workflow host and the entities of every
workflow (a device per workflow file, under the site device):

* it subscribes to the engine once and hands each :class:`~.engine.EngineUpdate` only to
  the entities of the workflow it concerns, and of those only to the ones that show that
  kind of update: a run of one workflow never rewrites the entities of the others;
* when a reload changes the set of workflow files, it removes the devices (and so the
  entities) of files that went away, renames the devices of workflows renamed in their
  file, and tells the platforms so they add the entities of new files;
* at local midnight it tells the "runs today" sensors that a new day began.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Final

from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers import device_registry as dr
from homeassistant.helpers.device_registry import DeviceEntryType, DeviceInfo
from homeassistant.helpers.event import async_track_time_change

from .const import DOMAIN
from .engine import EngineUpdate, UnknownWorkflowError, WorkflowStatus
from .host.ids import workflow_device_identifier
from .host.workflows import WorkflowFile, WorkflowHost
from .workflow import Workflow

_LOGGER = logging.getLogger(__name__)

#: Update kinds the views make themselves (next to the engine's own kinds).
FILES_CHANGED: Final = "files_changed"
NEW_DAY: Final = "new_day"
#: Characters of the version hash shown as the workflow device's software version.
VERSION_CHARS: Final = 12

UpdateListener = Callable[[EngineUpdate], None]


class WorkflowViews:
    """The workflows of one entry as their entities see them (see the module docstring)."""

    def __init__(
        self,
        hass: HomeAssistant,
        entry_id: str,
        site_id: str,
        site_device_id: str,
        host: WorkflowHost,
    ) -> None:
        self.hass = hass
        self.entry_id = entry_id
        self.site_id = site_id
        #: The site's device: each workflow's device comes "via" it.
        self.site_device_id = site_device_id
        self.host = host
        self._routes: dict[tuple[str, str], list[UpdateListener]] = {}
        self._platforms: list[Callable[[], None]] = []
        self._files: Mapping[str, WorkflowFile] | None = None
        self._unsubscribe: list[Callable[[], None]] = []

    # ── lifecycle ──────────────────────────────────────────────────────

    @callback
    def start(self) -> None:
        self._files = self.host.files
        self._unsubscribe.append(self.host.engine.subscribe(self._route))
        self._unsubscribe.append(self.host.subscribe(self._host_changed))
        self._unsubscribe.append(
            async_track_time_change(self.hass, self._new_day, hour=0, minute=0, second=0)
        )
        self._sync_devices()

    @callback
    def stop(self) -> None:
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe.clear()
        self._routes.clear()
        self._platforms.clear()

    # ── what the entities read ─────────────────────────────────────────

    def workflow_ids(self) -> list[str]:
        """Every workflow file of the folder, valid or not."""
        return sorted(self.host.files)

    def file(self, workflow_id: str) -> WorkflowFile | None:
        return self.host.files.get(workflow_id)

    def workflow(self, workflow_id: str) -> Workflow | None:
        """The file's model; None when the file is invalid or gone."""
        loaded = self.host.files.get(workflow_id)
        return loaded.workflow if loaded is not None else None

    def status(self, workflow_id: str) -> WorkflowStatus | None:
        """The engine's view of the workflow; None when the engine does not hold it."""
        try:
            return self.host.engine.workflow_status(workflow_id)
        except UnknownWorkflowError:
            return None

    def device_info(self, workflow_id: str) -> DeviceInfo:
        """The workflow's device: named after the workflow, under the site device.

        A file this site cannot run is named by the name it declares; one that names none
        (a typo in the file) keeps the name its device already has, not its file name."""
        identifier = workflow_device_identifier(self.site_id, workflow_id)
        info = DeviceInfo(
            identifiers={identifier},
            manufacturer="OpenNVR",
            model="Workflow",
            entry_type=DeviceEntryType.SERVICE,
            via_device_id=self.site_device_id,
        )
        workflow = self.workflow(workflow_id)
        status = self.status(workflow_id)
        if workflow is not None:
            info["name"] = workflow.name
            if status is not None:
                info["sw_version"] = status.version[:VERSION_CHARS]
        else:
            device = dr.async_get(self.hass).async_get_device_by_identifier(
                identifier, self.entry_id
            )
            loaded = self.file(workflow_id)
            info["name"] = (
                (loaded.declared_name if loaded is not None else None)
                or (device.name if device is not None else None)
                or workflow_id
            )
        return info

    # ── the feed ───────────────────────────────────────────────────────

    def listen(
        self, workflow_id: str, kinds: frozenset[str], listener: UpdateListener
    ) -> Callable[[], None]:
        """Call ``listener`` on updates of these kinds about this workflow."""
        keys = [(workflow_id, kind) for kind in kinds]
        for key in keys:
            self._routes.setdefault(key, []).append(listener)

        @callback
        def unsubscribe() -> None:
            for key in keys:
                listeners = self._routes.get(key)
                if listeners and listener in listeners:
                    listeners.remove(listener)
                    if not listeners:
                        del self._routes[key]

        return unsubscribe

    def on_files_changed(self, platform: Callable[[], None]) -> Callable[[], None]:
        """Call ``platform`` after a reload changed the workflow files (to add entities)."""
        self._platforms.append(platform)
        return lambda: self._platforms.remove(platform) if platform in self._platforms else None

    @callback
    def _route(self, update: EngineUpdate) -> None:
        listeners = self._routes.get((update.workflow_id, update.kind))
        if not listeners:
            return
        for listener in list(listeners):
            try:
                listener(update)
            except Exception:
                _LOGGER.exception("The view of workflow %s failed", update.workflow_id)

    def _to_all(self, kind: str) -> None:
        for workflow_id in self.workflow_ids():
            self._route(EngineUpdate(kind, workflow_id))

    @callback
    def _host_changed(self) -> None:
        # The host calls this for runs and states too; only a reload replaces its files.
        if self.host.files is self._files:
            return
        self._files = self.host.files
        self._sync_devices()
        for platform in list(self._platforms):
            platform()
        self._to_all(FILES_CHANGED)

    @callback
    def _new_day(self, _: datetime) -> None:
        self._to_all(NEW_DAY)

    # ── devices ────────────────────────────────────────────────────────

    def _sync_devices(self) -> None:
        """Remove the devices of workflow files that are gone; rename the others as
        their files name them."""
        registry = dr.async_get(self.hass)
        prefix = workflow_device_identifier(self.site_id, "")[1]
        by_identifier = {workflow_device_identifier(self.site_id, w): w for w in self.host.files}
        for device in dr.async_entries_for_config_entry(registry, self.entry_id):
            ours = [i for i in device.identifiers if i[0] == DOMAIN and i[1].startswith(prefix)]
            if not ours:
                continue
            workflow_id = next((by_identifier[i] for i in ours if i in by_identifier), None)
            if workflow_id is None:
                _LOGGER.info("Workflow file of %s is gone; removing its device", device.name)
                registry.async_remove_device(device.id)
                continue
            info = self.device_info(workflow_id)
            name, version = info.get("name"), info.get("sw_version", device.sw_version)
            if (name, version) != (device.name, device.sw_version):
                registry.async_update_device(device.id, name=name, sw_version=version)
