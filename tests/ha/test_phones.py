"""The test phones are real: registered through mobile_app's registration API, reached
through its notify action at the push gateway, and their taps arrive as the app's events
with the phone's user as the context user, also after a restart."""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager

import pytest
from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import (
    async_capture_events,
    async_test_home_assistant,
)
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator

from tests.fakes.push_gateway import PushGateway
from tests.ha.phones import EVENT_NOTIFICATION_ACTION, Phones, phones_for

pytest_plugins = ["tests.ha.phones"]

ACTIONS = [
    {"action": "APPROVE_t0k3n", "title": "Yes"},
    {"action": "DENY_t0k3n", "title": "No"},
]


async def ask(hass: HomeAssistant, service: str, tag: str) -> None:
    await hass.services.async_call(
        "notify",
        service,
        {
            "message": "Let the courier in?",
            "title": "Front door",
            "data": {"actions": ACTIONS, "tag": tag},
        },
        blocking=True,
    )


async def test_an_android_user_and_an_iphone_admin_get_pushes_and_tap_as_themselves(
    hass: HomeAssistant, phones: Phones, push_gateway: PushGateway
) -> None:
    bob = await phones.user("Bob")
    alice = await phones.user("Alice", admin=True)
    pixel = await phones.register(bob, "Bob's Pixel")
    iphone = await phones.register(alice, "Alice's iPhone", os="ios")
    assert (bob.is_admin, alice.is_admin) == (False, True)
    assert (pixel.notify_action, iphone.notify_action) == (
        "notify.mobile_app_bob_s_pixel",
        "notify.mobile_app_alice_s_iphone",
    )
    assert pixel.push_token != iphone.push_token

    await ask(hass, pixel.notify_service, "approval-1")

    [push] = pixel.received()
    assert push["push_token"] == pixel.push_token
    assert push["message"] == "Let the courier in?"
    assert push["title"] == "Front door"
    assert push["data"] == {"actions": ACTIONS, "tag": "approval-1"}
    assert push["registration_info"]["app_id"] == "io.homeassistant.companion.android"
    assert push["registration_info"]["webhook_id"] == pixel.webhook_id
    assert push_gateway.paths == ["/api/sendPush/android/v1"]
    assert iphone.received() == []

    await ask(hass, iphone.notify_service, "approval-1")
    pushed = await iphone.wait_for(lambda p: p["data"]["tag"] == "approval-1")
    assert pushed["registration_info"]["app_id"] == "io.robbie.HomeAssistant"
    assert push_gateway.paths[-1] == "/api/sendPushNotification"
    assert len(push_gateway.sent) == 2

    taps = async_capture_events(hass, EVENT_NOTIFICATION_ACTION)
    await pixel.tap("DENY_t0k3n", tag="approval-1")
    await iphone.tap("APPROVE_t0k3n")

    assert [(e.data, e.context.user_id) for e in taps] == [
        ({"action": "DENY_t0k3n", "tag": "approval-1"}, bob.id),
        ({"action": "APPROVE_t0k3n"}, alice.id),
    ]


async def test_a_refused_push_reaches_no_phone_and_the_gateway_keeps_it_apart(
    hass: HomeAssistant,
    phones: Phones,
    push_gateway: PushGateway,
    caplog: pytest.LogCaptureFixture,
) -> None:
    pixel = await phones.register(await phones.user("Bob"), "Bob's Pixel")
    push_gateway.fail_for(pixel.push_token, 500)
    caplog.set_level(logging.ERROR)

    await ask(hass, pixel.notify_service, "approval-2")

    assert pixel.received() == []
    assert [p["data"]["tag"] for p in push_gateway.refused] == ["approval-2"]
    assert "Bob's Pixel" in caplog.text
    with pytest.raises(TimeoutError, match="no matching push"):
        await pixel.wait_for(lambda p: True, within=0.05)

    push_gateway.recover(pixel.push_token)
    await ask(hass, pixel.notify_service, "approval-2")
    assert [p["data"]["tag"] for p in pixel.received()] == ["approval-2"]


@asynccontextmanager
async def restarted(hass: HomeAssistant) -> AsyncGenerator[HomeAssistant]:
    """A second Home Assistant on the same config folder, stopped afterwards (mobile_app's
    device tracker leaves a timer on a Home Assistant that is not)."""
    async with async_test_home_assistant(config_dir=hass.config.config_dir) as second:
        try:
            yield second
        finally:
            await second.async_stop(force=True)


async def test_a_restored_phone_is_the_same_phone_after_a_restart(
    hass: HomeAssistant,
    phones: Phones,
    push_gateway: PushGateway,
    aiohttp_client: ClientSessionGenerator,
) -> None:
    bob = await phones.user("Bob")
    pixel = await phones.register(bob, "Bob's Pixel")

    async with restarted(hass) as second:
        again = await (await phones_for(second, push_gateway, aiohttp_client)).restore(pixel)
        assert (again.hass, again.webhook_id, again.push_token, again.user.id) == (
            second,
            pixel.webhook_id,
            pixel.push_token,
            bob.id,
        )
        assert not again.user.is_admin

        await ask(second, again.notify_service, "approval-3")
        assert [p["data"]["tag"] for p in pixel.received()] == ["approval-3"]

        taps = async_capture_events(second, EVENT_NOTIFICATION_ACTION)
        await again.tap("APPROVE_t0k3n", tag="approval-3")
        assert [(e.data["action"], e.context.user_id) for e in taps] == [("APPROVE_t0k3n", bob.id)]
