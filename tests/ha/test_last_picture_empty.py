"""A workflow's *Last picture* before any picture: no link for the frontend to fetch (Home
Assistant's image proxy answers a picture-less image entity with HTTP 500, and a device
page would ask on every view); once a run's AI step has looked, the link is there."""

from __future__ import annotations

from typing import Any

import pytest
from homeassistant.const import ATTR_ENTITY_PICTURE, STATE_UNKNOWN
from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import MockConfigEntry

from tests.fakes.ollama_server import FakeOllama, FromSchema
from tests.fakes.opennvr_sim import OpenNVRSimulator
from tests.nvr.conftest import until

from .conftest import ai_options
from .test_workflow_entities import flush_writes, only, set_up, state_of
from .workflow_files import DOOR_LOOK


@pytest.fixture
def entry_options(ollama: FakeOllama) -> dict[str, Any]:
    return ai_options(ollama)


async def test_no_picture_no_link_then_the_link_after_a_look(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    ollama: FakeOllama,
    sim: OpenNVRSimulator,
) -> None:
    only(hass, door=DOOR_LOOK.format(state="test"))
    host = await set_up(hass, config_entry)
    before = state_of(hass, "image", "door", "evidence")
    assert before.state == STATE_UNKNOWN
    assert ATTR_ENTITY_PICTURE not in before.attributes

    ollama.script(*[FromSchema({"decision": "visitor", "reason": "a courier"})] * 4)
    await until(lambda: config_entry.runtime_data.hub.connected("websocket"), "connected")
    await sim.emit_alert(1, "person")
    await until(lambda: host.engine.stats.ended == 1, "the run ended")
    await host.engine.idle()
    await flush_writes(hass)
    after = state_of(hass, "image", "door", "evidence")
    assert str(after.attributes[ATTR_ENTITY_PICTURE]).startswith("/api/image_proxy/")
