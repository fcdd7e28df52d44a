"""The engine's clocks: the timestamp a row holds is the one the ``datetime`` would give."""

from __future__ import annotations

from datetime import UTC, datetime

from custom_components.opennvr_workflows.engine.ports import SiteClock, SystemClock
from custom_components.opennvr_workflows.engine.testing import ManualClock


def test_the_system_clocks_timestamp_is_nows_to_the_microsecond() -> None:
    """``now_ts`` skips building a ``datetime``; its value must still be what
    ``now().timestamp()`` holds: taken between two of them, and whole microseconds (a
    value finer than that would not survive the trip through a ``datetime``, and the
    engine compares stored timestamps with ``datetime``s)."""
    clock = SystemClock()
    for _ in range(1000):
        before = clock.now().timestamp()
        ts = clock.now_ts()
        after = clock.now().timestamp()
        assert before <= ts <= after
        assert datetime.fromtimestamp(ts, UTC).timestamp() == ts


def test_a_manual_clocks_timestamp_moves_with_it() -> None:
    clock = ManualClock(datetime(2026, 3, 1, 8, 30, 0, 250_001, tzinfo=UTC))
    site = SiteClock(clock, UTC)
    assert site.now_ts() == clock.now().timestamp()
    clock.set(datetime(2026, 3, 2, 8, 30, tzinfo=UTC))
    assert site.now_ts() == datetime(2026, 3, 2, 8, 30, tzinfo=UTC).timestamp()
