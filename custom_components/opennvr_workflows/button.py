"""A "Run now" button for each workflow whose trigger is a button press."""

from __future__ import annotations

from homeassistant.components.button import ButtonEntity
from homeassistant.core import HomeAssistant, callback
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from .const import DOMAIN
from .coordinator import OpenNVRConfigEntry
from .engine import EngineUpdate
from .entity import WorkflowEntity, add_workflow_entities
from .host.permissions import async_allow_entity
from .host.runs.ai_mark import start_mark
from .workflow.model import ButtonTrigger
from .workflow_views import WorkflowViews

PARALLEL_UPDATES = 0


async def async_setup_entry(
    hass: HomeAssistant,
    entry: OpenNVRConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    add_workflow_entities(hass, entry, async_add_entities, _buttons)


def _buttons(views: WorkflowViews, workflow_id: str) -> list[RunNowButton]:
    workflow = views.workflow(workflow_id)
    if workflow is None or not isinstance(workflow.when, ButtonTrigger):
        return []
    return [RunNowButton(views, workflow_id)]


class RunNowButton(WorkflowEntity, ButtonEntity):
    """Starts a run of the workflow, as the user who pressed it; named by the trigger's
    ``label`` when the file gives one."""

    _attr_translation_key = "workflow_run_now"

    def __init__(self, views: WorkflowViews, workflow_id: str) -> None:
        super().__init__(views, workflow_id, "run_now")
        self._label()

    def _label(self) -> None:
        """The file's label as the name; without one, the translated "Run now"."""
        workflow = self.workflow
        trigger = workflow.when if workflow is not None else None
        if isinstance(trigger, ButtonTrigger) and trigger.label:
            self._attr_name = trigger.label
        elif hasattr(self, "_attr_name"):
            del self._attr_name

    @callback
    def handle(self, update: EngineUpdate) -> bool:
        self._label()
        return True

    async def async_press(self) -> None:
        """Start a run as the presser; a press that descends from AI output (an automation
        a run's AI-derived output set off) starts an AI-derived run."""
        await async_allow_entity(self)
        user = self._context.user_id if self._context else None
        engine = self.views.host.engine
        mark = start_mark(self.views.host, self.workflow_id, self._context)
        started = engine.run_now(
            self.workflow_id,
            user,
            chain=mark.chain,
            ai_derived=mark.ai_derived,
            ai_origin=mark.ai_origin,
        )
        if not started and engine.paused:
            raise HomeAssistantError(
                translation_domain=DOMAIN,
                translation_key="workflows_paused",
                translation_placeholders={
                    "workflow": self.workflow.name if self.workflow else self.workflow_id
                },
            )
        if not started:
            status = self.status
            raise HomeAssistantError(
                translation_domain=DOMAIN,
                translation_key="workflow_not_started",
                translation_placeholders={
                    "workflow": self.workflow.name if self.workflow else self.workflow_id,
                    "state": status.state if status else "off",
                },
            )
