"""Trials are sandboxed (issue 23, items 3, 4 and 6), in a real Home Assistant against the
OpenNVR simulator and the Ollama fake: "Try on recent events" leaves no run waiting, calls
no model after it answered, changes no entity, counter, limit or *Last picture* of the
workflow, looks at each event's own picture (never the camera at the time of the try),
and replays only the events the workflow's trigger would start on."""

from __future__ import annotations

from typing import Any

import pytest
from homeassistant.const import STATE_UNKNOWN
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import ServiceValidationError
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.opennvr_workflows.const import DOMAIN
from tests.fakes.ollama_server import FakeOllama, FromSchema
from tests.fakes.opennvr_sim import OpenNVRSimulator

from .conftest import ai_options
from .test_panel_api import set_up
from .test_workflow_entities import flush_writes, state_of

PARCEL = FromSchema({"decision": "parcel", "reason": "a box on the step", "confidence": 0.9})
#: The parcel template's shape: look, wait half an hour, look again, then tell.
PARCEL_WAIT = """\
contract: workflow.v1
name: Parcel at the door
state: {state}
needs: [vision_model]
limits: {{ cooldown: 15m, per_hour: 2 }}
when:
  alert: {{ alert_type: parcel, cameras: [front_door] }}
then:
  - ai:
      mode: look
      prompt: Is there a parcel on the doorstep?
      input: picture
      decision: [parcel, no_parcel]
      parcel:
        - wait: 30m
        - ai:
            mode: look
            prompt: Is the parcel still there?
            input: picture
            decision: [parcel, no_parcel]
            parcel:
              - notify: {{ who: role:household, message: "Still there: {{reason}}" }}
            no_parcel: []
            unsure: []
      no_parcel: []
      unsure: []
"""
BUTTON = """\
contract: workflow.v1
name: Porch check
state: test
when:
  button: {}
then:
  - log: "Checked"
"""


@pytest.fixture
def entry_options(ollama: FakeOllama) -> dict[str, Any]:
    return ai_options(ollama)


def requested(sim: OpenNVRSimulator, since: int) -> list[str]:
    return [path for method, path in sim.requests[since:] if method == "GET"]


async def test_a_trial_leaves_nothing_behind_and_looks_at_the_events_own_picture(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    sim: OpenNVRSimulator,
    ollama: FakeOllama,
) -> None:
    host = await set_up(hass, config_entry, parcel=PARCEL_WAIT.format(state="on"))
    sim.add_event(1, "parcel")
    sim.add_event(1, "parcel")
    ollama.script(*[PARCEL] * 8)
    picture = state_of(hass, "image", "parcel", "evidence")
    outcome = state_of(hass, "sensor", "parcel", "last_outcome")
    runs_today = state_of(hass, "sensor", "parcel", "runs_today")
    before = len(sim.requests)

    tried = await hass.services.async_call(
        DOMAIN, "try_workflow", {"workflow": "parcel"}, blocking=True, return_response=True
    )
    assert tried is not None
    events: list[dict[str, Any]] = tried["events"]  # type: ignore[assignment]
    assert [e["event"]["id"] for e in events] == [2, 1]
    first = events[0]
    assert first["status"] == "done"
    # The wait is skipped, and the trace says how long the run would have waited.
    assert [(s["path"], s["kind"], s["status"]) for s in first["trace"]] == [
        ("then.0", "ai", "done"),
        ("then.0.parcel.0", "wait", "skipped"),
        ("then.0.parcel.1", "ai", "done"),
        ("then.0.parcel.1.parcel.0", "notify", "would_have"),
    ]
    assert first["trace"][1]["would_have_waited_s"] == 1800
    # Each look saw the event's own picture, never the camera at the time of the try.
    assert first["picture"] == {"event_id": 2, "seen": True}
    paths = requested(sim, before)
    assert "/api/v1/events/2/evidence" in paths
    assert "/api/v1/events/1/evidence" in paths
    assert not [p for p in paths if p.endswith("/snapshot")]
    kept = await host.evidence_store.async_read(first["run_id"])
    assert kept is not None
    assert kept.image == await host.client.request("GET", "/events/2/evidence", raw=True)

    # Nothing of the workflow changed: no run waits, nothing is due, no picture, entity,
    # counter or limit moved; and the model is not asked again later.
    assert host.engine.active_runs() == []
    due = await host.engine.store.submit(
        lambda c: c.execute("SELECT count(*) FROM workflow_due WHERE kind='wait'").fetchone()
    )
    assert due == (0,)
    chats = len(ollama.chats)
    assert chats == 4
    await flush_writes(hass)
    assert "parcel" not in host.evidence
    assert state_of(hass, "image", "parcel", "evidence").state == picture.state == STATE_UNKNOWN
    assert state_of(hass, "sensor", "parcel", "last_outcome").state == outcome.state
    assert state_of(hass, "sensor", "parcel", "runs_today").state == runs_today.state
    counters = await host.engine.store.submit(
        lambda c: c.execute("SELECT count(*) FROM workflow_limit_counters").fetchone()
    )
    assert counters == (0,)
    assert await host.engine.count_runs("parcel", 0) == 0
    assert len(ollama.chats) == chats


async def test_a_trial_says_so_when_the_event_has_no_picture(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    sim: OpenNVRSimulator,
    ollama: FakeOllama,
) -> None:
    """OpenNVR kept no picture of the event: the trial does not look at the camera now
    instead, and its answer says why it saw nothing."""
    await set_up(hass, config_entry, parcel=PARCEL_WAIT.format(state="test"))
    sim.add_event(1, "parcel")["has_evidence"] = False
    ollama.script(*[PARCEL] * 4)
    before = len(sim.requests)
    tried = await hass.services.async_call(
        DOMAIN, "try_workflow", {"workflow": "parcel"}, blocking=True, return_response=True
    )
    assert tried is not None
    (only,) = tried["events"]  # type: ignore[misc]
    assert only["picture"]["seen"] is False
    assert "kept no picture" in only["picture"]["why"]
    assert not [p for p in requested(sim, before) if p.endswith(("/snapshot", "/evidence"))]


async def test_a_button_workflow_replays_no_alerts(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    sim: OpenNVRSimulator,
) -> None:
    """A workflow started by its button has no stored events: the try says so instead of
    replaying the site's person and vehicle events through it."""
    host = await set_up(hass, config_entry, porch=BUTTON)
    sim.add_event(1, "person")
    sim.add_event(2, "car")
    with pytest.raises(ServiceValidationError) as caught:
        await hass.services.async_call(
            DOMAIN, "try_workflow", {"workflow": "porch"}, blocking=True, return_response=True
        )
    assert caught.value.translation_key == "try_trigger_not_replayed"
    assert "Porch check starts from its button trigger" in str(caught.value)
    assert host.engine.active_runs() == []
    assert await host.engine.runs("porch") == []


async def test_a_trigger_no_stored_event_fits_says_so(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    sim: OpenNVRSimulator,
    ollama: FakeOllama,
) -> None:
    await set_up(hass, config_entry, parcel=PARCEL_WAIT.format(state="test"))
    sim.add_event(1, "person")
    tried = await hass.services.async_call(
        DOMAIN, "try_workflow", {"workflow": "parcel"}, blocking=True, return_response=True
    )
    assert tried is not None
    assert tried["events"] == []
    assert "no recent events" in str(tried["message"])
    assert "label parcel" in str(tried["message"])
    assert ollama.chats == []


async def test_the_parcel_template_is_tried_as_the_issue_found_it(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    sim: OpenNVRSimulator,
    ollama: FakeOllama,
) -> None:
    """The shipped template (a package detection, three frames, a half-hour wait, a second
    look): every frame is the event's own, the wait is skipped, and after the try nothing
    of the workflow waits or is due."""
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    host = config_entry.runtime_data.workflows
    assert host is not None
    assert host.files["parcel_at_door"].workflow is not None
    sim.add_event(1, "package")
    sim.add_event(1, "person")
    ollama.script(
        *[FromSchema({"decision": "parcel", "reason": "a box", "confidence": 0.9})] * 2,
        *[FromSchema({"decision": "still_there", "reason": "still", "confidence": 0.9})] * 2,
    )
    before = len(sim.requests)
    tried = await hass.services.async_call(
        DOMAIN,
        "try_workflow",
        {"workflow": "parcel_at_door"},
        blocking=True,
        return_response=True,
    )
    assert tried is not None
    (only,) = tried["events"]  # type: ignore[misc]
    assert only["event"]["label"] == "package"  # the person is not replayed
    assert [(s["kind"], s["status"]) for s in only["trace"]][:5] == [
        ("ai", "done"),
        ("notify", "would_have"),
        ("save_clip", "would_have"),
        ("wait", "skipped"),
        ("ai", "done"),
    ]
    paths = requested(sim, before)
    assert paths.count("/api/v1/events/1/evidence") == 4  # three frames, then one picture
    assert not [p for p in paths if p.endswith("/snapshot")]
    assert host.engine.active_runs() == []
    assert "parcel_at_door" not in host.evidence
