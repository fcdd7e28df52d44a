"""The two places where this integration reaches past Home Assistant's public API, kept in
one small adapter so an upgrade that moves them fails one test loudly
(``tests/ha/test_ha_internals.py``) instead of failing quietly in a turn or a run.

* **Which integration sent a notify service.** A legacy notify platform (``notify.<name>``,
  such as ``notify.mobile_app_<device>``) registers its services with no public record of
  the integration behind them; the notify component keeps one in ``hass.data`` under
  ``notify.legacy.NOTIFY_SERVICES`` (integration -> platform objects with
  ``_service_name`` and ``registered_targets``). Notify *entities* need none of this: the
  entity registry names their platform.
* **Seeing an assistant's answer.** The LLM API hands out tools and a prompt but never sees
  the text the agent writes; the citation check (:mod:`.assist.turn_guard`) reads it in the
  turn's chat log, whose ``content`` list and ``delta_listener`` are plain attributes of
  the conversation integration's ``ChatLog`` dataclass.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from homeassistant.components.conversation import ChatLog, Content
from homeassistant.components.conversation.chat_log import current_chat_log
from homeassistant.components.notify.legacy import NOTIFY_SERVICES
from homeassistant.core import HomeAssistant

#: A chat log's streaming listener (the voice pipeline's, when it streams speech).
DeltaListener = Callable[[ChatLog, dict[str, Any]], None]


def notify_service_integrations(hass: HomeAssistant) -> dict[str, str]:
    """Legacy notify service name (``mobile_app_alices_phone``) -> its integration."""
    services: dict[str, str] = {}
    for integration, platforms in (hass.data.get(NOTIFY_SERVICES) or {}).items():
        for platform in platforms:
            name = getattr(platform, "_service_name", None)
            if isinstance(name, str):
                services[name] = integration
            for target in getattr(platform, "registered_targets", None) or {}:
                services[str(target)] = integration
    return services


def turn_chat_log() -> ChatLog | None:
    """The chat log of the conversation turn running now (None outside one)."""
    return current_chat_log.get()


def chat_log_content(chat_log: ChatLog) -> list[Content]:
    return chat_log.content


def set_chat_log_content(chat_log: ChatLog, content: list[Content]) -> None:
    """Replace the turn's content list (the agent appends its answer to it)."""
    chat_log.content = content


def chat_log_listener(chat_log: ChatLog) -> DeltaListener | None:
    return chat_log.delta_listener


def set_chat_log_listener(chat_log: ChatLog, listener: DeltaListener) -> None:
    """Replace the turn's streaming listener (the pieces of a streamed answer)."""
    chat_log.delta_listener = listener
