"""Sensors: diagnostic counters per event source, and each workflow's last outcome, runs
today and accuracy.

A dropped payload (malformed, unknown shape) is logged once per kind and counted here, so a
change in what OpenNVR or a broker sends shows up on the dashboard instead of silently.

A workflow's sensors read the engine once when they are added and then follow its
updates: runs today counts ``run_started`` updates (reset at local midnight), the last
outcome reads the one run that just ended, accuracy is the engine's marked record.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import Any

from homeassistant.components.sensor import SensorEntity, SensorStateClass
from homeassistant.const import PERCENTAGE, EntityCategory
from homeassistant.core import Context, HomeAssistant, callback
from homeassistant.helpers.dispatcher import async_dispatcher_connect
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback
from homeassistant.util import dt as dt_util

from .engine import EngineError, EngineUpdate
from .entity import OpenNVRSiteEntity
from .host.approvals import ApprovalDesk
from .host.measurements import measured_attributes, measured_figures, measured_signal
from .host.run_summary import (
    SHOWN,
    RunOutcome,
    WorkflowAccuracy,
    is_trial,
    is_trial_update,
    run_outcome,
    workflow_accuracy,
)
from .model_device import model_sensors
from .nvr.bridge import counters_signal, site_signal
from .nvr.hub import SourceStats
from .runtime import OpenNVRConfigEntry
from .workflow_entity import WorkflowEntity, add_workflow_entities
from .workflow_views import NEW_DAY, WorkflowViews

_LOGGER = logging.getLogger(__name__)
#: How many of a workflow's latest runs are read at start to find the last one that ended.
LATEST_RUNS = 10

PARALLEL_UPDATES = 0


@dataclass(frozen=True, slots=True)
class CounterDescription:
    key: str
    value: Callable[[SourceStats], int]


COUNTERS = (
    CounterDescription("events_received", lambda stats: stats.received),
    CounterDescription("events_dropped", lambda stats: stats.dropped),
)


async def async_setup_entry(
    hass: HomeAssistant,
    entry: OpenNVRConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    async_add_entities(
        SourceCounter(entry, source.name, counter)
        for source in entry.runtime_data.sources
        for counter in COUNTERS
    )
    if (host := entry.runtime_data.workflows) is not None:
        async_add_entities([PendingApprovalsSensor(entry, host.desk)])
    async_add_entities(model_sensors(entry))
    add_workflow_entities(
        hass,
        entry,
        async_add_entities,
        lambda views, wid: [
            LastOutcomeSensor(views, wid),
            RunsTodaySensor(views, wid),
            AccuracySensor(views, wid),
        ],
    )


class SourceCounter(OpenNVRSiteEntity, SensorEntity):
    """One counter of one source, e.g. "NATS events dropped". Off until a user turns it
    on, as core's diagnostic counters are: it changes on every event, and each change is a
    state written to the recorder."""

    _attr_entity_category = EntityCategory.DIAGNOSTIC
    _attr_entity_registry_enabled_default = False
    _attr_state_class = SensorStateClass.TOTAL_INCREASING

    def __init__(
        self, entry: OpenNVRConfigEntry, source: str, description: CounterDescription
    ) -> None:
        super().__init__(entry, f"{source}_{description.key}")
        self.source = source
        self.description = description
        self._attr_translation_key = f"{source}_{description.key}"

    @property
    def _stats(self) -> SourceStats | None:
        return self.entry.runtime_data.hub.stats.get(self.source)

    @property
    def native_value(self) -> int:
        stats = self._stats
        return self.description.value(stats) if stats else 0

    @property
    def extra_state_attributes(self) -> dict[str, Any] | None:
        stats = self._stats
        if stats is None:
            return None
        if self.description.key == "events_dropped":
            return {"by_kind": dict(stats.dropped_by_kind)}
        return {
            "connected": stats.connected,
            "duplicates": stats.duplicates,
            "last_event_at": stats.last_event_at.isoformat() if stats.last_event_at else None,
        }

    async def async_added_to_hass(self) -> None:
        self.async_on_remove(
            async_dispatcher_connect(self.hass, counters_signal(self.entry), self._refresh)
        )
        self.async_on_remove(
            async_dispatcher_connect(self.hass, site_signal(self.entry), self._refresh)
        )

    @callback
    def _refresh(self) -> None:
        self.async_write_ha_state()


class PendingApprovalsSensor(OpenNVRSiteEntity, SensorEntity):
    """How many workflow questions wait for an answer; the questions (never their answer
    tokens) as attributes, soonest deadline first, for a dashboard card."""

    _attr_translation_key = "pending_approvals"
    _attr_state_class = SensorStateClass.MEASUREMENT
    # A question's text may name a plate or a person: shown live, never recorded.
    _unrecorded_attributes = frozenset({"questions"})

    def __init__(self, entry: OpenNVRConfigEntry, desk: ApprovalDesk) -> None:
        super().__init__(entry, "pending_approvals")
        self._desk = desk

    async def async_added_to_hass(self) -> None:
        self.async_on_remove(self._desk.subscribe(self.async_write_ha_state))

    @property
    def native_value(self) -> int:
        return len(self._desk.pending())

    @property
    def extra_state_attributes(self) -> dict[str, Any]:
        return {
            "questions": [
                {
                    "approval_id": t.approval_id,
                    "workflow": t.workflow_name,
                    "message": t.message,
                    "replies": list(t.replies),
                    "expires_at": dt_util.utc_from_timestamp(t.expires_at).isoformat(),
                    "seen_again": t.seen_again,
                }
                for t in self._desk.pending()
            ]
        }


class LastOutcomeSensor(WorkflowEntity, SensorEntity):
    """What the workflow's last run decided (see :func:`.host.run_summary.run_outcome`),
    with the reason, confidence and run id as attributes: a run that ended, or one that
    waits (a parcel run decides, then waits half an hour to remind) once it waits."""

    _attr_translation_key = "workflow_last_outcome"
    # The model's reason may name a plate or a person: shown live, never recorded.
    _unrecorded_attributes = frozenset({"reason"})
    update_kinds = frozenset({"run_ended", "run_waiting"})
    per_run = True

    def __init__(self, views: WorkflowViews, workflow_id: str) -> None:
        super().__init__(views, workflow_id, "last_outcome")
        self._outcome: RunOutcome | None = None
        #: The run to show and what it last did (``run_ended`` or ``run_waiting``).
        self._latest: tuple[str, str] | None = None
        self._read: tuple[str, str] | None = None

    async def async_added_to_hass(self) -> None:
        await super().async_added_to_hass()
        try:
            runs = await self.views.host.engine.runs(self.workflow_id, LATEST_RUNS)
        except (EngineError, RuntimeError) as err:
            _LOGGER.debug("Runs of %s not readable: %s", self.workflow_id, err)
            return
        shown = next((r for r in runs if r.get("status") in SHOWN and not is_trial(r)), None)
        if shown is not None and self._latest is None:
            self._latest = (str(shown["id"]), str(shown["status"]))
            await self.async_refresh()

    @callback
    def handle(self, update: EngineUpdate) -> bool:
        if update.kind in ("run_ended", "run_waiting"):
            if not update.run_id or is_trial_update(update.detail):
                return False
            self._latest = (update.run_id, update.kind)
        return True

    async def async_refresh(self) -> None:
        """Read the latest run (only it: a burst of runs costs one read), again when
        a run that waited has ended."""
        latest = self._latest
        if latest is None or latest == self._read:
            return
        try:
            detail = await self.views.host.engine.run_detail(latest[0])
        except (EngineError, RuntimeError) as err:
            _LOGGER.debug("Run %s of %s not readable: %s", latest[0], self.workflow_id, err)
            return
        self._read = latest
        self._outcome = run_outcome(detail)
        # Written under the run's context, marked when the outcome is AI output, so an
        # automation it triggers carries the mark on (:mod:`.host.ai_mark`).
        contexts = self.views.host.effects.contexts
        context = contexts.for_output(latest[0], self._outcome.ai_derived)
        self.async_set_context(context if context is not None else Context())

    @property
    def native_value(self) -> str | None:
        return self._outcome.outcome if self._outcome else None

    @property
    def extra_state_attributes(self) -> dict[str, Any] | None:
        return self._outcome.attributes() if self._outcome else None


class RunsTodaySensor(WorkflowEntity, SensorEntity):
    """Runs the workflow started since local midnight (Test runs included, try_workflow's
    trials not): counted once from the database when added, then from the engine's
    ``run_started`` updates."""

    _attr_translation_key = "workflow_runs_today"
    _attr_state_class = SensorStateClass.TOTAL_INCREASING
    update_kinds = frozenset({"run_started", NEW_DAY})
    per_run = True

    def __init__(self, views: WorkflowViews, workflow_id: str) -> None:
        super().__init__(views, workflow_id, "runs_today")
        self._day: date = dt_util.now().date()
        self._count = 0

    async def async_added_to_hass(self) -> None:
        await super().async_added_to_hass()
        # Queued now, behind every run already started; later runs arrive as updates.
        self._day, self._count = dt_util.now().date(), 0
        since = dt_util.start_of_local_day().timestamp()
        try:
            counted = await self.views.host.engine.count_runs(self.workflow_id, since)
        except (EngineError, RuntimeError) as err:
            _LOGGER.debug("Runs of %s not countable: %s", self.workflow_id, err)
            return
        self._count += counted

    @callback
    def handle(self, update: EngineUpdate) -> bool:
        today = dt_util.now().date()
        if today != self._day:
            self._day, self._count = today, 0
        if update.kind == "run_started":
            if is_trial_update(update.detail):
                return False
            self._count += 1
        return True

    @property
    def native_value(self) -> int:
        return self._count if self._day == dt_util.now().date() else 0


class AccuracySensor(WorkflowEntity, SensorEntity):
    """The lower bound of the 95 % Wilson interval of the workflow's accuracy, in percent:
    measured on its cases when the model it runs on was measured (:mod:`.host.
    measurements`), else from people's marks on its weakest AI step; unknown until then."""

    _attr_translation_key = "workflow_accuracy"
    _attr_native_unit_of_measurement = PERCENTAGE
    _attr_state_class = SensorStateClass.MEASUREMENT
    _attr_suggested_display_precision = 0
    update_kinds = frozenset({"run_marked"})

    def __init__(self, views: WorkflowViews, workflow_id: str) -> None:
        super().__init__(views, workflow_id, "accuracy")

    async def async_added_to_hass(self) -> None:
        await super().async_added_to_hass()
        signal = measured_signal(self.views.entry.entry_id)
        self.async_on_remove(async_dispatcher_connect(self.hass, signal, self.async_write_ha_state))

    @property
    def _accuracy(self) -> WorkflowAccuracy | None:
        workflow = self.workflow
        if workflow is None:
            return None
        return workflow_accuracy(workflow, self.views.host.engine.accuracy(self.workflow_id))

    @property
    def native_value(self) -> float | None:
        if (measured := measured_figures(self.views.entry, self.workflow_id)) is not None:
            return round(measured.wilson_low * 100, 1)
        accuracy = self._accuracy
        return round(accuracy.lower_bound * 100, 1) if accuracy else None

    @property
    def extra_state_attributes(self) -> dict[str, Any]:
        accuracy = self._accuracy
        measured = measured_attributes(measured_figures(self.views.entry, self.workflow_id))
        if accuracy is None:
            return {"marked": 0, **measured}
        return {
            "marked": accuracy.marked,
            "right": accuracy.right,
            "trusted": accuracy.trusted,
            "step": accuracy.step,
            **measured,
        }
