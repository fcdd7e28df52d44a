"""The demo model (``tests.fakes.demo_model``) beside the demo NVR, through the integration:
a Look answers what the simulator really draws (a parcel, a person at the fence, an empty
porch) with a reason in words, an event's picture is the one of its moment, and Home
Assistant's own conversation agent on the integration's Assist API calls the tools the demo
questions ask for and answers from them.

The browser suite walks the same path in Chromium (``tests/browser/test_newcomer.py``)."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from datetime import datetime
from typing import Any

import pytest
from homeassistant.components import conversation
from homeassistant.config_entries import ConfigSubentryData
from homeassistant.const import CONF_LLM_HASS_API, CONF_MODEL, CONF_URL
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers import entity_registry as er
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import MockConfigEntry, MockUser

from custom_components.opennvr_workflows.assist.api import api_id
from custom_components.opennvr_workflows.const import CONF_VISION_MODEL, DOMAIN
from tests.fakes.demo_model import DEMO_MODEL, REASONS, demo_server, look_at
from tests.fakes.ollama_server import FakeOllama
from tests.fakes.opennvr_sim import OpenNVRSimulator
from tests.ha.conftest import ai_options

PARCEL_QUESTION = "Has a parcel or package been left on the doorstep?"


@pytest.fixture
async def ollama(socket_enabled: None) -> AsyncGenerator[FakeOllama]:
    """The demo model server in place of the scripted fake."""
    server = demo_server()
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
def entry_options(ollama: FakeOllama) -> dict[str, Any]:
    return {**ai_options(ollama), CONF_VISION_MODEL: DEMO_MODEL}


async def look(hass: HomeAssistant, question: str, options: list[str]) -> dict[str, Any]:
    response = await hass.services.async_call(
        DOMAIN,
        "look",
        {"camera": "front_door", "prompt": question, "decision": options},
        blocking=True,
        return_response=True,
    )
    assert isinstance(response, dict)
    return response


async def test_a_look_follows_what_the_demo_camera_shows_with_its_reason(
    hass: HomeAssistant, setup_entry: MockConfigEntry, sim: OpenNVRSimulator
) -> None:
    empty = await look(hass, PARCEL_QUESTION, ["parcel", "no_parcel"])
    assert empty["decision"] == "no_parcel"
    assert empty["reason"] == REASONS[""]

    sim.showing[1] = "parcel"
    parcel = await look(hass, PARCEL_QUESTION, ["parcel", "no_parcel"])
    assert parcel["decision"] == "parcel"
    assert parcel["reason"] == REASONS["parcel"]
    assert parcel["confidence"] >= 0.9

    sim.showing[1] = "person"
    person = await look(hass, "Who is there?", ["stranger", "nobody"])
    assert person["decision"] == "stranger"
    assert "red jacket" in person["reason"]


async def test_an_events_picture_shows_its_own_moment(sim: OpenNVRSimulator) -> None:
    """The evidence of a parcel event shows the parcel after it has gone from the porch."""
    parcel = sim.add_event(1, "package")
    person = sim.add_event(3, "person")
    assert not sim.showing
    app_cam = sim.camera(1)
    assert app_cam is not None
    assert look_at(sim.draw_frame(app_cam)).scene == ""
    for event, scene in ((parcel, "parcel"), (person, "person")):
        cam = sim.camera(int(event["camera_id"]))
        assert cam is not None
        at = datetime.fromisoformat(event["started_at"])
        assert look_at(sim.draw_frame(cam, at, scene)).scene == scene


@pytest.fixture
async def agent(hass: HomeAssistant, config_entry: MockConfigEntry, ollama: FakeOllama) -> str:
    """The site set up, and Home Assistant's Ollama agent on the demo model with the site's
    Assist API: what the README's demo walk sets up."""
    assert await async_setup_component(hass, "homeassistant", {})
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    ollama_entry = MockConfigEntry(
        domain="ollama",
        data={CONF_URL: ollama.url},
        version=3,
        minor_version=3,
        subentries_data=[
            ConfigSubentryData(
                data={CONF_MODEL: DEMO_MODEL, CONF_LLM_HASS_API: [api_id(config_entry)]},
                subentry_type="conversation",
                title="Demo conversation",
                unique_id=None,
            )
        ],
    )
    ollama_entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(ollama_entry.entry_id)
    await hass.async_block_till_done()
    (entity,) = [
        e
        for e in er.async_entries_for_config_entry(er.async_get(hass), ollama_entry.entry_id)
        if e.domain == "conversation"
    ]
    return entity.entity_id


async def ask(hass: HomeAssistant, agent: str, text: str, user: MockUser) -> str:
    result = await conversation.async_converse(
        hass, text, None, Context(user_id=user.id), agent_id=agent
    )
    return str(result.response.speech["plain"]["speech"])


def tools_called(ollama: FakeOllama) -> list[str]:
    """The tools the demo model called, in order."""
    return [str(call[0]) for chat in ollama.chats for call in (chat.reply or {}).get("calls", [])]


async def test_the_demo_questions_call_the_assist_tools_and_answer_in_words(
    hass: HomeAssistant,
    agent: str,
    ollama: FakeOllama,
    sim: OpenNVRSimulator,
    hass_admin_user: MockUser,
) -> None:
    sim.showing[1] = "parcel"
    said = await ask(hass, agent, "What's at the front door?", hass_admin_user)
    assert said.startswith(f"At Front Door: {REASONS['parcel']}"), said
    assert f"{DOMAIN}__describe_camera" in tools_called(ollama)

    sim.add_event(1, "package")
    said = await ask(hass, agent, "Any alerts today?", hass_admin_user)
    assert f"{DOMAIN}__recent_events" in tools_called(ollama)
    assert "[^event:" in said, said

    said = await ask(hass, agent, "Which workflows are on?", hass_admin_user)
    assert f"{DOMAIN}__list_workflows" in tools_called(ollama)
    assert said != "ok"

    said = await ask(hass, agent, "Tell me a joke", hass_admin_user)
    assert said.startswith("I am the demo model")
