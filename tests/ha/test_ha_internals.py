"""The internals the integration reaches through :mod:`...ha_internals` are still where it
reads them, in the installed Home Assistant: a release that moves one fails here, loudly,
before a user's citation check or notify judgement fails quietly.

Each test drives the real component (a legacy notify platform set up from YAML, a real
conversation turn's chat log) and reads it only through the adapter.
"""

from __future__ import annotations

import dataclasses

from homeassistant.components.conversation import AssistantContent, ChatLog
from homeassistant.components.conversation.chat_log import async_get_chat_log
from homeassistant.core import HomeAssistant
from homeassistant.helpers import chat_session
from homeassistant.setup import async_setup_component

from custom_components.opennvr_workflows import ha_internals

from .notify_platforms import add_notify_platforms


async def test_the_legacy_notify_registry_names_each_services_integration(
    hass: HomeAssistant,
) -> None:
    await add_notify_platforms(hass, {"alexa_media": None, "mobile_app": {"Pixel": "pixel"}})
    services = ha_internals.notify_service_integrations(hass)
    assert services, "no legacy notify platform found: notify.legacy.NOTIFY_SERVICES moved?"
    assert services["alexa_media"] == "alexa_media"
    assert services["mobile_app_pixel"] == "mobile_app"
    for name in services:
        assert hass.services.has_service("notify", name), name


async def test_a_turns_chat_log_keeps_its_content_list_and_listener(hass: HomeAssistant) -> None:
    assert await async_setup_component(hass, "homeassistant", {})
    assert await async_setup_component(hass, "conversation", {})
    assert ha_internals.turn_chat_log() is None  # outside a turn
    fields = {f.name for f in dataclasses.fields(ChatLog)}
    assert {"content", "delta_listener"} <= fields, "ChatLog lost the fields the guard wraps"
    with (
        chat_session.async_get_chat_session(hass) as session,
        async_get_chat_log(hass, session) as chat_log,
    ):
        assert ha_internals.turn_chat_log() is chat_log
        content = ha_internals.chat_log_content(chat_log)
        assert isinstance(content, list)
        seen: list[object] = []

        class Watching(list):  # type: ignore[type-arg]
            def append(self, item: object, /) -> None:
                seen.append(item)
                super().append(item)

        ha_internals.set_chat_log_content(chat_log, Watching(content))
        chat_log.async_add_assistant_content_without_tools(
            AssistantContent(agent_id="test", content="hello")
        )
        assert [getattr(i, "content", None) for i in seen] == ["hello"]
        assert ha_internals.chat_log_listener(chat_log) is None
        ha_internals.set_chat_log_listener(chat_log, lambda log, delta: None)
        assert ha_internals.chat_log_listener(chat_log) is not None
