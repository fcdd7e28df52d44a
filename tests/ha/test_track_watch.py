"""The host tells the hub which cameras' tracks its workflows read, as they load and as
their states change; the hub drops the rest (``nvr/watch.py``)."""

from __future__ import annotations

from typing import Any

import pytest
from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.opennvr_workflows.const import CONF_CAMERA_ROLES
from custom_components.opennvr_workflows.nvr.watch import TrackWatch

from .conftest import WEBSOCKET_OPTIONS
from .workflow_files import write_workflow

FENCE = """\
contract: workflow.v1
name: Somebody at the fence
state: on
needs: [detector]
when:
  detect.person_in_zone: { cameras: [garden], min_seconds: 20 }
then:
  - log: "Somebody at the fence {track}"
"""

PARCEL = """\
contract: workflow.v1
name: A parcel
state: off
needs: [detector]
when:
  event: { type: detection.observed.v1, cameras: [front_door], match: { label: [package] } }
then:
  - log: "A parcel at {camera}"
"""


@pytest.fixture
def entry_options() -> dict[str, Any]:
    return {**WEBSOCKET_OPTIONS, CONF_CAMERA_ROLES: {"garden": "3", "front_door": "1"}}


async def test_the_watched_cameras_follow_the_workflows_and_their_states(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    write_workflow(hass, "fence", FENCE)
    write_workflow(hass, "parcel", PARCEL)
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    runtime = config_entry.runtime_data
    host = runtime.workflows
    assert sorted(host.summary()["loaded"]) == ["fence", "parcel"]
    # The parcel workflow is off: only the fence's camera is watched, for its zones.
    assert runtime.hub.track_watch == TrackWatch(zones=frozenset({"3"}), observed=frozenset())

    host.engine.set_workflow_state("parcel", "test")
    assert runtime.hub.track_watch == TrackWatch(zones=frozenset({"3"}), observed=frozenset({"1"}))

    host.engine.set_workflow_state("fence", "off")
    assert runtime.hub.track_watch == TrackWatch(zones=frozenset(), observed=frozenset({"1"}))
    assert not runtime.hub.track_watch.wants("3")
