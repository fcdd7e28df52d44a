"""The person-in-zone trigger: filed by camera role and zone, matched on the dwell the
tracker measured, and one run per track with ``one_at_a_time: track``."""

from __future__ import annotations

from typing import Any

from custom_components.opennvr_workflows.engine import NvrEvent
from custom_components.opennvr_workflows.engine.events import zone_key
from custom_components.opennvr_workflows.engine.index import TriggerIndex
from custom_components.opennvr_workflows.engine.testing import event
from custom_components.opennvr_workflows.workflow import model as m

from .conftest import EngineFactory


def lingered(
    seconds: float,
    *,
    zone: str | None = None,
    inside: str = "Fence",
    threshold: float | None = None,
    role: str = "yard-east",
    track: str = "8812",
    label: str = "person",
) -> NvrEvent:
    """A person_in_zone event as the presence tracker publishes it: for ``zone`` (typed by
    it), or anywhere in the camera's zones (untyped, ``inside`` the zone it is in now)."""
    payload: dict[str, Any] = {"seconds": seconds, "label": label, "zone": zone or inside}
    if threshold is not None:
        payload["threshold"] = threshold
    return event(
        "person_in_zone",
        type=zone_key(zone) if zone is not None else None,
        camera_id="4",
        camera_role=role,
        track_id=track,
        labels=frozenset({label}),
        payload=payload,
    )


def test_zone_key_matches_slugs_to_display_names() -> None:
    assert zone_key("Loading bay") == zone_key("loading-bay") == "loading_bay"
    assert zone_key("  Fence / North ") == "fence_north"


def test_index_files_by_role_and_zone_and_matches_on_dwell() -> None:
    index = TriggerIndex()
    index.put("night", m.PersonInZoneTrigger(cameras=("yard-east", "yard-west"), min_s=5.0))
    index.put("bay", m.PersonInZoneTrigger(cameras=("yard-east",), min_s=10.0, zone="loading-bay"))

    def ids(e: NvrEvent) -> list[str]:
        return sorted(c.workflow_id for c in index.match(e))

    # Anywhere in the camera's zones: the trigger without a zone, at its threshold.
    assert ids(lingered(5.0)) == ["night"]
    assert ids(lingered(5.2, role="yard-west")) == ["night"]
    assert ids(lingered(4.9)) == []
    assert ids(lingered(6.0, role="porch")) == []
    # A zone's own event fits the trigger that names it, whatever case the site uses,
    # and never the trigger without a zone (that one counts the zones together).
    assert ids(lingered(10.0, zone="Loading Bay")) == ["bay"]
    assert ids(lingered(10.0, zone="Loading Bay", role="yard-west")) == []
    assert ids(lingered(10.0, zone="Fence")) == []
    # Only people: the trigger is "person in zone".
    assert ids(lingered(12.0, label="car")) == []
    assert ids(lingered(12.0, zone="loading bay", label="car")) == []


def test_the_crossed_threshold_decides_which_trigger_fires() -> None:
    index = TriggerIndex()
    index.put("five", m.PersonInZoneTrigger(cameras=("yard-east",), min_s=5.0))
    index.put("thirty", m.PersonInZoneTrigger(cameras=("yard-east",), min_s=30.0))

    def ids(e: NvrEvent) -> list[str]:
        return sorted(c.workflow_id for c in index.match(e))

    # The tracker publishes once per threshold crossed; a person who stays on starts the
    # 5 s workflow once, not again when the 30 s one is reached.
    assert ids(lingered(5.1, threshold=5.0)) == ["five"]
    assert ids(lingered(30.4, threshold=30.0)) == ["thirty"]
    # An event that does not say (another producer): the dwell alone decides.
    assert ids(lingered(31.0)) == ["five", "thirty"]
    # A dwell short of the trigger never fits, whatever threshold it names.
    assert ids(lingered(4.0, threshold=5.0)) == []
    index.put("alerts", m.AlertTrigger())
    assert index.dwell_thresholds() == {5.0, 30.0}
    index.remove("five")
    assert ids(lingered(31.0)) == ["thirty"]
    assert index.dwell_thresholds() == {30.0}
    assert len(index) == 2


async def test_one_run_per_track(make_engine: EngineFactory) -> None:
    wf = m.Workflow(
        name="Night intrusion",
        when=m.PersonInZoneTrigger(cameras=("yard-east",), min_s=5.0),
        state="on",
        limits=m.WorkflowLimits(one_at_a_time="track", cooldown_s=0),
        then=(
            m.AskPersonStep(
                roles=("guard",),
                message="Track {track} in {zone} for {seconds} s on {camera}?",
                replies=("Yes",),
                default="Yes",
                paths={"Yes": ()},
            ),
        ),
    )
    engine = make_engine()
    engine.set_workflows({"night": wf})
    await engine.start()
    a = engine.submit(lingered(5.0, threshold=5.0, track="8812"))
    b = engine.submit(lingered(5.0, threshold=5.0, track="8813"))
    again = engine.submit(lingered(7.0, track="8812"))
    assert len(a) == len(b) == 1
    assert a != b
    assert again == a  # the same track joins its run as seen again
    await engine.idle()
    messages = sorted(ap.message for ap, _ in engine.pending_approvals())
    assert messages == [
        "Track 8812 in Fence for 5.0 s on yard-east?",
        "Track 8813 in Fence for 5.0 s on yard-east?",
    ]
