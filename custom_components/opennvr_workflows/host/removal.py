"""Removing the integration takes what it kept with it.

Home Assistant unloads the entry (the engine stops: runs reach a waiting point, writes
are drained) and then calls ``async_remove_entry``. What is left on disk belongs to
nobody from then on, so it goes:

* open questions: every card still on a phone is cleared, and the question's Home
  Assistant notification dismissed (their answer links would lead nowhere);
* runs still waiting (a question, a ``wait``) are ended as cancelled before the
  database goes, so nothing could ever resume them;
* the entry's stores in ``.storage`` (questions, sent ledger, websocket position,
  evidence index, pause, measurements), its run database with its WAL, shared-memory and
  lock files, its question pictures and its evidence pictures;
* its repairs.

The workflow files in ``<config>/opennvr_workflows/`` are the homeowner's: they stay,
unless the options' *Data kept* page asks for them to go with the integration, and then
only once no other OpenNVR site uses the folder. So do the home's own evaluation cases
(``<config>/opennvr_workflows_cases/``), which have their own bounds and deletion. The
Assist sentences the integration installed go with the last site (they would name
intents nobody answers).
"""

from __future__ import annotations

import logging
import shutil
import sqlite3
import time
from pathlib import Path

from homeassistant.components import persistent_notification
from homeassistant.config_entries import ConfigEntry
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers.storage import Store

from ..const import DOMAIN, WORKFLOW_FOLDER
from ..nvr.sources.position import position_key
from . import issues, sentences
from .approvals import messages as cards
from .approvals.desk import notification_id, pictures_folder
from .approvals.tickets import Tickets, tickets_key
from .cases.measurements import measured_key
from .model.evidence_store import evidence_folder, evidence_key
from .runs.context import ledger_key
from .settings import HostSettings
from .site_pause import pause_key
from .workflows import database_path

_LOGGER = logging.getLogger(__name__)

#: The run database and the files SQLite and the engine keep beside it.
DATABASE_SUFFIXES = ("", "-wal", "-shm", "-journal", ".lock")


async def async_remove_entry_data(hass: HomeAssistant, entry: ConfigEntry) -> None:
    """Clear the cards, end the runs, delete what the entry kept (see the module)."""
    entry_id = entry.entry_id
    withdrawn = await _withdraw_questions(hass, entry_id)
    database = database_path(hass, entry_id)
    ended = await hass.async_add_executor_job(_end_runs, database)
    for key in (
        tickets_key(entry_id),
        ledger_key(entry_id),
        position_key(entry_id),
        evidence_key(entry_id),
        pause_key(entry_id),
        measured_key(entry_id),
    ):
        await Store[dict[str, object]](hass, 1, key).async_remove()
    files = [database.with_name(database.name + suffix) for suffix in DATABASE_SUFFIXES]
    folders = [pictures_folder(hass, entry_id), evidence_folder(hass, entry_id)]
    last = not [e for e in hass.config_entries.async_entries(DOMAIN) if e.entry_id != entry_id]
    workflows = Path(hass.config.path(WORKFLOW_FOLDER))
    remove_files = last and HostSettings.from_options(entry.options).remove_workflow_files
    if remove_files:
        folders.append(workflows)
    await hass.async_add_executor_job(_delete, files, folders)
    if last:
        await sentences.async_uninstall(hass)
    issues.clear_prefix(hass, f"{entry_id}_", set())
    _LOGGER.info(
        "Removed %s: %d waiting run(s) ended, %d question(s) withdrawn, its stores and "
        "database deleted; the workflow files %s",
        entry.title,
        ended,
        withdrawn,
        f"in {workflows} deleted" if remove_files else f"stay in {workflows}",
    )


async def _withdraw_questions(hass: HomeAssistant, entry_id: str) -> int:
    """Take every open question's cards off the phones and dismiss its notification;
    returns how many questions were open."""
    tickets = Tickets(hass, entry_id)
    await tickets.async_load(time.time())
    open_questions = 0
    for ticket in tickets.by_id.values():
        persistent_notification.async_dismiss(hass, notification_id(ticket.approval_id))
        if ticket.status != "pending" and not ticket.to_clear:
            continue
        open_questions += ticket.status == "pending"
        for services in ticket.phones.values():
            for service in services:
                domain, _, name = service.partition(".")
                if not hass.services.has_service(domain, name):
                    continue
                try:
                    await hass.services.async_call(domain, name, cards.clear(ticket), blocking=True)
                except HomeAssistantError as err:
                    _LOGGER.warning("Could not clear a question on %s: %s", service, err)
    return open_questions


def _end_runs(database: Path) -> int:
    """End the runs still going or waiting, and their questions, as cancelled; returns
    how many runs (blocking)."""
    if not database.is_file():
        return 0
    try:
        conn = sqlite3.connect(database, timeout=5.0)
    except sqlite3.Error as err:
        _LOGGER.warning("Could not open %s to end its runs: %s", database, err)
        return 0
    try:
        with conn:
            ended = conn.execute(
                "UPDATE workflow_runs SET status='cancelled', ended_at=?, "
                "error='the integration was removed' WHERE status IN ('running', 'waiting')",
                (time.time(),),
            ).rowcount
            conn.execute("UPDATE workflow_approvals SET status='cancelled' WHERE status='pending'")
            conn.execute("DELETE FROM workflow_due")
        return int(ended)
    except sqlite3.Error as err:
        _LOGGER.warning("Could not end the runs in %s: %s", database, err)
        return 0
    finally:
        conn.close()


def _delete(files: list[Path], folders: list[Path]) -> None:
    """Delete ``files`` and ``folders`` (those that exist; a failure is logged)."""
    for path in files:
        try:
            path.unlink(missing_ok=True)
        except OSError as err:
            _LOGGER.warning("Could not delete %s: %s", path, err)
    for folder in folders:
        if folder.is_symlink() or not folder.exists():
            continue
        try:
            shutil.rmtree(folder)
        except OSError as err:
            _LOGGER.warning("Could not delete %s: %s", folder, err)
