"""Starting and stopping the workflow host with its config entry."""

from __future__ import annotations

from datetime import datetime

from homeassistant.const import EVENT_HOMEASSISTANT_STOP, Platform
from homeassistant.core import Event, HomeAssistant, callback
from homeassistant.exceptions import ConfigEntryError, ConfigEntryNotReady
from homeassistant.helpers import entity_registry as er
from homeassistant.helpers.event import async_track_time_interval

from ..const import DOMAIN, LOGGER
from ..coordinator import OpenNVRConfigEntry
from ..engine import StoreError, StoreLockedError
from .cases.evaluation import PRUNE_EVERY, HomeEvaluation
from .cases.measurements import Measurements
from .cases.store import HomeCases, HomeCaseSettings
from .history.search import async_start_history
from .ids import camera_unique_id, workflow_unique_id
from .settings import HostSettings
from .workflows import WorkflowHost


async def async_setup_workflows(hass: HomeAssistant, entry: OpenNVRConfigEntry) -> WorkflowHost:
    """Build the entry's workflow host, start it, and stop it with the entry and with
    Home Assistant (which does not unload entries when it stops)."""
    runtime = entry.runtime_data
    site_id = runtime.info.site_id
    registry = er.async_get(hass)

    def camera_entity(camera_id: str | None) -> str | None:
        if camera_id is None:
            return None
        return registry.async_get_entity_id(
            Platform.CAMERA, DOMAIN, camera_unique_id(site_id, camera_id)
        )

    def workflow_entity(workflow_id: str) -> str | None:
        return registry.async_get_entity_id(
            Platform.SELECT, DOMAIN, workflow_unique_id(site_id, workflow_id, "state")
        )

    settings = HostSettings.from_options(entry.options)
    host = WorkflowHost(
        hass,
        entry.entry_id,
        runtime.client,
        runtime.hub,
        settings,
        scopes=runtime.info.scopes,
        site_mode=lambda: runtime.site_mode,
        camera_entity=camera_entity,
        workflow_entity=workflow_entity,
        site_cameras=lambda: runtime.cameras.data or {},
        # Runs are the entry's background tasks: Home Assistant tracks them, and cancels
        # any left after the host has stopped them gracefully on unload. Not started
        # eagerly: a run must not execute inside the engine's submit() of its event.
        spawn=lambda coro, name: entry.async_create_background_task(
            hass, coro, name, eager_start=False
        ),
    )
    try:
        await host.async_start()
    except StoreLockedError as err:
        raise ConfigEntryNotReady(
            translation_domain=DOMAIN,
            translation_key="store_locked",
            translation_placeholders={"detail": str(err)},
        ) from err
    except StoreError as err:
        raise ConfigEntryError(
            translation_domain=DOMAIN,
            translation_key="store_error",
            translation_placeholders={"detail": str(err)},
        ) from err
    runtime.workflows = host
    runtime.evaluation = await async_start_home_evaluation(hass, entry)

    async def _stop(_: Event | None = None) -> None:
        LOGGER.debug("Stopping the workflows of %s", entry.title)
        await host.async_stop()

    entry.async_on_unload(_stop)
    entry.async_on_unload(hass.bus.async_listen_once(EVENT_HOMEASSISTANT_STOP, _stop))
    # The history search and its background embeddings (history/search.py), stopped first.
    runtime.history = async_start_history(
        hass, host, lambda coro, name: entry.async_create_background_task(hass, coro, name)
    )
    entry.async_on_unload(runtime.history.stop)
    return host


async def async_start_home_evaluation(
    hass: HomeAssistant, entry: OpenNVRConfigEntry
) -> HomeEvaluation:
    """Load the measurements, apply the cases' bounds in the background, and keep
    applying them while the entry is loaded."""

    def settings() -> HomeCaseSettings:
        return HomeCaseSettings.from_options(entry.options)

    evaluation = HomeEvaluation(
        HomeCases(hass, entry.entry_id, settings), Measurements(hass, entry.entry_id), settings
    )
    await evaluation.measurements.async_load()

    @callback
    def prune(_now: datetime | None = None) -> None:
        entry.async_create_background_task(
            hass, evaluation.cases.async_prune(), "opennvr_workflows kept cases bounds"
        )

    prune()
    entry.async_on_unload(
        async_track_time_interval(hass, prune, PRUNE_EVERY, name="opennvr_workflows cases")
    )
    return evaluation
