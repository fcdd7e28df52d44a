"""Camera entities: devices, images from the simulator, availability. The live stream is
in test_camera_stream.py."""

from __future__ import annotations

from io import BytesIO

import pytest
from homeassistant.components.camera import async_get_image
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import device_registry as dr
from homeassistant.helpers import entity_registry as er
from PIL import Image
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.opennvr_workflows.const import DOMAIN
from tests.fakes.opennvr_sim import OpenNVRSimulator, SimCamera

FRONT_DOOR = "camera.porch_front_door"


def _camera_entity(hass: HomeAssistant, sim: OpenNVRSimulator, camera_id: int) -> str:
    registry = er.async_get(hass)
    entity_id = registry.async_get_entity_id(
        "camera", DOMAIN, f"{sim.config.site_id}_{camera_id}_camera"
    )
    assert entity_id is not None
    return entity_id


async def _next_poll(hass: HomeAssistant, entry: MockConfigEntry) -> None:
    """Run the camera poll now, as its timer would."""
    await entry.runtime_data.cameras.async_refresh()
    await hass.async_block_till_done()


async def test_one_camera_and_device_per_nvr_camera(
    hass: HomeAssistant,
    sim: OpenNVRSimulator,
    setup_entry: MockConfigEntry,
    device_registry: dr.DeviceRegistry,
) -> None:
    for cam in sim.config.cameras:
        entity_id = _camera_entity(hass, sim, cam.id)
        entry = er.async_get(hass).async_get(entity_id)
        device = device_registry.async_get(entry.device_id)
        assert device.name == cam.name
        assert device.manufacturer == "OpenNVR"
        assert (DOMAIN, f"{sim.config.site_id}_camera_{cam.id}") in device.identifiers
        state = hass.states.get(entity_id)
        assert state.state != "unavailable"
        assert state.attributes["friendly_name"] == cam.name


async def test_image_comes_from_the_simulator(
    hass: HomeAssistant, sim: OpenNVRSimulator, setup_entry: MockConfigEntry
) -> None:
    entity_id = _camera_entity(hass, sim, 1)
    image = await async_get_image(hass, entity_id)
    assert image.content_type == "image/jpeg"
    picture = Image.open(BytesIO(image.content))
    assert picture.size == sim.config.snapshot_size
    assert ("GET", "/api/v1/cameras/1/snapshot") in sim.requests


async def test_offline_camera_is_unavailable_and_has_no_image(
    hass: HomeAssistant, sim: OpenNVRSimulator, setup_entry: MockConfigEntry
) -> None:
    entity_id = _camera_entity(hass, sim, 3)
    await sim.set_camera_online(3, False)
    await _next_poll(hass, setup_entry)
    assert hass.states.get(entity_id).state == "unavailable"
    with pytest.raises(HomeAssistantError):
        await async_get_image(hass, entity_id)

    await sim.set_camera_online(3, True)
    await _next_poll(hass, setup_entry)
    assert hass.states.get(entity_id).state != "unavailable"


async def test_camera_added_in_opennvr_appears_without_restart(
    hass: HomeAssistant, sim: OpenNVRSimulator, setup_entry: MockConfigEntry
) -> None:
    sim.config.cameras.append(SimCamera(7, "Garage", "garage"))
    await _next_poll(hass, setup_entry)
    entity_id = _camera_entity(hass, sim, 7)
    assert hass.states.get(entity_id).state != "unavailable"


async def test_nvr_down_makes_cameras_unavailable(
    hass: HomeAssistant, sim: OpenNVRSimulator, setup_entry: MockConfigEntry
) -> None:
    port = sim.port
    await sim.stop()
    await _next_poll(hass, setup_entry)
    assert hass.states.get(_camera_entity(hass, sim, 1)).state == "unavailable"
    await sim.start(port=port)
