"""``opennvr_workflows/workflows/subscribe``: what keeps the panel current without polling.

Every :class:`..engine.EngineUpdate` (a run started, waited, ended, was marked; a question
opened or closed; a state changed) is sent as it happens, a ``workflows`` event when
the host's folder or a state changed, and an ``approvals`` event when the host's
questions changed (one is ready to answer, or closed: the engine's ``approval_opened``
comes before the question is delivered), so the panel and the card reload only what an
event names.

Each connection hears only what its user may see (:mod:`..host.read_scope`): an admin
everything; anyone else, in the order it happened, the updates of workflows that name only
cameras they may see and of runs that touched only such cameras, each decided when it is
sent (a run's cameras only grow, so a run once hidden stays hidden). The ``workflows`` and
``approvals`` events say only that something changed, and reach everyone.

The subscription follows the entries: one loaded after it started (set up late, reloaded
after an options change, re-enabled) is followed from then on, with a ``workflows`` event
so the panel reloads its list; one unloaded is let go, and said the same way.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import Any

import probatio as vol
from homeassistant.components import websocket_api
from homeassistant.config_entries import (
    SIGNAL_CONFIG_ENTRY_CHANGED,
    ConfigEntry,
    ConfigEntryChange,
    ConfigEntryState,
)
from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers.dispatcher import async_dispatcher_connect

from ..const import DOMAIN
from ..engine import EngineUpdate
from ..host.permissions import Caller
from ..host.read_scope import may_see_workflow, visible_run
from ..host.workflows import WorkflowHost
from .hosts import loaded_hosts

Send = Callable[[dict[str, Any]], None]
#: What an update carries for the host only: a held event's chain names runs of other
#: workflows (the host's logbook line descends from it, :mod:`..host.runs.held`).
_HOST_ONLY = frozenset({"chain"})


class _Gate:
    """What one connection hears (see the module docstring)."""

    def __init__(self, hass: HomeAssistant, caller: Caller, send: Send) -> None:
        self._hass = hass
        self._caller = caller
        self._send = send
        self._queue: deque[tuple[WorkflowHost | None, EngineUpdate | None, dict[str, Any]]] = (
            deque()
        )
        self._task: asyncio.Task[None] | None = None
        self._hidden: set[str] = set()

    @callback
    def offer(
        self, host: WorkflowHost | None, update: EngineUpdate | None, message: dict[str, Any]
    ) -> None:
        """Send ``message`` (about ``update`` of ``host``, None: about nothing) if the
        user may see what it is about, after everything offered before it."""
        if self._caller.is_admin:
            self._send(message)
            return
        self._queue.append((host, update, message))
        if self._task is None or self._task.done():
            self._task = self._hass.async_create_task(
                self._drain(), "opennvr_workflows live feed", eager_start=False
            )

    def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
        self._queue.clear()

    async def _drain(self) -> None:
        while self._queue:
            host, update, message = self._queue.popleft()
            if host is None or update is None or await self._shows(host, update):
                self._send(message)

    async def _shows(self, host: WorkflowHost, update: EngineUpdate) -> bool:
        loaded = host.files.get(update.workflow_id)
        if not may_see_workflow(self._caller, host, loaded.workflow if loaded else None):
            return False
        run_id = update.run_id
        if run_id is None:
            return True
        if run_id in self._hidden:
            return False
        if await visible_run(self._caller, host, run_id) is None:
            self._hidden.add(run_id)
            return False
        return True


class _Followed:
    """The hosts one subscription listens to, by entry id, with how to stop each."""

    def __init__(self, gate: _Gate) -> None:
        self._gate = gate
        self._hosts: dict[str, tuple[WorkflowHost, list[Callable[[], None]]]] = {}

    def follow(self, host: WorkflowHost) -> bool:
        """Listen to ``host`` (replacing an earlier host of its entry); False when it
        is followed already."""
        held = self._hosts.get(host.entry_id)
        if held is not None and held[0] is host:
            return False
        self.drop(host.entry_id)
        entry_id = host.entry_id
        gate = self._gate

        def on_update(update: EngineUpdate) -> None:
            gate.offer(
                host,
                update,
                {
                    "entry_id": entry_id,
                    "kind": update.kind,
                    "workflow_id": update.workflow_id,
                    "run_id": update.run_id,
                    "detail": {
                        k: v for k, v in (update.detail or {}).items() if k not in _HOST_ONLY
                    },
                },
            )

        def on_change() -> None:
            gate.offer(None, None, {"entry_id": entry_id, "kind": "workflows"})

        def on_questions() -> None:
            gate.offer(None, None, {"entry_id": entry_id, "kind": "approvals"})

        stops = [
            host.engine.subscribe(on_update),
            host.subscribe(on_change),
            host.desk.subscribe(on_questions),
        ]
        self._hosts[entry_id] = (host, stops)
        return True

    def drop(self, entry_id: str) -> bool:
        """Stop listening to the entry's host; False when none was followed."""
        held = self._hosts.pop(entry_id, None)
        if held is None:
            return False
        for stop in held[1]:
            stop()
        return True

    def close(self) -> None:
        for entry_id in list(self._hosts):
            self.drop(entry_id)


@websocket_api.websocket_command({vol.Required("type"): f"{DOMAIN}/workflows/subscribe"})
@callback
def ws_subscribe(
    hass: HomeAssistant, connection: websocket_api.ActiveConnection, msg: dict[str, Any]
) -> None:
    msg_id = msg["id"]

    @callback
    def send(event: dict[str, Any]) -> None:
        connection.send_message(websocket_api.event_message(msg_id, event))

    gate = _Gate(hass, Caller(connection.user), send)
    followed = _Followed(gate)
    for host in loaded_hosts(hass):
        followed.follow(host)

    @callback
    def on_entry(change: ConfigEntryChange, entry: ConfigEntry) -> None:
        if entry.domain != DOMAIN:
            return
        host = getattr(getattr(entry, "runtime_data", None), "workflows", None)
        if entry.state is ConfigEntryState.LOADED and change is not ConfigEntryChange.REMOVED:
            changed = isinstance(host, WorkflowHost) and followed.follow(host)
        else:
            changed = followed.drop(entry.entry_id)
        if changed:
            gate.offer(None, None, {"entry_id": entry.entry_id, "kind": "workflows"})

    stop_entries = async_dispatcher_connect(hass, SIGNAL_CONFIG_ENTRY_CHANGED, on_entry)

    @callback
    def unsubscribe() -> None:
        stop_entries()
        followed.close()
        gate.close()

    connection.subscriptions[msg_id] = unsubscribe
    connection.send_result(msg_id)
