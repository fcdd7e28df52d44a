"""The devices: what each is (the site, its cameras, its vision model; a workflow's device
is :meth:`.workflow_views.WorkflowViews.device_info`), and the device registry's
housekeeping: the site device first, removing cameras OpenNVR dropped, and which devices a
user may delete."""

from __future__ import annotations

from typing import Final

from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers import device_registry as dr
from homeassistant.helpers.device_registry import DeviceEntryType, DeviceInfo
from pyopennvr import Camera

from .const import DOMAIN, LOGGER
from .coordinator import OpenNVRConfigEntry
from .host.ids import workflow_device_identifier

#: The model device's identifier suffix (after the site id).
MODEL_DEVICE: Final = "vision_model"


def camera_device_id(site_id: str, camera_id: int) -> tuple[str, str]:
    """The device registry identifier of a camera: stable across renames and URL changes."""
    return (DOMAIN, f"{site_id}_camera_{camera_id}")


def model_device_identifier(site_id: str) -> tuple[str, str]:
    """The device registry identifier of a site's vision model device."""
    return (DOMAIN, f"{site_id}_{MODEL_DEVICE}")


def area_name(location: object) -> str | None:
    """An OpenNVR camera's location as the Home Assistant area it suggests: OpenNVR keeps
    locations as keys or lower-case words (``front door``, ``back_yard``), and an area is
    named like a room (``Front door``, ``Back yard``); a location written with capitals is
    the owner's own spelling and is kept."""
    if not isinstance(location, str):
        return None
    words = " ".join(location.replace("_", " ").split())
    if not words:
        return None
    if words != words.lower():
        return words
    return words[0].upper() + words[1:]


def site_device_info(entry: OpenNVRConfigEntry) -> DeviceInfo:
    """The OpenNVR site as a device: the hub its cameras belong to."""
    info = entry.runtime_data.info
    return DeviceInfo(
        identifiers={(DOMAIN, info.site_id)},
        name=info.name,
        manufacturer="OpenNVR",
        model="OpenNVR site",
        sw_version=info.version,
        configuration_url=entry.runtime_data.client.base_url,
    )


def camera_device_info(entry: OpenNVRConfigEntry, camera_id: int, camera: Camera) -> DeviceInfo:
    """An OpenNVR camera as a device under the site, in the area OpenNVR places it.

    A camera's entities (the camera, its connectivity, its events) share one: each entity
    keeps the device it was added with, and on a 200-camera site three copies of the same
    dicts and sets would be some 250 KB. A camera renamed or moved gets a new one."""
    runtime = entry.runtime_data
    source = (camera.name, camera.raw.get("location"), runtime.site_device_id)
    kept = runtime.camera_devices.get(camera_id)
    if kept is not None and kept[0] == source:
        return kept[1]
    info = DeviceInfo(
        identifiers={camera_device_id(runtime.info.site_id, camera_id)},
        name=camera.name,
        manufacturer="OpenNVR",
        model="Camera",
        suggested_area=area_name(camera.raw.get("location")),
        via_device_id=runtime.site_device_id,
        configuration_url=runtime.client.base_url,
    )
    runtime.camera_devices[camera_id] = (source, info)
    return info


def model_device_info(entry: OpenNVRConfigEntry, vision_model: str) -> DeviceInfo:
    """The vision model as a service device under the site (see ``entity.ModelEntity``)."""
    info = entry.runtime_data.info
    return DeviceInfo(
        identifiers={model_device_identifier(info.site_id)},
        translation_key=MODEL_DEVICE,
        translation_placeholders={"site": info.name},
        manufacturer="Ollama",
        model=vision_model or None,
        entry_type=DeviceEntryType.SERVICE,
        via_device_id=entry.runtime_data.site_device_id,
    )


@callback
def async_register_site_device(hass: HomeAssistant, entry: OpenNVRConfigEntry) -> str:
    """Create the site device first, so cameras can name it as the device they come via;
    returns its device id."""
    return (
        dr.async_get(hass)
        .async_get_or_create(config_entry_id=entry.entry_id, **site_device_info(entry))
        .id
    )


@callback
def async_remove_stale_cameras(hass: HomeAssistant, entry: OpenNVRConfigEntry) -> None:
    """Remove the devices (and so the entities) of cameras no longer in OpenNVR, and
    forget the device descriptions their entities shared."""
    registry = dr.async_get(hass)
    runtime = entry.runtime_data
    site_id = runtime.info.site_id
    current = {camera_device_id(site_id, cid) for cid in runtime.cameras.data}
    for gone in runtime.camera_devices.keys() - runtime.cameras.data.keys():
        del runtime.camera_devices[gone]  # a camera back later is described afresh
    cameras = f"{site_id}_camera_"  # the form of camera_device_id
    for device in dr.async_entries_for_config_entry(registry, entry.entry_id):
        # Only camera devices: the site and the workflows have their own housekeeping.
        ours = {i for i in device.identifiers if i[0] == DOMAIN and i[1].startswith(cameras)}
        if not ours or ours & current:
            continue
        LOGGER.info("Camera %s was removed from OpenNVR; removing its device", device.name)
        registry.async_update_device(device.id, remove_config_entry_id=entry.entry_id)


async def async_remove_config_entry_device(
    hass: HomeAssistant, entry: OpenNVRConfigEntry, device: dr.DeviceEntry
) -> bool:
    """Whether a user may delete ``device`` (Home Assistant asks before it does): yes for a
    device neither OpenNVR nor the workflow folder has any more (one the housekeeping above
    did not catch, say from a camera removed while Home Assistant was off); no for the site,
    its vision model, a current camera or a current workflow, which would come back at once."""
    runtime = entry.runtime_data
    site_id = runtime.info.site_id
    current = {(DOMAIN, site_id), model_device_identifier(site_id)}
    current |= {camera_device_id(site_id, cid) for cid in runtime.cameras.data}
    if (host := runtime.workflows) is not None:
        current |= {workflow_device_identifier(site_id, wid) for wid in host.files}
    return not device.identifiers & current
