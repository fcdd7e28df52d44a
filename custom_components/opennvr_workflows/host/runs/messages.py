"""A message to the assistant: start the workflows whose trigger is a message, and wait
(bounded) for what they reply.

The spec makes an investigation started from chat a workflow whose trigger is a message;
its ``reply`` action answers in the conversation (the ``opennvr_workflows_reply`` event,
:data:`..effects.port.EVENT_REPLY`). Assist asks and then has to say something within a
conversation turn, so :func:`ask_workflows` starts every loaded message workflow the
message fits (each one's ``contains`` words, state and limits apply, as for the
``run_workflow`` action) and collects the replies of those runs until each has ended or
is waiting for a person's answer, or until ``wait_s`` has passed. What is still going then
keeps going; its later replies go out as events as always.

A workflow in Test does not reply (nothing leaves a Test run): what it would have replied
is read from the run's steps, so a person trying a workflow out hears it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from homeassistant.core import Context, Event, HomeAssistant, callback

from ...engine import EngineUpdate, UnknownRunError, UnknownWorkflowError
from ...workflow.model import MessageTrigger
from ..effects.port import EVENT_REPLY
from ..workflows import WorkflowHost
from .ai_mark import start_mark
from .view import steps_view

_LOGGER = logging.getLogger(__name__)

#: How long Assist waits for the runs' replies before saying they are still working.
REPLY_WAIT_S: Final = 30.0


@dataclass(slots=True)
class Reply:
    """One reply a run gave (or, in Test, would have given)."""

    workflow: str
    message: str
    test: bool = False


@dataclass(slots=True)
class MessageOutcome:
    """What became of one message."""

    #: the replies, in the order they came (Test runs' after the others)
    replies: list[Reply] = field(default_factory=list)
    #: workflow names of the runs the message started (or joined)
    started: list[str] = field(default_factory=list)
    #: workflow names of runs still going when the wait ended
    working: list[str] = field(default_factory=list)
    #: workflow names of runs waiting for a person's answer
    asking: list[str] = field(default_factory=list)
    #: workflow name -> why it did not start (its state, a limit), when the words fit
    not_started: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class _Runs:
    """What the bus and the engine said about runs while the message was out."""

    names: dict[str, str] = field(default_factory=dict)
    replies: list[tuple[str, str]] = field(default_factory=list)
    ended: set[str] = field(default_factory=set)
    asking: set[str] = field(default_factory=set)
    settled: asyncio.Event = field(default_factory=asyncio.Event)

    def check(self) -> None:
        if self.names and all(r in self.ended or r in self.asking for r in self.names):
            self.settled.set()


def message_workflows(host: WorkflowHost, message: str | None = None) -> list[tuple[str, str]]:
    """(workflow id, name) of the loaded workflows whose trigger is a message (that
    ``message`` fits, when given)."""
    return [
        (workflow_id, loaded.workflow.name)
        for workflow_id, loaded in sorted(host.files.items())
        if loaded.workflow is not None
        and isinstance(loaded.workflow.when, MessageTrigger)
        and (message is None or fits(loaded.workflow.when, message))
    ]


def fits(trigger: MessageTrigger, message: str) -> bool:
    """Whether ``message`` has one of the trigger's words (any case), as the engine
    matches a message; asked here first so a workflow that is Off is said to be off only
    for a message it would have taken."""
    text = message.casefold()
    return not trigger.contains or any(word.casefold() in text for word in trigger.contains)


async def ask_workflows(
    hass: HomeAssistant,
    host: WorkflowHost,
    message: str,
    user: str | None,
    *,
    wait_s: float = REPLY_WAIT_S,
    may_start: Callable[[str], bool] | None = None,
    context: Context | None = None,
) -> MessageOutcome:
    """Start the message workflows ``message`` fits, as ``user`` (a name, the runs'
    ``{user}``), and collect their replies (see the module docstring). ``may_start``
    says which workflows the person may start (their door, :mod:`..permissions`);
    ``context`` is the message's, whose lineage may mark the runs as AI-derived (a
    message an automation sent on from AI output, :func:`.ai_mark.start_mark`)."""
    outcome = MessageOutcome()
    runs = _Runs()
    unsubscribe = _listen(hass, host, runs)
    try:
        for workflow_id, name in message_workflows(host, message):
            if may_start is not None and not may_start(workflow_id):
                continue
            mark = start_mark(host, workflow_id, context)
            try:
                started = host.engine.start_now(
                    workflow_id,
                    {},
                    message=message,
                    user=user,
                    chain=mark.chain,
                    ai_derived=mark.ai_derived,
                    ai_origin=mark.ai_origin,
                )
            except UnknownWorkflowError:
                continue  # removed from the engine since the folder was read
            if started.run_ids:
                outcome.started.append(name)
                runs.names.update(dict.fromkeys(started.run_ids, name))
            elif started.reason is not None and started.reason != "no_match":
                outcome.not_started[name] = started.reason
        runs.check()
        if runs.names:
            try:
                async with asyncio.timeout(wait_s):
                    await runs.settled.wait()
            except TimeoutError:
                _LOGGER.debug("Message runs still going after %.0f s: %s", wait_s, runs.names)
    finally:
        unsubscribe()
    outcome.replies = [Reply(runs.names[r], text) for r, text in runs.replies]
    for run_id, name in runs.names.items():
        if run_id in runs.ended:
            outcome.replies.extend(await _test_replies(host, run_id, name))
        elif run_id in runs.asking:
            outcome.asking.append(name)
        else:
            outcome.working.append(name)
    return outcome


def _listen(hass: HomeAssistant, host: WorkflowHost, runs: _Runs) -> Callable[[], None]:
    """Record replies, ends and questions of every run (filtered to the message's runs
    when read: the runs start after the listeners are in place, never before)."""

    @callback
    def on_reply(event: Event) -> None:
        run_id = event.data.get("run_id")
        if run_id in runs.names:
            runs.replies.append((run_id, str(event.data.get("message", ""))))

    @callback
    def on_update(update: EngineUpdate) -> None:
        if update.run_id is None or update.run_id not in runs.names:
            return
        if update.kind == "run_ended":
            runs.ended.add(update.run_id)
        elif update.kind == "approval_opened":
            runs.asking.add(update.run_id)
        runs.check()

    off_bus = hass.bus.async_listen(EVENT_REPLY, on_reply)
    off_engine = host.engine.subscribe(on_update)

    def unsubscribe() -> None:
        off_bus()
        off_engine()

    return unsubscribe


async def _test_replies(host: WorkflowHost, run_id: str, name: str) -> list[Reply]:
    """What a Test run would have replied, from its recorded steps."""
    try:
        detail = await host.engine.run_detail(run_id)
    except UnknownRunError:
        return []
    if not detail.get("test"):
        return []
    return [
        Reply(name, str(step["request"].get("message", "")), test=True)
        for step in steps_view(detail)
        if step.get("kind") == "reply"
        and step.get("status") == "would_have"
        and isinstance(step.get("request"), dict)
    ]
