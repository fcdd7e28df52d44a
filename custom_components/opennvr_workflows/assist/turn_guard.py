"""The citation check applied to a conversation turn in Home Assistant.

Home Assistant's LLM API sees the tools and the prompt, not the answer: the agent
(Ollama's, or any other) writes the final text into the conversation's chat log and
reads it back from there for the reply. So the check sits in the chat log of the turn.
When the tools are handed out for a turn (the API instance is made, or the built-in
Assist API collects its tools), the chat log's content list is wrapped: each of this
integration's tool results appended to it is recorded (its ``cite`` markers), and each
assistant message appended after has the markers no tool returned in this turn stripped
(counted in :class:`CitationStats`, logged, and written to the conversation's trace). The
answer the agent returns, the stored history and the next turn's prompt all read the
checked text.

Home Assistant offers no public hook for the answer, so the chat log's attributes are
reached through :mod:`..ha_internals`, the one adapter a Home Assistant upgrade is tested
against. The wrap lasts one turn: Home Assistant copies the content into a plain list when the
next turn opens the chat log, and that turn's tools install a fresh check. When the agent
streams its answer (a voice pipeline with streaming speech), the pieces it sends on are
filtered the same way, holding back only a marker that has not closed yet.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any, SupportsIndex, override

from homeassistant.components.conversation import (
    AssistantContent,
    ChatLog,
    Content,
    ConversationTraceEventType,
    ToolResultContent,
    async_conversation_trace_append,
)
from homeassistant.core import HomeAssistant
from homeassistant.util.hass_dict import HassKey

from ..const import DOMAIN
from ..ha_internals import (
    chat_log_content,
    chat_log_listener,
    set_chat_log_content,
    set_chat_log_listener,
    turn_chat_log,
)
from .citations import Checked, Citations, StreamFilter

_LOGGER = logging.getLogger(__name__)
#: Tool names of this integration (a merged API prefixes them with its own namespace).
_OURS = f"{DOMAIN}__"


@dataclass(slots=True)
class CitationStats:
    """Answers checked and markers kept and stripped, since Home Assistant started."""

    answers: int = 0
    cited: int = 0
    stripped: int = 0


_STATS: HassKey[CitationStats] = HassKey(f"{DOMAIN}_citation_stats")


def citation_stats(hass: HomeAssistant) -> CitationStats:
    """The counters of :func:`install_turn_guard`'s checks."""
    stats = hass.data.get(_STATS)
    if stats is None:
        stats = hass.data[_STATS] = CitationStats()
    return stats


class TurnGuard:
    """One turn's check (see the module docstring)."""

    def __init__(self, stats: CitationStats) -> None:
        self.citations = Citations()
        self._stats = stats

    def see(self, item: Content) -> Content:
        """Record a tool result of ours; check an assistant message's text."""
        if isinstance(item, ToolResultContent):
            if _OURS in item.tool_name and not item.result.error:
                self.citations.record(item.result.data)
            return item
        if isinstance(item, AssistantContent) and item.content:
            checked = self.citations.check(item.content)
            if checked.valid or checked.invented:
                self._count(checked)
            if checked.invented:
                return replace(item, content=checked.text)
        return item

    def _count(self, checked: Checked) -> None:
        self._stats.answers += 1
        self._stats.cited += len(checked.valid)
        self._stats.stripped += len(checked.invented)
        async_conversation_trace_append(
            ConversationTraceEventType.AGENT_DETAIL,
            {"citations": {"valid": checked.valid, "stripped": checked.invented}},
        )
        if checked.invented:
            _LOGGER.info(
                "Removed %d citation(s) that no tool returned in this turn: %s",
                len(checked.invented),
                ", ".join(checked.invented),
            )


class _GuardedContent(list[Content]):
    """A chat log's content list that passes what is appended through a guard."""

    def __init__(self, items: Iterable[Content], guard: TurnGuard) -> None:
        super().__init__(items)
        self.guard = guard

    @override
    def append(self, item: Content, /) -> None:
        super().append(self.guard.see(item))

    @override
    def insert(self, index: SupportsIndex, item: Content, /) -> None:
        super().insert(index, self.guard.see(item))


def install_turn_guard(hass: HomeAssistant) -> TurnGuard | None:
    """Check the current turn's answer (None outside a conversation)."""
    chat_log = turn_chat_log()
    if chat_log is None:
        return None
    content = chat_log_content(chat_log)
    if isinstance(content, _GuardedContent):
        return content.guard  # this turn is already checked
    guard = TurnGuard(citation_stats(hass))
    set_chat_log_content(chat_log, _GuardedContent(content, guard))
    if (listener := chat_log_listener(chat_log)) is not None:
        set_chat_log_listener(chat_log, _filtered(listener, guard))
    return guard


def _filtered(
    listener: Callable[[ChatLog, dict[str, Any]], None], guard: TurnGuard
) -> Callable[[ChatLog, dict[str, Any]], None]:
    """``listener`` seeing streamed text with invented markers stripped."""
    stream = StreamFilter(guard.citations)

    def deliver(chat_log: ChatLog, delta: dict[str, Any]) -> None:
        if "role" in delta and (held := stream.flush()):
            listener(chat_log, {"content": held})
        content = delta.get("content")
        if isinstance(content, str) and delta.get("role", "assistant") == "assistant":
            delta = {**delta, "content": stream.feed(content)}
        listener(chat_log, delta)

    return deliver
