"""A Home Assistant backup taken while events stream in restores with no run lost or run
twice: the real backup integration (its local agent, its tar), the integration's backup
platform holding the run database still for the copy, and a second Home Assistant started
on the restored folder, to which the source sends every event again."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from homeassistant import backup_restore, loader
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_test_home_assistant,
)

from custom_components.opennvr_workflows.engine import NvrEvent
from custom_components.opennvr_workflows.host.workflows import WorkflowHost
from tests.fakes.opennvr_sim import OpenNVRSimulator
from tests.nvr.conftest import until

from .conftest import WEBSOCKET_OPTIONS, set_up_again
from .test_services import set_up

SEEN = """\
contract: workflow.v1
name: Seen at the door
state: on
limits: { cooldown: 0s, per_hour: 360 }
when:
  alert: { alert_type: person, cameras: [front_door] }
then:
  - log: "seen {alert_id}"
"""
#: Events sent at most (the workflow starts 360 runs an hour at most).
MOST = 330


@pytest.fixture
def entry_options() -> dict[str, Any]:
    return {**WEBSOCKET_OPTIONS, "camera_roles": {"front_door": "1"}}


def alert(alert_id: str) -> NvrEvent:
    return NvrEvent(
        kind="alert",
        source="websocket",
        time=datetime.now(UTC),
        type="person",
        camera_id="1",
        alert_id=alert_id,
    )


class Load:
    """Alerts sent one after another, each acknowledged once ``dispatch`` returned (as
    the websocket source does); notes what was acknowledged around the backup's hold."""

    def __init__(self, host: WorkflowHost) -> None:
        self.host = host
        self.acked: list[str] = []
        self.before_hold: set[str] = set()
        self.during_hold: list[str] = []
        self.holding = False
        self._stop = asyncio.Event()

    async def run(self) -> None:
        for i in range(MOST):
            if self._stop.is_set():
                return
            alert_id = f"alrt_{i:05d}"
            await self.host.dispatch(alert(alert_id))
            self.acked.append(alert_id)
            if self.holding:
                self.during_hold.append(alert_id)
            await asyncio.sleep(0.002)

    def stop(self) -> None:
        self._stop.set()


def runs_of(database: Path) -> list[str]:
    """The alert id of every run in a database file (read as a restore would find it)."""
    conn = sqlite3.connect(database)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = conn.execute("SELECT trigger FROM workflow_runs").fetchall()
    finally:
        conn.close()
    return [json.loads(row[0])["alert_id"] for row in rows]


def restore(backup: Path, into: Path) -> Path:
    """Restore ``backup`` into the empty folder ``into`` with Home Assistant's own
    restore (what it does at start after "Restore" was chosen); returns the folder."""
    into.mkdir(parents=True)
    backup_restore._extract_backup(
        into,
        backup_restore.RestoreBackupFileContent(
            backup_file_path=backup,
            password=None,
            remove_after_restore=False,
            restore_database=True,
            restore_homeassistant=True,
        ),
    )
    return into


async def test_a_backup_during_load_restores_with_no_run_lost_or_repeated(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    sim: OpenNVRSimulator,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert await async_setup_component(hass, "backup", {})
    await hass.async_block_till_done()
    host = await set_up(hass, config_entry, seen=SEEN)
    load = Load(host)

    hold, release = host.async_hold_for_backup, host.release_after_backup

    async def holding() -> None:
        load.before_hold = set(load.acked)
        await hold()
        load.holding = True
        await asyncio.sleep(0.2)  # a slow disk: the copy takes a while, events keep coming

    def released() -> None:
        load.holding = False
        release()

    monkeypatch.setattr(host, "async_hold_for_backup", holding)
    monkeypatch.setattr(host, "release_after_backup", released)

    streaming = asyncio.ensure_future(load.run())
    await until(lambda: len(load.acked) >= 60, "the stream to run")
    await hass.services.async_call("backup", "create", blocking=True)
    await until(
        lambda: len(load.acked) >= len(load.before_hold) + 40 or streaming.done(),
        "the stream to go on after the backup",
    )
    load.stop()
    await streaming
    await host.engine.idle()

    # While the file was held no event was acknowledged: none is "delivered" yet missing.
    assert load.before_hold
    assert load.during_hold == []
    assert len(load.acked) > len(load.before_hold)  # the stream went on after the backup
    (backup,) = Path(hass.config.path("backups")).glob("*.tar")
    restored = restore(backup, tmp_path / "restored")
    database = restored / ".storage" / host.db_path.name
    in_backup = runs_of(database)
    assert len(in_backup) == len(set(in_backup))  # no run twice
    assert load.before_hold <= set(in_backup)  # every acknowledged alert's run is there
    assert set(in_backup) <= set(load.acked)

    assert await hass.config_entries.async_unload(config_entry.entry_id)
    await hass.async_block_till_done()

    # The restored Home Assistant; the websocket sends again what it has not seen acked
    # there (its position in the backup is older): here, every alert.
    async with async_test_home_assistant(config_dir=str(restored)) as second:
        second.data.pop(loader.DATA_CUSTOM_COMPONENTS)
        again = await set_up_again(second, config_entry)
        engine = again.runtime_data.workflows
        assert engine is not None
        for alert_id in load.acked:
            await engine.dispatch(alert(alert_id))
        await engine.engine.idle()
        assert await second.config_entries.async_unload(again.entry_id)
        await second.async_stop(force=True)

    after = runs_of(database)
    assert sorted(after) == sorted(load.acked)  # each alert exactly once: none lost, none twice
