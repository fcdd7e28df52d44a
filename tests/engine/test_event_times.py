"""An event's time as a run writes it: its trigger record and its ``time`` and ``date``
values, worked out from one ISO string per event."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from custom_components.opennvr_workflows.engine.events import NvrEvent
from custom_components.opennvr_workflows.engine.steps import event_values, to_seconds

#: Aware times with any offset the standard library accepts (to the microsecond).
_OFFSETS = st.timedeltas(
    min_value=timedelta(hours=-23, minutes=-59), max_value=timedelta(hours=23, minutes=59)
).map(timezone)
_TIMES = st.datetimes(
    min_value=datetime(1971, 1, 1), max_value=datetime(2200, 1, 1), timezones=_OFFSETS
)


@given(_TIMES)
def test_the_seconds_form_is_what_isoformat_writes(when: datetime) -> None:
    assert to_seconds(when.isoformat()) == when.isoformat(timespec="seconds")


@given(_TIMES)
def test_a_runs_time_values_are_the_events(when: datetime) -> None:
    ev = NvrEvent(kind="alert", source="websocket", time=when, type="intrusion")
    values = event_values(ev)
    assert values["time"] == when.isoformat(timespec="seconds")
    assert ev.summary()["time"] == when.isoformat()
    assert ev.iso_time()[:10] == when.date().isoformat()


def test_a_copy_with_another_time_writes_its_own() -> None:
    """The ISO string is kept with the event; a copy made with another time (as the
    engine's ``replace`` does) must not carry the first one's."""
    ev = NvrEvent(kind="alert", source="websocket", time=datetime(2026, 1, 1, 8, tzinfo=UTC))
    assert ev.iso_time() == "2026-01-01T08:00:00+00:00"
    later = dataclasses.replace(ev, time=datetime(2026, 1, 2, 9, 30, 0, 5, tzinfo=UTC))
    assert later.iso_time() == "2026-01-02T09:30:00.000005+00:00"
    assert event_values(later)["time"] == "2026-01-02T09:30:00+00:00"
    assert later == dataclasses.replace(later)  # the kept string takes no part in equality
