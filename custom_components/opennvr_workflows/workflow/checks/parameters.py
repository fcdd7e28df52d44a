"""What an action that moves things is told to do: every text among its parameters.

The safety rule reads them for AI output, and the question before the action must be able to
show them; both read the same texts, from here.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from ..model import (
    ActionStep,
    AppAction,
    HomeAssistantAction,
    JsonValue,
    SiteModeAction,
    WebhookAction,
)
from ..paths import PathPart
from ..template import placeholders_in

__all__ = ["actuator_reads", "actuator_texts"]


def actuator_reads(
    step: ActionStep, body: tuple[PathPart, ...]
) -> Iterator[tuple[tuple[PathPart, ...], str]]:
    """Each name an actuator's parameters read, once, where it first appears (read by the
    tokenizer the engine fills with, so exactly the values that reach the action)."""
    seen: set[str] = set()
    for where, text in actuator_texts(step, body):
        for name in placeholders_in(text)[0]:
            if name not in seen:
                seen.add(name)
                yield where, name


def actuator_texts(
    step: ActionStep, body: tuple[PathPart, ...]
) -> Iterator[tuple[tuple[PathPart, ...], str]]:
    """Every text an actuator's parameters hold, with its path: names, data and target (a
    webhook the site marked as moving things: its destination and data)."""
    action = step.action
    if isinstance(action, SiteModeAction):
        yield body, action.mode
    elif isinstance(action, AppAction):
        yield (*body, "app"), action.app
        yield (*body, "action"), action.action
        yield from _texts(action.data, (*body, "data"))
    elif isinstance(action, HomeAssistantAction):
        yield (*body, "action"), action.action
        yield from _texts(action.data, (*body, "data"))
        yield from _texts(action.target, (*body, "target"))
    elif isinstance(action, WebhookAction):
        yield (*body, "to"), action.to
        yield from _texts(action.data, (*body, "data"))


def _texts(
    value: JsonValue, parts: tuple[PathPart, ...]
) -> Iterator[tuple[tuple[PathPart, ...], str]]:
    if isinstance(value, str):
        yield parts, value
    elif isinstance(value, tuple):
        for i, item in enumerate(value):
            yield from _texts(item, (*parts, i))
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _texts(item, (*parts, key))
