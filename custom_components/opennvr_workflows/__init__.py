"""OpenNVR Workflows: an OpenNVR site's cameras, events and AI workflows in Home Assistant."""

from __future__ import annotations

from homeassistant.const import (
    CONF_TOKEN,
    CONF_URL,
    EVENT_HOMEASSISTANT_STOP,
    Platform,
)
from homeassistant.core import Event, HomeAssistant, callback
from homeassistant.exceptions import (
    ConfigEntryAuthFailed,
    ConfigEntryError,
    ConfigEntryNotReady,
)
from homeassistant.helpers import config_validation as cv
from homeassistant.helpers.typing import ConfigType
from pyopennvr import OpenNVRError

from .assist.api import async_register_assist
from .const import CONF_VERIFY_SSL, DOMAIN, LOGGER
from .coordinator import CameraCoordinator, OpenNVRConfigEntry, OpenNVRRuntime
from .devices import async_register_site_device, async_remove_stale_cameras

# Home Assistant calls it on the integration's module when a user deletes a device.
from .devices import async_remove_config_entry_device as async_remove_config_entry_device
from .host.removal import async_remove_entry_data
from .host.services import async_setup_services
from .host.setup import async_setup_workflows
from .intents import async_setup_intents
from .nvr.bridge import async_bridge_hub
from .nvr.hub import EventHub
from .nvr.observed import derives_observed, link_observed
from .nvr.sources.factory import async_build_sources
from .nvr_client import SiteCheckError, async_check_site
from .panel import async_setup_panel

PLATFORMS: list[Platform] = [
    Platform.AI_TASK,
    Platform.BINARY_SENSOR,
    Platform.BUTTON,
    Platform.CAMERA,
    Platform.EVENT,
    Platform.IMAGE,
    Platform.SELECT,
    Platform.SENSOR,
    Platform.SWITCH,
]
CONFIG_SCHEMA = cv.config_entry_only_config_schema(DOMAIN)


def _platforms(hass: HomeAssistant) -> list[Platform]:
    """The platforms an entry sets up: all of them where Home Assistant's core integration
    runs (always, in a running Home Assistant); without it, all but the AI Task, whose
    ``ai_task`` needs ``conversation``, which needs the core integration."""
    if "homeassistant" in hass.config.components:
        return PLATFORMS
    return [platform for platform in PLATFORMS if platform is not Platform.AI_TASK]


_TRANSIENT = frozenset({"cannot_connect", "ssl_error"})


async def async_setup(hass: HomeAssistant, config: ConfigType) -> bool:
    """Set up the domain: its actions and the Workflows panel, once for every entry."""
    async_setup_services(hass)
    async_setup_intents(hass)
    await async_setup_panel(hass)
    return True


async def async_setup_entry(hass: HomeAssistant, entry: OpenNVRConfigEntry) -> bool:
    """Connect to the site, load its cameras, start the event sources, add the platforms."""
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
    hub = EventHub()
    runtime = OpenNVRRuntime(
        client=site.client,
        info=site.info,
        cameras=cameras,
        hub=hub,
        settings=dict(entry.options),
    )
    entry.runtime_data = runtime
    try:
        runtime.site_mode = (await site.client.get_site_mode()).mode
    except OpenNVRError as err:
        # The token may lack settings.view; the websocket snapshot brings the mode anyway.
        LOGGER.debug("Site mode not readable at setup: %s", err)

    runtime.site_device_id = async_register_site_device(hass, entry)
    entry.async_on_unload(
        cameras.async_add_listener(lambda: async_remove_stale_cameras(hass, entry))
    )
    entry.async_on_unload(async_bridge_hub(hass, entry))

    @callback
    def _token_refused() -> None:
        entry.async_start_reauth(hass)

    runtime.sources = await async_build_sources(
        hass,
        runtime.settings,
        site.client,
        hub,
        on_auth_failed=_token_refused,
        entry_id=entry.entry_id,
    )
    if derives_observed(source.name for source in runtime.sources):
        # The websocket alone: its detector tracks stand in for the contracted
        # detection.observed.v1 events that NATS and MQTT carry.
        entry.async_on_unload(link_observed(hub))
    # The engine starts before the platforms (its workflows have entities) and before the
    # sources (no event is offered to an engine that is not listening yet).
    await async_setup_workflows(hass, entry)
    # The camera assistant's LLM API (assist/api.py), while the entry is loaded.
    entry.async_on_unload(async_register_assist(hass, entry))
    await hass.config_entries.async_forward_entry_setups(entry, _platforms(hass))

    async def _stop_sources(_: Event | None = None) -> None:
        for source in runtime.sources:
            await source.stop()

    for source in runtime.sources:
        await source.start()
    # Connections close on unload and when Home Assistant stops (it does not unload).
    entry.async_on_unload(_stop_sources)
    entry.async_on_unload(hass.bus.async_listen_once(EVENT_HOMEASSISTANT_STOP, _stop_sources))
    return True


async def async_unload_entry(hass: HomeAssistant, entry: OpenNVRConfigEntry) -> bool:
    """Stop the workflows first (runs reach a waiting point and their writes are drained
    before Home Assistant cancels the entry's background tasks), then unload the
    platforms; sources stop through ``async_on_unload``."""
    if (host := entry.runtime_data.workflows) is not None:
        await host.async_stop()
    return await hass.config_entries.async_unload_platforms(entry, _platforms(hass))


async def async_remove_entry(hass: HomeAssistant, entry: OpenNVRConfigEntry) -> None:
    """The entry is unloaded and being removed: clear its questions' cards, end its
    waiting runs, delete its stores and database (the workflow files stay unless the
    options ask otherwise; see :mod:`.host.removal`)."""
    await async_remove_entry_data(hass, entry)
