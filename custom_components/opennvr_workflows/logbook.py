"""How the logbook tells what a workflow did.

A run's first effect fires ``opennvr_workflows_run`` with the run's own context, and every
Home Assistant action the run calls carries that context. Described here, the logbook
shows "Parcel at the door started run …" ("resumed run …" when its first effect since
it started, or since Home Assistant started, comes after a wait), and a light the run
turned on reads "triggered by" that workflow, the way a change an automation makes names
the automation. The alerts a run raises and the replies it sends are described too, each
naming its workflow. A limit that holds an event back writes its own line
(:mod:`.host.runs.held`), and an answer says where it was given (a phone, the panel,
the dashboard card: :mod:`.host.approvals.api`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from homeassistant.components.logbook import (
    LOGBOOK_ENTRY_ENTITY_ID,
    LOGBOOK_ENTRY_MESSAGE,
    LOGBOOK_ENTRY_NAME,
    LazyEventPartialState,
)
from homeassistant.const import Platform
from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers import entity_registry as er

from .const import DOMAIN
from .coordinator import OpenNVRConfigEntry
from .host.effects.port import EVENT_ALERT, EVENT_REPLY
from .host.ids import workflow_unique_id
from .host.runs.context import EVENT_RUN

#: A reply is a person's conversation: the logbook shows its start, not a whole essay.
REPLY_CHARS: Final = 120

Describe = Callable[[LazyEventPartialState], dict[str, Any]]


@callback
def async_describe_events(
    hass: HomeAssistant, async_describe_event: Callable[[str, str, Describe], None]
) -> None:
    """Describe the run, alert and reply events of workflows."""

    @callback
    def describe_run(event: LazyEventPartialState) -> dict[str, Any]:
        data = event.data
        verb = "resumed" if data.get("resumed") else "started"
        return _entry(hass, data, data.get("name"), f"{verb} run {data.get('run_id')}")

    @callback
    def describe_alert(event: LazyEventPartialState) -> dict[str, Any]:
        data = event.data
        kind = f"{data['severity']} alert" if data.get("severity") else "alert"
        message = f"raised {_article(kind)} {kind}"
        if title := data.get("title"):
            message = f"{message}: {title}"
        return _entry(hass, data, data.get("workflow"), message)

    @callback
    def describe_reply(event: LazyEventPartialState) -> dict[str, Any]:
        data = event.data
        text = str(data.get("message") or "")
        if len(text) > REPLY_CHARS:
            text = text[: REPLY_CHARS - 1].rstrip() + "…"
        return _entry(hass, data, None, f"replied: {text}" if text else "replied")

    async_describe_event(DOMAIN, EVENT_RUN, describe_run)
    async_describe_event(DOMAIN, EVENT_ALERT, describe_alert)
    async_describe_event(DOMAIN, EVENT_REPLY, describe_reply)


def _entry(hass: HomeAssistant, data: Mapping[str, Any], name: Any, message: str) -> dict[str, Any]:
    """A logbook line named after the workflow, on its entity when it has one."""
    workflow_id = str(data.get("workflow_id") or "")
    known_name, entity_id = _workflow(hass, workflow_id)
    described: dict[str, Any] = {
        LOGBOOK_ENTRY_NAME: str(name or known_name or workflow_id or "Workflow"),
        LOGBOOK_ENTRY_MESSAGE: message,
    }
    if entity_id is not None:
        described[LOGBOOK_ENTRY_ENTITY_ID] = entity_id
    return described


def _workflow(hass: HomeAssistant, workflow_id: str) -> tuple[str | None, str | None]:
    """The workflow's name and its state entity, from the first site that has it."""
    if not workflow_id:
        return None, None
    registry = er.async_get(hass)
    entry: OpenNVRConfigEntry
    for entry in hass.config_entries.async_loaded_entries(DOMAIN):
        host = entry.runtime_data.workflows
        loaded = host.files.get(workflow_id) if host is not None else None
        if loaded is None or loaded.workflow is None:
            continue
        entity_id = registry.async_get_entity_id(
            Platform.SELECT,
            DOMAIN,
            workflow_unique_id(entry.runtime_data.info.site_id, workflow_id, "state"),
        )
        return loaded.workflow.name, entity_id
    return None, None


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"
