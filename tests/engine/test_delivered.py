"""The alerts that started runs recently (a redelivered alert joins its run): bounded by
age and by count, the oldest dropped first."""

from __future__ import annotations

import pytest

from custom_components.opennvr_workflows.engine import admission
from custom_components.opennvr_workflows.engine.admission import DELIVERED_WINDOW_S, Delivered
from custom_components.opennvr_workflows.engine.testing import event

T0 = 1_800_000_000.0


def test_an_alert_delivered_again_finds_its_run() -> None:
    seen = Delivered()
    seen.add("w", event(alert_id="a1"), "run-1", T0)
    assert seen.run_of("w", event(alert_id="a1")) == "run-1"
    assert seen.run_of("other", event(alert_id="a1")) is None
    assert seen.run_of("w", event(alert_id="a1", source="engine")) is None


def test_the_oldest_go_first_past_the_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(admission, "DELIVERED_MAX", 3)
    seen = Delivered()
    for n in range(5):
        seen.add("w", event(alert_id=f"a{n}"), f"run-{n}", T0 + n)
    assert len(seen) == 3
    assert [seen.run_of("w", event(alert_id=f"a{n}")) for n in range(5)] == [
        None,
        None,
        "run-2",
        "run-3",
        "run-4",
    ]


def test_past_the_window_they_go_at_the_next_add() -> None:
    seen = Delivered()
    seen.restore([("w", "old", "run-old", T0), ("w", "mid", "run-mid", T0 + 10)])
    seen.add("w", event(alert_id="a1"), "run-1", T0 + 20)
    assert len(seen) == 3
    seen.add("w", event(alert_id="a2"), "run-2", T0 + DELIVERED_WINDOW_S + 5)
    assert seen.run_of("w", event(alert_id="old")) is None
    assert seen.run_of("w", event(alert_id="mid")) == "run-mid"
    seen.add("w", event(alert_id="a3"), "run-3", T0 + 2 * DELIVERED_WINDOW_S + 30)
    assert len(seen) == 1
    assert seen.run_of("w", event(alert_id="a3")) == "run-3"


def test_emptied_by_age_it_starts_over() -> None:
    seen = Delivered()
    seen.add("w", event(alert_id="a1"), "run-1", T0)
    seen.add("w", event(alert_id="a2"), "run-2", T0 + 3 * DELIVERED_WINDOW_S)
    assert len(seen) == 1
    seen.forget("run-2")
    assert len(seen) == 0
    seen.add("w", event(alert_id="a3"), "run-3", T0 + 3 * DELIVERED_WINDOW_S + 1)
    seen.add("w", event(alert_id="a4"), "run-4", T0 + 3 * DELIVERED_WINDOW_S + 2)
    assert len(seen) == 2
