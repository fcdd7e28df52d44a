"""The site mode (disarmed, armed home, armed away): read from and set on OpenNVR."""

from __future__ import annotations

from homeassistant.components.select import SelectEntity
from homeassistant.core import HomeAssistant, callback
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers.dispatcher import async_dispatcher_connect
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback
from pyopennvr import OpenNVRAuthError, OpenNVRError

from .const import DOMAIN, SITE_MODES
from .entity import OpenNVRSiteEntity
from .nvr.bridge import site_signal
from .runtime import OpenNVRConfigEntry

PARALLEL_UPDATES = 1


async def async_setup_entry(
    hass: HomeAssistant,
    entry: OpenNVRConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    async_add_entities([SiteModeSelect(entry)])


class SiteModeSelect(OpenNVRSiteEntity, SelectEntity):
    """Pushed by the events websocket (``site_mode`` frames), set with ``PUT /site-mode``."""

    _attr_translation_key = "site_mode"
    _attr_options = list(SITE_MODES)

    def __init__(self, entry: OpenNVRConfigEntry) -> None:
        super().__init__(entry, "site_mode")

    @property
    def current_option(self) -> str | None:
        mode = self.entry.runtime_data.site_mode
        return mode if mode in SITE_MODES else None

    @property
    def available(self) -> bool:
        return self.entry.runtime_data.site_mode is not None

    async def async_added_to_hass(self) -> None:
        self.async_on_remove(
            async_dispatcher_connect(self.hass, site_signal(self.entry), self._refresh)
        )

    @callback
    def _refresh(self) -> None:
        self.async_write_ha_state()

    async def async_select_option(self, option: str) -> None:
        runtime = self.entry.runtime_data
        try:
            mode = await runtime.client.set_site_mode(option, reason="Home Assistant")
        except OpenNVRAuthError as err:
            raise HomeAssistantError(
                translation_domain=DOMAIN,
                translation_key="site_mode_forbidden",
                translation_placeholders={"error": str(err)},
            ) from err
        except OpenNVRError as err:
            raise HomeAssistantError(
                translation_domain=DOMAIN,
                translation_key="site_mode_failed",
                translation_placeholders={"error": str(err)},
            ) from err
        runtime.site_mode = mode.mode
        self.async_write_ha_state()
