"""The trigger index, placeholders, and version round trips.

The index is checked against a reference written apart from it: :func:`fits` says from the
trigger model alone (every field of every trigger kind, camera lists or any camera) whether an
event starts a workflow, and :func:`expected` orders the answers as the index promises. Random
sites (small pools of roles, types, apps and values, so that triggers collide) are filed,
changed and emptied while random events are matched against both.
"""

from __future__ import annotations

import datetime as dt
import math
import random
from collections.abc import Mapping
from datetime import UTC, datetime
from types import MappingProxyType

import pytest

from custom_components.opennvr_workflows.engine import NvrEvent
from custom_components.opennvr_workflows.engine import index as index_module
from custom_components.opennvr_workflows.engine.events import zone_key
from custom_components.opennvr_workflows.engine.index import Candidate, TriggerIndex
from custom_components.opennvr_workflows.engine.ports import SEVERITIES
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


# ── the reference ──────────────────────────────────────────────────────────────────────────


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _field_fits(e: NvrEvent, name: str, allowed: tuple[str, ...]) -> bool:
    """One ``match`` field: the payload's value, or (no such field) any track's label."""
    value = e.payload.get(name)
    if value is not None:
        return str(value) in allowed
    return name == "label" and any(label in allowed for label in e.labels)


def _on_camera(cameras: tuple[str, ...], e: NvrEvent) -> bool:
    return not cameras or e.camera_role in cameras


def fits(workflow_id: str, trigger: m.Trigger, e: NvrEvent) -> bool:
    """Does ``e`` start ``workflow_id``? From the trigger model's own words."""
    match trigger:
        case m.AlertTrigger():
            return (
                e.kind == "alert"
                and trigger.alert_type in (None, e.type)
                and _on_camera(trigger.cameras, e)
                and trigger.app in (None, e.app)
                and (
                    trigger.min_severity is None
                    or (
                        e.severity in SEVERITIES
                        and SEVERITIES.index(e.severity) >= SEVERITIES.index(trigger.min_severity)
                    )
                )
            )
        case m.EventTrigger():
            return (
                e.kind == "event"
                and e.type == trigger.event
                and _on_camera(trigger.cameras, e)
                and all(_field_fits(e, name, allowed) for name, allowed in trigger.match.items())
            )
        case m.CameraOfflineTrigger():
            return e.kind == "camera_offline" and _on_camera(trigger.cameras, e)
        case m.ButtonTrigger():
            return e.kind == "button" and e.type == workflow_id
        case m.MessageTrigger():
            text = str(e.payload.get("message", "")).casefold()
            return (
                e.kind == "message"
                and e.type in (None, workflow_id)
                and (not trigger.contains or any(w.casefold() in text for w in trigger.contains))
            )
        case m.PersonInZoneTrigger():
            seconds = _number(e.payload.get("seconds"))
            threshold = _number(e.payload.get("threshold"))
            return (
                e.kind == "person_in_zone"
                and _on_camera(trigger.cameras, e)
                and e.type == (None if trigger.zone is None else zone_key(trigger.zone))
                and "person" in e.labels
                and seconds is not None
                and seconds >= trigger.min_s
                and (threshold is None or math.isclose(threshold, trigger.min_s, abs_tol=1e-6))
            )
        case _:
            return False


def _typed(workflow_id: str, trigger: m.Trigger) -> str | None:
    """The one event type a trigger is for, or None when it takes any."""
    match trigger:
        case m.AlertTrigger(alert_type=alert_type):
            return alert_type
        case m.EventTrigger(event=name):
            return name
        case m.ButtonTrigger():
            return workflow_id
        case m.PersonInZoneTrigger(zone=zone):
            return None if zone is None else zone_key(zone)
        case _:
            return None


def _cameras(trigger: m.Trigger) -> tuple[str, ...]:
    return getattr(trigger, "cameras", ())


def expected(site: Mapping[str, m.Trigger], e: NvrEvent) -> list[str]:
    """The workflows ``e`` starts in the index's order: the exact type and role first, then
    any role, then any type, then any of both; in filing order (``site``'s) within each."""
    tiers = list(
        dict.fromkeys(
            [(e.type, e.camera_role), (e.type, None), (None, e.camera_role), (None, None)]
        )
    )
    found = []
    for filed, (workflow_id, trigger) in enumerate(site.items()):
        if fits(workflow_id, trigger, e):
            typed = e.type if _typed(workflow_id, trigger) is not None else None
            role = e.camera_role if _cameras(trigger) else None
            found.append((tiers.index((typed, role)), filed, workflow_id))
    return [workflow_id for *_, workflow_id in sorted(found)]


def expected_for_role(site: Mapping[str, m.Trigger], e: NvrEvent) -> list[str]:
    """The workflows that name ``e``'s role and that it starts."""
    named = {w: t for w, t in site.items() if e.camera_role in _cameras(t)}
    return expected(named, e)


# ── random sites and events ────────────────────────────────────────────────────────────────

ROLES = ("gate", "yard", "porch", "drive")
ALERT_TYPES = ("intrusion", "loitering", "fire")
APPS = ("guard", "watch", "smoke")
CONTRACTS = ("plate.recognized.v1", "detection.observed.v1")
FIELDS = ("label", "list", "direction")
VALUES = ("person", "car", "package", "unknown", "residents", "in", "out")
ZONES = ("Loading bay", "loading-bay", "Fence", "drive way")
WORDS = ("Lights", "gate", "open", "ALARM")
DWELLS = (5.0, 10.0, 30.0, 12.5)
KINDS = ("alert", "event", "camera_offline", "button", "message", "person_in_zone", "other")
WORKFLOW_IDS = tuple(f"wf{i}" for i in range(14))


def random_trigger(rng: random.Random) -> m.Trigger:
    """Any trigger kind, drawn from small pools so that triggers share keys and values."""

    def cameras() -> tuple[str, ...]:
        return () if rng.random() < 0.5 else tuple(rng.choices(ROLES, k=rng.randint(1, 3)))

    def maybe[T](pool: tuple[T, ...]) -> T | None:
        return None if rng.random() < 0.4 else rng.choice(pool)

    kinds = ("alert", "alert", "event", "event", "offline", "button", "message", "pz", "schedule")
    match rng.choice(kinds):
        case "alert":
            return m.AlertTrigger(
                app=maybe(APPS),
                alert_type=maybe(ALERT_TYPES),
                cameras=cameras(),
                min_severity=maybe(SEVERITIES),
            )
        case "event":
            wanted = {
                name: tuple(rng.sample(VALUES, rng.randint(0 if rng.random() < 0.1 else 1, 3)))
                for name in rng.sample(FIELDS, rng.randint(0, 3))
            }
            return m.EventTrigger(
                event=rng.choice(CONTRACTS), cameras=cameras(), match=MappingProxyType(wanted)
            )
        case "offline":
            return m.CameraOfflineTrigger(for_s=0.0, cameras=cameras())
        case "button":
            return m.ButtonTrigger()
        case "message":
            return m.MessageTrigger(contains=tuple(rng.sample(WORDS, rng.randint(0, 2))))
        case "pz":
            return m.PersonInZoneTrigger(
                cameras=cameras(), min_s=rng.choice(DWELLS), zone=maybe(ZONES)
            )
        case _:
            return m.ScheduleTrigger(every_s=60.0)


def random_event(rng: random.Random, workflow_id: str | None, aim: m.Trigger | None) -> NvrEvent:
    """An event made to fit ``aim`` (the trigger of ``workflow_id``), then with some of its
    fields redrawn at random, so that near misses of every filter come up as often as fits."""
    kind = rng.choice(KINDS)
    type_: str | None = rng.choice((None, *ALERT_TYPES, *CONTRACTS, *WORKFLOW_IDS))
    role: str | None = rng.choice((None, *ROLES, "attic"))
    app = rng.choice((None, *APPS))
    severity = rng.choice((None, *SEVERITIES, "urgent"))
    labels = set(rng.sample(VALUES, rng.randint(0, 3)))
    payload: dict[str, object] = {
        name: rng.choice((*VALUES, 0, 1, True)) for name in rng.sample(FIELDS, rng.randint(0, 2))
    }
    if aim is not None:
        if getattr(aim, "cameras", ()):
            role = rng.choice(_cameras(aim))
        match aim:
            case m.AlertTrigger():
                kind, type_ = "alert", aim.alert_type or type_
                app = aim.app or app
                if aim.min_severity is not None:
                    severity = rng.choice(
                        SEVERITIES[max(0, SEVERITIES.index(aim.min_severity) - 1) :]
                    )
            case m.EventTrigger():
                kind, type_ = "event", aim.event
                for name, allowed in aim.match.items():
                    if not allowed or rng.random() < 0.2:
                        payload.pop(name, None)
                    elif name == "label" and rng.random() < 0.4:
                        payload.pop(name, None)
                        labels.add(rng.choice(allowed))
                    else:
                        payload[name] = rng.choice(allowed)
            case m.CameraOfflineTrigger():
                kind = "camera_offline"
            case m.ButtonTrigger():
                kind, type_ = "button", workflow_id
            case m.MessageTrigger():
                kind, type_ = "message", rng.choice((None, workflow_id))
                said = rng.sample((*WORDS, "hello"), rng.randint(0, 2))
                payload["message"] = " ".join(w.upper() if rng.random() < 0.3 else w for w in said)
            case m.PersonInZoneTrigger():
                kind = "person_in_zone"
                type_ = None if aim.zone is None else zone_key(rng.choice((aim.zone, *ZONES)))
                labels.add("person")
                payload["seconds"] = aim.min_s + rng.choice((-1.0, 0.0, 1e-7, 0.4, 25.0))
                threshold = rng.choice((None, aim.min_s, aim.min_s + 5e-7, aim.min_s + 1e-5, 7.0))
                if threshold is not None:
                    payload["threshold"] = threshold
    # Redraw a few fields: each filter's near misses.
    for _ in range(rng.choice((0, 0, 1, 2))):
        match rng.randrange(6):
            case 0:
                role = rng.choice((None, *ROLES, "attic"))
            case 1:
                app = rng.choice((None, *APPS, "other"))
            case 2:
                severity = rng.choice((None, *SEVERITIES, "urgent"))
            case 3:
                labels ^= {rng.choice(VALUES)}
            case 4:
                payload.pop(rng.choice((*FIELDS, "seconds", "threshold")), None)
            case _:
                type_ = rng.choice((None, type_, *ALERT_TYPES))
    return NvrEvent(
        kind=kind,
        source="nats",
        time=datetime(2026, 1, 5, 12, 0, tzinfo=UTC),
        type=type_,
        camera_role=role,
        app=app,
        severity=severity,
        labels=frozenset(labels),
        payload=MappingProxyType(payload),
    )


def _ids(found: list[Candidate]) -> list[str]:
    return [c.workflow_id for c in found]


@pytest.mark.parametrize("seed", range(60))
def test_the_index_answers_as_the_reference_does(seed: int) -> None:
    """A random site filed, re-filed and emptied workflow by workflow, with events read
    between the changes (so a table built before a change must not answer after it): every
    answer of ``match`` and ``match_role`` is the reference's, workflows and order. Most
    events are aimed at a filed trigger, the rest drawn blind."""
    rng = random.Random(seed)
    index = TriggerIndex()
    site: dict[str, m.Trigger] = {}
    fitted = 0
    for change in range(40):
        workflow_id = rng.choice(WORKFLOW_IDS)
        site.pop(workflow_id, None)
        if rng.random() < 0.25:
            index.remove(workflow_id)
        else:
            trigger = random_trigger(rng)
            index.put(workflow_id, trigger)
            site[workflow_id] = trigger
        for _ in range(40):
            aimed = rng.choice(list(site.items())) if site and rng.random() < 0.85 else (None, None)
            e = random_event(rng, *aimed)
            want = expected(site, e)
            assert _ids(index.match(e)) == want, (seed, change, e, site)
            assert _ids(index.match_role(e)) == expected_for_role(site, e), (seed, change, e)
            fitted += bool(want)
        assert len(index) == len(site)
        assert index.dwell_thresholds() == {
            t.min_s for t in site.values() if isinstance(t, m.PersonInZoneTrigger)
        }
    # The aimed events fit often enough for every filter to be tried both ways.
    assert fitted > 300


@pytest.mark.parametrize("seed", range(10))
def test_every_answer_fits_its_trigger_by_the_residual_check(seed: int) -> None:
    """Admission re-checks a named start with ``residual_match``: it passes every answer."""
    rng = random.Random(1000 + seed)
    index = TriggerIndex()
    site = {w: random_trigger(rng) for w in WORKFLOW_IDS}
    for workflow_id, trigger in site.items():
        index.put(workflow_id, trigger)
    for _ in range(300):
        workflow_id = rng.choice(WORKFLOW_IDS)
        e = random_event(rng, workflow_id, site[workflow_id])
        for c in index.match(e):
            assert index_module.residual_match(c, e), (seed, e, c)


# ── cost: what an event reads does not grow with the workflows ─────────────────────────────


def _camera_less_site(n: int) -> dict[str, m.Trigger]:
    """``n`` workflows without a camera list, filtered only by the fields they name: alerts by
    app and severity, contracted events by a field's value, person-in-zone by dwell."""
    site: dict[str, m.Trigger] = {}
    for i in range(n):
        match i % 4:
            case 0:
                site[f"alert{i}"] = m.AlertTrigger(
                    app=f"app{i}", min_severity=SEVERITIES[i // 4 % 4]
                )
            case 1:
                site[f"typed{i}"] = m.AlertTrigger(alert_type=f"type{i}", min_severity="high")
            case 2:
                site[f"plate{i}"] = m.EventTrigger(
                    event="plate.recognized.v1",
                    match={"plate": (f"P{i}",), "list": ("unknown", "visitors")},
                )
            case _:
                site[f"dwell{i}"] = m.PersonInZoneTrigger(cameras=(), min_s=float(i))
    return site


@pytest.mark.parametrize("n", [40, 400, 4000])
def test_an_events_checks_do_not_grow_with_the_workflows(
    n: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With 40, 400 or 4,000 camera-less workflows, an event that starts nothing checks no
    trigger one by one, and one that starts a workflow checks only the triggers that share
    its narrowest field's value. Counted, not timed: the answer is exact either way."""
    checked: list[str] = []
    real = index_module.residual_match

    def counting(candidate: Candidate, e: NvrEvent) -> bool:
        checked.append(candidate.workflow_id)
        return real(candidate, e)

    monkeypatch.setattr(index_module, "residual_match", counting)
    site = _camera_less_site(n)
    index = TriggerIndex()
    for workflow_id, trigger in site.items():
        index.put(workflow_id, trigger)

    def read(e: NvrEvent) -> list[str]:
        checked.clear()
        found = _ids(index.match(e))
        assert found == expected(site, e)
        return found

    misses = [
        event(app="nobody", severity="critical", type="burglary"),
        event("event", type="plate.recognized.v1", payload={"plate": "NONE", "list": "unknown"}),
        event("event", type="access.granted.v1", payload={"plate": "P2"}),
        event("camera_offline"),
        event("person_in_zone", type=None, labels=frozenset({"car"}), payload={"seconds": 9.0}),
    ]
    for e in misses:
        assert read(e) == []
        assert checked == []
    assert read(event(app="app0", severity="low", type="burglary")) == ["alert0"]
    assert read(event(app="app0", severity="critical", type="type1")) == ["typed1", "alert0"]
    assert checked == []
    plate = event("event", type="plate.recognized.v1", payload={"plate": "P2", "list": "unknown"})
    assert read(plate) == ["plate2"]
    assert checked == ["plate2"]
    dwell = event(
        "person_in_zone",
        type=None,
        labels=frozenset({"person"}),
        payload={"seconds": 3.5, "threshold": 3.0},
    )
    assert read(dwell) == ["dwell3"]
    assert checked == ["dwell3"]
