"""Device registry housekeeping: the site device, removing cameras OpenNVR dropped, and
which devices a user may delete."""

from __future__ import annotations

from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers import device_registry as dr

from .const import DOMAIN, LOGGER
from .entity import camera_device_id, site_device_info
from .host.ids import workflow_device_identifier
from .model_device import model_device_identifier
from .runtime import OpenNVRConfigEntry


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
    """Remove the devices (and so the entities) of cameras no longer in OpenNVR."""
    registry = dr.async_get(hass)
    runtime = entry.runtime_data
    site_id = runtime.info.site_id
    current = {camera_device_id(site_id, cid) for cid in runtime.cameras.data}
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
