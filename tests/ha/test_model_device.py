"""The vision model device in a real Home Assistant, against the Ollama fake: its
connectivity follows the model watch through an outage and back, its calls and Look time
follow what the workflows and the AI Task asked, its accuracy is the gate's lower bound,
and its model select offers the admin's models to admins only."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from homeassistant.auth.models import User
from homeassistant.const import STATE_OFF, STATE_ON, STATE_UNAVAILABLE, STATE_UNKNOWN
from homeassistant.core import Context, HomeAssistant
from homeassistant.exceptions import ServiceValidationError, Unauthorized
from homeassistant.helpers import device_registry as dr
from homeassistant.helpers import entity_registry as er
from homeassistant.helpers import issue_registry as ir
from homeassistant.util import dt as dt_util
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_fire_time_changed,
)

from custom_components.opennvr_workflows.const import (
    CONF_AI_ENABLED,
    CONF_MODEL_ALLOW_LIST,
    CONF_VISION_MODEL,
    DOMAIN,
)
from custom_components.opennvr_workflows.devices import model_device_identifier
from custom_components.opennvr_workflows.host import issues
from tests.fakes.ollama_server import FakeOllama, FromSchema

from .ai_task_support import SITE_ID, camera_entity, generate, model_entity, set_up
from .conftest import ai_options

PORCH_LOOK = """\
contract: workflow.v1
name: Porch look
state: on
needs: [vision_model]
limits: { cooldown: 0s, per_hour: 100 }
when:
  button: {}
then:
  - ai:
      mode: look
      prompt: Is somebody at the door?
      camera: front_door
      input: picture
      decision: [visitor, nobody]
      visitor: [ log: "visitor" ]
      nobody: [ log: "nobody" ]
      unsure: [ log: "unsure" ]
"""


@pytest.fixture
def entry_options(ollama: FakeOllama) -> dict[str, Any]:
    return {**ai_options(ollama), CONF_MODEL_ALLOW_LIST: ["llava:13b"]}


def state(hass: HomeAssistant, platform: str, key: str) -> Any:
    found = hass.states.get(model_entity(hass, platform, key))
    assert found is not None
    return found


async def settled(hass: HomeAssistant, entry: MockConfigEntry) -> None:
    await hass.async_block_till_done()
    host = entry.runtime_data.workflows
    assert host is not None
    await host.model_watch.async_settled()
    await hass.async_block_till_done()


async def test_the_device_holds_the_model_and_its_entities(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    await set_up(hass, config_entry)
    device = dr.async_get(hass).async_get_device_by_identifier(
        model_device_identifier(SITE_ID), config_entry.entry_id
    )
    assert device is not None
    assert device.name == "OpenNVR Demo vision model"
    assert (device.manufacturer, device.model) == ("Ollama", "qwen2.5vl:3b")
    entities = {
        e.entity_id.partition(".")[0]
        for e in er.async_entries_for_device(er.async_get(hass), device.id)
    }
    assert entities == {"ai_task", "binary_sensor", "sensor", "select"}


async def test_connectivity_follows_a_model_outage_and_its_return(
    hass: HomeAssistant, config_entry: MockConfigEntry, ollama: FakeOllama
) -> None:
    await set_up(hass, config_entry)
    await settled(hass, config_entry)
    assert state(hass, "binary_sensor", "connectivity").state == STATE_ON
    issue_id = issues.model_down_id(config_entry.entry_id)

    port = ollama.port
    await ollama.stop()
    async_fire_time_changed(hass, dt_util.utcnow() + timedelta(minutes=6))
    await settled(hass, config_entry)
    assert state(hass, "binary_sensor", "connectivity").state == STATE_OFF
    assert ir.async_get(hass).async_get_issue(DOMAIN, issue_id) is not None, "the same watch"

    await ollama.start(port)
    async_fire_time_changed(hass, dt_util.utcnow() + timedelta(minutes=12))
    await settled(hass, config_entry)
    assert state(hass, "binary_sensor", "connectivity").state == STATE_ON
    assert ir.async_get(hass).async_get_issue(DOMAIN, issue_id) is None


async def test_calls_and_look_time_count_workflows_and_the_ai_task(
    hass: HomeAssistant, config_entry: MockConfigEntry, ollama: FakeOllama
) -> None:
    host = await set_up(hass, config_entry, porch_look=PORCH_LOOK)
    assert state(hass, "sensor", "calls").state == "0"
    assert state(hass, "sensor", "look_latency").state == STATE_UNKNOWN
    ollama.default = FromSchema({"decision": "visitor", "reason": "a courier", "confidence": 0.9})
    host.engine.run_now("porch_look")
    await host.engine.idle()
    await hass.async_block_till_done()
    ollama.default = FromSchema({"decision": "answered", "reason": "a cat", "confidence": 0.9})
    await generate(hass, instructions="What is there?", cameras=[camera_entity(hass, 1)])
    await hass.async_block_till_done()

    calls = state(hass, "sensor", "calls")
    assert calls.state == "2"
    assert calls.attributes["budget"] == 60
    assert calls.attributes["ai_task_left"] == 59
    assert calls.attributes["by_workflow"] == {"porch_look": 1, "ai-task": 1}
    latency = state(hass, "sensor", "look_latency")
    assert float(latency.state) > 0
    assert latency.attributes["looks"] == 2
    assert latency.attributes["unit_of_measurement"] == "s"


async def test_accuracy_is_the_gates_lower_bound_for_the_model_in_use(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    await set_up(hass, config_entry)
    accuracy = state(hass, "sensor", "accuracy")
    assert float(accuracy.state) == 85.1
    assert accuracy.attributes["cases"] == 22
    assert accuracy.attributes["right"] == 22
    assert accuracy.attributes["measured_model"] == "qwen2.5vl:3b"
    hass.config_entries.async_update_entry(
        config_entry, options={**config_entry.options, CONF_VISION_MODEL: "llava:13b"}
    )
    await hass.config_entries.async_reload(config_entry.entry_id)
    await hass.async_block_till_done()
    assert state(hass, "sensor", "accuracy").state == STATE_UNKNOWN, "another model's"


async def test_the_model_select_offers_the_allowed_models_to_admins_only(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    hass_admin_user: User,
    hass_read_only_user: User,
) -> None:
    await set_up(hass, config_entry)
    select = state(hass, "select", "select")
    assert select.state == "qwen2.5vl:3b"
    assert select.attributes["options"] == ["qwen2.5vl:3b", "llava:13b"]

    async def choose(option: str, user: User) -> None:
        await hass.services.async_call(
            "select",
            "select_option",
            {"entity_id": select.entity_id, "option": option},
            blocking=True,
            context=Context(user_id=user.id),
        )

    household = await hass.auth.async_create_user("Household", group_ids=["system-users"])
    for user in (household, hass_read_only_user):
        with pytest.raises(Unauthorized):
            await choose("llava:13b", user)
    with pytest.raises(ServiceValidationError):
        await choose("mistral:7b", hass_admin_user)
    assert config_entry.options[CONF_VISION_MODEL] == "qwen2.5vl:3b"

    await choose("llava:13b", hass_admin_user)
    await hass.async_block_till_done()
    assert config_entry.options[CONF_VISION_MODEL] == "llava:13b"
    assert state(hass, "select", "select").state == "llava:13b"


async def test_the_model_device_is_unavailable_while_ai_is_off(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    hass.config_entries.async_update_entry(
        config_entry, options={**config_entry.options, CONF_AI_ENABLED: False}
    )
    await set_up(hass, config_entry)
    for platform, key in (("binary_sensor", "connectivity"), ("sensor", "calls")):
        assert state(hass, platform, key).state == STATE_UNAVAILABLE
