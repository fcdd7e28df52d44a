"""The site's *Pause all workflows* switch: on, nothing starts (each trigger counted) and
waiting runs keep waiting, across a restart too; off, they go on. Only an admin may
switch it."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from homeassistant.auth.const import GROUP_ID_USER
from homeassistant.core import Context, HomeAssistant
from homeassistant.exceptions import HomeAssistantError, Unauthorized
from homeassistant.helpers import entity_registry as er
from homeassistant.util import dt as dt_util
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    MockUser,
    async_fire_time_changed,
    async_mock_service,
)

from custom_components.opennvr_workflows.const import CONF_APPROVERS, DOMAIN
from custom_components.opennvr_workflows.engine import NvrEvent
from custom_components.opennvr_workflows.engine.testing import ManualClock
from custom_components.opennvr_workflows.host.workflows import WorkflowHost

from . import test_hosting
from .conftest import WEBSOCKET_OPTIONS
from .test_hosting import host_of, messages, restarted
from .test_permission_matrix import entity_of
from .workflow_files import REMIND, write_workflow

#: The engine's manual clock, shared by the engines of both lives of Home Assistant.
clock = test_hosting.clock
PHONE = "mobile_app_alices_phone"
HOUR = 3600.0
DOOR = """\
contract: workflow.v1
name: Door log
state: on
limits: { cooldown: 0s, per_hour: 100 }
when:
  alert: { alert_type: person, cameras: [front_door] }
then:
  - notify: { who: role:household, message: "someone at the door" }
"""


@pytest.fixture
def entry_options() -> dict[str, Any]:
    return {
        **WEBSOCKET_OPTIONS,
        CONF_APPROVERS: {"notify": [f"notify.{PHONE}"]},
        "camera_roles": {"front_door": "1"},
    }


def switch_of(hass: HomeAssistant, entry: MockConfigEntry) -> str:
    entity_id = er.async_get(hass).async_get_entity_id(
        "switch", DOMAIN, f"{entry.unique_id}_pause_workflows"
    )
    assert entity_id is not None
    return entity_id


async def person_at_door(host: WorkflowHost, alert_id: str) -> None:
    await host.dispatch(
        NvrEvent(
            kind="alert",
            source="websocket",
            time=dt_util.utcnow(),
            type="person",
            camera_id="1",
            alert_id=alert_id,
        )
    )
    await host.engine.idle()


async def switch(hass: HomeAssistant, entity_id: str, on: bool, user_id: str | None = None) -> None:
    await hass.services.async_call(
        "switch",
        "turn_on" if on else "turn_off",
        {"entity_id": entity_id},
        blocking=True,
        context=Context(user_id=user_id),
    )


async def test_the_switch_pauses_everything_counts_what_did_not_run_and_resumes(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    clock: ManualClock,
) -> None:
    config_dir = hass.config.config_dir
    calls = async_mock_service(hass, "notify", PHONE)
    write_workflow(hass, "remind", REMIND)
    write_workflow(hass, "door", DOOR)
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    host = host_of(config_entry)
    pause = switch_of(hass, config_entry)
    assert hass.states.get(pause).state == "off"
    (waiting,) = host.engine.run_now("remind")
    await host.engine.idle()
    assert messages(calls) == ["first"]

    await switch(hass, pause, True)
    assert hass.states.get(pause).state == "on"
    await person_at_door(host, "alrt_1")
    await person_at_door(host, "alrt_2")
    response = await hass.services.async_call(
        DOMAIN, "run_workflow", {"workflow": "door"}, blocking=True, return_response=True
    )
    assert response is not None
    assert response["reason"] == "paused"
    with pytest.raises(HomeAssistantError) as refused:
        await hass.services.async_call(
            "button",
            "press",
            {"entity_id": entity_of(hass, "button", "remind_run_now")},
            blocking=True,
        )
    assert refused.value.translation_key == "workflows_paused"
    await clock.advance(HOUR + 1)  # the reminder's wait is over: it keeps waiting
    await host.engine.idle()
    await hass.async_block_till_done()
    assert messages(calls) == ["first"]
    assert [(r.run_id, r.status) for r in host.engine.active_runs()] == [(waiting, "waiting")]
    async_fire_time_changed(hass, dt_util.utcnow() + timedelta(seconds=31))
    await hass.async_block_till_done()
    assert hass.states.get(pause).attributes["triggers_not_run"] == 4
    await hass.async_stop()

    # A restart keeps the pause, and the run that waits still waits.
    async with restarted(config_dir, config_entry) as (second, again, second_calls):
        host = host_of(again)
        pause = switch_of(second, again)
        await host.engine.idle()
        assert second.states.get(pause).state == "on"
        assert host.engine.paused
        assert second_calls == []

        await switch(second, pause, False)
        await host.engine.idle()
        await second.async_block_till_done()
        assert second.states.get(pause).state == "off"
        assert messages(second_calls) == ["second"]  # the reminder went on
        assert (await host.engine.run_detail(waiting))["status"] == "done"
        await person_at_door(host, "alrt_3")
        await second.async_block_till_done()
        assert messages(second_calls) == ["second", "someone at the door"]
        assert await second.config_entries.async_unload(again.entry_id)
        await second.async_stop(force=True)


async def test_only_an_admin_may_pause(
    hass: HomeAssistant, setup_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    household = await hass.auth.async_create_user("Household", group_ids=[GROUP_ID_USER])
    pause = switch_of(hass, setup_entry)
    with pytest.raises(Unauthorized):
        await switch(hass, pause, True, household.id)
    assert hass.states.get(pause).state == "off"
    assert not host_of(setup_entry).engine.paused
    await switch(hass, pause, True, hass_admin_user.id)
    assert hass.states.get(pause).state == "on"
    assert host_of(setup_entry).engine.paused
