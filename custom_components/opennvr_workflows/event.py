"""An event entity per camera: its OpenNVR alerts and contracted events, as they arrive.

Automations and blueprints trigger on the entity (state change) and read the event type
(``person``, ``parcel``, ``plate_recognized``, ...) and attributes, instead of listening on a
bare bus event.
"""

from __future__ import annotations

from typing import Any

from homeassistant.components.event import EventEntity
from homeassistant.core import Context, HomeAssistant, callback
from homeassistant.helpers.dispatcher import async_dispatcher_connect
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from .const import ALERT_EVENT_TYPES, CONTRACT_EVENT_TYPES
from .coordinator import CameraCoordinator, OpenNVRConfigEntry
from .engine.events import NvrEvent
from .entity import OpenNVRCameraEntity, add_camera_entities
from .host.runs.ai_mark import event_mark
from .nvr.bridge import camera_signal

PARALLEL_UPDATES = 0
EVENT_TYPES = [*ALERT_EVENT_TYPES, *CONTRACT_EVENT_TYPES.values()]


def event_type_of(event: NvrEvent) -> str:
    """The entity's event type for a normalized event (unknown kinds become ``other``)."""
    if event.kind == "event" and event.type:
        contract = event.type.rsplit(".v", 1)[0]  # "plate.recognized.v1" -> "plate.recognized"
        return CONTRACT_EVENT_TYPES.get(contract, "other")
    kind = (event.type or "").lower().replace("-", "_").replace(" ", "_")
    return kind if kind in ALERT_EVENT_TYPES else "other"


def event_attributes(event: NvrEvent, ai_derived: bool = False) -> dict[str, Any]:
    """What an automation needs from the event; absent values are left out.
    ``ai_derived`` (always there) says the event carries AI output: an alert a workflow
    raised from an AI decision, or anything such an alert led to."""
    attrs: dict[str, Any] = {
        "alert_type": event.type,
        "alert_id": event.alert_id,
        "severity": event.severity,
        "title": event.title,
        "app": event.app,
        "plate": event.plate,
        "track_id": event.track_id,
        "labels": sorted(event.labels) or None,
        "correlation_id": event.correlation_id,
        "source": event.source,
        "fired_at": event.iso_time(),
        "ai_derived": ai_derived,
    }
    return {key: value for key, value in attrs.items() if value is not None}


async def async_setup_entry(
    hass: HomeAssistant,
    entry: OpenNVRConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    add_camera_entities(
        entry, async_add_entities, lambda coordinator, cid: [CameraEvents(coordinator, cid)]
    )


class CameraEvents(OpenNVRCameraEntity, EventEntity):
    """The camera's alerts; unavailable while no event transport is connected."""

    _attr_translation_key = "camera_events"
    _attr_event_types = EVENT_TYPES
    # Which car (a plate) and what an alert's title says of who is there stay out of
    # Home Assistant's history: automations read them live, the recorder never keeps them.
    _unrecorded_attributes = frozenset({"plate", "title"})

    def __init__(self, coordinator: CameraCoordinator, camera_id: int) -> None:
        super().__init__(coordinator, camera_id, "events")

    @property
    def available(self) -> bool:
        # The camera being offline does not stop its alerts (a tamper or offline alert is
        # exactly then); what stops them is no transport being connected.
        entry = self.coordinator.config_entry
        return self.nvr_camera is not None and entry.runtime_data.hub.connected()

    async def async_added_to_hass(self) -> None:
        await super().async_added_to_hass()
        entry = self.coordinator.config_entry
        self.async_on_remove(
            async_dispatcher_connect(
                self.hass, camera_signal(entry, self.camera_id), self._handle_nvr_event
            )
        )

    @callback
    def _handle_nvr_event(self, event: NvrEvent) -> None:
        """Show the event; one a run raised is written under that run's context, and one
        that carries AI output says so and is written under a marked context, so an
        automation it triggers carries the mark on (:mod:`.host.runs.ai_mark`)."""
        host = self.coordinator.config_entry.runtime_data.workflows
        ai_derived, context = event_mark(host, event)
        # A context of its own otherwise: never the last run's, still recent.
        self.async_set_context(context if context is not None else Context())
        self._trigger_event(event_type_of(event), event_attributes(event, ai_derived))
        self.async_write_ha_state()
