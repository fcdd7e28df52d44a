"""What a config entry holds while it is loaded (``entry.runtime_data``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from homeassistant.config_entries import ConfigEntry
from pyopennvr import OpenNVRClient, SystemInfo

from .nvr.coordinator import CameraCoordinator
from .nvr.hub import EventHub
from .nvr.sources.base import EventSource

if TYPE_CHECKING:
    from .host.home_evaluation import HomeEvaluation
    from .host.workflows import WorkflowHost
    from .workflow_views import WorkflowViews


@dataclass(slots=True)
class OpenNVRRuntime:
    """The site's client and what it said about itself at setup, the camera coordinator,
    the event hub and its sources, and the live state that events push."""

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
    #: What the workflows' entities read (made by the first platform, see workflow_views).
    workflow_views: WorkflowViews | None = None
    #: The home's own cases and the model's measurements (host/home_evaluation.py).
    evaluation: HomeEvaluation | None = None


type OpenNVRConfigEntry = ConfigEntry[OpenNVRRuntime]
