"""Constants shared by the Home Assistant side of the integration."""

from __future__ import annotations

import logging
from typing import Final

DOMAIN: Final = "opennvr_workflows"
TITLE: Final = "OpenNVR Workflows"
LOGGER: Final = logging.getLogger(__package__)

CONF_VERIFY_SSL: Final = "verify_ssl"

#: Token scopes the integration cannot work without: list the cameras, show them, and
#: receive the site's alerts. Others (ptz.control, recordings.view, ...) only enable
#: optional actions, and their absence is reported where they are used.
REQUIRED_SCOPES: Final = frozenset({"cameras.view", "live.view", "alerts.view"})

#: How often the camera list and each camera's online state are re-read. The events
#: websocket pushes camera status as it changes; this poll is the safety net.
CAMERA_POLL_SECONDS: Final = 60
REQUEST_TIMEOUT_SECONDS: Final = 10.0
