"""The entry's runtime: the camera coordinator and what a loaded config entry holds.

The camera list changes rarely (cameras added or removed in OpenNVR), so it is polled;
online state is polled too as a safety net for when no event transport is connected.
Cameras are keyed by OpenNVR's integer id. Everything else the entry runs on (the event
hub and its sources, the workflow host, the history search, the home's own cases) is held
beside the coordinator in :class:`OpenNVRRuntime`, the entry's ``runtime_data``, and typed
here once as :data:`OpenNVRConfigEntry`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from homeassistant.config_entries import ConfigEntry
from homeassistant.core import HomeAssistant, callback
from homeassistant.exceptions import ConfigEntryAuthFailed
from homeassistant.helpers.device_registry import DeviceInfo
from homeassistant.helpers.update_coordinator import DataUpdateCoordinator, UpdateFailed
from pyopennvr import Camera, OpenNVRAuthError, OpenNVRClient, OpenNVRError, SystemInfo

from .const import CAMERA_POLL_SECONDS, DOMAIN, LOGGER
from .nvr.hub import EventHub
from .nvr.sources.base import EventSource

if TYPE_CHECKING:
    # Read by the type checker only: none of these modules imports this one, so the
    # drawing of the imports has no cycle through the runtime (tests/test_import_graph.py).
    from .host.cases.evaluation import HomeEvaluation
    from .host.history.search import HistorySearch
    from .host.workflows import WorkflowHost
    from .workflow_views import WorkflowViews


def camera_online(camera: Camera) -> bool:
    """OpenNVR's ``live_online`` is True/False/None (unknown); unknown counts as online
    only when the camera is active and its status does not say offline."""
    live = camera.raw.get("live_online")
    if live is not None:
        return bool(live)
    return camera.is_active and camera.raw.get("status") != "offline"


class CameraCoordinator(DataUpdateCoordinator[dict[int, Camera]]):
    """Polls ``GET /cameras/``; entities read ``data[camera_id]``."""

    config_entry: OpenNVRConfigEntry

    def __init__(
        self, hass: HomeAssistant, entry: OpenNVRConfigEntry, client: OpenNVRClient
    ) -> None:
        super().__init__(
            hass,
            LOGGER,
            config_entry=entry,
            name=f"{DOMAIN} cameras",
            update_interval=timedelta(seconds=CAMERA_POLL_SECONDS),
        )
        self.client = client
        #: Online state pushed by events since the last poll; a poll starts it afresh, so
        #: a status pushed before a lost connection cannot outlive what the poll says.
        self.pushed_online: dict[int, bool] = {}

    def is_online(self, camera_id: int) -> bool:
        """Pushed status when there is one, else what the last poll said."""
        if (pushed := self.pushed_online.get(camera_id)) is not None:
            return pushed
        camera = self.data.get(camera_id) if self.data else None
        return camera is not None and camera_online(camera)

    @callback
    def async_set_pushed_online(self, camera_id: int, online: bool) -> None:
        """An event said the camera went on- or offline: update entities now."""
        if self.pushed_online.get(camera_id) != online:
            self.pushed_online[camera_id] = online
            self.async_update_listeners()

    async def _async_update_data(self) -> dict[int, Camera]:
        try:
            cameras = await self.client.get_cameras()
        except OpenNVRAuthError as err:
            raise ConfigEntryAuthFailed(
                translation_domain=DOMAIN, translation_key="auth_failed"
            ) from err
        except OpenNVRError as err:
            raise UpdateFailed(
                translation_domain=DOMAIN,
                translation_key="update_failed",
                translation_placeholders={"error": str(err)},
            ) from err
        self.pushed_online.clear()
        return {camera.id: camera for camera in cameras}


@dataclass(slots=True)
class OpenNVRRuntime:
    """The site's client and what it said about itself at setup, the camera coordinator,
    the event hub and its sources, the live state that events push, and the per-entry
    objects of the workflows (made by :func:`.host.setup.async_setup_workflows`)."""

    client: OpenNVRClient
    info: SystemInfo
    cameras: CameraCoordinator
    hub: EventHub
    settings: Mapping[str, Any] = field(default_factory=dict)
    sources: list[EventSource] = field(default_factory=list)
    site_mode: str | None = None
    #: The site's device registry id: camera devices come "via" it.
    site_device_id: str = ""
    #: The workflows of this entry: their files, the engine and its ports.
    workflows: WorkflowHost | None = None
    #: What the workflows' entities read (made by the first platform, see entity.py).
    workflow_views: WorkflowViews | None = None
    #: The home's own cases and the model's measurements (host/cases/evaluation.py).
    evaluation: HomeEvaluation | None = None
    #: The history search over the engine's index and OpenNVR's (host/history/search.py).
    history: HistorySearch | None = None
    #: Each camera's device as its entities give it, with what it was built from
    #: (:func:`.devices.camera_device_info`).
    camera_devices: dict[int, tuple[tuple[object, ...], DeviceInfo]] = field(default_factory=dict)


type OpenNVRConfigEntry = ConfigEntry[OpenNVRRuntime]
