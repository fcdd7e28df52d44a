"""The integration's own LLM API, "OpenNVR Workflows": a scoped camera assistant.

One API per config entry (per site), registered while the entry is loaded. A
conversation agent set to use it (Ollama's, for one) gets :data:`.prompt.API_PROMPT`,
which keeps it to this site, and the read-only tools of :mod:`.tools`, bound to this site
and to what the person asking may see. Each turn's answer is checked for invented
citations (:mod:`.turn_guard`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import override

from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import llm

from ..const import DOMAIN, TITLE
from ..coordinator import OpenNVRConfigEntry
from ..host.asker import async_asker
from .prompt import API_PROMPT
from .tools import build_tools


def api_id(entry: OpenNVRConfigEntry) -> str:
    """The API's id for ``entry`` (what an agent's settings store)."""
    return f"{DOMAIN}-{entry.entry_id}"


class WorkflowsAPI(llm.API):
    """The API of one site (see the module docstring)."""

    def __init__(self, hass: HomeAssistant, entry: OpenNVRConfigEntry) -> None:
        super().__init__(hass=hass, id=api_id(entry), name=f"{TITLE} ({entry.title})")
        self.entry = entry

    @override
    async def async_get_api_instance(self, llm_context: llm.LLMContext) -> llm.APIInstance:
        """This turn's tools, for this person, with the citation check installed."""
        from .turn_guard import install_turn_guard  # needs the conversation integration

        host = self.entry.runtime_data.workflows
        if host is None:
            raise HomeAssistantError(translation_domain=DOMAIN, translation_key="no_loaded_entry")
        asker = await async_asker(self.hass, host, llm_context.context)
        install_turn_guard(self.hass)
        cameras = asker.names()
        site = f"This site is {self.entry.title}. " + (
            f"The cameras you may use: {', '.join(cameras)}."
            if cameras
            else "The person asking may see none of its cameras."
        )
        return llm.APIInstance(
            api=self,
            api_prompt=f"{API_PROMPT}\n{site}",
            llm_context=llm_context,
            tools=build_tools({self.entry.title: self.entry.entry_id}, cameras or None),
            custom_serializer=llm.selector_serializer,
        )


def async_register_assist(hass: HomeAssistant, entry: OpenNVRConfigEntry) -> Callable[[], None]:
    """Register the entry's API; the returned callback unregisters it (on unload)."""
    return llm.async_register_api(hass, WorkflowsAPI(hass, entry))
