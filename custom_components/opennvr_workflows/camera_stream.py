"""Which live stream a camera offers: only one that can be opened.

OpenNVR says where a camera's stream is (``GET /streams/{id}/info``: RTSPS, or plain RTSP
when enabled, each with a short-lived token). The camera entity offers Home Assistant a
stream only once a DESCRIBE of that URL succeeds; until then, or when none is advertised,
its live view shows still pictures. A stream OpenNVR advertises that cannot be opened is
raised in Repairs (one issue per camera, saying what failed), as ``unifiprotect`` does for
cameras without RTSPS. Stream URLs carry their token, so they are never logged: ours name
only ``host:port``, and Home Assistant's stream loggers get a filter that redacts them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from ssl import SSLContext

from homeassistant.core import HomeAssistant
from homeassistant.helpers import issue_registry as ir
from homeassistant.util.ssl import client_context, get_default_no_verify_context
from pyopennvr import OpenNVRClient, OpenNVRError, StreamInfo

from .const import DOMAIN, LOGGER
from .nvr.redact import SECRET_FILTER
from .nvr.rtsp_probe import ProbeResult, probe_rtsp, stream_address

#: How often an advertised stream is asked again (it may be fixed, or break, any time).
STREAM_RECHECK = timedelta(minutes=10)
PROBE_TIMEOUT_S = 5.0
#: Home Assistant's loggers that print a stream's URL (the stream worker's per-camera
#: logger, ``...stream.stream.<entity_id>``, is added per entity).
STREAM_LOGGERS = (
    "homeassistant.components.stream",
    "homeassistant.components.stream.worker",
    "homeassistant.components.go2rtc",
    "homeassistant.components.go2rtc.server",
)


@dataclass(frozen=True, slots=True)
class StreamCheck:
    """What a check found: no stream advertised (``result`` None), or the probe's answer
    for the advertised one at ``address`` (``host:port``, safe to show)."""

    address: str | None = None
    result: ProbeResult | None = None

    @property
    def ok(self) -> bool:
        return self.result is not None and self.result.ok


def advertised_url(info: StreamInfo) -> str | None:
    """The URL Home Assistant can play: RTSPS, else plain RTSP when the site enables it."""
    urls = info.raw.get("urls") or {}
    return info.rtsps_url or urls.get("rtsp") or None


def stream_ssl_context(client: OpenNVRClient) -> SSLContext:
    """The stream server is OpenNVR's own: verify its certificate as the site's is."""
    return client_context() if client.ssl is None else get_default_no_verify_context()


async def async_check_stream(client: OpenNVRClient, camera_id: int) -> StreamCheck | None:
    """Ask OpenNVR for the camera's stream and try to open it; None when OpenNVR could not
    be asked (the caller keeps what it knew and asks again later)."""
    try:
        info = await client.get_stream_info(camera_id)
    except OpenNVRError as err:
        LOGGER.debug("Stream of camera %s not readable: %s", camera_id, err)
        return None
    if (url := advertised_url(info)) is None:
        return StreamCheck()
    result = await probe_rtsp(url, stream_ssl_context(client), within_s=PROBE_TIMEOUT_S)
    return StreamCheck(stream_address(url), result)


def stream_issue_id(entry_id: str, camera_id: int) -> str:
    return f"{entry_id}_stream_{camera_id}"


def raise_stream_issue(
    hass: HomeAssistant,
    entry_id: str,
    camera_id: int,
    camera: str,
    address: str,
    result: ProbeResult,
) -> None:
    """One issue per camera; its text depends on what failed (``camera_stream_<problem>``)."""
    ir.async_create_issue(
        hass,
        DOMAIN,
        stream_issue_id(entry_id, camera_id),
        is_fixable=False,
        is_persistent=False,
        severity=ir.IssueSeverity.WARNING,
        translation_key=f"camera_stream_{result.problem}",
        translation_placeholders={"camera": camera, "address": address, "detail": result.detail},
    )


def clear_stream_issue(hass: HomeAssistant, entry_id: str, camera_id: int) -> None:
    ir.async_delete_issue(hass, DOMAIN, stream_issue_id(entry_id, camera_id))


def redact_stream_logs(entity_id: str) -> Callable[[], None]:
    """Add the token filter to Home Assistant's stream loggers (the per-camera one is named
    after the entity); returns what removes it from the per-camera one."""
    for name in STREAM_LOGGERS:
        logging.getLogger(name).addFilter(SECRET_FILTER)
    per_camera = logging.getLogger(f"homeassistant.components.stream.stream.{entity_id}")
    per_camera.addFilter(SECRET_FILTER)
    return lambda: per_camera.removeFilter(SECRET_FILTER)
