"""Selects: the site mode (disarmed, armed home, armed away), read from and set on
OpenNVR; the vision model, among those an admin allowed; and each workflow's state (off,
test, on), kept by the engine across restarts.

A workflow the engine parked in *needs attention* shows no option (its state is unknown)
while its problem binary sensor is on with the reason: choosing off, test or on is how a
person says "I looked", and clears it. Who may choose is each select's door (see
:mod:`.host.permissions`): a workflow's state is an admin's; the site mode is for whoever
Home Assistant lets control the select; the vision model is an admin's too.
"""

from __future__ import annotations

from homeassistant.components.select import SelectEntity
from homeassistant.const import EntityCategory
from homeassistant.core import HomeAssistant, callback
from homeassistant.exceptions import HomeAssistantError, ServiceValidationError
from homeassistant.helpers.dispatcher import async_dispatcher_connect
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback
from pyopennvr import OpenNVRAuthError, OpenNVRError

from .const import CONF_VISION_MODEL, DOMAIN, SITE_MODES
from .coordinator import OpenNVRConfigEntry
from .engine import UnknownWorkflowError
from .entity import ModelEntity, OpenNVRSiteEntity, WorkflowEntity, add_workflow_entities
from .host.action_support import check_entry_turn_on
from .host.permissions import async_allow_entity
from .host.workflows import WorkflowHost
from .nvr.bridge import site_signal
from .workflow_views import WorkflowViews

#: The states a person can choose for a workflow.
WORKFLOW_STATES = ["off", "test", "on"]

# A choice writes to OpenNVR (the site mode) or to the engine and the options: one at a
# time, so two quick choices land in the order they were made.
PARALLEL_UPDATES = 1


async def async_setup_entry(
    hass: HomeAssistant,
    entry: OpenNVRConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    async_add_entities([SiteModeSelect(entry)])
    if (host := entry.runtime_data.workflows) is not None:
        async_add_entities([VisionModelSelect(entry, host)])
    add_workflow_entities(
        hass,
        entry,
        async_add_entities,
        lambda views, wid: [WorkflowStateSelect(entry, views, wid)],
    )


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
        await async_allow_entity(self)
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


class WorkflowStateSelect(WorkflowEntity, SelectEntity):
    """Off, test or on; the engine stores the choice (its unique id key is ``state``:
    the effects find it by that for logbook lines of the workflow)."""

    _attr_translation_key = "workflow_state"
    _attr_options = WORKFLOW_STATES
    update_kinds = frozenset({"workflow_state"})

    def __init__(self, entry: OpenNVRConfigEntry, views: WorkflowViews, workflow_id: str) -> None:
        super().__init__(views, workflow_id, "state")
        self.entry = entry

    @property
    def current_option(self) -> str | None:
        status = self.status
        if status is None or status.state not in WORKFLOW_STATES:
            return None
        return status.state

    async def async_select_option(self, option: str) -> None:
        workflow = self.workflow
        if workflow is None or self.status is None:
            raise HomeAssistantError(
                translation_domain=DOMAIN,
                translation_key="workflow_unavailable",
                translation_placeholders={"workflow": self.workflow_id},
            )
        await async_allow_entity(self)
        check_entry_turn_on(self.entry, self.workflow_id, workflow, option)
        try:
            self.views.host.engine.set_workflow_state(self.workflow_id, option)
        except UnknownWorkflowError as err:
            raise HomeAssistantError(
                translation_domain=DOMAIN,
                translation_key="workflow_unavailable",
                translation_placeholders={"workflow": self.workflow_id},
            ) from err


class VisionModelSelect(ModelEntity, SelectEntity):
    """The vision model, among the models an admin allowed (and the one chosen now).
    Choosing is an admin's; the options are saved and the entry reloads, as saving the
    options does."""

    _attr_translation_key = "vision_model"
    _attr_entity_category = EntityCategory.CONFIG

    def __init__(self, entry: OpenNVRConfigEntry, host: WorkflowHost) -> None:
        super().__init__(entry, host, "select")

    @property
    def options(self) -> list[str]:
        settings = self.host.settings
        chosen = [settings.vision_model] if settings.vision_model else []
        return list(dict.fromkeys([*chosen, *settings.model_allow_list]))

    @property
    def current_option(self) -> str | None:
        return self.host.settings.vision_model or None

    async def async_select_option(self, option: str) -> None:
        await async_allow_entity(self)
        if option not in self.options:
            raise ServiceValidationError(
                translation_domain=DOMAIN,
                translation_key="model_not_allowed",
                translation_placeholders={"model": option, "models": ", ".join(self.options)},
            )
        if option == self.current_option:
            return
        hass = self.hass
        hass.config_entries.async_update_entry(
            self.entry, options={**self.entry.options, CONF_VISION_MODEL: option}
        )
        hass.config_entries.async_schedule_reload(self.entry.entry_id)
