"""Acknowledging messages in the order they arrived, each only once it is durable.

A websocket position (``seq``) and an MQTT QoS 1 stream are both ordered: acknowledging
``seq`` 12 says 1 to 12 are safe, and MQTT wants PUBACKs in the order the PUBLISHes came.
Dispatches finish out of order (the engine commits them in groups), so this keeps the
messages in arrival order and acknowledges the longest prefix that is durable.

After a failure nothing further is acknowledged until :meth:`InOrderAcks.reset` (the
source reconnects, and the broker or the server sends everything from the failed message
on again): acknowledging a later message would skip the failed one for good.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

_PENDING = 0
_DONE = 1
_FAILED = 2


@dataclass(slots=True)
class _Entry[T]:
    token: T
    state: int
    error: BaseException | None = None


class InOrderAcks[T]:
    """Calls ``ack(token)`` in arrival order for each message once it and all before it
    are durable; ``on_failure(token, error)`` once for the first that could not be."""

    def __init__(
        self,
        ack: Callable[[T], None],
        on_failure: Callable[[T, BaseException], None],
    ) -> None:
        self._ack = ack
        self._on_failure = on_failure
        self._entries: deque[_Entry[T]] = deque()
        self._broken = False
        self._generation = 0

    @property
    def pending(self) -> int:
        """Messages received and not yet acknowledged."""
        return len(self._entries)

    @property
    def broken(self) -> bool:
        """Whether a message failed since the last :meth:`reset`."""
        return self._broken

    def add(self, token: T, durable: asyncio.Future[None] | None) -> None:
        """A message arrived; ``durable`` resolves once it is durable (None: it already is)."""
        if self._broken:
            return  # it will come again after the reconnect
        entry = _Entry(token, _DONE if durable is None else _PENDING)
        self._entries.append(entry)
        if durable is None:
            self._drain()
            return
        generation = self._generation

        def _settled(fut: asyncio.Future[None]) -> None:
            if generation != self._generation:
                return  # from before a reset: the message is being sent again
            if fut.cancelled():
                entry.error = asyncio.CancelledError()
            else:
                entry.error = fut.exception()
            entry.state = _DONE if entry.error is None else _FAILED
            self._drain()

        durable.add_done_callback(_settled)

    def reset(self) -> None:
        """Forget every unacknowledged message (they will be sent again) and start over."""
        self._entries.clear()
        self._broken = False
        self._generation += 1

    def _drain(self) -> None:
        while self._entries and not self._broken:
            head = self._entries[0]
            if head.state == _PENDING:
                return
            if head.state == _FAILED:
                self._broken = True
                self._entries.clear()
                self._on_failure(head.token, head.error or RuntimeError("not durable"))
                return
            self._entries.popleft()
            self._ack(head.token)
