"""What the assistant tests share: a site with AI on the Ollama fake, workflows, and a way
to call a tool of the integration's LLM API as a given person."""

from __future__ import annotations

from typing import Any

from homeassistant.auth.models import User
from homeassistant.const import Platform
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers import entity_registry as er
from homeassistant.helpers import llm
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.opennvr_workflows.assist.api import api_id
from custom_components.opennvr_workflows.const import (
    CONF_SITE_FACTS,
    CONF_SITE_LISTS,
    DOMAIN,
)
from custom_components.opennvr_workflows.host.ids import camera_unique_id
from tests.fakes.ollama_server import FakeOllama
from tests.ha.conftest import ai_options

#: A workflow a button starts: it only logs.
PORCH = """\
contract: workflow.v1
name: Porch light check
state: on
limits: { cooldown: 0s, per_hour: 100 }
when:
  button: {}
then:
  - log: "checked"
"""

FACTS = "Deliveries come between 9:00 and 17:00. The gate code is never given out."


def site_options(ollama: FakeOllama) -> dict[str, Any]:
    """AI on the fake, the front door mapped to a role, site facts and a list."""
    return {
        **ai_options(ollama),
        CONF_SITE_FACTS: FACTS,
        CONF_SITE_LISTS: {"known_plates": ["AB123CD", "XY987ZZ"]},
    }


def context_of(user: User | None, assistant: str = "conversation") -> llm.LLMContext:
    return llm.LLMContext(
        platform="test",
        context=Context(user_id=user.id) if user is not None else Context(),
        language="en",
        assistant=assistant,
        device_id=None,
    )


async def api_of(
    hass: HomeAssistant, entry: MockConfigEntry, user: User | None = None
) -> llm.APIInstance:
    return await llm.async_get_api(hass, api_id(entry), context_of(user))


async def call(
    hass: HomeAssistant,
    entry: MockConfigEntry,
    tool: str,
    args: dict[str, Any] | None = None,
    user: User | None = None,
) -> llm.ToolResult:
    """Call ``opennvr_workflows__<tool>`` through the API, as ``user``."""
    api = await api_of(hass, entry, user)
    return await api.async_call_tool(
        llm.ToolInput(tool_name=f"{DOMAIN}__{tool}", tool_args=args or {})
    )


def camera_entity(hass: HomeAssistant, entry: MockConfigEntry, camera_id: int) -> str:
    entity_id = er.async_get(hass).async_get_entity_id(
        Platform.CAMERA, DOMAIN, camera_unique_id(str(entry.unique_id), camera_id)
    )
    assert entity_id is not None
    return entity_id
