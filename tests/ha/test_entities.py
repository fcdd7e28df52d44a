"""Event, connectivity, site mode and diagnostic entities, driven by the simulator over the
events websocket."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from homeassistant.const import ATTR_ENTITY_ID, STATE_UNAVAILABLE
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import area_registry as ar
from homeassistant.helpers import device_registry as dr
from homeassistant.helpers import entity_registry as er
from homeassistant.helpers.entity_platform import async_get_platforms
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import MockConfigEntry
from pytest_homeassistant_custom_component.typing import WebSocketGenerator

from custom_components.opennvr_workflows.const import DOMAIN
from custom_components.opennvr_workflows.devices import area_name, camera_device_info
from tests.fakes.opennvr_sim import OpenNVRSimulator, SimCamera


def entity_id(hass: HomeAssistant, sim: OpenNVRSimulator, platform: str, key: str) -> str:
    found = er.async_get(hass).async_get_entity_id(platform, DOMAIN, f"{sim.config.site_id}_{key}")
    assert found is not None, f"no {platform} entity {key}"
    return found


def enable_counters(hass: HomeAssistant, entry: MockConfigEntry, source: str) -> None:
    """Turn a source's diagnostic counters on before the entry is set up, as a user would
    in the entity settings (they are off by default): their registry entries exist enabled,
    so the platform adds them enabled."""
    registry = er.async_get(hass)
    for key in ("events_received", "events_dropped"):
        registry.async_get_or_create(
            "sensor", DOMAIN, f"{entry.unique_id}_{source}_{key}", config_entry=entry
        )


async def wait_for(hass: HomeAssistant, condition: Callable[[], bool], within: float = 5) -> None:
    """Wait (in real time: the events come over a real socket) until ``condition()``."""
    async with asyncio.timeout(within):
        while not condition():
            await asyncio.sleep(0.02)
            await hass.async_block_till_done()


async def websocket_connected(hass: HomeAssistant, entry: MockConfigEntry) -> None:
    await wait_for(hass, lambda: entry.runtime_data.hub.connected("websocket"))


async def test_alert_appears_once_on_the_cameras_event_entity(
    hass: HomeAssistant, sim: OpenNVRSimulator, setup_entry: MockConfigEntry
) -> None:
    await websocket_connected(hass, setup_entry)
    events_2 = entity_id(hass, sim, "event", "2_events")
    events_1 = entity_id(hass, sim, "event", "1_events")
    before_1 = hass.states.get(events_1).state
    changes: list[str] = []
    hass.bus.async_listen(
        "state_changed",
        lambda e: changes.append(e.data["new_state"].state)
        if e.data[ATTR_ENTITY_ID] == events_2
        else None,
    )

    row = await sim.emit_alert(2, "parcel", severity="low", alert_id="alrt_0000000000aa")
    await wait_for(hass, lambda: len(changes) == 1)
    state = hass.states.get(events_2)
    assert state.attributes["event_type"] == "parcel"
    assert state.attributes["alert_id"] == "alrt_0000000000aa"
    assert state.attributes["severity"] == "low"
    assert state.attributes["title"] == row["title"]
    assert state.attributes["source"] == "websocket"

    # The same alert again (a resend) is not a second event; another camera is untouched.
    await sim.emit_alert(2, "parcel", alert_id="alrt_0000000000aa")
    await sim.emit_alert(2, "person", alert_id="alrt_0000000000bb")
    await wait_for(hass, lambda: len(changes) == 2)
    assert hass.states.get(events_2).attributes["event_type"] == "person"
    assert hass.states.get(events_1).state == before_1


async def test_unknown_alert_kind_is_other(
    hass: HomeAssistant, sim: OpenNVRSimulator, setup_entry: MockConfigEntry
) -> None:
    await websocket_connected(hass, setup_entry)
    events_1 = entity_id(hass, sim, "event", "1_events")
    await sim.emit_alert(1, "unicorn_sighting")
    await wait_for(hass, lambda: hass.states.get(events_1).attributes.get("event_type") == "other")
    assert hass.states.get(events_1).attributes["alert_type"] == "unicorn_sighting"


async def test_camera_status_is_pushed(
    hass: HomeAssistant, sim: OpenNVRSimulator, setup_entry: MockConfigEntry
) -> None:
    await websocket_connected(hass, setup_entry)
    video = entity_id(hass, sim, "binary_sensor", "3_connectivity")
    camera = entity_id(hass, sim, "camera", "3_camera")
    assert hass.states.get(video).state == "on"

    await sim.set_camera_online(3, False)  # no poll: the websocket frame alone
    await wait_for(hass, lambda: hass.states.get(video).state == "off")
    assert hass.states.get(camera).state == STATE_UNAVAILABLE

    await sim.set_camera_online(3, True)
    await wait_for(hass, lambda: hass.states.get(video).state == "on")
    assert hass.states.get(camera).state != STATE_UNAVAILABLE


async def test_site_mode_reads_sets_and_follows_pushes(
    hass: HomeAssistant, sim: OpenNVRSimulator, setup_entry: MockConfigEntry
) -> None:
    await websocket_connected(hass, setup_entry)
    mode = entity_id(hass, sim, "select", "site_mode")
    assert hass.states.get(mode).state == "disarmed"

    await hass.services.async_call(
        "select", "select_option", {ATTR_ENTITY_ID: mode, "option": "armed_away"}, blocking=True
    )
    assert sim.site_mode["mode"] == "armed_away"
    assert hass.states.get(mode).state == "armed_away"

    # Someone changes it in OpenNVR: the websocket pushes the new mode.
    await sim.set_site_mode("armed_home")
    await wait_for(hass, lambda: hass.states.get(mode).state == "armed_home")


async def test_site_mode_refused_without_scope(
    hass: HomeAssistant, sim: OpenNVRSimulator, setup_entry: MockConfigEntry
) -> None:
    sim.config.scopes = tuple(s for s in sim.config.scopes if s != "alerts.manage")
    mode = entity_id(hass, sim, "select", "site_mode")
    with pytest.raises(HomeAssistantError) as err:
        await hass.services.async_call(
            "select",
            "select_option",
            {ATTR_ENTITY_ID: mode, "option": "armed_home"},
            blocking=True,
        )
    assert err.value.translation_key == "site_mode_forbidden"
    assert sim.site_mode["mode"] == "disarmed"


async def test_diagnostic_counters_are_off_by_default(
    hass: HomeAssistant, sim: OpenNVRSimulator, setup_entry: MockConfigEntry
) -> None:
    registry = er.async_get(hass)
    for key in ("websocket_events_received", "websocket_events_dropped"):
        counter = entity_id(hass, sim, "sensor", key)
        assert registry.async_get(counter).disabled_by is er.RegistryEntryDisabler.INTEGRATION
        assert hass.states.get(counter) is None


async def test_diagnostic_counters(
    hass: HomeAssistant, sim: OpenNVRSimulator, config_entry: MockConfigEntry
) -> None:
    enable_counters(hass, config_entry, "websocket")
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    await websocket_connected(hass, config_entry)
    received = entity_id(hass, sim, "sensor", "websocket_events_received")
    dropped = entity_id(hass, sim, "sensor", "websocket_events_dropped")
    start = int(hass.states.get(received).state)
    await sim.emit_alert(1, "person")
    await sim.emit_alert(2, "vehicle")
    await wait_for(hass, lambda: int(hass.states.get(received).state) >= start + 2)
    assert hass.states.get(dropped).state == "0"
    assert hass.states.get(received).attributes["connected"] is True


async def test_event_entities_unavailable_while_disconnected(
    hass: HomeAssistant, sim: OpenNVRSimulator, setup_entry: MockConfigEntry
) -> None:
    await websocket_connected(hass, setup_entry)
    events_1 = entity_id(hass, sim, "event", "1_events")
    port = sim.port
    await sim.stop()
    await wait_for(hass, lambda: hass.states.get(events_1).state == STATE_UNAVAILABLE)
    await sim.start(port=port)
    await wait_for(hass, lambda: hass.states.get(events_1).state != STATE_UNAVAILABLE, within=15)


async def test_removed_camera_loses_its_device(
    hass: HomeAssistant,
    sim: OpenNVRSimulator,
    setup_entry: MockConfigEntry,
    device_registry: dr.DeviceRegistry,
) -> None:
    ident = (DOMAIN, f"{sim.config.site_id}_camera_3")
    assert device_registry.async_get_device_by_identifier(ident, setup_entry.entry_id) is not None
    sim.config.cameras = [c for c in sim.config.cameras if c.id != 3]
    sim.config.cameras.append(SimCamera(9, "Shed", "shed"))
    await setup_entry.runtime_data.cameras.async_refresh()
    await hass.async_block_till_done()

    assert device_registry.async_get_device_by_identifier(ident, setup_entry.entry_id) is None
    assert 3 not in setup_entry.runtime_data.camera_devices
    assert 9 in setup_entry.runtime_data.camera_devices
    assert (
        er.async_get(hass).async_get_entity_id("event", DOMAIN, f"{sim.config.site_id}_3_events")
        is None
    )
    # The new camera got all of its entities.
    for platform, key in (
        ("camera", "9_camera"),
        ("event", "9_events"),
        ("binary_sensor", "9_connectivity"),
    ):
        entity_id(hass, sim, platform, key)
    site = device_registry.async_get_device_by_identifier(
        (DOMAIN, sim.config.site_id), setup_entry.entry_id
    )
    assert site is not None
    assert site.sw_version == sim.config.version


async def _remove_device(
    hass: HomeAssistant, hass_ws_client: WebSocketGenerator, device_id: str, entry_id: str
) -> bool:
    """What the device page's "Delete" does: ask the integration, then remove."""
    client = await hass_ws_client(hass)
    await client.send_json_auto_id(
        {
            "type": "config/device_registry/remove_config_entry",
            "config_entry_id": entry_id,
            "device_id": device_id,
        }
    )
    return bool((await client.receive_json())["success"])


async def test_a_user_may_delete_only_devices_that_are_gone(
    hass: HomeAssistant,
    sim: OpenNVRSimulator,
    setup_entry: MockConfigEntry,
    device_registry: dr.DeviceRegistry,
    hass_ws_client: WebSocketGenerator,
) -> None:
    assert await async_setup_component(hass, "config", {})
    site_id = sim.config.site_id
    entry_id = setup_entry.entry_id

    def device(identifier: str) -> dr.DeviceEntry:
        found = device_registry.async_get_device_by_identifier((DOMAIN, identifier), entry_id)
        assert found is not None, identifier
        return found

    # A camera removed from OpenNVR while Home Assistant was off, and a workflow whose file
    # went away the same way: their devices are left over, and may be deleted.
    stale = [
        device_registry.async_get_or_create(
            config_entry_id=entry_id, identifiers={(DOMAIN, f"{site_id}_{ident}")}, name=ident
        )
        for ident in ("camera_42", "workflow_old_flow")
    ]
    for leftover in stale:
        assert await _remove_device(hass, hass_ws_client, leftover.id, entry_id)
        assert device_registry.async_get(leftover.id) is None

    # The site, a camera OpenNVR still has and a loaded workflow would come back: refused.
    workflow_id = sorted(setup_entry.runtime_data.workflows.files)[0]
    for current in (
        device(site_id),
        device(f"{site_id}_camera_1"),
        device(f"{site_id}_workflow_{workflow_id}"),
    ):
        assert not await _remove_device(hass, hass_ws_client, current.id, entry_id)
        assert device_registry.async_get(current.id) is not None


async def test_a_cameras_area_is_named_like_a_room(
    hass: HomeAssistant,
    sim: OpenNVRSimulator,
    setup_entry: MockConfigEntry,
    device_registry: dr.DeviceRegistry,
) -> None:
    """Issue 23, item 19: OpenNVR's lower-case location ``porch`` suggests the area
    "Porch"; a key (``back_yard``) reads as words; the owner's own capitals are kept."""
    device = device_registry.async_get_device_by_identifier(
        (DOMAIN, f"{sim.config.site_id}_camera_1"), setup_entry.entry_id
    )
    assert device is not None
    assert device.area_id is not None
    area = ar.async_get(hass).async_get_area(device.area_id)
    assert area is not None
    assert area.name == "Porch"
    assert area_name("back_yard") == "Back yard"
    assert area_name("  front   door ") == "Front door"
    assert area_name("Mum's Garden") == "Mum's Garden"
    assert area_name("") is None
    assert area_name(None) is None


async def test_a_cameras_entities_share_one_device_description(
    hass: HomeAssistant, sim: OpenNVRSimulator, setup_entry: MockConfigEntry
) -> None:
    """The camera, its connectivity and its events keep one device description between
    them (on a 200-camera site three copies each would stay in memory), and a camera
    OpenNVR renames gets a new one, with the new name."""
    camera_entities = [
        entity
        for platform in async_get_platforms(hass, DOMAIN)
        for entity in platform.entities.values()
        if str(entity.unique_id).startswith(f"{sim.config.site_id}_1_")
    ]
    assert len(camera_entities) == 3
    (shared,) = {id(entity.device_info) for entity in camera_entities}
    cameras = setup_entry.runtime_data.cameras
    first = camera_device_info(setup_entry, 1, cameras.data[1])
    assert id(first) == shared
    sim.config.cameras[0].name = "Front porch"
    await cameras.async_refresh()
    renamed = camera_device_info(setup_entry, 1, cameras.data[1])
    assert renamed is not first
    assert renamed["name"] == "Front porch"
    assert camera_device_info(setup_entry, 1, cameras.data[1]) is renamed
