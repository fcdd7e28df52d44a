"""What every event source is, and the two things they share: backoff and delivery."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Callable, Coroutine
from typing import Any, Protocol

from ...engine.events import NvrEvent
from ..hub import EventHub
from ..normalize import MalformedPayload

#: Starts a background task; Home Assistant's ``hass.async_create_background_task`` fits,
#: so the task is cancelled at shutdown. Defaults to ``asyncio.create_task``.
TaskFactory = Callable[[Coroutine[Any, Any, None], str], asyncio.Task[None]]

_LOGGER = logging.getLogger(__name__)

DEFAULT_MIN_BACKOFF = 1.0
DEFAULT_MAX_BACKOFF = 60.0
#: How long a connection test may take before the broker counts as unreachable.
TEST_TIMEOUT = 10.0


class TransportTestError(Exception):
    """A transport test failed; ``key`` is the config flow's error translation key:
    nats_cannot_connect, nats_auth, mqtt_cannot_connect, mqtt_auth, mqtt_not_set_up."""

    def __init__(self, key: str, detail: str = "") -> None:
        super().__init__(detail or key)
        self.key = key


class EventSource(Protocol):
    """A transport that feeds the hub. ``start`` returns at once (connecting happens in
    the background and never raises); ``stop`` ends it and leaves nothing running."""

    @property
    def name(self) -> str: ...

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


async def finish_task(task: asyncio.Task[None] | None, grace: float, what: str) -> None:
    """Wait for a source's background task to end by itself (it was told to stop), up to
    ``grace`` seconds; then cancel it. Never raises for the task's own end: a task Home
    Assistant already cancelled at shutdown, or one that failed, is only logged."""
    if task is None:
        return
    if task.done():
        if not task.cancelled() and (err := task.exception()) is not None:
            _LOGGER.error("The %s had ended with an error: %r", what, err)
        return
    try:
        async with asyncio.timeout(grace):
            await asyncio.shield(task)
    except TimeoutError:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    except asyncio.CancelledError:
        if not task.cancelled():
            raise  # the caller itself is being cancelled
    except Exception:
        _LOGGER.exception("The %s ended with an error", what)


def default_task_factory(coro: Coroutine[Any, Any, None], name: str) -> asyncio.Task[None]:
    return asyncio.get_running_loop().create_task(coro, name=name)


class Backoff:
    """Exponential reconnect delays with +/-20 % jitter, so many clients that lost the
    same broker do not all come back in the same instant."""

    def __init__(
        self, minimum: float = DEFAULT_MIN_BACKOFF, maximum: float = DEFAULT_MAX_BACKOFF
    ) -> None:
        if minimum <= 0 or maximum < minimum:
            raise ValueError(f"backoff needs 0 < minimum <= maximum, got {minimum}, {maximum}")
        self.minimum = minimum
        self.maximum = maximum
        self._next = minimum

    def next(self) -> float:
        """The delay before the next attempt; each call doubles the base up to maximum."""
        delay = self._next * random.uniform(0.8, 1.2)
        self._next = min(self._next * 2, self.maximum)
        return delay

    def reset(self) -> None:
        """After a connection that worked: the next failure retries quickly again."""
        self._next = self.minimum


def deliver(hub: EventHub, source: str, produce: Callable[[], list[NvrEvent]]) -> None:
    """Publish what ``produce`` normalises; a malformed payload becomes a counted drop.

    Never raises: an unexpected error in normalising is a drop too, of kind "error", so
    one bad message cannot stop a subscription.
    """
    try:
        events = produce()
    except MalformedPayload as err:
        hub.drop(source, err.kind, err.detail)
        return
    except Exception as err:  # the boundary: a source must keep running
        hub.drop(source, "error", f"{type(err).__name__}: {err}")
        return
    for event in events:
        hub.publish(event)


def deliver_tracked(
    hub: EventHub, source: str, produce: Callable[[], list[NvrEvent]]
) -> asyncio.Future[None] | None:
    """:func:`deliver` for a source that acknowledges: returns what to wait on before the
    message may be acknowledged (see :meth:`EventHub.publish_tracked`), or None when
    nothing is left to wait for. A malformed payload is a counted drop and needs no
    waiting: a redelivered copy would be just as malformed."""
    try:
        events = produce()
    except MalformedPayload as err:
        hub.drop(source, err.kind, err.detail)
        return None
    except Exception as err:  # the boundary: a source must keep running
        hub.drop(source, "error", f"{type(err).__name__}: {err}")
        return None
    waits = [w for event in events if (w := hub.publish_tracked(event)) is not None]
    if not waits:
        return None
    if len(waits) == 1:
        return waits[0]
    combined: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    gathered = asyncio.gather(*waits)

    def _done(fut: asyncio.Future[list[None]]) -> None:
        if fut.cancelled():
            combined.cancel()
        elif (err := fut.exception()) is not None:
            combined.set_exception(err)
        else:
            combined.set_result(None)

    gathered.add_done_callback(_done)
    return combined
