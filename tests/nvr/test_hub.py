"""EventHub: deduplication, counters, connected state and its sparse logging."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime

import pytest

from custom_components.opennvr_workflows.engine.events import EventSource, NvrEvent
from custom_components.opennvr_workflows.nvr.hub import DeliveryError, EventHub
from custom_components.opennvr_workflows.nvr.normalize import MalformedPayload
from custom_components.opennvr_workflows.nvr.sources.base import Backoff, deliver, finish_task

from .conftest import Collected

HUB_LOGGER = "custom_components.opennvr_workflows.nvr.hub"


def alert(alert_id: str | None, source: EventSource = "websocket") -> NvrEvent:
    return NvrEvent(
        kind="alert", source=source, time=datetime.now(UTC), alert_id=alert_id, camera_id="1"
    )


def test_same_alert_from_two_sources_is_published_once(hub: EventHub, collected: Collected) -> None:
    assert hub.publish(alert("alrt_1", "websocket")) is True
    assert hub.publish(alert("alrt_1", "nats")) is False
    assert hub.publish(alert("alrt_2", "nats")) is True
    assert collected.alert_ids() == ["alrt_1", "alrt_2"]
    assert hub.stats["websocket"].received == 1
    assert hub.stats["nats"].received == 1
    assert hub.stats["nats"].duplicates == 1
    assert hub.stats["nats"].last_event_at is not None


def test_events_without_alert_id_are_never_deduplicated(
    hub: EventHub, collected: Collected
) -> None:
    for _ in range(3):
        assert hub.publish(alert(None))
    assert len(collected) == 3


def test_dedupe_memory_is_bounded() -> None:
    hub = EventHub(dedupe_window=3)
    for n in range(5):
        assert hub.publish(alert(f"alrt_{n}"))
    # The two oldest ids fell out of the window; the newest three are still known.
    assert hub.publish(alert("alrt_0")) is True
    assert hub.publish(alert("alrt_4")) is False
    assert len(hub._seen) == 3


def test_drops_are_counted_per_kind_and_logged_once_per_source_and_kind(
    hub: EventHub, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger=HUB_LOGGER)
    for _ in range(50):
        hub.drop("nats", "alert", "no alert_id")
    hub.drop("nats", "json", "not JSON")
    hub.drop("mqtt", "alert", "no alert_id")
    stats = hub.stats["nats"]
    assert stats.dropped == 51
    assert stats.dropped_by_kind == {"alert": 50, "json": 1}
    assert hub.stats["mqtt"].dropped_by_kind == {"alert": 1}
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert sorted(r.args[:2] for r in warnings) == [  # type: ignore[index]
        ("alert", "mqtt"),
        ("alert", "nats"),
        ("json", "nats"),
    ]


def test_connected_state_logs_once_per_change_and_tells_listeners(
    hub: EventHub, caplog: pytest.LogCaptureFixture
) -> None:
    changes: list[tuple[str, bool]] = []
    unsubscribe = hub.subscribe_state(lambda source, up: changes.append((source, up)))
    caplog.set_level(logging.INFO, logger=HUB_LOGGER)
    assert not hub.connected()
    hub.set_connected("nats", True)
    hub.set_connected("nats", True)
    assert hub.connected()
    assert hub.connected("nats")
    assert not hub.connected("mqtt")
    for _ in range(5):  # retries while down: still one line
        hub.set_connected("nats", False)
    hub.set_connected("nats", True)
    assert changes == [("nats", True), ("nats", False), ("nats", True)]
    levels = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert levels == [
        (
            "INFO",
            "OpenNVR events via nats lost; its entities are unavailable until it reconnects",
        ),
        ("INFO", "OpenNVR events via nats are back"),
    ]
    unsubscribe()
    hub.set_connected("nats", False)
    assert len(changes) == 3


def test_a_source_stopped_on_purpose_is_no_outage(
    hub: EventHub, caplog: pytest.LogCaptureFixture
) -> None:
    changes: list[tuple[str, bool]] = []
    hub.subscribe_state(lambda source, up: changes.append((source, up)))
    caplog.set_level(logging.INFO, logger=HUB_LOGGER)
    hub.set_connected("websocket", True)
    hub.set_stopped("websocket")
    hub.set_stopped("websocket")
    hub.set_connected("websocket", False)  # a late report from the stopping transport
    assert not hub.connected("websocket")
    assert changes == [("websocket", True), ("websocket", False)]
    # Started again: a fresh connection, not a comeback; a real loss after it is still logged.
    hub.set_connected("websocket", True)
    hub.set_connected("websocket", False)
    levels = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert levels == [
        (
            "INFO",
            "OpenNVR events via websocket lost; its entities are unavailable until it reconnects",
        )
    ]
    hub.set_stopped("mqtt")  # never connected: registered, nothing to tell
    assert "mqtt" in hub.stats
    assert len(changes) == 4


def test_a_failing_listener_does_not_stop_the_others(
    hub: EventHub, collected: Collected, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(event: NvrEvent) -> None:
        raise RuntimeError("boom")

    hub.subscribe(broken)
    later = Collected()
    unsubscribe = hub.subscribe(later.append)
    assert hub.publish(alert("alrt_x"))
    assert len(collected) == len(later) == 1
    assert "Event listener failed" in caplog.text
    unsubscribe()
    hub.publish(alert("alrt_y"))
    assert len(later) == 1
    assert len(collected) == 2


def test_registered_sources_show_zero_counters(hub: EventHub) -> None:
    hub.register("mqtt")
    stats = hub.stats["mqtt"]
    assert (stats.received, stats.dropped, stats.connected) == (0, 0, False)
    with pytest.raises(TypeError):
        hub.stats["x"] = stats  # type: ignore[index]


def test_deliver_publishes_and_turns_errors_into_drops(hub: EventHub, collected: Collected) -> None:
    deliver(hub, "mqtt", lambda: [alert("alrt_d", "mqtt")])

    def bad() -> list[NvrEvent]:
        raise MalformedPayload("cloudevent", "no data")

    def buggy() -> list[NvrEvent]:
        raise KeyError("surprise")

    deliver(hub, "mqtt", bad)
    deliver(hub, "mqtt", buggy)
    assert collected.alert_ids() == ["alrt_d"]
    assert hub.stats["mqtt"].dropped_by_kind == {"cloudevent": 1, "error": 1}


def test_backoff_grows_with_jitter_and_resets() -> None:
    backoff = Backoff(1.0, 8.0)
    delays = [backoff.next() for _ in range(6)]
    bases = [1, 2, 4, 8, 8, 8]
    for delay, base in zip(delays, bases, strict=True):
        assert 0.8 * base <= delay <= 1.2 * base
    # Jitter: not every delay sits exactly on its base.
    assert any(delay != base for delay, base in zip(delays, bases, strict=True))
    backoff.reset()
    assert 0.8 <= backoff.next() <= 1.2
    with pytest.raises(ValueError, match="backoff"):
        Backoff(0, 1)


async def test_finish_task_waits_then_cancels_and_never_raises_for_the_task(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def ends_soon() -> None:
        await asyncio.sleep(0.01)

    async def hangs() -> None:
        await asyncio.sleep(3600)

    async def fails() -> None:
        raise RuntimeError("broken")

    done = asyncio.create_task(ends_soon())
    await finish_task(done, 5, "quick task")
    assert done.done()
    assert not done.cancelled()

    stuck = asyncio.create_task(hangs())
    await finish_task(stuck, 0.05, "stuck task")
    assert stuck.cancelled()

    cancelled_elsewhere = asyncio.create_task(hangs())
    await asyncio.sleep(0)
    cancelled_elsewhere.cancel()
    await finish_task(cancelled_elsewhere, 5, "task cancelled at shutdown")

    failing = asyncio.create_task(fails())
    await finish_task(failing, 5, "failing task")
    finished_failing = asyncio.create_task(fails())
    await asyncio.sleep(0.01)
    await finish_task(finished_failing, 5, "failed task")
    assert "The failing task ended with an error" in caplog.text
    assert "The failed task had ended with an error" in caplog.text
    await finish_task(None, 5, "nothing")


async def test_a_consumer_that_returns_a_future_is_waited_on_without_a_task() -> None:
    """The engine hands the hub a future of its own (no task per event): a tracked
    publication resolves with it, a copy that arrives meanwhile waits on the first, and
    the hub starts no task of its own for it."""
    hub = EventHub()
    loop = asyncio.get_running_loop()
    pending: list[asyncio.Future[None]] = []

    def durable(event: NvrEvent) -> asyncio.Future[None]:
        pending.append(loop.create_future())
        return pending[-1]

    hub.subscribe_durable(durable)
    tasks_before = len(asyncio.all_tasks())
    first = hub.publish_tracked(alert("a1", "nats"))
    copy = hub.publish_tracked(alert("a1", "mqtt"))
    assert first is not None
    assert copy is not None
    assert len(asyncio.all_tasks()) == tasks_before
    await asyncio.sleep(0)
    assert not first.done()
    assert not copy.done()
    pending[0].set_result(None)
    await first
    await copy
    assert len(pending) == 1  # the copy was a duplicate, never offered


async def test_a_consumer_future_that_fails_leaves_the_alert_to_be_delivered_again() -> None:
    hub = EventHub()
    loop = asyncio.get_running_loop()
    outcomes: list[asyncio.Future[None]] = []

    def durable(event: NvrEvent) -> asyncio.Future[None]:
        outcomes.append(loop.create_future())
        return outcomes[-1]

    hub.subscribe_durable(durable)
    waiting = hub.publish_tracked(alert("a1", "nats"))
    assert waiting is not None
    outcomes[0].set_exception(OSError("disk I/O error"))
    with pytest.raises(DeliveryError, match="disk I/O error"):
        await waiting
    assert hub.stats["nats"].failed == 1
    # Not durable, so not remembered as seen: the redelivered copy is offered again.
    again = hub.publish_tracked(alert("a1", "nats"))
    assert again is not None
    assert len(outcomes) == 2
    outcomes[1].set_result(None)
    await again


async def test_a_consumer_durable_at_once_or_raising_at_once() -> None:
    """None from the consumer: durable already, nothing to wait for. A consumer that raises
    as it is called fails the publication as a failed commit would."""
    hub = EventHub()
    hub.subscribe_durable(lambda event: None)
    assert hub.publish_tracked(alert("a1", "nats")) is None

    broken = EventHub()

    def raising(event: NvrEvent) -> None:
        raise RuntimeError("the engine is not started")

    broken.subscribe_durable(raising)
    waiting = broken.publish_tracked(alert("a2", "nats"))
    assert waiting is not None
    with pytest.raises(DeliveryError, match="not started"):
        await waiting


async def test_a_future_consumer_and_a_coroutine_consumer_are_both_waited_for() -> None:
    hub = EventHub()
    loop = asyncio.get_running_loop()
    engine_side: asyncio.Future[None] = loop.create_future()
    committed = asyncio.Event()

    async def other(event: NvrEvent) -> None:
        await committed.wait()

    hub.subscribe_durable(lambda event: engine_side)
    hub.subscribe_durable(other)
    waiting = hub.publish_tracked(alert("a1", "nats"))
    assert waiting is not None
    engine_side.set_result(None)
    await asyncio.sleep(0)
    assert not waiting.done()  # the coroutine consumer has not committed yet
    committed.set()
    await waiting
