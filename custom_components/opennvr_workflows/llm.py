"""Tools for Home Assistant's built-in Assist API (the ``llm`` platform).

Home Assistant's ``llm`` integration asks each loaded integration's ``llm`` platform for
its tools when an agent using the Assist API starts a turn. These are the same read-only
tools as the integration's own API (:mod:`.assist`), over every loaded site (a ``site``
argument picks one when there are several), answering as the person asking. As with
Home Assistant's own tools, they are offered only when the user exposed at least one of
the site's cameras to that assistant. The Assist API keeps its own instructions; only
how to use and cite these tools is added.
"""

from __future__ import annotations

from homeassistant.components.homeassistant import async_should_expose
from homeassistant.components.llm import LLMTools
from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers import entity_registry as er
from homeassistant.helpers.llm import LLM_API_ASSIST, LLMContext

from .assist.prompt import ASSIST_PROMPT
from .assist.tools import build_tools
from .assist.turn_guard import install_turn_guard
from .const import DOMAIN
from .coordinator import OpenNVRConfigEntry


@callback
def async_get_tools(hass: HomeAssistant, llm_context: LLMContext, api_id: str) -> LLMTools | None:
    """The tools for the Assist API, when a loaded site has a camera exposed to it."""
    if api_id != LLM_API_ASSIST:
        return None
    entries: list[OpenNVRConfigEntry] = [
        e
        for e in hass.config_entries.async_entries(DOMAIN)
        if e.state is ConfigEntryState.LOADED and _exposes_a_camera(hass, e, llm_context)
    ]
    if not entries:
        return None
    sites: dict[str, str] = {}
    for entry in entries:
        title = entry.title if entry.title not in sites else f"{entry.title} ({entry.entry_id})"
        sites[title] = entry.entry_id
    install_turn_guard(hass)
    return LLMTools(tools=build_tools(sites), prompt=ASSIST_PROMPT)


def _exposes_a_camera(
    hass: HomeAssistant, entry: OpenNVRConfigEntry, llm_context: LLMContext
) -> bool:
    return any(
        e.domain == "camera" and async_should_expose(hass, llm_context.assistant, e.entity_id)
        for e in er.async_entries_for_config_entry(er.async_get(hass), entry.entry_id)
    )
