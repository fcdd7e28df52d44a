"""The trigger index, placeholders, and version round trips."""

from __future__ import annotations

import datetime as dt

from custom_components.opennvr_workflows.engine import NvrEvent
from custom_components.opennvr_workflows.engine.index import TriggerIndex
from custom_components.opennvr_workflows.engine.render import render, render_json
from custom_components.opennvr_workflows.engine.schedule import in_window, next_fire
from custom_components.opennvr_workflows.engine.testing import event
from custom_components.opennvr_workflows.engine.versions import content_hash, dumps, loads
from custom_components.opennvr_workflows.workflow import model as m

from . import workflows as W


def test_index_finds_by_type_role_and_any() -> None:
    index = TriggerIndex()
    index.put("yard_intrusion", m.AlertTrigger(alert_type="intrusion", cameras=("yard",)))
    index.put("any_alert", m.AlertTrigger())
    index.put(
        "gate_plates",
        m.EventTrigger(
            event="plate.recognized.v1", cameras=("gate",), match={"list": ("unknown",)}
        ),
    )
    index.put("loud", m.AlertTrigger(min_severity="high", app="intrusion-app"))

    def ids(e: NvrEvent) -> list[str]:
        return sorted(c.workflow_id for c in index.match(e))

    assert ids(event()) == ["any_alert", "yard_intrusion"]
    assert ids(event(camera_role="porch")) == ["any_alert"]
    assert ids(event(severity="high", app="intrusion-app")) == [
        "any_alert",
        "loud",
        "yard_intrusion",
    ]
    assert ids(event(severity="medium", app="intrusion-app")) == ["any_alert", "yard_intrusion"]
    plate = event(
        "event", type="plate.recognized.v1", camera_role="gate", payload={"list": "unknown"}
    )
    assert ids(plate) == ["gate_plates"]
    assert (
        ids(
            event(
                "event",
                type="plate.recognized.v1",
                camera_role="gate",
                payload={"list": "residents"},
            )
        )
        == []
    )
    index.remove("any_alert")
    assert ids(event(camera_role="porch")) == []
    assert len(index) == 3


def test_match_role_takes_only_workflows_naming_that_role() -> None:
    index = TriggerIndex()
    index.put("gate_alerts", m.AlertTrigger(cameras=("gate",)))
    index.put("gate_intrusion", m.AlertTrigger(alert_type="intrusion", cameras=("gate",)))
    index.put("gate_loitering", m.AlertTrigger(alert_type="loitering", cameras=("gate",)))
    index.put("any_alert", m.AlertTrigger())
    index.put("any_intrusion", m.AlertTrigger(alert_type="intrusion"))

    def ids(e: NvrEvent) -> list[str]:
        return sorted(c.workflow_id for c in index.match_role(e))

    assert ids(event(camera_role="gate")) == ["gate_alerts", "gate_intrusion"]
    assert ids(event(camera_role="porch")) == []
    assert ids(event(camera_role=None)) == []


def test_an_event_match_on_label_reads_a_detection_frames_track_labels() -> None:
    """OpenNVR's detection.observed.v1 on NATS lists tracks, each with its label, and no
    top-level label: ``match: {label: [...]}`` must still find the parcel in it."""
    index = TriggerIndex()
    index.put(
        "parcel",
        m.EventTrigger(event="detection.observed.v1", match={"label": ("package",)}),
    )

    def ids(**kwargs: object) -> list[str]:
        e = event("event", type="detection.observed.v1", **kwargs)  # type: ignore[arg-type]
        return [c.workflow_id for c in index.match(e)]

    assert ids(labels=frozenset({"person", "package"}), payload={"tracks": []}) == ["parcel"]
    assert ids(labels=frozenset({"person"}), payload={"tracks": []}) == []
    assert ids(payload={"label": "package"}) == ["parcel"]
    # A top-level label decides when there is one.
    assert ids(labels=frozenset({"package"}), payload={"label": "person"}) == []


def test_render_keeps_unknown_placeholders() -> None:
    assert render("{camera}: {who}", {"camera": "yard"}) == "yard: {who}"
    assert render_json({"a": ["{x}", 1]}, {"x": "y"}) == {"a": ["y", 1]}


def test_versions_round_trip_every_step_kind() -> None:
    for wf in (W.gate(), W.ask_flood(), W.daily(dt.time(7, 0)), W.echo("x")):
        text = dumps(wf)
        assert loads(text) == wf
        assert content_hash(text) == content_hash(dumps(loads(text)))
    assert content_hash(dumps(W.gate())) != content_hash(dumps(W.ask_flood()))


def test_next_fire_and_windows() -> None:
    tz = dt.UTC
    trig = m.ScheduleTrigger(at=(dt.time(7, 0), dt.time(19, 0)), days=("mon",))
    monday = dt.datetime(2026, 1, 5, 8, 0, tzinfo=tz)
    assert next_fire(trig, monday) == dt.datetime(2026, 1, 5, 19, 0, tzinfo=tz)
    assert next_fire(trig, monday.replace(hour=20)) == dt.datetime(2026, 1, 12, 7, 0, tzinfo=tz)
    every = m.ScheduleTrigger(every_s=900)
    assert next_fire(every, monday) == monday + dt.timedelta(minutes=15)
    night = m.TimeCondition(start=dt.time(22, 0), end=dt.time(6, 0), days=("fri",))
    saturday_2am = dt.datetime(2026, 1, 10, 2, 0, tzinfo=tz)  # the window began Friday
    assert in_window(night, saturday_2am)
    assert not in_window(night, saturday_2am.replace(hour=12))
    assert not in_window(night, dt.datetime(2026, 1, 11, 2, 0, tzinfo=tz))
