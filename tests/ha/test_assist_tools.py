"""The assistant's tools, called through the integration's own LLM API in a real Home
Assistant against the OpenNVR simulator and the Ollama fake: what each answers, the ids
its facts cite, what a person who may not see a camera gets, and errors as results."""

from __future__ import annotations

from typing import Any

import pytest
from homeassistant.core import HomeAssistant
from homeassistant.helpers import llm
from pytest_homeassistant_custom_component.common import MockConfigEntry, MockUser

from custom_components.opennvr_workflows.assist.api import api_id
from custom_components.opennvr_workflows.assist.citations import MARKER
from custom_components.opennvr_workflows.assist.prompt import IDK
from custom_components.opennvr_workflows.const import DOMAIN
from tests.fakes.ollama_server import FakeOllama, FromSchema
from tests.fakes.opennvr_sim import OpenNVRSimulator
from tests.ha.assist_support import (
    FACTS,
    PORCH,
    api_of,
    call,
    camera_entity,
    context_of,
    site_options,
)
from tests.ha.workflow_files import ASK, write_workflow

TOOLS = [
    "describe_camera",
    "recent_events",
    "search_history",
    "camera_health",
    "site_lookup",
    "list_workflows",
    "run_trace",
    "pending_approvals",
]


@pytest.fixture
def entry_options(ollama: FakeOllama) -> dict[str, Any]:
    return site_options(ollama)


@pytest.fixture
async def site(hass: HomeAssistant, config_entry: MockConfigEntry) -> MockConfigEntry:
    """The site set up with two workflows: one a button starts, one that asks."""
    write_workflow(hass, "porch", PORCH)
    write_workflow(hass, "ask", ASK)
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    return config_entry


@pytest.fixture
def front_door_only(hass: HomeAssistant, site: MockConfigEntry) -> MockUser:
    """A household member who may see the front door and nothing else."""
    user = MockUser(name="Dana").add_to_hass(hass)
    user.mock_policy({"entities": {"entity_ids": {camera_entity(hass, site, 1): True}}})
    return user


def cites(data: Any) -> set[str]:
    """Every marker in a result."""
    return set(MARKER.findall(str(data)))


async def test_the_api_offers_eight_read_only_tools_and_the_scoped_prompt(
    hass: HomeAssistant, site: MockConfigEntry
) -> None:
    assert api_id(site) in {api.id for api in llm.async_get_apis(hass)}
    api = await api_of(hass, site)
    assert [t.name for t in api.tools] == [f"{DOMAIN}__{t}" for t in TOOLS]
    for tool in api.tools:
        assert tool.annotations.read_only
        assert not tool.annotations.destructive
        assert tool.integration == DOMAIN
    assert "decline it in one short sentence" in api.api_prompt
    assert "do not call any tool" in api.api_prompt
    assert IDK in api.api_prompt
    assert "Front Door" in api.api_prompt


async def test_the_api_goes_away_with_the_entry(hass: HomeAssistant, site: MockConfigEntry) -> None:
    assert await hass.config_entries.async_unload(site.entry_id)
    assert api_id(site) not in {api.id for api in llm.async_get_apis(hass)}


async def test_describe_camera_looks_now_and_brings_the_cameras_recent_events(
    hass: HomeAssistant, site: MockConfigEntry, sim: OpenNVRSimulator, ollama: FakeOllama
) -> None:
    event = sim.add_event(1, "person")
    sim.add_event(2, "car")  # another camera's: not part of the front door's answer
    ollama.default = FromSchema(
        values={"decision": "answered", "reason": "A courier holds a parcel at the door."}
    )
    result = await call(
        hass, site, "describe_camera", {"camera": "Front Door", "question": "Who is there?"}
    )
    assert not result.error, result.data
    data = result.data
    assert data["answer"] == "A courier holds a parcel at the door."
    assert data["seen"] is True
    assert str(data["cite"]).startswith("[^look:")
    assert [e["event_id"] for e in data["recent_events"]] == [event["id"]]
    assert data["recent_events"][0]["cite"] == f"[^event:{event['id']}]"
    look = ollama.chats[-1]
    assert look.model == "qwen2.5vl:3b"
    assert "Who is there?" in look.system + look.user
    assert look.images, "the Look sent the camera's picture"


async def test_recent_events_and_alerts_each_cite_their_id(
    hass: HomeAssistant, site: MockConfigEntry, sim: OpenNVRSimulator
) -> None:
    first = sim.add_event(1, "person")
    second = sim.add_event(3, "dog")
    await sim.emit_alert(1, "person", alert_id="alrt_0123456789ab")
    result = await call(hass, site, "recent_events", {"hours": 12})
    assert not result.error, result.data
    assert [e["event_id"] for e in result.data["events"]] == [second["id"], first["id"]]
    assert [a["alert_id"] for a in result.data["alerts"]] == ["alrt_0123456789ab"]
    assert cites(result.data) == {
        f"event:{first['id']}",
        f"event:{second['id']}",
        "alert:alrt_0123456789ab",
    }
    only_dogs = await call(hass, site, "recent_events", {"label": "dog"})
    assert [e["event_id"] for e in only_dogs.data["events"]] == [second["id"]]
    # How many wait in all is OpenNVR's total, not the few rows listed (issue 23, item 15).
    row = sim.alerts[-1]
    sim.alerts.extend({**row, "id": 100 + i, "alert_id": f"alrt_{i}"} for i in range(85))
    result = await call(hass, site, "recent_events", {"hours": 12})
    assert len(result.data["alerts"]) < 86
    assert result.data["unacknowledged_alerts"] == {"count": 86, "at_least": False}


async def test_a_person_sees_only_the_cameras_shared_with_them(
    hass: HomeAssistant, site: MockConfigEntry, sim: OpenNVRSimulator, front_door_only: MockUser
) -> None:
    door = sim.add_event(1, "person")
    sim.add_event(3, "person")
    await sim.emit_alert(3, "person", alert_id="alrt_garden000000")
    result = await call(hass, site, "recent_events", {}, front_door_only)
    assert [e["event_id"] for e in result.data["events"]] == [door["id"]]
    assert result.data["alerts"] == []
    assert result.data["unacknowledged_alerts"] == {"count": 0, "at_least": False}
    health = await call(hass, site, "camera_health", {}, front_door_only)
    assert [c["camera"] for c in health.data["cameras"]] == ["Front Door"]
    # A hidden camera reads as one that does not exist.
    hidden = await call(hass, site, "describe_camera", {"camera": "Back Garden"}, front_door_only)
    unknown = await call(hass, site, "describe_camera", {"camera": "Attic"}, front_door_only)
    assert hidden.error
    assert unknown.error
    assert str(hidden.data["error"]).replace("Back Garden", "X") == str(
        unknown.data["error"]
    ).replace("Attic", "X")
    assert "Back Garden" not in (await api_of(hass, site, front_door_only)).api_prompt


async def test_search_history_cites_what_opennvr_found_and_is_empty_when_nothing_is(
    hass: HomeAssistant, site: MockConfigEntry, sim: OpenNVRSimulator
) -> None:
    car = sim.add_event(2, "car", plate="AB123CD")
    result = await call(hass, site, "search_history", {"query": "car"})
    assert not result.error, result.data
    assert result.data["found"] >= 1
    assert f"event:{car['id']}" in cites(result.data)
    assert result.data["results"][0]["caption"] == "a car at the Driveway"
    sim.events.clear()
    empty = await call(hass, site, "search_history", {"query": "elephant"})
    # The site's own index was searched too (by words; by meaning only with an embedding
    # model): an empty answer says what was searched.
    assert empty.data == {
        "query": "elephant",
        "results": [],
        "found": 0,
        "searched": {"words": "ok", "meaning": "off", "nvr": "ok"},
    }


async def test_camera_health_reports_each_camera(
    hass: HomeAssistant, site: MockConfigEntry, sim: OpenNVRSimulator
) -> None:
    result = await call(hass, site, "camera_health", {"camera": "front_door"})
    assert not result.error, result.data
    (row,) = result.data["cameras"]
    assert row["camera"] == "Front Door"
    assert row["cite"] == "[^camera:1]"
    assert isinstance(row["online"], bool)
    everything = await call(hass, site, "camera_health")
    assert len(everything.data["cameras"]) == len(sim.config.cameras)


async def test_site_lookup_reads_the_facts_lists_and_roles(
    hass: HomeAssistant, site: MockConfigEntry
) -> None:
    result = await call(hass, site, "site_lookup")
    assert result.data["facts"] == {"text": FACTS, "cite": "[^site:facts]"}
    assert result.data["lists"] == [
        {"name": "known_plates", "items": ["AB123CD", "XY987ZZ"], "cite": "[^list:known_plates]"}
    ]
    assert result.data["camera_roles"] == [
        {"role": "front_door", "camera": "Front Door", "cite": "[^camera:1]"}
    ]
    unknown = await call(hass, site, "site_lookup", {"list": "pets"})
    assert unknown.error
    assert "known_plates" in unknown.data["error"]


async def test_list_workflows_and_a_runs_trace_cite_the_run(
    hass: HomeAssistant, site: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    host = site.runtime_data.workflows
    assert host is not None
    started = await hass.services.async_call(
        DOMAIN, "run_workflow", {"workflow": "porch"}, blocking=True, return_response=True
    )
    assert isinstance(started, dict)
    (run_id,) = started["run_ids"]
    await host.engine.idle()
    listed = await call(hass, site, "list_workflows")
    rows = {w["workflow_id"]: w for w in listed.data["workflows"]}
    assert rows["porch"]["state"] == "on"
    assert rows["porch"]["latest_run"]["run_id"] == run_id
    assert rows["porch"]["latest_run"]["cite"] == f"[^run:{run_id}]"
    trace = await call(hass, site, "run_trace", {"workflow": "porch"})
    assert not trace.error, trace.data
    run = trace.data["run"]
    assert run["run_id"] == run_id
    assert run["cite"] == f"[^run:{run_id}]"
    assert [s["kind"] for s in run["steps"]] == ["log"]
    missing = await call(hass, site, "run_trace", {"run_id": "nope"})
    assert missing.error
    assert "nope" in missing.data["error"]


async def test_pending_approvals_are_the_askers_own(
    hass: HomeAssistant,
    site: MockConfigEntry,
    hass_admin_user: MockUser,
    front_door_only: MockUser,
) -> None:
    host = site.runtime_data.workflows
    assert host is not None
    started = await hass.services.async_call(
        DOMAIN, "run_workflow", {"workflow": "ask"}, blocking=True, return_response=True
    )
    assert isinstance(started, dict)
    (run_id,) = started["run_ids"]
    await host.engine.idle()
    await hass.async_block_till_done()
    assert host.desk.pending(), "the question is open"
    mine = await call(hass, site, "pending_approvals", {}, hass_admin_user)
    (row,) = mine.data["approvals"]
    assert row["question"] == "Open the gate?"
    assert row["replies"] == ["Open", "Keep closed"]
    assert row["may_answer"] is True
    assert row["cite"] == f"[^run:{run_id}]"
    others = await call(hass, site, "pending_approvals", {}, front_door_only)
    assert others.data == {"approvals": [], "found": 0}


async def test_bad_arguments_and_failures_come_back_as_error_results(
    hass: HomeAssistant, site: MockConfigEntry, sim: OpenNVRSimulator
) -> None:
    bad = await call(hass, site, "recent_events", {"hours": -3})
    assert bad.error
    assert "invalid arguments" in bad.data["error"]
    await sim.stop()
    down = await call(hass, site, "recent_events", {})
    assert down.error
    assert "recent events" in down.data["error"]


async def test_the_assist_api_gets_the_tools_once_a_camera_is_exposed(
    hass: HomeAssistant, site: MockConfigEntry
) -> None:
    from homeassistant.components.homeassistant.exposed_entities import async_expose_entity
    from homeassistant.setup import async_setup_component

    assert await async_setup_component(hass, "homeassistant", {})
    assert await async_setup_component(hass, "llm", {})
    assist = await llm.async_get_api(hass, llm.LLM_API_ASSIST, context_of(None))
    assert not [t for t in assist.tools if t.name.startswith(f"{DOMAIN}__")]
    async_expose_entity(hass, "conversation", camera_entity(hass, site, 1), True)
    assist = await llm.async_get_api(hass, llm.LLM_API_ASSIST, context_of(None))
    ours = [t for t in assist.tools if t.name.startswith(f"{DOMAIN}__")]
    assert [t.name for t in ours] == [f"{DOMAIN}__{t}" for t in TOOLS]
    assert "[^event:42]" in assist.api_prompt
    health = await assist.async_call_tool(
        llm.ToolInput(tool_name=f"{DOMAIN}__camera_health", tool_args={"camera": "Front Door"})
    )
    assert health.data["cameras"][0]["cite"] == "[^camera:1]"
