"""Home Assistant's backup platform: the run database is copied in one consistent state.

A backup copies the configuration folder, the engine's SQLite file and its write-ahead
log included (``.storage/opennvr_workflows.<entry>.db``; Home Assistant's option to leave
out the database concerns its own recorder file, never this one). A copy taken while the
engine writes could pair a database with a log from a moment later. So before the copy
every loaded entry writes its stores, folds the log into the database and keeps its
writes waiting (:meth:`..host.workflows.WorkflowHost.async_hold_for_backup`); after it,
the writes go on. Runs keep running meanwhile: what they write waits in memory, and an
event source is told "delivered" only once its runs are committed, after the copy, so a
backup never holds a run whose event its source considers unsent, nor misses one it
considers sent.
"""

from __future__ import annotations

import logging

from homeassistant.core import HomeAssistant

from .const import DOMAIN
from .host.workflows import WorkflowHost

_LOGGER = logging.getLogger(__name__)


def _hosts(hass: HomeAssistant) -> list[WorkflowHost]:
    return [
        host
        for entry in hass.config_entries.async_loaded_entries(DOMAIN)
        if (host := entry.runtime_data.workflows) is not None
    ]


async def async_pre_backup(hass: HomeAssistant) -> None:
    """Write every store and hold the run databases still for the copy."""
    held: list[WorkflowHost] = []
    try:
        for host in _hosts(hass):
            await host.async_hold_for_backup()
            held.append(host)
    except Exception:
        for host in held:  # no half-held state survives a failed start
            host.release_after_backup()
        raise
    _LOGGER.debug("Holding %d workflow database(s) for a backup", len(held))


async def async_post_backup(hass: HomeAssistant) -> None:
    """The copy is taken (or failed): let the writes go on."""
    for host in _hosts(hass):
        host.release_after_backup()
