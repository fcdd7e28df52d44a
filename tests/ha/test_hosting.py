"""Hosting the engine in Home Assistant: nothing blocks the event loop, and runs survive an
entry reload and a Home Assistant restart without sending anything twice.

Home Assistant's blocking-call detector is on for every test here, as production has it
(the test harness leaves it off, and in tests it skips file and certificate reads unless
told otherwise), with ``sqlite3.connect`` added: opening the workflow database on the
event loop fails the test. The engine runs on a manual clock shared across reloads and
restarts, so "an hour later" is one call, and time does not move by itself.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
import time
from collections.abc import AsyncGenerator, Generator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from functools import partial
from typing import Any

import pytest
from homeassistant import block_async_io, loader
from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import HomeAssistant, ServiceCall
from homeassistant.util.loop import protect_loop
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_mock_service,
    async_test_home_assistant,
)

from custom_components.opennvr_workflows.const import CONF_APPROVERS, DOMAIN
from custom_components.opennvr_workflows.engine import Engine
from custom_components.opennvr_workflows.engine.testing import ManualClock
from custom_components.opennvr_workflows.host import workflows as workflows_module
from custom_components.opennvr_workflows.host.workflows import WorkflowHost
from tests.fakes.opennvr_sim import OpenNVRSimulator
from tests.nvr.conftest import until

from .conftest import WEBSOCKET_OPTIONS, set_up_again
from .workflow_files import ASK, REMIND, write_workflow

PHONE = "mobile_app_alices_phone"
HOUR = 3600.0


@pytest.fixture(autouse=True)
def blocking_call_reports(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> Generator[None]:
    """Home Assistant's detector, with production's list of calls, plus sqlite3.connect."""
    monkeypatch.setattr(block_async_io, "_IN_TESTS", False)
    block_async_io.enable()
    connect = sqlite3.connect
    sqlite3.connect = protect_loop(connect, loop_thread_id=threading.get_ident())
    caplog.set_level(logging.DEBUG, logger="homeassistant.util.loop")
    try:
        yield
    finally:
        sqlite3.connect = connect
        calls = block_async_io._BLOCKED_CALLS.calls
        for blocking in calls:
            setattr(blocking.object, blocking.function, blocking.original_func)
        calls.clear()


def our_blocking_calls(caplog: pytest.LogCaptureFixture) -> list[str]:
    """What the detector reported of this integration (the first report is a warning,
    a repeat only a debug line: both count)."""
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "homeassistant.util.loop" and f"integration '{DOMAIN}'" in r.getMessage()
    ]


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> ManualClock:
    """The engine's clock, the same one for every engine this test starts."""
    manual = ManualClock(datetime.now(UTC))
    monkeypatch.setattr(workflows_module, "Engine", partial(Engine, clock=manual))
    return manual


@pytest.fixture
def entry_options() -> dict[str, Any]:
    return {**WEBSOCKET_OPTIONS, CONF_APPROVERS: {"notify": [f"notify.{PHONE}"]}}


def host_of(entry: MockConfigEntry) -> WorkflowHost:
    host = entry.runtime_data.workflows
    assert host is not None
    return host


def messages(calls: list[ServiceCall]) -> list[str]:
    return [str(c.data["message"]) for c in calls]


@asynccontextmanager
async def restarted(
    config_dir: str, entry: MockConfigEntry
) -> AsyncGenerator[tuple[HomeAssistant, MockConfigEntry, list[ServiceCall]]]:
    """A second Home Assistant on the same config folder, with the same entry set up
    again: what a restart gives. Yields it, the entry, and the phone's notify calls."""
    async with async_test_home_assistant(config_dir=config_dir) as second:
        second.data.pop(loader.DATA_CUSTOM_COMPONENTS)
        calls = async_mock_service(second, "notify", PHONE)
        again = await set_up_again(second, entry)
        yield second, again, calls


async def test_the_detector_is_on(hass: HomeAssistant) -> None:
    """The checks below mean something only if blocking calls in the loop are caught."""
    with pytest.raises(RuntimeError, match="blocking call to sleep"):
        time.sleep(0)  # noqa: ASYNC251 -- the point: the detector must refuse it
    with pytest.raises(RuntimeError, match="blocking call to connect"):
        sqlite3.connect(":memory:")


async def test_setup_reload_and_unload_block_nothing(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    sim: OpenNVRSimulator,
    caplog: pytest.LogCaptureFixture,
) -> None:
    async_mock_service(hass, "notify", PHONE)
    write_workflow(hass, "remind", REMIND)
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    assert config_entry.state is ConfigEntryState.LOADED
    await until(lambda: config_entry.runtime_data.hub.connected("websocket"), "connected")
    host = host_of(config_entry)
    assert host.engine.started
    host.engine.run_now("remind")
    await host.engine.idle()
    await host.async_reload()

    assert await hass.config_entries.async_reload(config_entry.entry_id)
    await hass.async_block_till_done()
    assert config_entry.state is ConfigEntryState.LOADED
    assert host_of(config_entry).engine.started

    assert await hass.config_entries.async_unload(config_entry.entry_id)
    await hass.async_block_till_done()
    assert config_entry.state is ConfigEntryState.NOT_LOADED
    assert not host.engine.started
    assert our_blocking_calls(caplog) == []


async def test_a_reload_keeps_a_waiting_run_and_it_resumes_when_due(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    clock: ManualClock,
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls = async_mock_service(hass, "notify", PHONE)
    write_workflow(hass, "remind", REMIND)
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    before = host_of(config_entry)
    (run_id,) = before.engine.run_now("remind")
    await before.engine.idle()
    assert messages(calls) == ["first"]
    assert [r.status for r in before.engine.active_runs()] == ["waiting"]

    assert await hass.config_entries.async_reload(config_entry.entry_id)
    await hass.async_block_till_done()
    # The old engine stopped cleanly: no task of it is left.
    assert not before.engine.started
    assert before.engine.active_runs() == []
    after = host_of(config_entry)
    assert after is not before
    await after.engine.idle()
    waiting = after.engine.active_runs()
    assert [(r.run_id, r.status) for r in waiting] == [(run_id, "waiting")]
    assert messages(calls) == ["first"]

    await clock.advance(HOUR - 60)
    await after.engine.idle()
    assert messages(calls) == ["first"]  # not due yet

    await clock.advance(60)
    await after.engine.idle()
    await hass.async_block_till_done()
    assert messages(calls) == ["first", "second"]
    detail = await after.engine.run_detail(run_id)
    assert detail["status"] == "done"
    assert [(s["path"], s["status"]) for s in detail["steps"]] == [
        ("then.0", "done"),
        ("then.1", "done"),
        ("then.2", "done"),
    ]
    assert our_blocking_calls(caplog) == []


async def test_a_reload_keeps_an_open_question_and_its_timeout(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    clock: ManualClock,
) -> None:
    calls = async_mock_service(hass, "notify", PHONE)
    write_workflow(hass, "ask", ASK)
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    (run_id,) = host_of(config_entry).engine.run_now("ask")
    await host_of(config_entry).engine.idle()
    (approval, _) = host_of(config_entry).engine.pending_approvals()[0]

    assert await hass.config_entries.async_reload(config_entry.entry_id)
    await hass.async_block_till_done()
    engine = host_of(config_entry).engine
    await engine.idle()
    assert [a.approval_id for a, _ in engine.pending_approvals()] == [approval.approval_id]
    assert [(r.run_id, r.status) for r in engine.active_runs()] == [(run_id, "waiting")]

    # Nobody answers: after the hour the default reply takes its path.
    await clock.advance(HOUR + 1)
    await engine.idle()
    await hass.async_block_till_done()
    assert messages(calls) == ["kept closed"]
    assert (await engine.run_detail(run_id))["status"] == "done"


async def test_a_restart_in_the_middle_of_a_run_resumes_it_and_sends_nothing_twice(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    sim: OpenNVRSimulator,
    clock: ManualClock,
    caplog: pytest.LogCaptureFixture,
) -> None:
    config_dir = hass.config.config_dir
    first_calls = async_mock_service(hass, "notify", PHONE)
    write_workflow(hass, "remind", REMIND)
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    (run_id,) = host_of(config_entry).engine.run_now("remind")
    await host_of(config_entry).engine.idle()
    assert messages(first_calls) == ["first"]

    # Home Assistant stops (it does not unload entries): the engine drains and closes.
    await hass.async_stop()
    assert not host_of(config_entry).engine.started

    async with restarted(config_dir, config_entry) as (second, again, second_calls):
        engine = host_of(again).engine
        await engine.idle()
        assert [(r.run_id, r.status) for r in engine.active_runs()] == [(run_id, "waiting")]
        assert messages(second_calls) == []

        await clock.advance(HOUR)
        await engine.idle()
        await second.async_block_till_done()
        detail = await engine.run_detail(run_id)
        assert detail["status"] == "done"
        assert await second.config_entries.async_unload(again.entry_id)
        await second.async_stop(force=True)

    # Across both lives of Home Assistant: the first message once, the second once.
    assert messages(first_calls) + messages(second_calls) == ["first", "second"]
    assert our_blocking_calls(caplog) == []


async def test_a_notify_cut_off_by_the_stop_is_sent_again_under_the_same_tag(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    clock: ManualClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The stop came while the phone's notify action was still running: nobody can say
    whether it arrived. It is sent again after the restart with the same tag, so a phone
    that got the first shows it once (the notification is replaced, not repeated)."""
    monkeypatch.setattr(workflows_module, "STOP_GRACE_S", 0.1)
    config_dir = hass.config.config_dir
    first_calls: list[ServiceCall] = []
    never = asyncio.Event()

    async def hanging_notify(call: ServiceCall) -> None:
        first_calls.append(call)
        await never.wait()

    hass.services.async_register("notify", PHONE, hanging_notify)
    write_workflow(hass, "remind", REMIND)
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    (run_id,) = host_of(config_entry).engine.run_now("remind")
    await until(lambda: bool(first_calls), "the notify started")
    await hass.async_stop()

    async with restarted(config_dir, config_entry) as (second, again, second_calls):
        engine = host_of(again).engine
        await engine.idle()
        assert [(r.run_id, r.status) for r in engine.active_runs()] == [(run_id, "waiting")]
        assert messages(second_calls) == ["first"]
        assert second_calls[0].data["data"]["tag"] == first_calls[0].data["data"]["tag"]
        assert await second.config_entries.async_unload(again.entry_id)
        await second.async_stop(force=True)
