"""What a config entry holds while it is loaded (``entry.runtime_data``)."""

from __future__ import annotations

from dataclasses import dataclass

from homeassistant.config_entries import ConfigEntry
from pyopennvr import OpenNVRClient, SystemInfo

from .nvr.coordinator import CameraCoordinator


@dataclass(slots=True)
class OpenNVRRuntime:
    """The site's client, what it said about itself at setup, and the camera coordinator."""

    client: OpenNVRClient
    info: SystemInfo
    cameras: CameraCoordinator


type OpenNVRConfigEntry = ConfigEntry[OpenNVRRuntime]
