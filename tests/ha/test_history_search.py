"""The search_history action in a real Home Assistant: AI decisions recorded by a workflow
(a Look through the Ollama fake on the simulator's alerts) found by words, by meaning with an
embedding model on the fake, and OpenNVR's own /search on the simulator, fused; each result
with its run or event id; a person sees only the cameras shared with them."""

from __future__ import annotations

from typing import Any

import pytest
from homeassistant.core import Context, HomeAssistant
from homeassistant.exceptions import ServiceValidationError
from pytest_homeassistant_custom_component.common import MockConfigEntry, MockUser

from custom_components.opennvr_workflows.const import (
    CONF_CAMERA_ROLES,
    CONF_EMBEDDING_MODEL,
    DOMAIN,
)
from custom_components.opennvr_workflows.host.workflows import WorkflowHost
from tests.fakes.ollama_server import EMBEDDING_MODEL, FakeOllama, FromSchema, HttpError
from tests.fakes.opennvr_sim import OpenNVRSimulator
from tests.ha.assist_support import camera_entity
from tests.nvr.conftest import until

from .conftest import ai_options
from .workflow_files import write_workflow

#: A Look on every person alert, on any camera.
LOOK_ANYWHERE = """\
contract: workflow.v1
name: Who came by
state: on
needs: [vision_model]
limits: { cooldown: 0s, per_hour: 100 }
when:
  alert: { alert_type: person }
then:
  - ai:
      mode: look
      prompt: Who is there?
      input: picture
      decision: [visitor, nobody]
      visitor: [ log: "visitor" ]
      nobody: [ log: "nobody" ]
      unsure: [ log: "unsure" ]
"""


def options(ollama: FakeOllama) -> dict[str, Any]:
    """AI on the fake, with the front door and the driveway (cameras 1 and 2) mapped."""
    return {**ai_options(ollama), CONF_CAMERA_ROLES: {"front_door": "1", "driveway": "2"}}


@pytest.fixture
def entry_options(ollama: FakeOllama) -> dict[str, Any]:
    return options(ollama)


def host_of(entry: MockConfigEntry) -> WorkflowHost:
    host = entry.runtime_data.workflows
    assert host is not None
    return host


async def decide(
    host: WorkflowHost, sim: OpenNVRSimulator, ollama: FakeOllama, camera: int, reason: str
) -> str:
    """An alert on ``camera`` whose Look decides ``visitor`` for ``reason``; the run id."""
    ollama.default = FromSchema({"decision": "visitor", "reason": reason, "confidence": 0.9})
    before = host.engine.stats.started
    await sim.emit_alert(camera, "person")
    await until(lambda: host.engine.stats.started == before + 1, "a run started")
    await host.engine.idle()
    runs = await host.engine.runs("look")
    return str(runs[0]["id"])


@pytest.fixture
async def site(
    hass: HomeAssistant, config_entry: MockConfigEntry, sim: OpenNVRSimulator
) -> MockConfigEntry:
    write_workflow(hass, "look", LOOK_ANYWHERE)
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    await until(lambda: config_entry.runtime_data.hub.connected("websocket"), "connected")
    return config_entry


async def search(hass: HomeAssistant, user: MockUser | None = None, **data: Any) -> dict[str, Any]:
    response = await hass.services.async_call(
        DOMAIN,
        "search_history",
        data,
        blocking=True,
        return_response=True,
        context=Context(user_id=user.id) if user is not None else None,
    )
    assert isinstance(response, dict)
    return response


async def test_decisions_and_opennvr_events_are_found_with_their_ids(
    hass: HomeAssistant, site: MockConfigEntry, sim: OpenNVRSimulator, ollama: FakeOllama
) -> None:
    host = host_of(site)
    courier = await decide(host, sim, ollama, 1, "a courier holding a brown parcel")
    await decide(host, sim, ollama, 2, "a neighbour walking a dog")
    car = sim.add_event(2, "car", plate="AB123CD")

    found = await search(hass, query="parcel courier")
    assert found["searched"] == {"words": "ok", "meaning": "off", "nvr": "ok"}
    first = found["results"][0]

    assert first["kind"] == "decision"
    assert first["run_id"] == courier
    assert first["step"] == "then.0"
    assert first["workflow"] == "Who came by"
    assert first["decision"] == "visitor"
    assert first["reason"] == "a courier holding a brown parcel"
    assert first["camera_id"] == 1
    assert first["alert_id"].startswith("alrt_")
    assert first["found_by"] == ["words"]
    # The dog walker's decision has none of the words; OpenNVR's event is there by its id.
    runs = [r.get("run_id") for r in found["results"] if r["kind"] == "decision"]
    assert runs == [courier]
    events = [r for r in found["results"] if r["kind"] == "event"]
    assert [(e["event_id"], e["label"], e["found_by"]) for e in events] == [
        (car["id"], "car", ["nvr"])
    ]
    assert events[0]["caption"]

    # Only the last hours, only one camera, and how many.
    dog = await search(hass, query="dog", camera="2")
    assert dog["results"][0]["reason"] == ("a neighbour walking a dog")
    none_here = await search(hass, query="dog", camera="front_door")
    assert [r for r in none_here["results"] if r["kind"] == "decision"] == []
    assert len((await search(hass, query="visitor", limit=1))["results"]) == 1
    assert (await search(hass, query="visitor", hours=1))["found"] >= 2


async def test_a_person_finds_only_what_their_cameras_saw(
    hass: HomeAssistant, site: MockConfigEntry, sim: OpenNVRSimulator, ollama: FakeOllama
) -> None:
    host = host_of(site)
    door = await decide(host, sim, ollama, 1, "a courier at the door")
    await decide(host, sim, ollama, 2, "a courier at the side gate")
    sim.add_event(1, "person")
    sim.add_event(2, "person")
    dana = MockUser(name="Dana").add_to_hass(hass)
    dana.mock_policy({"entities": {"entity_ids": {camera_entity(hass, site, 1): True}}})

    mine = await search(hass, dana, query="courier")
    assert [r["run_id"] for r in mine["results"] if r["kind"] == "decision"] == [door]
    assert {r["camera_id"] for r in mine["results"]} == {1}
    everyone = await search(hass, query="courier")
    assert len([r for r in everyone["results"] if r["kind"] == "decision"]) == 2
    # A camera she may not see is refused like one that does not exist.
    with pytest.raises(ServiceValidationError) as err:
        await search(hass, dana, query="courier", camera="2")
    assert err.value.translation_key == "unknown_camera"


@pytest.fixture
def embedding_options(ollama: FakeOllama) -> dict[str, Any]:
    ollama.models[EMBEDDING_MODEL] = ("embedding",)
    ollama.concepts = {"courier": "delivery", "parcel": "delivery", "package": "delivery"}
    return {**options(ollama), CONF_EMBEDDING_MODEL: EMBEDDING_MODEL}


async def test_with_an_embedding_model_a_paraphrase_is_found_by_meaning(
    hass: HomeAssistant,
    sim: OpenNVRSimulator,
    ollama: FakeOllama,
    embedding_options: dict[str, Any],
    config_entry: MockConfigEntry,
) -> None:
    hass.config_entries.async_update_entry(config_entry, options=embedding_options)
    write_workflow(hass, "look", LOOK_ANYWHERE)
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    await until(lambda: config_entry.runtime_data.hub.connected("websocket"), "connected")
    host = host_of(config_entry)
    courier = await decide(host, sim, ollama, 1, "a courier rings with a parcel")
    await decide(host, sim, ollama, 2, "a neighbour walking a dog")
    index = config_entry.runtime_data.history
    assert index is not None
    await index.catch_up()
    assert (await index.stats())["embedded"] == 2
    texts = [t for r in ollama.embeds for t in r.body["input"]]
    assert any("courier rings with a parcel" in t for t in texts)

    # "package" is in no decision's words: only its meaning finds the courier.
    found = await search(hass, query="package")
    assert found["searched"] == {"words": "ok", "meaning": "ok", "nvr": "ok"}
    decisions = [r for r in found["results"] if r["kind"] == "decision"]
    assert [(d["run_id"], d["found_by"]) for d in decisions] == [(courier, ["meaning"])]
    # Found both ways ranks above found one way.
    both = await search(hass, query="courier")
    assert both["results"][0]["run_id"] == courier
    assert both["results"][0]["found_by"] == ["words", "meaning"]

    # The model failing leaves the words to answer, and says why.
    ollama.embed_error = HttpError(500, "llama runner process has terminated")
    degraded = await search(hass, query="courier")
    assert degraded["searched"]["meaning"].startswith("failed: ")
    assert "terminated" in degraded["searched"]["meaning"]
    assert degraded["results"][0]["run_id"] == courier
    assert degraded["results"][0]["found_by"] == ["words"]
