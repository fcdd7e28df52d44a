"""The vision model as a device of the site: can it be reached, how much is it used, how fast
and how right is it, and which model it is.

A homeowner trusts the AI steps as far as they can see the model: the same watch that
raises the "model unreachable" repair (:mod:`.host.model_watch`) drives its connectivity
sensor; the hourly AI budgets the engine keeps count its model calls; the Looks of the last
hour give its median latency; the evaluation gate's stored measurement gives its accuracy
(the lower bound of the 95 % Wilson interval, which is what the gate decides on). The
vision model itself is a select of the models an admin allowed (the options' *Webhooks and
models* page), and choosing one is an admin's door (:mod:`.host.permissions`). The AI Task
entity (``ai_task.py``) belongs to this device too.
"""

from __future__ import annotations

from typing import Any, Final

from homeassistant.components.binary_sensor import (
    BinarySensorDeviceClass,
    BinarySensorEntity,
)
from homeassistant.components.select import SelectEntity
from homeassistant.components.sensor import (
    SensorDeviceClass,
    SensorEntity,
    SensorStateClass,
)
from homeassistant.const import PERCENTAGE, EntityCategory, UnitOfTime
from homeassistant.core import callback
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers.device_registry import DeviceEntryType, DeviceInfo
from homeassistant.helpers.dispatcher import async_dispatcher_connect
from homeassistant.helpers.entity import Entity

from .const import CONF_VISION_MODEL, DOMAIN
from .host.permissions import async_allow_entity
from .host.task_look import AI_TASK_RUNS, model_stats_signal, task_budget
from .host.workflows import WorkflowHost
from .runtime import OpenNVRConfigEntry

#: The model device's identifier suffix (after the site id).
MODEL_DEVICE: Final = "vision_model"


def model_device_identifier(site_id: str) -> tuple[str, str]:
    """The device registry identifier of a site's vision model device."""
    return (DOMAIN, f"{site_id}_{MODEL_DEVICE}")


def model_device_info(entry: OpenNVRConfigEntry, host: WorkflowHost) -> DeviceInfo:
    """The vision model as a service device under the site."""
    info = entry.runtime_data.info
    return DeviceInfo(
        identifiers={model_device_identifier(info.site_id)},
        translation_key=MODEL_DEVICE,
        translation_placeholders={"site": info.name},
        manufacturer="Ollama",
        model=host.settings.vision_model or None,
        entry_type=DeviceEntryType.SERVICE,
        via_device_id=entry.runtime_data.site_device_id,
    )


class ModelEntity(Entity):
    """An entity of the vision model device; unavailable while AI is off in the options."""

    _attr_has_entity_name = True
    _attr_should_poll = False

    def __init__(self, entry: OpenNVRConfigEntry, host: WorkflowHost, key: str) -> None:
        self.entry = entry
        self.host = host
        self._attr_unique_id = f"{entry.runtime_data.info.site_id}_{MODEL_DEVICE}_{key}"
        self._attr_device_info = model_device_info(entry, host)

    @property
    def available(self) -> bool:
        return self.host.settings.ai_enabled


def model_binary_sensors(entry: OpenNVRConfigEntry) -> list[Entity]:
    host = entry.runtime_data.workflows
    return [] if host is None else [ModelConnectivity(entry, host)]


def model_sensors(entry: OpenNVRConfigEntry) -> list[Entity]:
    host = entry.runtime_data.workflows
    if host is None:
        return []
    return [
        ModelCallsSensor(entry, host),
        LookLatencySensor(entry, host),
        ModelAccuracy(entry, host),
    ]


def model_selects(entry: OpenNVRConfigEntry) -> list[Entity]:
    host = entry.runtime_data.workflows
    return [] if host is None else [VisionModelSelect(entry, host)]


class ModelConnectivity(ModelEntity, BinarySensorEntity):
    """On while Ollama answers and has the configured models: the model watch's finding,
    the same that raises and clears the "model unreachable" repair; unknown until the
    first check."""

    _attr_device_class = BinarySensorDeviceClass.CONNECTIVITY
    _attr_entity_category = EntityCategory.DIAGNOSTIC
    _attr_translation_key = "model_connectivity"
    # Changes at every check (every few minutes): shown live, not written to the history.
    _unrecorded_attributes = frozenset({"checked_at"})

    def __init__(self, entry: OpenNVRConfigEntry, host: WorkflowHost) -> None:
        super().__init__(entry, host, "connectivity")

    @property
    def is_on(self) -> bool | None:
        return self.host.model_watch.health.usable

    @property
    def extra_state_attributes(self) -> dict[str, Any]:
        health = self.host.model_watch.health
        return {
            "missing": list(health.missing),
            "checked_at": health.checked_at.isoformat() if health.checked_at else None,
        }

    async def async_added_to_hass(self) -> None:
        self.async_on_remove(self.host.model_watch.add_listener(self.async_write_ha_state))


class _StatsSensor(ModelEntity, SensorEntity):
    """Read from memory: polled (cheap), and written at once after each AI Task answer."""

    _attr_should_poll = True
    _attr_state_class = SensorStateClass.MEASUREMENT

    async def async_added_to_hass(self) -> None:
        self.async_on_remove(
            async_dispatcher_connect(
                self.hass, model_stats_signal(self.entry.entry_id), self._refresh
            )
        )

    @callback
    def _refresh(self) -> None:
        self.async_write_ha_state()


class ModelCallsSensor(_StatsSensor):
    """Model calls in the last hour, as the engine's hourly AI budgets counted them: every
    workflow's AI steps and the AI Task. ``budget`` is the AI Task's own hourly allowance
    (the options' default AI calls an hour), ``by_workflow`` the calls of each budget."""

    _attr_translation_key = "model_calls"
    _unrecorded_attributes = frozenset({"by_workflow"})

    def __init__(self, entry: OpenNVRConfigEntry, host: WorkflowHost) -> None:
        super().__init__(entry, host, "calls")

    def _counts(self) -> dict[str, int]:
        engine = self.host.engine
        now = engine.now_ts()
        names = [status.workflow_id for status in engine.workflows()] + [AI_TASK_RUNS]
        counts = {name: engine.limiter(name).ai_calls(now) for name in names}
        return {name: count for name, count in counts.items() if count}

    @property
    def native_value(self) -> int:
        return sum(self._counts().values())

    @property
    def extra_state_attributes(self) -> dict[str, Any]:
        budget = task_budget(self.host)
        return {
            "budget": self.host.settings.ai_per_hour,
            "ai_task_left": budget.remaining(),
            "by_workflow": self._counts(),
        }


class LookLatencySensor(_StatsSensor):
    """The median time of the last hour's Looks (workflows' Look steps and the AI Task),
    from the picture to the decision, the model included; unknown with no Look in the
    hour."""

    _attr_translation_key = "look_latency"
    _attr_device_class = SensorDeviceClass.DURATION
    _attr_native_unit_of_measurement = UnitOfTime.SECONDS
    _attr_suggested_display_precision = 1

    def __init__(self, entry: OpenNVRConfigEntry, host: WorkflowHost) -> None:
        super().__init__(entry, host, "look_latency")

    @property
    def native_value(self) -> float | None:
        p50 = self.host.model_watch.looks.p50()
        return round(p50, 3) if p50 is not None else None

    @property
    def extra_state_attributes(self) -> dict[str, Any]:
        return {"looks": self.host.model_watch.looks.count()}


class ModelAccuracy(ModelEntity, SensorEntity):
    """The vision model's measured accuracy: the lower bound of the 95 % Wilson interval
    of its right decisions on the look cases, in percent, as the evaluation gate stored it
    (options, *Measure the model now*). Unknown when the model was never measured, or the
    measurement is of another model; the case count and the rest are attributes."""

    _attr_translation_key = "model_accuracy"
    _attr_native_unit_of_measurement = PERCENTAGE
    _attr_state_class = SensorStateClass.MEASUREMENT
    _attr_suggested_display_precision = 1

    def __init__(self, entry: OpenNVRConfigEntry, host: WorkflowHost) -> None:
        super().__init__(entry, host, "accuracy")

    @property
    def native_value(self) -> float | None:
        gate = self.host.settings.model_gate
        if gate is None or gate.model != self.host.settings.vision_model:
            return None
        return round(gate.wilson_low * 100, 1)

    @property
    def extra_state_attributes(self) -> dict[str, Any]:
        gate = self.host.settings.model_gate
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
