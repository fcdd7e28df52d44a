"""Selects: the site mode (disarmed, armed home, armed away), read from and set on
OpenNVR; and each workflow's state (off, test, on), kept by the engine across restarts.

A workflow the engine parked in *needs attention* shows no option (its state is unknown)
while its problem binary sensor is on with the reason: choosing off, test or on is how a
person says "I looked", and clears it. Who may choose is each select's door (see
:mod:`.host.permissions`): a workflow's state is an admin's; the site mode is for whoever
Home Assistant lets control the select.
"""

from __future__ import annotations

from homeassistant.components.select import SelectEntity
from homeassistant.core import HomeAssistant, callback
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers.dispatcher import async_dispatcher_connect
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback
from pyopennvr import OpenNVRAuthError, OpenNVRError

from .const import DOMAIN, SITE_MODES
from .engine import UnknownWorkflowError
from .entity import OpenNVRSiteEntity
from .host.measurements import check_entry_turn_on
from .host.permissions import async_allow_entity
from .model_device import model_selects
from .nvr.bridge import site_signal
from .runtime import OpenNVRConfigEntry
from .workflow_entity import WorkflowEntity, add_workflow_entities
from .workflow_views import WorkflowViews

#: The states a person can choose for a workflow.
WORKFLOW_STATES = ["off", "test", "on"]

PARALLEL_UPDATES = 1


async def async_setup_entry(
    hass: HomeAssistant,
    entry: OpenNVRConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    async_add_entities([SiteModeSelect(entry), *model_selects(entry)])
    add_workflow_entities(
        hass, entry, async_add_entities, lambda views, wid: [WorkflowStateSelect(views, wid)]
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

    def __init__(self, views: WorkflowViews, workflow_id: str) -> None:
        super().__init__(views, workflow_id, "state")

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
        check_entry_turn_on(self.views.entry, self.workflow_id, workflow, option)
        try:
            self.views.host.engine.set_workflow_state(self.workflow_id, option)
        except UnknownWorkflowError as err:
            raise HomeAssistantError(
                translation_domain=DOMAIN,
                translation_key="workflow_unavailable",
                translation_placeholders={"workflow": self.workflow_id},
            ) from err
