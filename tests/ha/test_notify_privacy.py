"""A workflow's notification: ``who: role:X`` reaches only X's people, on their own phones
(real companion-app registrations pushing to a local gateway), and a phone's push, which
leaves the house through the push relay, carries no plate and none of the model's words
unless an admin allowed that phone the full text; Home Assistant's own notification keeps
the full text."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from homeassistant.components import persistent_notification
from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.opennvr_workflows.const import CONF_APPROVERS, CONF_FULL_TEXT_TO
from custom_components.opennvr_workflows.engine import NvrEvent
from custom_components.opennvr_workflows.host.effects.privacy import HIDDEN
from custom_components.opennvr_workflows.host.workflows import WorkflowHost
from tests.fakes.ollama_server import FakeOllama, FromSchema
from tests.fakes.opennvr_sim import OpenNVRSimulator
from tests.ha.phones import Phone, Phones

from .conftest import ai_options
from .test_services import set_up

pytest_plugins = ["tests.ha.phones"]

PLATE = "KX-417-PQ"
#: No AI: a plate read at the door, its text to ``WHO``.
PLATE_AT_DOOR = """\
contract: workflow.v1
name: Car at the door
state: on
limits: { cooldown: 0s, per_hour: 100 }
when:
  event: { type: plate.recognized.v1, cameras: [front_door] }
then:
  - notify: { who: "WHO", title: "Plate {plate}", message: "Car {plate} at the door" }
"""
#: The model's reason, to the household.
VISITOR = """\
contract: workflow.v1
name: Visitor check
state: on
needs: [vision_model]
limits: { cooldown: 0s, per_hour: 100 }
when:
  alert: { alert_type: person, cameras: [front_door] }
then:
  - ai:
      mode: look
      prompt: Who is at the door?
      input: picture
      decision: [visitor, nobody]
      visitor: [ notify: { who: role:household, title: Front door, message: "Visitor: {reason}" } ]
      nobody: []
      unsure: []
"""


class House:
    """Alice is the household, Bob the guard; each has a phone."""

    def __init__(self, host: WorkflowHost, alice: Phone, bob: Phone) -> None:
        self.host, self.alice, self.bob = host, alice, bob


async def set_up_house(
    hass: HomeAssistant,
    phones: Phones,
    config_entry: MockConfigEntry,
    ollama: FakeOllama,
    *,
    full_text_to: list[str] | None = None,
    **files: str,
) -> House:
    alice = await phones.register(await phones.user("Alice"), "Alice's Pixel")
    bob = await phones.register(await phones.user("Bob"), "Bob's iPhone", os="ios")
    options: dict[str, Any] = {
        **ai_options(ollama),
        CONF_APPROVERS: {"roles": {"household": [alice.user.id], "guard": [bob.user.id]}},
    }
    if full_text_to is not None:
        options[CONF_FULL_TEXT_TO] = full_text_to
    hass.config_entries.async_update_entry(config_entry, options=options)
    host = await set_up(hass, config_entry, **files)
    return House(host, alice, bob)


async def arrives(hass: HomeAssistant, house: House, kind: str, type_: str, **fields: Any) -> None:
    """An OpenNVR alert or event at the front door camera, and what it set off."""
    house.host.hub.publish(
        NvrEvent(
            kind=kind,
            source="websocket",
            time=datetime.now(UTC),
            type=type_,
            camera_id="1",
            alert_id=f"alrt_{type_}",
            **fields,
        )
    )
    await house.host.engine.idle()
    await hass.async_block_till_done()


def notifications(hass: HomeAssistant) -> list[dict[str, Any]]:
    shown = persistent_notification._async_get_or_create_notifications(hass)
    return [dict(n) for n in shown.values()]


async def test_a_role_reaches_only_its_people_and_the_push_carries_no_plate(
    hass: HomeAssistant,
    phones: Phones,
    config_entry: MockConfigEntry,
    sim: OpenNVRSimulator,
    ollama: FakeOllama,
) -> None:
    house = await set_up_house(
        hass, phones, config_entry, ollama, car=PLATE_AT_DOOR.replace("WHO", "role:household")
    )
    await arrives(hass, house, "event", "plate.recognized.v1", plate=PLATE)

    push = await house.alice.wait_for(lambda p: "Car" in str(p.get("message")))
    assert push["message"] == f"Car {HIDDEN} at the door"
    assert push["title"] == f"Plate {HIDDEN}"
    assert PLATE not in str(push)
    assert house.bob.received() == []  # the guard is not the household
    # The full text stays in the house: Home Assistant's own notification has it.
    (shown,) = [n for n in notifications(hass) if "Car" in str(n.get("message"))]
    assert shown["message"] == "Car KX\\-417\\-PQ at the door"  # as markdown, escaped


async def test_an_admin_lets_a_phone_carry_the_full_text(
    hass: HomeAssistant,
    phones: Phones,
    config_entry: MockConfigEntry,
    sim: OpenNVRSimulator,
    ollama: FakeOllama,
) -> None:
    house = await set_up_house(
        hass,
        phones,
        config_entry,
        ollama,
        full_text_to=["notify.mobile_app_bob_s_iphone"],
        car=PLATE_AT_DOOR.replace("WHO", "role:guard"),
    )
    await arrives(hass, house, "event", "plate.recognized.v1", plate=PLATE)
    push = await house.bob.wait_for(lambda p: "Car" in str(p.get("message")))
    assert push["message"] == f"Car {PLATE} at the door"
    assert house.alice.received() == []


async def test_the_models_words_stay_in_the_house(
    hass: HomeAssistant,
    phones: Phones,
    config_entry: MockConfigEntry,
    sim: OpenNVRSimulator,
    ollama: FakeOllama,
) -> None:
    reason = f"the neighbour, who drives {PLATE}"
    ollama.responder = lambda _: FromSchema(values={"decision": "visitor", "reason": reason})
    house = await set_up_house(hass, phones, config_entry, ollama, visitor=VISITOR)
    await arrives(hass, house, "alert", "person")

    push = await house.alice.wait_for(lambda p: p.get("title") == "Visitor check")
    assert "open Home Assistant" in push["message"]
    assert reason not in str(push)
    assert PLATE not in str(push)
    assert push["data"]["ai_derived"] is True
    assert house.bob.received() == []
    (shown,) = [n for n in notifications(hass) if "Visitor:" in str(n.get("message"))]
    assert "the neighbour, who drives KX" in shown["message"]  # as markdown, escaped
