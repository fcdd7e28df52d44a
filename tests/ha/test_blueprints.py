"""The shipped blueprint, imported into a real Home Assistant and driven by the simulator."""

from __future__ import annotations

import shutil
from pathlib import Path

from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_mock_service

from tests.fakes.opennvr_sim import OpenNVRSimulator

from .test_entities import entity_id, wait_for

BLUEPRINTS = Path(__file__).parents[2] / "blueprints" / "automation" / "opennvr_workflows"
ALERT_TO_PHONE = "camera_alert_notification.yaml"


async def test_camera_alert_blueprint_notifies_the_phone(
    hass: HomeAssistant, sim: OpenNVRSimulator, setup_entry: MockConfigEntry
) -> None:
    target = Path(hass.config.path("blueprints", "automation", "opennvr_workflows"))
    await hass.async_add_executor_job(lambda: target.mkdir(parents=True, exist_ok=True))
    await hass.async_add_executor_job(shutil.copy, BLUEPRINTS / ALERT_TO_PHONE, target)
    calls = async_mock_service(hass, "notify", "mobile_app_pixel")
    events = entity_id(hass, sim, "event", "1_events")
    camera = entity_id(hass, sim, "camera", "1_camera")
    assert await async_setup_component(
        hass,
        "automation",
        {
            "automation": {
                "alias": "Front door to phone",
                "use_blueprint": {
                    "path": f"opennvr_workflows/{ALERT_TO_PHONE}",
                    "input": {
                        "events": events,
                        "camera": camera,
                        "alert_types": ["person", "parcel"],
                        "notify_service": "notify.mobile_app_pixel",
                        "cooldown": 0,
                    },
                },
            }
        },
    )
    await wait_for(hass, lambda: setup_entry.runtime_data.hub.connected("websocket"))

    await sim.emit_alert(1, "vehicle")  # not one of the chosen types
    await sim.emit_alert(1, "parcel", severity="low", title="Parcel at the door")
    await wait_for(hass, lambda: len(calls) == 1)
    data = calls[0].data
    assert data["title"] == "Parcel at the door"
    assert data["message"] == "Parcel on Front Door (low)"
    assert data["data"] == {
        "image": f"/api/camera_proxy/{camera}",
        "tag": f"opennvr-{camera}",
        "group": "opennvr",
    }

    await sim.emit_alert(1, "person", severity="high")
    await wait_for(hass, lambda: len(calls) == 2)
    assert calls[1].data["message"] == "Person on Front Door (high)"
