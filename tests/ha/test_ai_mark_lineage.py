"""The AI mark survives Home Assistant: an automation set off by a workflow's AI output
(through the alert bus event, the camera's event entity, the Last outcome sensor, a
helper and a second automation, a delay, a script, the Run now button, the look action,
the run-a-workflow blueprint) starts a run that moves nothing without a person's reply,
and the run's trace says why. Each route is run twice: the alert raised from the model's
answer leaves the door locked, the same alert raised by a plain rule opens it.

An automation whose start Home Assistant does not record (a persistent-notification or
time trigger) starts a workflow that moves things as AI-derived, unless an admin marked
that workflow as started only by trusted triggers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest
from homeassistant.core import Context, HomeAssistant
from homeassistant.setup import async_setup_component
from homeassistant.util import dt as dt_util
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_fire_time_changed

from custom_components.opennvr_workflows.const import CONF_TRUSTED_STARTS, DOMAIN
from custom_components.opennvr_workflows.host.runs.messages import ask_workflows
from custom_components.opennvr_workflows.host.workflows import WorkflowHost
from tests.fakes.ollama_server import FakeOllama
from tests.fakes.opennvr_sim import OpenNVRSimulator

from .ai_mark_support import (
    ALERT_EVENT,
    RUN_UNLOCK,
    WORKFLOW_ALERT,
    automations,
    mark_options,
    settled_run,
    site,
    step,
    workflow_entity,
)
from .test_entities import entity_id, wait_for
from .workflow_files import log_on_alert


@pytest.fixture
def entry_options(ollama: FakeOllama) -> dict[str, Any]:
    return mark_options(ollama)


@dataclass
class Route:
    """Automations from the raised alert to ``run_workflow`` (or the Run now button)."""

    automations: Callable[[HomeAssistant, OpenNVRSimulator], list[dict[str, Any]]]
    helpers: dict[str, Any] = field(default_factory=dict)
    #: seconds of Home Assistant's clock to move on after the alert (a delay)
    later_s: float = 0


def on_bus(*actions: dict[str, Any]) -> dict[str, Any]:
    return {"triggers": [{"trigger": "event", "event_type": ALERT_EVENT}], "actions": list(actions)}


ROUTES: dict[str, Route] = {
    "the alert bus event": Route(lambda hass, sim: [on_bus(RUN_UNLOCK)]),
    "the alert bus event, after a delay": Route(
        lambda hass, sim: [on_bus({"delay": {"seconds": 30}}, RUN_UNLOCK)], later_s=31
    ),
    "a helper and a second automation": Route(
        lambda hass, sim: [
            on_bus(
                {
                    "action": "input_boolean.turn_on",
                    "target": {"entity_id": "input_boolean.visitor"},
                }
            ),
            {
                "triggers": [
                    {"trigger": "state", "entity_id": "input_boolean.visitor", "to": "on"}
                ],
                "actions": [RUN_UNLOCK],
            },
        ],
        helpers={"input_boolean": {"input_boolean": {"visitor": {}}}},
    ),
    "the model's text in a text helper, then a second automation": Route(
        lambda hass, sim: [
            on_bus(
                {
                    "action": "input_text.set_value",
                    "target": {"entity_id": "input_text.note"},
                    "data": {"value": "{{ trigger.event.data.message[:100] }}"},
                }
            ),
            {
                "triggers": [{"trigger": "state", "entity_id": "input_text.note"}],
                "actions": [
                    {
                        **RUN_UNLOCK,
                        "data": {
                            "workflow": "unlock",
                            "variables": {"note": "{{ trigger.to_state.state }}"},
                        },
                    }
                ],
            },
        ],
        helpers={"input_text": {"input_text": {"note": {}}}},
    ),
    "a script": Route(
        lambda hass, sim: [on_bus({"action": "script.let_in"})],
        helpers={"script": {"script": {"let_in": {"sequence": [RUN_UNLOCK]}}}},
    ),
    "the Run now button": Route(
        lambda hass, sim: [
            on_bus(
                {
                    "action": "button.press",
                    "target": {
                        "entity_id": workflow_entity(hass, sim, "button", "unlock", "run_now")
                    },
                }
            )
        ]
    ),
    "the camera's event entity": Route(
        lambda hass, sim: [
            {
                "triggers": [
                    {"trigger": "state", "entity_id": entity_id(hass, sim, "event", "1_events")}
                ],
                "conditions": [WORKFLOW_ALERT],
                "actions": [RUN_UNLOCK],
            }
        ]
    ),
    "the Last outcome sensor": Route(
        lambda hass, sim: [
            {
                "triggers": [
                    {
                        "trigger": "state",
                        "entity_id": workflow_entity(hass, sim, "sensor", "door", "last_outcome"),
                    }
                ],
                "actions": [RUN_UNLOCK],
            }
        ]
    ),
}


@pytest.mark.parametrize("raise_with_ai", [True, False], ids=["ai-alert", "plain-alert"])
@pytest.mark.parametrize("route", list(ROUTES))
async def test_each_route_from_ai_output_to_the_lock_needs_a_person(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    sim: OpenNVRSimulator,
    route: str,
    raise_with_ai: bool,
) -> None:
    path = ROUTES[route]
    for domain, config in path.helpers.items():
        assert await async_setup_component(hass, domain, config)
    host, lock = await site(hass, config_entry, raise_with_ai)
    await automations(hass, *path.automations(hass, sim))

    await sim.emit_alert(1, "person", title="Someone at the front door")
    await settled_run(hass, host, "door")
    if path.later_s:
        async_fire_time_changed(hass, dt_util.utcnow() + timedelta(seconds=path.later_s))
    run = await settled_run(hass, host, "unlock")

    trigger = run["trigger"]
    unlock = step(run, "home_assistant")
    if raise_with_ai:
        assert lock == [], f"{route}: the door opened on the model's word"
        assert unlock["status"] == "refused"
        assert unlock["result"]["ai_origin"] == "lineage"
        assert "descends from AI output" in unlock["result"]["error"]
        assert '"ai_derived":true' in trigger
    else:
        assert len(lock) == 1, f"{route}: a plain alert should open the door"
        assert unlock["status"] == "done"
        assert "ai_derived" not in trigger


async def test_an_automation_that_asked_the_model_itself_starts_an_ai_derived_run(
    hass: HomeAssistant, config_entry: MockConfigEntry, sim: OpenNVRSimulator
) -> None:
    """The look action's caller holds the model's answer: what it starts afterwards is
    AI-derived, while what it started before it asked is not."""
    host, lock = await site(hass, config_entry, raise_with_ai=False)
    camera = entity_id(hass, sim, "camera", "1_camera")
    await automations(
        hass,
        {
            "triggers": [{"trigger": "event", "event_type": "doorbell"}],
            "actions": [
                {
                    "if": "{{ trigger.event.data.look }}",
                    "then": [
                        {
                            "action": f"{DOMAIN}.look",
                            "response_variable": "verdict",
                            "data": {
                                "camera": camera,
                                "prompt": "Should the door open?",
                                "decision": ["visitor", "nobody"],
                            },
                        }
                    ],
                },
                {
                    "action": f"{DOMAIN}.run_workflow",
                    "data": {
                        "workflow": "unlock",
                        "variables": {
                            "decision": "{{ verdict.decision if verdict is defined else 'none' }}"
                        },
                    },
                },
            ],
        },
    )
    hass.bus.async_fire("doorbell", {"look": False})
    run = await settled_run(hass, host, "unlock")
    assert len(lock) == 1
    assert step(run, "home_assistant")["status"] == "done"

    hass.bus.async_fire("doorbell", {"look": True})
    run = await settled_run(hass, host, "unlock", after=1)
    assert '"decision":"visitor"' in run["trigger"]
    assert len(lock) == 1, "the model's answer opened the door"
    refused = step(run, "home_assistant")
    assert refused["status"] == "refused"
    assert refused["result"]["ai_origin"] == "lineage"


async def test_an_untraced_start_is_ai_derived_for_a_workflow_that_moves_things_unless_trusted(
    hass: HomeAssistant, config_entry: MockConfigEntry, sim: OpenNVRSimulator
) -> None:
    """A persistent notification carries no context: the automation it triggers is
    untraced. The unlocking workflow treats that start as AI-derived, until an admin marks
    it as started only by trusted triggers; no mark lifts a traced AI lineage. A workflow
    that moves nothing is started from it as from anything else."""
    assert await async_setup_component(hass, "persistent_notification", {})
    host, lock = await site(hass, config_entry, raise_with_ai=True, jot=log_on_alert("Jot"))
    event = entity_id(hass, sim, "event", "1_events")
    await automations(
        hass,
        {
            "triggers": [
                {
                    "trigger": "persistent_notification",
                    "update_type": ["added"],
                    "notification_id": "front_door_note",
                }
            ],
            "actions": [
                {"action": f"{DOMAIN}.run_workflow", "data": {"workflow": "jot"}},
                RUN_UNLOCK,
            ],
        },
        {
            "triggers": [{"trigger": "state", "entity_id": event}],
            "conditions": [WORKFLOW_ALERT],
            "actions": [RUN_UNLOCK],
        },
    )

    async def note(host: WorkflowHost, after: int) -> dict[str, Any]:
        await hass.services.async_call(
            "persistent_notification",
            "create",
            {"notification_id": "front_door_note", "message": "Let them in"},
            blocking=True,
        )
        run = await settled_run(hass, host, "unlock", after=after)
        await hass.services.async_call(
            "persistent_notification", "dismiss", {"notification_id": "front_door_note"}
        )
        return run

    run = await note(host, 0)
    jotted = await settled_run(hass, host, "jot")
    assert "ai_derived" not in jotted["trigger"], "a workflow that moves nothing is not marked"
    assert lock == []
    refused = step(run, "home_assistant")
    assert (refused["status"], refused["result"]["ai_origin"]) == ("refused", "untraced")
    assert "Started only by trusted triggers" in refused["result"]["error"]

    # The admin marks the unlocking workflow as started only by trusted triggers (the
    # options), and sets it On again after the refusal.
    hass.config_entries.async_update_entry(
        config_entry, options={**config_entry.options, CONF_TRUSTED_STARTS: ["unlock"]}
    )
    assert await hass.config_entries.async_reload(config_entry.entry_id)
    await hass.async_block_till_done()
    host = config_entry.runtime_data.workflows
    assert host is not None
    assert "unlock" in host.settings.trusted_starts
    host.engine.set_workflow_state("unlock", "on")
    await wait_for(hass, lambda: config_entry.runtime_data.hub.connected("websocket"))
    run = await note(host, 1)
    assert len(lock) == 1, "a trusted workflow opens on an untraced start"
    assert step(run, "home_assistant")["status"] == "done"

    # ... but an alert raised from the model's answer still cannot open it.
    await sim.emit_alert(1, "person", title="Someone at the front door")
    run = await settled_run(hass, host, "unlock", after=2)
    assert len(lock) == 1
    assert step(run, "home_assistant")["result"]["ai_origin"] == "lineage"


OPEN_ON_MESSAGE = """\
contract: workflow.v1
name: Open on request
state: on
limits: { cooldown: 0s, per_hour: 100 }
when:
  message: { contains: [open] }
if:
  - site_mode: [disarmed, armed_home, armed_away]
then:
  - home_assistant: { action: lock.unlock, target: { entity_id: lock.front_door } }
"""


@pytest.mark.parametrize("from_ai", [True, False], ids=["set-off-by-ai", "set-off-plainly"])
async def test_a_message_sent_on_from_ai_output_starts_an_ai_derived_run(
    hass: HomeAssistant, config_entry: MockConfigEntry, sim: OpenNVRSimulator, from_ai: bool
) -> None:
    """The message door (Assist's "ask the cameras ..."): an automation that AI output set
    off and that passes a message on to the workflows starts AI-derived runs."""
    host, lock = await site(hass, config_entry, raise_with_ai=False, opener=OPEN_ON_MESSAGE)
    source = Context()
    if from_ai:
        host.effects.contexts.lineage.mark(source.id)
    asking = Context(parent_id=source.id)  # the automation that sends the message
    await ask_workflows(hass, host, "please open the door", None, wait_s=1, context=asking)
    run = await settled_run(hass, host, "opener")
    unlock = step(run, "home_assistant")
    if from_ai:
        assert lock == []
        assert (unlock["status"], unlock["result"]["ai_origin"]) == ("refused", "lineage")
    else:
        assert len(lock) == 1
        assert unlock["status"] == "done"
