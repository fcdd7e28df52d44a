"""The base of every workflow entity, and how a platform adds them per workflow file.

Each workflow file gets a device (under the site device) with a state select, last
outcome, runs today and accuracy sensors, a problem binary sensor, an image of the last
picture its AI looked at and, for a button-triggered workflow, a "Run now" button. An
entity listens only to the engine updates that change what it shows, for its own workflow
(see :mod:`.workflow_views`); the ones that change on every run (runs today, last outcome,
the picture) write their state at most once per :data:`WRITE_COOLDOWN_S`, however many
runs start, so a busy workflow cannot flood the state machine and the recorder.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import ClassVar, Final

from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers import entity_registry as er
from homeassistant.helpers.debounce import Debouncer
from homeassistant.helpers.entity import Entity
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from .engine import EngineUpdate, WorkflowStatus
from .host.ids import workflow_unique_id
from .runtime import OpenNVRConfigEntry
from .workflow import Workflow
from .workflow_views import FILES_CHANGED, WorkflowViews, workflow_views

_LOGGER = logging.getLogger(__name__)

#: The shortest time between two state writes of an entity that changes on every run.
WRITE_COOLDOWN_S: Final = 1.0

EntityFactory = Callable[[WorkflowViews, str], Iterable["WorkflowEntity"]]


def add_workflow_entities(
    hass: HomeAssistant,
    entry: OpenNVRConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
    factory: EntityFactory,
) -> None:
    """Add a platform's entities for every workflow file now and after each reload.

    The entities of a file that went away leave with its device (see
    :class:`~.workflow_views.WorkflowViews`); an entity a loaded workflow no longer has
    (a "Run now" button once the trigger is not a button) is removed here. A file that
    does not load keeps the entities it had, unavailable, so an edit with a typo does not
    lose their history."""
    views = workflow_views(hass, entry)
    if views is None:
        return
    added: dict[str, dict[str, WorkflowEntity]] = {}

    @callback
    def _sync() -> None:
        current = set(views.workflow_ids())
        for gone in set(added) - current:
            del added[gone]
        new: list[WorkflowEntity] = []
        for workflow_id in sorted(current):
            have = added.setdefault(workflow_id, {})
            wanted = {str(e.unique_id): e for e in factory(views, workflow_id)}
            new.extend(e for uid, e in wanted.items() if uid not in have)
            have.update({uid: e for uid, e in wanted.items() if uid not in have})
            if views.workflow(workflow_id) is None:
                continue
            for uid in set(have) - set(wanted):
                entity = have.pop(uid)
                if entity.entity_id:
                    er.async_get(hass).async_remove(entity.entity_id)
        if new:
            async_add_entities(new)

    _sync()
    entry.async_on_unload(views.on_files_changed(_sync))


class WorkflowEntity(Entity):
    """An entity of one workflow's device."""

    _attr_has_entity_name = True
    _attr_should_poll = False
    #: The engine update kinds that change what this entity shows.
    update_kinds: ClassVar[frozenset[str]] = frozenset()
    #: Whether the entity changes on every run (its writes are then spaced out).
    per_run: ClassVar[bool] = False

    def __init__(self, views: WorkflowViews, workflow_id: str, key: str) -> None:
        self.views = views
        self.workflow_id = workflow_id
        self._attr_unique_id = workflow_unique_id(views.site_id, workflow_id, key)
        self._attr_device_info = views.device_info(workflow_id)
        self._writer: Debouncer[object] | None = None
        self._gone = False

    @property
    def workflow(self) -> Workflow | None:
        """The workflow as its file says; None while the file does not load."""
        return self.views.workflow(self.workflow_id)

    @property
    def status(self) -> WorkflowStatus | None:
        """The workflow as the engine holds it (state, version, reason)."""
        return self.views.status(self.workflow_id)

    @property
    def available(self) -> bool:
        return self.status is not None

    async def async_added_to_hass(self) -> None:
        """Listen before the first read (subclasses read after this returns, so no update
        falls between what they read and what they hear)."""
        if self.per_run:
            self._writer = Debouncer(
                self.hass,
                _LOGGER,
                cooldown=WRITE_COOLDOWN_S,
                immediate=True,
                function=self._async_write,
            )
            self.async_on_remove(self._writer.async_shutdown)
        self.async_on_remove(
            self.views.listen(
                self.workflow_id, self.update_kinds | {FILES_CHANGED}, self._on_update
            )
        )

    async def async_will_remove_from_hass(self) -> None:
        self._gone = True

    @callback
    def _on_update(self, update: EngineUpdate) -> None:
        if not self.handle(update):
            return
        if self._writer is not None:
            self._writer.async_schedule_call()
        else:
            self.async_write_ha_state()

    @callback
    def handle(self, update: EngineUpdate) -> bool:
        """Take in an update; return whether the state needs writing."""
        return True

    async def async_refresh(self) -> None:
        """Read what a :attr:`per_run` entity shows before its (spaced out) write; the
        others show what they hold and write at once."""

    async def _async_write(self) -> None:
        await self.async_refresh()
        if not self._gone:
            self.async_write_ha_state()
