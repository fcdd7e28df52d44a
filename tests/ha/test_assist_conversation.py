"""The camera assistant in a real conversation: Home Assistant's own Ollama conversation
agent, set to the integration's LLM API, against the Ollama fake and the OpenNVR
simulator, so Home Assistant's tool loop runs the tools and writes the answer.

The fake plays the model. What it answers is scripted, so these tests prove the
plumbing, not a model's judgement: the prompt carries the scope and IDK rules, a reply
without tool calls goes through untouched, tool results reach the model, and the
citation check keeps the markers a tool returned and strips the invented ones."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from homeassistant.components import conversation
from homeassistant.config_entries import ConfigSubentryData
from homeassistant.const import CONF_LLM_HASS_API, CONF_MODEL, CONF_URL
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers import chat_session
from homeassistant.helpers import entity_registry as er
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import MockConfigEntry, MockUser

from custom_components.opennvr_workflows.assist.api import api_id
from custom_components.opennvr_workflows.assist.prompt import IDK
from custom_components.opennvr_workflows.assist.turn_guard import citation_stats
from custom_components.opennvr_workflows.const import DOMAIN
from tests.fakes.ollama_server import Answer, FakeOllama, FromSchema, Received, Reply, ToolCalls
from tests.fakes.opennvr_sim import OpenNVRSimulator
from tests.ha.assist_support import site_options

#: The conversation's model (tools, no vision); the Look runs on the site's vision model.
CHAT_MODEL = "qwen3:1.7b"
REFUSAL = "I can only help with this site's cameras, events and workflows."

#: What the model does with the person's message, and with the tools' results.
FirstMove = Callable[[Received], Reply]
Answering = Callable[[list[dict[str, Any]]], Reply]


@pytest.fixture
def entry_options(ollama: FakeOllama) -> dict[str, Any]:
    return site_options(ollama)


@pytest.fixture
async def agent(hass: HomeAssistant, config_entry: MockConfigEntry, ollama: FakeOllama) -> str:
    """The site set up, and Ollama's conversation agent on the site's API: its entity id."""
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
                data={CONF_MODEL: CHAT_MODEL, CONF_LLM_HASS_API: [api_id(config_entry)]},
                subentry_type="conversation",
                title="Ollama Conversation",
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


def play(ollama: FakeOllama, first: FirstMove, answer: Answering) -> None:
    """Script the fake: the Look gets its decision; the chat model makes ``first`` move on
    the person's message and ``answer``s from the tool results that come back."""

    def respond(received: Received) -> Reply:
        if received.format:
            return FromSchema(values={"decision": "answered", "reason": "A courier with a parcel."})
        messages = received.messages
        if messages[-1]["role"] == "tool":
            results = []
            for message in reversed(messages):
                if message["role"] != "tool":
                    break
                results.append(json.loads(message["content"]))
            return answer(results)
        return first(received)

    ollama.responder = respond


def chats(ollama: FakeOllama) -> list[Received]:
    return [c for c in ollama.chats if c.model == CHAT_MODEL]


async def ask(
    hass: HomeAssistant, agent: str, text: str, user: MockUser, conversation_id: str | None = None
) -> conversation.ConversationResult:
    return await conversation.async_converse(
        hass, text, conversation_id, Context(user_id=user.id), agent_id=agent
    )


def speech(result: conversation.ConversationResult) -> str:
    return str(result.response.speech["plain"]["speech"])


async def test_anyone_at_the_front_door_answers_from_a_look_and_cites_its_event(
    hass: HomeAssistant,
    agent: str,
    ollama: FakeOllama,
    sim: OpenNVRSimulator,
    hass_admin_user: MockUser,
) -> None:
    event = sim.add_event(1, "person")
    before = citation_stats(hass).cited

    def from_the_look(results: list[dict[str, Any]]) -> Reply:
        data = results[0]["data"]
        return Answer(f"{data['answer']} {data['cite']} {data['recent_events'][0]['cite']}")

    play(
        ollama,
        lambda _: ToolCalls([(f"{DOMAIN}__describe_camera", {"camera": "Front Door"})]),
        from_the_look,
    )
    result = await ask(hass, agent, "Anyone at the front door?", hass_admin_user)
    text = speech(result)
    assert text.startswith("A courier with a parcel. [^look:")
    assert text.endswith(f"[^event:{event['id']}]")
    assert citation_stats(hass).cited - before == 2
    first = chats(ollama)[0]
    assert f"{DOMAIN}__describe_camera" in first.tool_names
    assert "decline it in one short sentence" in first.system
    assert [c.model for c in ollama.chats].count("qwen2.5vl:3b") >= 1, "the Look ran"


async def test_an_invented_citation_is_stripped_counted_and_gone_from_the_history(
    hass: HomeAssistant,
    agent: str,
    ollama: FakeOllama,
    sim: OpenNVRSimulator,
    hass_admin_user: MockUser,
) -> None:
    first = sim.add_event(3, "person")
    second = sim.add_event(2, "car")
    stats = citation_stats(hass)
    stripped, cited = stats.stripped, stats.cited

    def listing(results: list[dict[str, Any]]) -> Reply:
        events = results[0]["data"]["events"]
        lines = [f"A {e['label']} at the {e['camera']} {e['cite']}." for e in events]
        return Answer(" ".join([*lines, "And a fox in the garden [^event:999]."]))

    play(
        ollama,
        lambda _: ToolCalls([(f"{DOMAIN}__recent_events", {"hours": 12})]),
        listing,
    )
    result = await ask(hass, agent, "What happened last night?", hass_admin_user)
    text = speech(result)
    assert text == (
        f"A car at the Driveway [^event:{second['id']}]. "
        f"A person at the Back Garden [^event:{first['id']}]. "
        "And a fox in the garden."
    )
    assert stats.stripped - stripped == 1
    assert stats.cited - cited == 2
    # The next turn's history holds the checked answer, not the invented marker.
    play(ollama, lambda _: Answer("You're welcome."), lambda _: Answer("unused"))
    await ask(hass, agent, "Thanks", hass_admin_user, result.conversation_id)
    history = chats(ollama)[-1].messages
    said = [m["content"] for m in history if m["role"] == "assistant" and m.get("content")]
    assert said[0] == text
    assert "999" not in json.dumps(history)


async def test_out_of_scope_is_declined_in_one_sentence_without_a_tool_call(
    hass: HomeAssistant, agent: str, ollama: FakeOllama, hass_admin_user: MockUser
) -> None:
    play(ollama, lambda _: Answer(REFUSAL), lambda _: Answer("no tool was called"))
    result = await ask(hass, agent, "Write me a poem about the sea.", hass_admin_user)
    assert speech(result) == REFUSAL
    (only,) = chats(ollama)
    assert "out of scope: decline it in one short sentence" in only.system
    assert "do not call any tool for it" in only.system
    assert len(only.tool_names) == 8, "the tools were offered and none was called"
    assert all(m["role"] != "tool" for m in only.messages)


async def test_in_scope_but_nothing_found_answers_the_idk_marker(
    hass: HomeAssistant, agent: str, ollama: FakeOllama, hass_admin_user: MockUser
) -> None:
    def idk_when_empty(results: list[dict[str, Any]]) -> Reply:
        data = results[0]["data"]
        return Answer(IDK if data["found"] == 0 else f"Found {data['found']}.")

    play(
        ollama,
        lambda _: ToolCalls([(f"{DOMAIN}__search_history", {"query": "elephant"})]),
        idk_when_empty,
    )
    result = await ask(hass, agent, "Was there an elephant in the yard?", hass_admin_user)
    assert speech(result) == IDK
    assert IDK in chats(ollama)[0].system
    tool_turns = [m for m in chats(ollama)[-1].messages if m["role"] == "tool"]
    data = json.loads(tool_turns[-1]["content"])["data"]
    assert (data["query"], data["results"], data["found"]) == ("elephant", [], 0)


async def test_a_tool_error_goes_back_to_the_model(
    hass: HomeAssistant, agent: str, ollama: FakeOllama, hass_admin_user: MockUser
) -> None:
    def from_the_error(results: list[dict[str, Any]]) -> Reply:
        assert results[0]["error"] is True
        return Answer(f"That camera does not exist: {results[0]['data']['error']}")

    play(
        ollama,
        lambda _: ToolCalls([(f"{DOMAIN}__describe_camera", {"camera": "Attic"})]),
        from_the_error,
    )
    result = await ask(hass, agent, "What's in the attic?", hass_admin_user)
    assert speech(result).startswith("That camera does not exist: ")
    assert "Front Door" in speech(result)


async def test_a_streamed_answer_is_filtered_before_it_is_spoken(
    hass: HomeAssistant,
    agent: str,
    ollama: FakeOllama,
    sim: OpenNVRSimulator,
    hass_admin_user: MockUser,
) -> None:
    """A voice pipeline streams the answer to speech as it comes (a delta listener on the
    chat log, as Home Assistant's pipeline attaches one): the invented marker never
    reaches it."""
    event = sim.add_event(1, "person")
    play(
        ollama,
        lambda _: ToolCalls([(f"{DOMAIN}__recent_events", {})]),
        lambda results: Answer(
            f"A person {results[0]['data']['events'][0]['cite']} and a fox [^event:999]."
        ),
    )
    deltas: list[dict[str, Any]] = []
    with (
        chat_session.async_get_chat_session(hass) as session,
        conversation.async_get_chat_log(
            hass, session, chat_log_delta_listener=lambda _, delta: deltas.append(delta)
        ),
    ):
        result = await conversation.async_converse(
            hass,
            "Who came by?",
            session.conversation_id,
            Context(user_id=hass_admin_user.id),
            agent_id=agent,
        )
    streamed = "".join(
        str(d.get("content") or "") for d in deltas if d.get("role", "assistant") == "assistant"
    )
    assert streamed.endswith(f"A person [^event:{event['id']}] and a fox.")
    assert "999" not in json.dumps(deltas, default=str)
    assert speech(result) == f"A person [^event:{event['id']}] and a fox."
