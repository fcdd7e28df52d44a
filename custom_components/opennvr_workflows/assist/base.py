"""What every assistant tool shares: its site, its asker, and errors as results.

A tool is bound to the sites it may read (config entry ids, by title). With one site
there is nothing to choose; with several (the built-in Assist API sees every loaded
entry) the tool takes a ``site`` argument naming one.

Errors are the model's to read, never the conversation's end (spec 001): an OpenNVR read
that fails, a camera the person may not see, a run that does not exist, an action that
refuses, each comes back as an error result with a short text, so the model can try again
or say it cannot. A failure nobody expected is logged and answered the same way.
"""

from __future__ import annotations

import logging
from abc import abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, override

import probatio as vol
from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import llm
from homeassistant.util.json import JsonObjectType
from pyopennvr import OpenNVRError

from ..ai.ports import NvrReadError
from ..const import DOMAIN
from ..coordinator import OpenNVRConfigEntry
from ..host.asker import Asker, async_asker
from ..host.permissions import NotAllowed, async_allow
from ..host.workflows import WorkflowHost

_LOGGER = logging.getLogger(__name__)

READ_ONLY: Final = llm.ToolAnnotations(
    read_only=True, destructive=False, idempotent=True, open_world=False
)
#: The most rows a list answer holds: a voice answer reads a few, not fifty.
MAX_ROWS: Final = 10
SITE: Final = "site"


class ToolError(Exception):
    """A refusal the model should hear (its text is the message)."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call of a tool, checked: where it runs, who asks, with what arguments."""

    hass: HomeAssistant
    entry: OpenNVRConfigEntry
    host: WorkflowHost
    asker: Asker
    args: dict[str, Any]
    llm_context: llm.LLMContext

    def camera(self) -> int | None:
        """The camera the optional ``camera`` argument names; None when it names none."""
        value = self.args.get("camera")
        return camera_of(self.asker, value) if value else None


def tool_door(short_name: str) -> str:
    """The door of a tool: ``tool:<its short name>`` (:mod:`..host.permissions`)."""
    return f"tool:{short_name}"


class SiteTool(llm.Tool):
    """One read-only tool over one of ``sites`` (title -> config entry id)."""

    integration = DOMAIN
    annotations = READ_ONLY
    #: The tool's own name, after ``opennvr_workflows__``.
    short_name: str = ""

    def __init__(self, sites: Mapping[str, str], cameras: list[str] | None = None) -> None:
        self.name = f"{DOMAIN}__{self.short_name}"
        self._sites = dict(sites)
        fields = self.fields(cameras)
        if len(self._sites) > 1:
            fields[vol.Required(SITE, description="Which OpenNVR site")] = vol.In(
                sorted(self._sites)
            )
        self.parameters = vol.Schema(fields)

    def fields(self, cameras: list[str] | None) -> dict[Any, Any]:
        """The tool's arguments (``cameras``: the names the asker may use, when known)."""
        return {}

    @staticmethod
    def camera_field(cameras: list[str] | None) -> Any:
        """A camera argument: one of ``cameras`` when known, else any name."""
        return vol.In(cameras) if cameras else str

    @override
    async def async_call(
        self, hass: HomeAssistant, tool_input: llm.ToolInput, llm_context: llm.LLMContext
    ) -> llm.ToolResult:
        """Check the arguments, find the site and the asker, answer; errors as results."""
        try:
            await async_allow(hass, tool_door(self.short_name), llm_context.context)
            args = self.parameters(tool_input.tool_args)
            entry = self._entry(hass, args)
            host = entry.runtime_data.workflows
            if host is None:
                raise ToolError("the site's workflows are not running")
            asker = await async_asker(hass, host, llm_context.context)
            call = ToolCall(hass, entry, host, asker, args, llm_context)
            data = await self.answer(call)
        except vol.Invalid as err:
            return _error(f"invalid arguments: {err}")
        except NotAllowed:
            return _error("not allowed for this person")
        except (ToolError, NvrReadError, HomeAssistantError) as err:
            return _error(str(err) or type(err).__name__)
        except OpenNVRError as err:
            return _error(f"OpenNVR: {type(err).__name__}: {err}")
        except Exception:
            _LOGGER.exception("The assistant tool %s failed", self.name)
            return _error("the tool failed; see Home Assistant's log")
        return llm.ToolResult(data=data)

    @abstractmethod
    async def answer(self, call: ToolCall) -> JsonObjectType:
        """The tool's answer; every fact in it with its ``cite`` marker."""

    def _entry(self, hass: HomeAssistant, args: Mapping[str, Any]) -> OpenNVRConfigEntry:
        if len(self._sites) == 1:
            entry_id = next(iter(self._sites.values()))
        else:
            entry_id = self._sites[args[SITE]]
        entry: OpenNVRConfigEntry | None = hass.config_entries.async_get_entry(entry_id)
        if entry is None or entry.state is not ConfigEntryState.LOADED:
            raise ToolError("the OpenNVR site is not loaded")
        return entry


def camera_of(asker: Asker, value: str) -> int:
    """The camera ``value`` names, or the refusal that lists what the asker may see (a
    hidden camera reads as an unknown one)."""
    camera_id = asker.camera(value)
    if camera_id is None:
        raise ToolError(f"no camera {value!r}; cameras: {', '.join(asker.names()) or 'none'}")
    return camera_id


def _error(text: str) -> llm.ToolResult:
    return llm.ToolResult(data={"error": text}, error=True)
