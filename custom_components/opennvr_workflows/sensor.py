"""Sensors: diagnostic counters per event source, the questions waiting, the vision
model's figures, and each workflow's last outcome, runs today and accuracy.

Each sensor is described once (:class:`OpenNVRSensorEntityDescription`): what it is, and
the functions that make its value and its attributes from what it reads (a source's
counters, the questions desk, the workflow host, a run's outcome, ...). The entity only
says what it reads and when to look again.

A dropped payload (malformed, unknown shape) is logged once per kind and counted here, so a
change in what OpenNVR or a broker sends shows up on the dashboard instead of silently.

A workflow's sensors read the engine once when they are added and then follow its
updates: runs today counts ``run_started`` updates (reset at local midnight), the last
outcome reads the one run that just ended, accuracy is the engine's marked record or,
when the model was measured, the measured bound.
"""

from __future__ import annotations

import dataclasses
import logging
from abc import abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any, Final

from homeassistant.components.sensor import (
    SensorDeviceClass,
    SensorEntity,
    SensorEntityDescription,
    SensorStateClass,
)
from homeassistant.const import PERCENTAGE, EntityCategory, UnitOfTime
from homeassistant.core import Context, HomeAssistant, callback
from homeassistant.helpers.dispatcher import async_dispatcher_connect
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback
from homeassistant.helpers.typing import StateType
from homeassistant.util import dt as dt_util

from .coordinator import OpenNVRConfigEntry
from .engine import EngineError, EngineUpdate
from .entity import (
    ModelEntity,
    OpenNVREntity,
    OpenNVRSiteEntity,
    WorkflowEntity,
    add_workflow_entities,
    has_ai_steps,
)
from .evaluation.per_workflow import WorkflowFigures
from .host.approvals.desk import ApprovalDesk
from .host.cases.measurements import measured_attributes, measured_signal
from .host.model.task_look import AI_TASK_RUNS, model_stats_signal, task_budget
from .host.runs.summary import (
    SHOWN,
    RunOutcome,
    WorkflowAccuracy,
    is_trial,
    is_trial_update,
    run_outcome,
    workflow_accuracy,
)
from .host.workflows import WorkflowHost
from .nvr.bridge import counters_signal, site_signal
from .nvr.hub import SourceStats
from .workflow_views import NEW_DAY, WorkflowViews

_LOGGER = logging.getLogger(__name__)
#: How many of a workflow's latest runs are read at start to find the last one that ended.
LATEST_RUNS: Final = 10

# Nothing here asks OpenNVR or the model: every value is read from memory (pushed events,
# the engine, the coordinator), so no update needs to wait for another.
PARALLEL_UPDATES = 0


@dataclass(frozen=True, kw_only=True)
class OpenNVRSensorEntityDescription[SourceT](SensorEntityDescription):
    """A sensor, and how its value and attributes are made from what it reads."""

    value_fn: Callable[[SourceT], StateType]
    attrs_fn: Callable[[SourceT], Mapping[str, Any] | None] = lambda _: None


class DescribedSensor[SourceT](OpenNVREntity, SensorEntity):
    """A sensor whose state is its description's functions of :meth:`source`."""

    entity_description: OpenNVRSensorEntityDescription[SourceT]

    @abstractmethod
    def source(self) -> SourceT | None:
        """What the value is made from; None while there is nothing to show."""

    @property
    def native_value(self) -> StateType:
        source = self.source()
        return None if source is None else self.entity_description.value_fn(source)

    @property
    def extra_state_attributes(self) -> Mapping[str, Any] | None:
        source = self.source()
        return None if source is None else self.entity_description.attrs_fn(source)


# ── what each sensor is ─────────────────────────────────────────────────────────────────


def _received_attributes(stats: SourceStats) -> dict[str, Any]:
    return {
        "connected": stats.connected,
        "duplicates": stats.duplicates,
        "last_event_at": stats.last_event_at.isoformat() if stats.last_event_at else None,
    }


#: Per source ("websocket", "nats", "mqtt"); the source's name prefixes key and translation.
COUNTERS: Final = (
    OpenNVRSensorEntityDescription[SourceStats](
        key="events_received",
        entity_category=EntityCategory.DIAGNOSTIC,
        entity_registry_enabled_default=False,
        state_class=SensorStateClass.TOTAL_INCREASING,
        value_fn=lambda stats: stats.received,
        attrs_fn=_received_attributes,
    ),
    OpenNVRSensorEntityDescription[SourceStats](
        key="events_dropped",
        entity_category=EntityCategory.DIAGNOSTIC,
        entity_registry_enabled_default=False,
        state_class=SensorStateClass.TOTAL_INCREASING,
        value_fn=lambda stats: stats.dropped,
        attrs_fn=lambda stats: {"by_kind": dict(stats.dropped_by_kind)},
    ),
)


#: How many questions the sensor's attributes list (the soonest deadlines): Home Assistant
#: writes every attribute on each change, and a list of every open question made a burst of
#: them slow to write (0.6 s with 1,500 open); the panel and the card list them all.
QUESTIONS_LISTED: Final = 20


def _questions(desk: ApprovalDesk) -> dict[str, Any]:
    """The soonest questions, without what their run wrote: an entity's state reaches every
    user Home Assistant lets read it, while a question's text (a plate, a name, what the
    camera saw) is for the people it is asked of. They read it where they are asked (their
    phone, the panel, the card, the ``approvals/list`` command), each only their own; the
    workflow, its replies (from its file) and the deadline are no more than its file says."""
    pending = desk.pending()
    return {
        "not_listed": max(0, len(pending) - QUESTIONS_LISTED),
        "questions": [
            {
                "approval_id": t.approval_id,
                "workflow": t.workflow_name,
                "replies": list(t.replies),
                "expires_at": dt_util.utc_from_timestamp(t.expires_at).isoformat(),
                "seen_again": t.seen_again,
            }
            for t in pending[:QUESTIONS_LISTED]
        ],
    }


PENDING_APPROVALS: Final = OpenNVRSensorEntityDescription[ApprovalDesk](
    key="pending_approvals",
    translation_key="pending_approvals",
    state_class=SensorStateClass.MEASUREMENT,
    value_fn=lambda desk: len(desk.pending()),
    attrs_fn=_questions,
)


def _model_calls(host: WorkflowHost) -> dict[str, int]:
    """Model calls in the last hour per budget (each workflow's, the AI Task's)."""
    engine = host.engine
    now = engine.now_ts()
    names = [status.workflow_id for status in engine.workflows()] + [AI_TASK_RUNS]
    counts = {name: engine.limiter(name).ai_calls(now) for name in names}
    return {name: count for name, count in counts.items() if count}


def _look_latency(host: WorkflowHost) -> float | None:
    p50 = host.model_watch.looks.p50()
    return round(p50, 3) if p50 is not None else None


def _measured_accuracy(host: WorkflowHost) -> float | None:
    gate = host.settings.model_gate
    if gate is None or gate.model != host.settings.vision_model:
        return None
    return round(gate.wilson_low * 100, 1)


def _gate_attributes(host: WorkflowHost) -> dict[str, Any]:
    gate = host.settings.model_gate
    if gate is None:
        return {"cases": 0}
    return {
        "cases": gate.rows,
        "right": gate.right,
        "upper_bound": round(gate.wilson_high * 100, 1),
        "measured_model": gate.model,
        "measured": gate.date,
        "passed": gate.passed,
    }


@dataclass(frozen=True, kw_only=True)
class ModelSensorEntityDescription(OpenNVRSensorEntityDescription[WorkflowHost]):
    """A figure of the vision model; ``live`` ones change with every model call."""

    live: bool = False


#: The vision model device's figures (see :class:`ModelSensor`).
MODEL_SENSORS: Final = (
    # As the engine's hourly AI budgets counted them: every workflow's AI steps and the AI
    # Task. ``budget`` is the AI Task's own hourly allowance.
    ModelSensorEntityDescription(
        key="calls",
        translation_key="model_calls",
        state_class=SensorStateClass.MEASUREMENT,
        live=True,
        value_fn=lambda host: sum(_model_calls(host).values()),
        attrs_fn=lambda host: {
            "budget": host.settings.ai_per_hour,
            "ai_task_left": task_budget(host).remaining(),
            "by_workflow": _model_calls(host),
        },
    ),
    # The median time of the last hour's Looks, from the picture to the decision, the model
    # included; unknown with no Look in the hour.
    ModelSensorEntityDescription(
        key="look_latency",
        translation_key="look_latency",
        device_class=SensorDeviceClass.DURATION,
        native_unit_of_measurement=UnitOfTime.SECONDS,
        suggested_display_precision=1,
        state_class=SensorStateClass.MEASUREMENT,
        live=True,
        value_fn=_look_latency,
        attrs_fn=lambda host: {"looks": host.model_watch.looks.count()},
    ),
    # The lower bound of the 95 % Wilson interval of its right decisions on the look cases,
    # as the evaluation gate stored it; unknown when never measured, or measured on another
    # model.
    ModelSensorEntityDescription(
        key="accuracy",
        translation_key="model_accuracy",
        native_unit_of_measurement=PERCENTAGE,
        suggested_display_precision=1,
        state_class=SensorStateClass.MEASUREMENT,
        value_fn=_measured_accuracy,
        attrs_fn=_gate_attributes,
    ),
)


LAST_OUTCOME: Final = OpenNVRSensorEntityDescription[RunOutcome](
    key="last_outcome",
    translation_key="workflow_last_outcome",
    value_fn=lambda outcome: outcome.outcome,
    attrs_fn=lambda outcome: outcome.attributes(),
)

RUNS_TODAY: Final = OpenNVRSensorEntityDescription[int](
    key="runs_today",
    translation_key="workflow_runs_today",
    state_class=SensorStateClass.TOTAL_INCREASING,
    value_fn=lambda count: count,
)


@dataclass(frozen=True, slots=True)
class AccuracyReading:
    """A workflow's accuracy, both ways: measured on its cases (on the vision model it
    runs on) and marked by people on its weakest AI step."""

    measured: WorkflowFigures | None
    marked: WorkflowAccuracy | None


def _accuracy(reading: AccuracyReading) -> float | None:
    if reading.measured is not None:
        return round(reading.measured.wilson_low * 100, 1)
    marked = reading.marked
    return round(marked.lower_bound * 100, 1) if marked is not None else None


def _accuracy_attributes(reading: AccuracyReading) -> dict[str, Any]:
    measured = measured_attributes(reading.measured)
    marked = reading.marked
    if marked is None:
        return {"marked": 0, **measured}
    return {
        "marked": marked.marked,
        "right": marked.right,
        "trusted": marked.trusted,
        "step": marked.step,
        **measured,
    }


ACCURACY: Final = OpenNVRSensorEntityDescription[AccuracyReading](
    key="accuracy",
    translation_key="workflow_accuracy",
    native_unit_of_measurement=PERCENTAGE,
    state_class=SensorStateClass.MEASUREMENT,
    suggested_display_precision=0,
    value_fn=_accuracy,
    attrs_fn=_accuracy_attributes,
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
        async_add_entities(ModelSensor(entry, host, described) for described in MODEL_SENSORS)
    add_workflow_entities(
        hass,
        entry,
        async_add_entities,
        lambda views, wid: [
            LastOutcomeSensor(views, wid),
            RunsTodaySensor(views, wid),
            *([AccuracySensor(entry, views, wid)] if has_ai_steps(views, wid) else []),
        ],
    )


# ── the site's ──────────────────────────────────────────────────────────────────────────


class SourceCounter(OpenNVRSiteEntity, DescribedSensor[SourceStats]):
    """One counter of one source, e.g. "NATS events dropped". Off until a user turns it
    on, as core's diagnostic counters are: it changes on every event, and each change is a
    state written to the recorder."""

    def __init__(
        self,
        entry: OpenNVRConfigEntry,
        source: str,
        description: OpenNVRSensorEntityDescription[SourceStats],
    ) -> None:
        key = f"{source}_{description.key}"
        super().__init__(entry, key)
        self.entity_description = dataclasses.replace(description, key=key, translation_key=key)
        self.source_name = source

    def source(self) -> SourceStats:
        """The source's counters (all nought until it has started)."""
        return self.entry.runtime_data.hub.stats.get(self.source_name) or SourceStats()

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


class PendingApprovalsSensor(OpenNVRSiteEntity, DescribedSensor[ApprovalDesk]):
    """How many workflow questions wait for an answer; which (never their text nor their
    answer tokens: :func:`_questions`) as attributes, soonest deadline first."""

    entity_description = PENDING_APPROVALS
    # Which questions wait, and for how long: shown live, not written to the history.
    _unrecorded_attributes = frozenset({"questions"})

    def __init__(self, entry: OpenNVRConfigEntry, desk: ApprovalDesk) -> None:
        super().__init__(entry, PENDING_APPROVALS.key)
        self._desk = desk

    def source(self) -> ApprovalDesk:
        return self._desk

    async def async_added_to_hass(self) -> None:
        self.async_on_remove(self._desk.subscribe(self.async_write_ha_state))


# ── the vision model's ──────────────────────────────────────────────────────────────────


class ModelSensor(ModelEntity, DescribedSensor[WorkflowHost]):
    """A figure of the vision model device, read from memory. The live ones (calls, Look
    time) are polled, which is cheap, and written at once after each AI Task answer; the
    measured accuracy changes only with the options, which reload the entry."""

    entity_description: ModelSensorEntityDescription
    # Which workflows call the model how often: shown live, not written to the history.
    _unrecorded_attributes = frozenset({"by_workflow"})

    def __init__(
        self,
        entry: OpenNVRConfigEntry,
        host: WorkflowHost,
        description: ModelSensorEntityDescription,
    ) -> None:
        super().__init__(entry, host, description.key)
        self.entity_description = description
        self._attr_should_poll = description.live

    def source(self) -> WorkflowHost:
        return self.host

    async def async_added_to_hass(self) -> None:
        if self.entity_description.live:
            self.async_on_remove(
                async_dispatcher_connect(
                    self.hass, model_stats_signal(self.entry.entry_id), self._refresh
                )
            )

    @callback
    def _refresh(self) -> None:
        self.async_write_ha_state()


# ── a workflow's ────────────────────────────────────────────────────────────────────────


class LastOutcomeSensor(WorkflowEntity, DescribedSensor[RunOutcome]):
    """What the workflow's last run decided (see :func:`.host.runs.summary.run_outcome`),
    with the reason, confidence and run id as attributes: a run that ended, or one that
    waits (a parcel run decides, then waits half an hour to remind) once it waits."""

    entity_description = LAST_OUTCOME
    # The model's reason may name a plate or a person: shown live, never recorded.
    _unrecorded_attributes = frozenset({"reason"})
    update_kinds = frozenset({"run_ended", "run_waiting"})
    per_run = True

    def __init__(self, views: WorkflowViews, workflow_id: str) -> None:
        super().__init__(views, workflow_id, LAST_OUTCOME.key)
        self._outcome: RunOutcome | None = None
        #: The run to show and what it last did (``run_ended`` or ``run_waiting``).
        self._latest: tuple[str, str] | None = None
        self._read: tuple[str, str] | None = None

    def source(self) -> RunOutcome | None:
        return self._outcome

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
        # automation it triggers carries the mark on (:mod:`.host.runs.ai_mark`).
        contexts = self.views.host.effects.contexts
        context = contexts.for_output(latest[0], self._outcome.ai_derived)
        self.async_set_context(context if context is not None else Context())


class RunsTodaySensor(WorkflowEntity, DescribedSensor[int]):
    """Runs the workflow started since local midnight (Test runs included, try_workflow's
    trials not): counted once from the database when added, then from the engine's
    ``run_started`` updates."""

    entity_description = RUNS_TODAY
    update_kinds = frozenset({"run_started", NEW_DAY})
    per_run = True

    def __init__(self, views: WorkflowViews, workflow_id: str) -> None:
        super().__init__(views, workflow_id, RUNS_TODAY.key)
        self._day: date = dt_util.now().date()
        self._count = 0

    def source(self) -> int:
        return self._count if self._day == dt_util.now().date() else 0

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


class AccuracySensor(WorkflowEntity, DescribedSensor[AccuracyReading]):
    """The lower bound of the 95 % Wilson interval of the workflow's accuracy, in percent:
    measured on its cases when the model it runs on was measured (:mod:`.host.
    measurements`), else from people's marks on its weakest AI step; unknown until then."""

    entity_description = ACCURACY
    update_kinds = frozenset({"run_marked"})

    def __init__(self, entry: OpenNVRConfigEntry, views: WorkflowViews, workflow_id: str) -> None:
        super().__init__(views, workflow_id, ACCURACY.key)
        self.entry = entry

    def source(self) -> AccuracyReading:
        host, evaluation = self.views.host, self.entry.runtime_data.evaluation
        measured = (
            evaluation.figures(self.workflow_id, host.settings.vision_model)
            if evaluation is not None
            else None
        )
        workflow = self.workflow
        marked = (
            workflow_accuracy(workflow, host.engine.accuracy(self.workflow_id))
            if workflow is not None
            else None
        )
        return AccuracyReading(measured, marked)

    async def async_added_to_hass(self) -> None:
        await super().async_added_to_hass()
        signal = measured_signal(self.entry.entry_id)
        self.async_on_remove(async_dispatcher_connect(self.hass, signal, self.async_write_ha_state))
