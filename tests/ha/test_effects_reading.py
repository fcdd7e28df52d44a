"""What a run reads through the Home Assistant effects: a camera's picture (or several, for
movement), the site mode, the mapped roles, a site list, and OpenNVR's recent events under
the names the workflow uses; a missing list or a refused token parks the workflow, any other
OpenNVR failure fails the step."""

from __future__ import annotations

from typing import Any

import pytest
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from pyopennvr import OpenNVRAuthError, OpenNVRError
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.opennvr_workflows.const import CONF_CAMERA_ROLES, CONF_SITE_LISTS
from custom_components.opennvr_workflows.engine import ProviderUnavailable
from tests.fakes.opennvr_sim import OpenNVRSimulator

from .conftest import WEBSOCKET_OPTIONS
from .test_effects import effects_of

JPEG = b"\xff\xd8"


@pytest.fixture
def entry_options() -> dict[str, Any]:
    return {
        **WEBSOCKET_OPTIONS,
        CONF_CAMERA_ROLES: {"front_door": "1", "drive": "2"},
        CONF_SITE_LISTS: {"family_cars": ["AB12 CDE", "XY98 ZYX"]},
    }


async def test_pictures_of_a_camera_one_or_several(
    hass: HomeAssistant, setup_entry: MockConfigEntry, monkeypatch: pytest.MonkeyPatch
) -> None:
    fx = effects_of(setup_entry)
    picture = await fx.snapshot("1")
    assert picture is not None
    assert picture.startswith(JPEG)
    assert await fx.snapshot("front door") is None, "not a camera number"
    frames = await fx.frames("1", 3, 0.0)
    assert len(frames) == 3
    assert all(frame.startswith(JPEG) for frame in frames)
    assert await fx.frames("1", 0, 0.0) == []

    async def broken(*args: Any, **kwargs: Any) -> bytes:
        raise OpenNVRError("camera offline")

    monkeypatch.setattr(setup_entry.runtime_data.client, "get_snapshot", broken)
    assert await fx.snapshot("1") is None, "a picture that cannot be had is none"
    assert await fx.frames("1", 2, 0.0) == []


async def test_the_site_as_the_run_reads_it(
    hass: HomeAssistant, setup_entry: MockConfigEntry
) -> None:
    fx = effects_of(setup_entry)
    assert await fx.site_mode() == setup_entry.runtime_data.site_mode
    assert fx.mapped_camera_roles() == frozenset({"front_door", "drive"})
    assert await fx.site_list("family_cars") == ["AB12 CDE", "XY98 ZYX"]
    with pytest.raises(ProviderUnavailable, match="'couriers' is not set"):
        await fx.site_list("couriers")


async def test_recent_events_under_the_workflows_names(
    hass: HomeAssistant,
    setup_entry: MockConfigEntry,
    sim: OpenNVRSimulator,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sim.add_event(1, "person")
    sim.add_event(2, "car", plate="AB12 CDE")
    sim.add_event(3, "dog")
    fx = effects_of(setup_entry)

    door = await fx.recent_events(["front_door"], 600)
    assert [(e["camera"], e["event_type"]) for e in door] == [("front_door", "track")]
    assert {e["label"] for e in door} == {"person"}
    # A role the options do not map reads nothing; no role reads every camera, each named
    # by its role where it has one.
    assert await fx.recent_events(["garden"], 600) == []
    everything = await fx.recent_events([], 600)
    assert sorted(e["camera"] for e in everything) == ["3", "drive", "front_door"]

    async def refused(*args: Any, **kwargs: Any) -> Any:
        raise OpenNVRAuthError("token revoked")

    monkeypatch.setattr(setup_entry.runtime_data.client, "get_events", refused)
    with pytest.raises(ProviderUnavailable, match="refused to read recent events"):
        await fx.recent_events([], 600)

    async def failing(*args: Any, **kwargs: Any) -> Any:
        raise OpenNVRError("the database is busy")

    monkeypatch.setattr(setup_entry.runtime_data.client, "get_events", failing)
    with pytest.raises(HomeAssistantError) as caught:
        await fx.recent_events([], 600)
    assert caught.value.translation_key == "effect_nvr_recent_events"
    assert str(caught.value) == "OpenNVR could not read recent events: the database is busy"
