"""The household's accounts try the integration's doors as an attacker would.

Each test is one hole as it was found, tried by the account that found it (a read-only
user, a household user), with the safe case beside it (an admin, or a plain run) so the
test fails if the door is shut for everyone or open for anyone. Everything runs in a real
Home Assistant; the gate is a ``lock.unlock`` action whose calls are recorded.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

import pytest
from homeassistant.auth.const import GROUP_ID_USER
from homeassistant.auth.models import User
from homeassistant.core import Context, HomeAssistant, ServiceCall
from homeassistant.exceptions import ServiceValidationError, Unauthorized
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_mock_service

from custom_components.opennvr_workflows.const import (
    CONF_MOVING_WEBHOOKS,
    CONF_SITE_LISTS,
    CONF_WEBHOOKS,
    DOMAIN,
    WORKFLOW_FOLDER,
)
from custom_components.opennvr_workflows.host.workflows import WorkflowHost
from tests.fakes.ollama_server import FakeOllama

from .conftest import ai_options
from .test_services import act, set_up

PLATE: Final = "AB123CD"

#: An alert's description checked against the household's plates opens the gate.
GATE: Final = """\
contract: workflow.v1
name: Gate by plate
state: on
limits: { cooldown: 0s, per_hour: 100 }
when:
  alert: { alert_type: vehicle, cameras: [gate] }
if:
  - list: { value: "{description}", in: household_plates }
then:
  - home_assistant: { action: lock.unlock, target: { entity_id: lock.gate } }
"""

#: Only the owners may arm: ``{user}`` must be who pressed.
ARM_BY_OWNER: Final = """\
contract: workflow.v1
name: Owner arms
state: on
limits: { cooldown: 0s, per_hour: 100 }
when:
  button: {}
if:
  - list: { value: "{user}", in: owners }
then:
  - home_assistant: { action: lock.unlock, target: { entity_id: lock.gate } }
"""

#: A workflow that only tells people, and one whose webhook an admin marked as moving.
TELL: Final = """\
contract: workflow.v1
name: Tell
state: test
when:
  button: {}
then:
  - notify: { who: role:household, message: hello }
"""

HOOK: Final = """\
contract: workflow.v1
name: Open the barrier
state: test
when:
  button: {}
if:
  - site_mode: [disarmed, armed_home, armed_away]
then:
  - webhook: { to: barrier, data: { open: true } }
"""


@pytest.fixture
def entry_options(ollama: FakeOllama) -> dict[str, Any]:
    return {
        **ai_options(ollama),
        "camera_roles": {"front_door": "1", "gate": "2"},
        CONF_SITE_LISTS: {"household_plates": [PLATE], "owners": ["Owner"]},
        CONF_WEBHOOKS: {"barrier": "http://127.0.0.1:9/open"},
        CONF_MOVING_WEBHOOKS: ["barrier"],
    }


async def household(hass: HomeAssistant, name: str = "Kid") -> User:
    return await hass.auth.async_create_user(name, group_ids=[GROUP_ID_USER])


async def run_and_settle(host: WorkflowHost, started: Any) -> dict[str, Any]:
    (run_id,) = started["run_ids"]
    await host.engine.idle()
    detail: dict[str, Any] = await host.engine.run_detail(run_id)
    if isinstance(detail.get("trigger"), str):
        detail = {**detail, "trigger": json.loads(detail["trigger"])}
    return detail


async def test_a_read_only_user_cannot_start_a_workflow_at_all(
    hass: HomeAssistant, config_entry: MockConfigEntry, hass_read_only_user: User
) -> None:
    host = await set_up(hass, config_entry, gate=GATE)
    unlocks = async_mock_service(hass, "lock", "unlock")
    with pytest.raises(Unauthorized):
        await act(
            hass,
            "run_workflow",
            {"workflow": "gate", "variables": {"description": PLATE}},
            hass_read_only_user,
        )
    await host.engine.idle()
    assert unlocks == []
    assert await host.engine.runs("gate", 5) == []


async def test_a_persons_variables_never_fill_the_events_fields_nor_open_the_gate(
    hass: HomeAssistant, config_entry: MockConfigEntry, hass_admin_user: User
) -> None:
    host = await set_up(hass, config_entry, gate=GATE)
    unlocks: list[ServiceCall] = async_mock_service(hass, "lock", "unlock")
    kid = await household(hass)
    # The event's own fields are the world's: refused by name.
    for field in ("title", "plate", "camera_id", "severity", "alert_id", "app"):
        with pytest.raises(ServiceValidationError) as refused:
            await act(hass, "run_workflow", {"workflow": "gate", "variables": {field: PLATE}}, kid)
        assert refused.value.translation_key == "variables_are_event_fields"
    # Any other name fills a placeholder, marked as the kid's: the condition passes, the
    # unlock is refused before it acts, and the trace says why.
    started = await act(
        hass, "run_workflow", {"workflow": "gate", "variables": {"description": PLATE}}, kid
    )
    detail = await run_and_settle(host, started)
    assert unlocks == []
    assert detail["trigger"]["supplied_by"] == kid.id
    (refusal,) = [s for s in detail["steps"] if s["status"] == "refused"]
    result = json.loads(refusal["result"])
    assert "not an admin" in result["error"]
    assert result["supplied_by"] == kid.id
    assert host.engine.workflow_status("gate").state == "needs_attention"
    # The same values from an admin are the admin's to give: the gate opens.
    await act(hass, "set_workflow_state", {"workflow": "gate", "state": "on"}, hass_admin_user)
    started = await act(
        hass,
        "run_workflow",
        {"workflow": "gate", "variables": {"description": PLATE}},
        hass_admin_user,
    )
    await run_and_settle(host, started)
    assert len(unlocks) == 1


async def test_user_is_always_who_started_the_run(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    host = await set_up(hass, config_entry, arm=ARM_BY_OWNER)
    unlocks = async_mock_service(hass, "lock", "unlock")
    kid = await household(hass)
    with pytest.raises(ServiceValidationError) as refused:
        await act(hass, "run_workflow", {"workflow": "arm", "variables": {"user": "Owner"}}, kid)
    assert refused.value.translation_key == "variable_is_the_caller"
    started = await act(hass, "run_workflow", {"workflow": "arm"}, kid)
    detail = await run_and_settle(host, started)
    assert detail["trigger"]["payload"]["user"] == "Kid"
    assert unlocks == []
    # The owner herself (a household user too, on the owners list) does open it.
    owner = await household(hass, "Owner")
    started = await act(hass, "run_workflow", {"workflow": "arm"}, owner)
    await run_and_settle(host, started)
    assert len(unlocks) == 1


async def test_a_read_only_user_cannot_write_a_workflow_and_turn_it_on(
    hass: HomeAssistant, config_entry: MockConfigEntry, hass_read_only_user: User
) -> None:
    host = await set_up(hass, config_entry, tell=TELL)
    folder = Path(hass.config.path(WORKFLOW_FOLDER))
    before = sorted(p.name for p in folder.iterdir())
    for service, data in (
        ("import_workflow", {"yaml": TELL.replace("Tell", "Mine"), "file_name": "mine"}),
        ("import_workflow", {"yaml": TELL, "file_name": "tell", "overwrite": True}),
        ("set_workflow_state", {"workflow": "tell", "state": "on"}),
        ("set_workflow_state", {"workflow": "tell", "state": "off"}),
        ("rollback_workflow", {"workflow": "tell", "version": "x"}),
        ("reload", {}),
        ("try_workflow", {"workflow": "tell"}),
        ("describe_workflow", {"sentence": "open the gate for everyone", "save": True}),
    ):
        with pytest.raises(Unauthorized):
            await act(hass, service, data, hass_read_only_user)
    assert sorted(p.name for p in folder.iterdir()) == before
    assert host.engine.workflow_status("tell").state == "test"


async def test_the_preview_says_what_moves_things_by_this_sites_own_judgement(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    await set_up(hass, config_entry)
    tell = await act(hass, "import_workflow", {"yaml": TELL, "file_name": "t", "dry_run": True})
    assert tell["moves_things"] == []
    assert tell["needs_admin_to_turn_on"] is False
    hook = await act(hass, "import_workflow", {"yaml": HOOK, "file_name": "h", "dry_run": True})
    assert hook["actuators"] == []  # not an actuator to the contract...
    (why,) = hook["moves_things"]  # ...but moving here: an admin marked it so
    assert why.startswith("$.then[0]: ")
    assert "barrier" in why
    assert hook["needs_admin_to_turn_on"] is True


async def test_a_deactivated_user_passes_no_door(
    hass: HomeAssistant, config_entry: MockConfigEntry, hass_owner_user: User
) -> None:
    await set_up(hass, config_entry, tell=TELL)
    gone = await household(hass, "Former cleaner")
    await hass.auth.async_deactivate_user(gone)
    with pytest.raises(Unauthorized):
        await hass.services.async_call(
            DOMAIN,
            "get_runs",
            {"workflow": "tell"},
            blocking=True,
            return_response=True,
            context=Context(user_id=gone.id),
        )
