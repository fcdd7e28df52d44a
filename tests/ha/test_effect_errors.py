"""A workflow step that fails outside Home Assistant (a webhook, OpenNVR, a notification too
urgent to send) fails with a translated error: its key is the integration's, its text the
translation's, and that text is what the run's trace keeps."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import pytest
from aiohttp import web
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from pyopennvr import OpenNVRError
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.opennvr_workflows.const import CONF_CAMERA_ROLES, CONF_WEBHOOKS, DOMAIN
from custom_components.opennvr_workflows.engine import ActionRequest, ProviderUnavailable

from .conftest import WEBSOCKET_OPTIONS
from .notify_platforms import RecordingService, add_notify_platforms
from .test_effects import effects_of, run_ctx


@pytest.fixture
def entry_options() -> dict[str, Any]:
    return {**WEBSOCKET_OPTIONS, CONF_CAMERA_ROLES: {"front_door": "1", "drive": "2"}}


async def failure(call: Any) -> HomeAssistantError:
    """The error ``call`` (an awaitable) fails with, checked to be translated."""
    with pytest.raises(HomeAssistantError) as caught:
        await call
    error = caught.value
    assert error.translation_domain == DOMAIN
    assert error.translation_key is not None
    assert str(error) != error.translation_key, "the translation is loaded and used"
    return error


@pytest.fixture
async def failing_hook(socket_enabled: None) -> AsyncGenerator[str]:
    """A webhook destination that answers 500."""

    async def hook(request: web.Request) -> web.Response:
        return web.Response(status=500)

    app = web.Application()
    app.router.add_post("/hook", hook)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    yield f"http://127.0.0.1:{runner.addresses[0][1]}/hook"
    await runner.cleanup()


async def test_a_webhook_that_answers_an_error_or_none_fails_in_words(
    hass: HomeAssistant, config_entry: MockConfigEntry, failing_hook: str
) -> None:
    hass.config_entries.async_update_entry(
        config_entry,
        options={
            **config_entry.options,
            CONF_WEBHOOKS: {"tickets": failing_hook, "gone": "http://127.0.0.1:9/hook"},
        },
    )
    assert await hass.config_entries.async_setup(config_entry.entry_id)
    await hass.async_block_till_done()
    fx = effects_of(config_entry)

    error = await failure(
        fx.webhook(run_ctx(), ActionRequest(kind="webhook", params={"to": "tickets"}))
    )
    assert error.translation_key == "effect_webhook_status"
    assert str(error) == "Webhook tickets answered HTTP 500"

    error = await failure(
        fx.webhook(run_ctx(), ActionRequest(kind="webhook", params={"to": "gone"}))
    )
    assert error.translation_key == "effect_webhook_failed"
    assert str(error).startswith("Webhook gone failed: ")


async def test_opennvr_failing_an_action_fails_the_step_in_words(
    hass: HomeAssistant, setup_entry: MockConfigEntry, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = setup_entry.runtime_data.client

    async def broken(*args: Any, **kwargs: Any) -> Any:
        raise OpenNVRError("the disk is full")

    for method in ("set_site_mode", "create_event", "ptz_presets", "get_entities", "get_events"):
        monkeypatch.setattr(client, method, broken)
    fx = effects_of(setup_entry)
    ctx = run_ctx()
    cases = [
        (
            fx.set_site_mode(ctx, ActionRequest(kind="site_mode", params={"mode": "armed_away"})),
            "effect_nvr_site_mode",
            "OpenNVR could not change the site mode: the disk is full",
        ),
        (
            fx.save_clip(
                ctx,
                ActionRequest(kind="save_clip", params={}, camera="front_door", camera_id="1"),
            ),
            "effect_nvr_save_clip",
            "OpenNVR could not save a clip: the disk is full",
        ),
        (
            fx.ptz_preset(
                ctx, ActionRequest(kind="ptz_preset", params={"preset": "gate"}, camera="drive")
            ),
            "effect_nvr_move_camera",
            "OpenNVR could not move the camera: the disk is full",
        ),
        (
            fx.app_action(
                ctx,
                ActionRequest(
                    kind="app_action", params={"app": "gate_controller", "action": "open"}
                ),
            ),
            "effect_nvr_app_action",
            "OpenNVR could not run gate_controller.open: the disk is full",
        ),
    ]
    for call, key, text in cases:
        error = await failure(call)
        assert (error.translation_key, str(error)) == (key, text)


async def test_a_notification_whose_urgency_cannot_be_read_is_not_sent(
    hass: HomeAssistant, setup_entry: MockConfigEntry
) -> None:
    platforms: dict[str, RecordingService] = await add_notify_platforms(
        hass, {"mobile_app": {"alices_phone": "a1"}}
    )
    fx = effects_of(setup_entry)
    action = "notify.mobile_app_alices_phone"
    request = ActionRequest(
        kind="home_assistant",
        params={"action": action, "data": {"message": "Hello", "data": "loud"}},
    )
    error = await failure(fx.call_action(run_ctx(), request))
    assert error.translation_key == "effect_too_urgent"
    assert str(error).startswith(f"{action}: the notification's data is not a mapping")
    assert str(error).endswith("; not sent")
    assert platforms["mobile_app"].sent == []


async def test_what_a_step_names_that_the_site_lacks_parks_or_fails_it(
    hass: HomeAssistant, setup_entry: MockConfigEntry, monkeypatch: pytest.MonkeyPatch
) -> None:
    fx = effects_of(setup_entry)
    ctx = run_ctx()
    nowhere = ActionRequest(kind="save_clip", params={}, camera="garden")
    with pytest.raises(ValueError, match="save_clip: no OpenNVR camera for 'garden'"):
        await fx.save_clip(ctx, nowhere)
    with pytest.raises(ValueError, match="ptz_preset: no OpenNVR camera"):
        await fx.ptz_preset(ctx, ActionRequest(kind="ptz_preset", params={}, camera="garden"))
    with pytest.raises(ProviderUnavailable, match="has no PTZ preset 'attic'"):
        await fx.ptz_preset(
            ctx, ActionRequest(kind="ptz_preset", params={"preset": "attic"}, camera="drive")
        )
    with pytest.raises(ProviderUnavailable, match=r"no action 'light\.disco'"):
        await fx.call_action(
            ctx, ActionRequest(kind="home_assistant", params={"action": "light.disco"})
        )

    async def nothing(*args: Any, **kwargs: Any) -> dict[str, Any]:
        return {}

    monkeypatch.setattr(setup_entry.runtime_data.client, "create_event", nothing)
    clip = ActionRequest(kind="save_clip", params={}, camera="front_door", camera_id="1")
    error = await failure(fx.save_clip(ctx, clip))
    assert error.translation_key == "effect_clip_no_event"
    assert str(error) == "OpenNVR did not return the event to keep a clip of"


async def test_a_question_without_its_desk_parks_the_workflow(
    hass: HomeAssistant, setup_entry: MockConfigEntry
) -> None:
    fx = effects_of(setup_entry)
    desk, fx.desk = fx.desk, None
    try:
        with pytest.raises(ProviderUnavailable, match="approvals desk is not running"):
            await fx.ask_person(run_ctx(), None)  # type: ignore[arg-type]
        await fx.approval_closed("approval-1", "answered", "yes", None)  # nothing to close
    finally:
        fx.desk = desk
