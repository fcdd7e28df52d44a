"""OpenNVR Workflows: an OpenNVR site's cameras, events and AI workflows in Home Assistant."""

from __future__ import annotations

from homeassistant.const import CONF_TOKEN, CONF_URL, Platform
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import (
    ConfigEntryAuthFailed,
    ConfigEntryError,
    ConfigEntryNotReady,
)
from homeassistant.helpers import config_validation as cv
from homeassistant.helpers.typing import ConfigType

from .const import CONF_VERIFY_SSL, DOMAIN
from .nvr.coordinator import CameraCoordinator
from .nvr_client import SiteCheckError, async_check_site
from .runtime import OpenNVRConfigEntry, OpenNVRRuntime

PLATFORMS: list[Platform] = [Platform.CAMERA]
CONFIG_SCHEMA = cv.config_entry_only_config_schema(DOMAIN)
_TRANSIENT = frozenset({"cannot_connect", "ssl_error"})


async def async_setup(hass: HomeAssistant, config: ConfigType) -> bool:
    """Set up the domain (actions are registered here once they exist)."""
    return True


async def async_setup_entry(hass: HomeAssistant, entry: OpenNVRConfigEntry) -> bool:
    """Connect to the site, load its cameras, and set up the platforms."""
    try:
        site = await async_check_site(
            hass, entry.data[CONF_URL], entry.data[CONF_TOKEN], entry.data[CONF_VERIFY_SSL]
        )
    except SiteCheckError as err:
        if err.key in ("invalid_auth", "missing_scopes"):
            raise ConfigEntryAuthFailed(
                translation_domain=DOMAIN,
                translation_key=f"setup_{err.key}",
                translation_placeholders={"detail": str(err)},
            ) from err
        # Unreachable or a TLS problem may clear up by itself: retry. A server that is not
        # OpenNVR, or speaks another contract, needs the user: stop with the reason.
        error = ConfigEntryNotReady if err.key in _TRANSIENT else ConfigEntryError
        raise error(
            translation_domain=DOMAIN,
            translation_key=f"setup_{err.key}",
            translation_placeholders={"detail": str(err)},
        ) from err
    if site.info.site_id != entry.unique_id:
        raise ConfigEntryError(
            translation_domain=DOMAIN,
            translation_key="setup_wrong_site",
            translation_placeholders={"site_id": site.info.site_id},
        )
    cameras = CameraCoordinator(hass, entry, site.client)
    await cameras.async_config_entry_first_refresh()
    entry.runtime_data = OpenNVRRuntime(client=site.client, info=site.info, cameras=cameras)
    await hass.config_entries.async_forward_entry_setups(entry, PLATFORMS)
    return True


async def async_unload_entry(hass: HomeAssistant, entry: OpenNVRConfigEntry) -> bool:
    """Unload the platforms; the shared HTTP session is Home Assistant's and stays open."""
    return await hass.config_entries.async_unload_platforms(entry, PLATFORMS)
