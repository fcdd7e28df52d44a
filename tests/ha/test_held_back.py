"""The panel says which limit holds a workflow's events back, and until when (issue 23,
item 5: after a Test run kept the one-at-a-time slot busy, nothing ran for 26 minutes and
nothing said why): the workflow list and the workflow's timeline carry ``held_back``
while the hold lasts, and drop it once it let go."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import partial
from typing import Any

import pytest
from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import MockConfigEntry
from pytest_homeassistant_custom_component.typing import WebSocketGenerator

from custom_components.opennvr_workflows.engine import Engine
from custom_components.opennvr_workflows.engine.testing import ManualClock
from custom_components.opennvr_workflows.host import workflows as workflows_module
from tests.fakes.ollama_server import FakeOllama

from .conftest import ai_options
from .test_panel_api import Client, next_event, set_up

LATER = """\
contract: workflow.v1
name: Later
state: {state}
when:
  button: {{}}
then:
  - log: first
  - wait: 30m
  - log: second
"""

QUICK = """\
contract: workflow.v1
name: Quick
state: on
limits: { cooldown: 10m }
when:
  button: {}
then:
  - log: done
"""


@pytest.fixture
def entry_options(ollama: FakeOllama) -> dict[str, Any]:
    return ai_options(ollama)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> ManualClock:
    manual = ManualClock(datetime.now(UTC))
    monkeypatch.setattr(workflows_module, "Engine", partial(Engine, clock=manual))
    return manual


async def test_the_list_and_the_timeline_say_what_holds_the_workflow_back(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    hass_ws_client: WebSocketGenerator,
    clock: ManualClock,
) -> None:
    host = await set_up(hass, config_entry, later=LATER.format(state="on"))
    ws = Client(await hass_ws_client(hass))

    async def shown() -> tuple[Any, Any]:
        (row,) = (await ws.ok("workflows/list"))["workflows"]
        page = await ws.ok("workflows/runs", workflow="later")
        return row["held_back"], page["held_back"]

    assert await shown() == (None, None)
    started = clock.now().timestamp()
    (run_id,) = host.engine.run_now("later")
    await host.engine.idle()
    assert host.engine.run_now("later") == (run_id,)
    held = {
        "limit": "one_at_a_time",
        "at": started,
        "until": started + 1800,
        "run_id": run_id,
        "test": False,
    }
    assert await shown() == (held, held)

    await clock.advance(1800)
    await host.engine.idle()
    assert await shown() == (None, None)


async def test_a_cooldown_is_shown_until_it_ends(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    hass_ws_client: WebSocketGenerator,
    clock: ManualClock,
) -> None:
    host = await set_up(hass, config_entry, quick=QUICK)
    ws = Client(await hass_ws_client(hass))
    started = clock.now().timestamp()
    host.engine.run_now("quick")
    await host.engine.idle()
    await clock.advance(60)
    assert host.engine.run_now("quick") == ()
    (row,) = (await ws.ok("workflows/list"))["workflows"]
    assert row["held_back"] == {
        "limit": "cooldown",
        "at": started + 60,
        "until": started + 600,
        "run_id": None,
        "test": False,
    }
    await clock.advance(540)
    (row,) = (await ws.ok("workflows/list"))["workflows"]
    assert row["held_back"] is None


async def test_a_test_runs_hold_is_marked_as_the_test_runs(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    hass_ws_client: WebSocketGenerator,
) -> None:
    host = await set_up(hass, config_entry, later=LATER.format(state="test"))
    ws = Client(await hass_ws_client(hass))
    (run_id,) = host.engine.run_now("later")
    await host.engine.idle()
    host.engine.run_now("later")
    (row,) = (await ws.ok("workflows/list"))["workflows"]
    assert (row["held_back"]["limit"], row["held_back"]["run_id"], row["held_back"]["test"]) == (
        "one_at_a_time",
        run_id,
        True,
    )
    # Once On, the Test run's slot is not the On runs': a press starts a run at once.
    await ws.ok("workflows/set_state", workflow="later", state="on")
    (on_run,) = host.engine.run_now("later")
    assert on_run != run_id


async def test_the_live_feed_says_a_hold_without_the_events_chain(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    hass_ws_client: WebSocketGenerator,
) -> None:
    host = await set_up(hass, config_entry, later=LATER.format(state="on"))
    ws = Client(await hass_ws_client(hass))
    live = await ws.send("workflows/subscribe")
    assert (await ws.socket.receive_json())["success"] is True
    (run_id,) = host.engine.run_now("later")
    await host.engine.idle()
    host.engine.run_now("later")
    said = await next_event(ws, live, "held_back")
    assert (said["workflow_id"], said["run_id"]) == ("later", run_id)
    assert said["detail"]["limit"] == "one_at_a_time"
    assert "chain" not in said["detail"]
