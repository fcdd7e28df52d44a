"""The site's AI Task entity: Home Assistant's ``ai_task.generate_data`` answered by a Look.

Automations, scripts, blueprints and the UI ask AI Task entities for data. Asked about one
of this site's cameras (a camera attachment), this entity answers through the Look path
with everything a workflow's Look guarantees (:mod:`.host.model.task_look`): OpenNVR's pictures,
several frames for a decision, the site's rules, the step limits, an hourly budget, a
trace row, the picture kept as evidence, and ``unsure`` as an answer. It belongs to the
vision model device (:class:`.entity.ModelEntity`).

Its door is a reading one (``entity:ai_task.look``): it moves nothing, and answers each
person about the cameras they may see.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import override

from homeassistant.components import conversation
from homeassistant.components.ai_task import (
    AITaskEntity,
    AITaskEntityFeature,
    GenDataTask,
    GenDataTaskResult,
)
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from .coordinator import OpenNVRConfigEntry
from .entity import ModelEntity
from .host.model.task_look import async_answer_task
from .host.permissions import entity_door
from .host.workflows import WorkflowHost

# Each task is one model call path; Home Assistant may run tasks of several callers at once.
PARALLEL_UPDATES = 0

#: The context of the task this asyncio task is answering. Home Assistant sets the context
#: on the entity object (shared by concurrent tasks) before it calls the entity; read here
#: per asyncio task, one caller's task is never answered as another's.
_TASK_CONTEXT: ContextVar[Context | None] = ContextVar("opennvr_task_context", default=None)


async def async_setup_entry(
    hass: HomeAssistant,
    entry: OpenNVRConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    if (host := entry.runtime_data.workflows) is not None:
        async_add_entities([LookTaskEntity(entry, host)])


class LookTaskEntity(ModelEntity, AITaskEntity):
    """Generates data about a camera of this site: a typed answer from a Look."""

    _attr_translation_key = "look"
    _attr_supported_features = (
        AITaskEntityFeature.GENERATE_DATA | AITaskEntityFeature.SUPPORT_ATTACHMENTS
    )

    def __init__(self, entry: OpenNVRConfigEntry, host: WorkflowHost) -> None:
        super().__init__(entry, host, "ai_task")

    @override
    def async_set_context(self, context: Context) -> None:
        """Home Assistant's first step of a task: remember its caller for this task."""
        _TASK_CONTEXT.set(context)
        super().async_set_context(context)

    @override
    async def _async_generate_data(
        self, task: GenDataTask, chat_log: conversation.ChatLog
    ) -> GenDataTaskResult:
        # Never fails open: without this task's context, the entity's last one (a person
        # is never answered as Home Assistant itself by mistake).
        context = _TASK_CONTEXT.get() or self._context
        _TASK_CONTEXT.set(None)
        data = await async_answer_task(
            self.hass,
            self.entry,
            entity_door(self),
            context,
            instructions=task.instructions,
            structure=task.structure,
            attachments=task.attachments,
            task_name=task.name,
        )
        return GenDataTaskResult(conversation_id=chat_log.conversation_id, data=data)
