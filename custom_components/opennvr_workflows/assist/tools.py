"""The assistant's tools, in the order the model is shown them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from homeassistant.helpers import llm

from .base import SiteTool
from .camera_tools import (
    CameraHealthTool,
    DescribeCameraTool,
    RecentEventsTool,
    SearchHistoryTool,
    SiteLookupTool,
)
from .workflow_tools import ListWorkflowsTool, PendingApprovalsTool, RunTraceTool

TOOL_CLASSES: Final[tuple[type[SiteTool], ...]] = (
    DescribeCameraTool,
    RecentEventsTool,
    SearchHistoryTool,
    CameraHealthTool,
    SiteLookupTool,
    ListWorkflowsTool,
    RunTraceTool,
    PendingApprovalsTool,
)


def build_tools(sites: Mapping[str, str], cameras: list[str] | None = None) -> list[llm.Tool]:
    """One of each tool over ``sites`` (title -> config entry id); ``cameras``: the names
    the asker may use, offered as the camera arguments' choices when known."""
    return [tool(sites, cameras) for tool in TOOL_CLASSES]
