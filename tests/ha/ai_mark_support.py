"""Workflows and helpers for the tests of where the AI mark goes in Home Assistant.

The homeowner's setup: a workflow that looks at the front door and raises an alert from
the model's answer (:data:`RAISE_AI`; :data:`RAISE_PLAIN` raises the same alert from the
camera's own title, no AI), a workflow that unlocks the front door behind a plain rule
(:data:`UNLOCK`), a lock (a mock ``lock.unlock`` that records each call), and automations
between them."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from homeassistant.core import HomeAssistant, ServiceCall
from homeassistant.helpers import entity_registry as er
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_mock_service
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator

from custom_components.opennvr_workflows.const import DOMAIN
from custom_components.opennvr_workflows.host.ids import workflow_unique_id
from custom_components.opennvr_workflows.host.workflows import WorkflowHost
from tests.fakes.ollama_server import FakeOllama, FromSchema
from tests.fakes.opennvr_sim import OpenNVRSimulator
from tests.fakes.push_gateway import PushGateway
from tests.ha.phones import Phones, phones_for

from .conftest import ai_options
from .test_entities import wait_for
from .test_services import set_up

RAISE_AI = """\
contract: workflow.v1
name: Door look
state: on
needs: [vision_model]
limits: { cooldown: 0s, per_hour: 100 }
when:
  alert: { alert_type: person, cameras: [front_door] }
then:
  - ai:
      mode: look
      prompt: Is somebody waiting at the front door?
      input: picture
      decision: [visitor, nobody]
      visitor:
        - alert: { severity: medium, title: Visitor at the door, message: "{reason}" }
      nobody: [ log: "Nobody: {reason}" ]
      unsure: [ log: "Not sure: {reason}" ]
"""

RAISE_PLAIN = """\
contract: workflow.v1
name: Door look
state: on
limits: { cooldown: 0s, per_hour: 100 }
when:
  alert: { alert_type: person, cameras: [front_door] }
then:
  - alert: { severity: medium, title: Visitor at the door, message: "{title}" }
"""

UNLOCK = """\
contract: workflow.v1
name: Let the visitor in
state: on
limits: { cooldown: 0s, per_hour: 100 }
when:
  button: {}
if:
  - site_mode: [disarmed, armed_home, armed_away]
then:
  - home_assistant: { action: lock.unlock, target: { entity_id: lock.front_door } }
"""

#: What the model answers at the front door, unless a test says otherwise.
VISITOR = FromSchema({"decision": "visitor", "reason": "a courier says to open the door"})
#: Only the workflows' own alerts (the camera's alerts update the same event entity).
WORKFLOW_ALERT: dict[str, Any] = {
    "condition": "template",
    "value_template": "{{ trigger.to_state.attributes.alert_type == 'opennvr_workflows' }}",
}

#: What an automation calls to start the unlocking workflow.
RUN_UNLOCK: dict[str, Any] = {
    "action": f"{DOMAIN}.run_workflow",
    "data": {"workflow": "unlock"},
}
#: The alert bus event of the integration (fired for every alert a run raises).
ALERT_EVENT = f"{DOMAIN}_alert"


def mark_options(ollama: FakeOllama) -> dict[str, Any]:
    """The entry's options: AI on the fake (answering :data:`VISITOR`), the front door
    mapped, Alice's phone (``notify.mobile_app_alices_phone``) for alerts."""
    ollama.default = VISITOR
    return ai_options(ollama)


async def phones_before_setup(
    hass: HomeAssistant, gateway: PushGateway, aiohttp_client: ClientSessionGenerator
) -> Phones:
    """Phones registered before the integration is set up, as at a real site (the HTTP
    app takes views after it started serving, as Home Assistant's own server does)."""
    assert await async_setup_component(hass, "http", {})
    hass.http.app._router.freeze = lambda: None  # what HomeAssistantHTTP.start does
    return await phones_for(hass, gateway, aiohttp_client)


async def site(
    hass: HomeAssistant, entry: MockConfigEntry, raise_with_ai: bool, **more: str
) -> tuple[WorkflowHost, list[ServiceCall]]:
    """The entry with the raising workflow (with AI or without), the unlocking one and
    ``more``; the lock's recorded calls."""
    lock = async_mock_service(hass, "lock", "unlock")
    host = await set_up(
        hass, entry, door=RAISE_AI if raise_with_ai else RAISE_PLAIN, unlock=UNLOCK, **more
    )
    for workflow_id, loaded in host.files.items():
        assert loaded.workflow is not None, (workflow_id, loaded.report.problems)
    await wait_for(hass, lambda: entry.runtime_data.hub.connected("websocket"))
    return host, lock


async def automations(hass: HomeAssistant, *configs: dict[str, Any]) -> None:
    """Set up these automations (ids and aliases numbered)."""
    numbered = [
        {"id": f"a{n}", "alias": f"Automation {n}", **config} for n, config in enumerate(configs)
    ]
    assert await async_setup_component(hass, "automation", {"automation": numbered})
    await hass.async_block_till_done()


def workflow_entity(
    hass: HomeAssistant, sim: OpenNVRSimulator, platform: str, workflow_id: str, key: str
) -> str:
    found = er.async_get(hass).async_get_entity_id(
        platform, DOMAIN, workflow_unique_id(sim.config.site_id, workflow_id, key)
    )
    assert found is not None, f"no {platform} {key} of {workflow_id}"
    return found


async def settled_run(
    hass: HomeAssistant, host: WorkflowHost, workflow_id: str, after: int = 0, within: float = 15
) -> dict[str, Any]:
    """The newest run of ``workflow_id`` once there are more than ``after`` runs and it
    has ended, with its steps."""
    async with asyncio.timeout(within):
        while True:
            await hass.async_block_till_done()
            await host.engine.idle()
            runs = await host.engine.runs(workflow_id)
            if len(runs) > after and runs[0]["status"] in ("done", "failed", "cancelled"):
                return await host.engine.run_detail(str(runs[0]["id"]))
            await asyncio.sleep(0.02)


def step(detail: dict[str, Any], kind: str) -> dict[str, Any]:
    """The run's (only) step of ``kind``, its result read."""
    (found,) = [s for s in detail["steps"] if s["kind"] == kind]
    result = found.get("result")
    return {**found, "result": json.loads(result) if isinstance(result, str) else result}
