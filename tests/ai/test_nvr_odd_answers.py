"""The NVR read port when OpenNVR answers oddly: an empty picture, a caption it does not
have, an answer of the wrong shape, live objects given as counts, lists or dicts, events
with missing fields. Each is a read error the model can act on, or a sensible nothing,
never an exception of another kind."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, cast

import pytest
from pyopennvr import OpenNVRClient

from custom_components.opennvr_workflows.ai import NvrReadError, PyOpenNvrReadPort


class Answers:
    """A client whose every call answers what the test set (or raises it)."""

    def __init__(self, **answers: Any) -> None:
        self.answers = answers

    def __getattr__(self, name: str) -> Callable[..., Any]:
        async def call(*args: Any, **kwargs: Any) -> Any:
            answer = self.answers[name]
            if isinstance(answer, BaseException):
                raise answer
            return answer

        return call


def port(**answers: Any) -> PyOpenNvrReadPort:
    client = cast(OpenNVRClient, Answers(**answers))
    return PyOpenNvrReadPort(client, {"front_door": 1, "drive": 2})


async def test_an_empty_picture_is_no_picture() -> None:
    with pytest.raises(NvrReadError, match="snapshot of front_door: no picture"):
        await port(get_snapshot=b"").snapshot("front_door")
    with pytest.raises(NvrReadError, match=r"picture of event #7: none kept"):
        await port(request=None).event_image(7)


async def test_a_caption_opennvr_does_not_have_is_none() -> None:
    assert await port(describe_camera={"available": False}).describe_camera("drive", None) is None
    assert await port(describe_camera=["not", "a", "dict"]).describe_camera("drive", "?") is None


async def test_an_answer_of_the_wrong_shape_is_a_read_error() -> None:
    with pytest.raises(NvrReadError, match="unexpected answer from OpenNVR"):
        await port(get_snapshot=KeyError("cameras")).snapshot("front_door")
    since = datetime(2026, 1, 1, tzinfo=UTC)
    bad_event = {"events": [{"id": "seven", "camera_id": 1}]}
    with pytest.raises(NvrReadError, match="unexpected event in OpenNVR's answer"):
        await port(get_events=bad_event).recent_events(None, since, 5)
    assert await port(get_events=["no", "events"]).recent_events("drive", since, 5) == []


async def test_live_objects_are_counted_however_opennvr_gives_them() -> None:
    live = {
        "cameras": [
            "not a row",
            {"camera_id": 2, "objects": {}},
            {
                "camera_id": 1,
                "objects": {
                    "person": 2,
                    "car": [{"id": 1}, {"id": 2}, {"id": 3}],
                    "dog": {"count": 1.0},
                    "parcel": True,
                    "bike": "many",
                },
                "stale": "maybe",
                "online": True,
            },
        ]
    }
    reader = port(get_live_state=live)
    assert await reader.live_objects("front_door") == {
        "person": 2,
        "car": 3,
        "dog": 1,
        "parcel": 1,
        "bike": 0,
    }
    detections = await reader.live_detections("front_door")
    assert (detections.stale, detections.online, detections.motion) == (None, True, None)
    assert (
        await port(get_live_state={"cameras": [{"camera_id": 1, "objects": 3}]}).live_objects(
            "front_door"
        )
        == {}
    )
    assert await port(get_live_state={}).live_objects("drive") == {}


async def test_events_name_their_camera_as_the_workflow_does() -> None:
    rows = {
        "events": [
            {"id": 1, "camera_id": 2, "event_type": "track", "score": "high"},
            {"id": 2, "camera_id": 9, "label": "dog", "plate_text": ""},
            {"id": 3, "camera_id": "cam-x", "caption": "a fox"},
        ]
    }
    found = await port(get_events=rows).recent_events(None, datetime.now(UTC), 10)
    assert [(e.camera, e.label, e.score, e.plate, e.caption) for e in found] == [
        ("drive", "track", None, None, None),
        ("camera 9", "dog", None, None, None),
        ("cam-x", "event", None, None, "a fox"),
    ]
