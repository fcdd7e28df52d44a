"""Keeps the site's camera list and each camera's online state.

The camera list changes rarely (cameras added or removed in OpenNVR), so it is polled;
online state is polled too as a safety net for when no event transport is connected.
Cameras are keyed by OpenNVR's integer id.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from homeassistant.core import HomeAssistant, callback
from homeassistant.exceptions import ConfigEntryAuthFailed
from homeassistant.helpers.update_coordinator import DataUpdateCoordinator, UpdateFailed
from pyopennvr import Camera, OpenNVRAuthError, OpenNVRClient, OpenNVRError

from ..const import CAMERA_POLL_SECONDS, DOMAIN, LOGGER

if TYPE_CHECKING:
    from ..runtime import OpenNVRConfigEntry


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
