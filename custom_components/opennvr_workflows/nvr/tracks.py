"""A detector's tracks, from each wrapping OpenNVR sends them in, as one list of boxes.

Three producers, three shapes:

* the events websocket's ``tracks`` frame: core's overlay payload
  (``opennvr.overlay.tracks.v1``), boxes ``[x, y, w, h]`` already in 0..1, and only the
  tracks core draws right now (it hides the ones the tracker is merely coasting);
* Tier-0 on NATS (``opennvr.inference.tier0.<camera>.completed``, ``opennvr.tier0.v1``):
  pixel boxes ``[x1, y1, x2, y2]`` with the frame size, coasting tracks included;
* an adapter's ``InferenceCompletedEvent`` (NATS ``opennvr.inference.<adapter>.<camera>
  .completed``, and the websocket's ``inference_result``): ``result.detections`` with the
  contract's normalised ``bbox {x, y, w, h}``.

Each becomes a list of :data:`Track` with the contract's ``NormalizedBBox``, so the
presence tracker reads one shape. A track that cannot be read (no label, a box that is
not four numbers) is skipped and the rest kept; only a payload whose track list itself is
not a list raises :class:`BadTracks`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final

from opennvr_app_sdk.tier0 import tier0_to_detections

#: ``{"id": str | None, "label": str, "score": float | None, "bbox": {x, y, w, h} | None}``
Track = dict[str, Any]

#: The overlay stops drawing a coasting track after this long without a match (core's
#: ``DRAW_WINDOW_S``); Tier-0 on NATS still lists it, at its last box, for minutes.
COAST_WINDOW_S: Final = 8.0
#: A coordinate beyond this is a pixel, not a fraction of the frame.
_PIXELS: Final = 2.0


class BadTracks(ValueError):
    """A tracks payload whose track list cannot be read at all."""


def frame_size(value: Any) -> tuple[int, int] | None:
    """``{"w", "h"}`` in whole pixels, or None when the producer did not say."""
    if not isinstance(value, Mapping):
        return None
    w, h = _number(value.get("w")), _number(value.get("h"))
    if w is None or h is None or round(w) < 1 or round(h) < 1:
        return None
    return (round(w), round(h))


def overlay_tracks(payload: Mapping[str, Any]) -> list[Track]:
    """The websocket ``tracks`` frame's payload (boxes ``[x, y, w, h]`` in 0..1)."""
    out: list[Track] = []
    for raw in _list(payload.get("tracks"), "tracks"):
        if not isinstance(raw, Mapping) or (label := _label(raw.get("label"))) is None:
            continue
        out.append(_track(raw.get("id"), label, raw.get("score"), _xywh(raw.get("box"))))
    return out


def tier0_tracks(body: Mapping[str, Any]) -> list[Track]:
    """A Tier-0 event: the tracks seen now (not the ones the tracker only coasts), boxes
    normalised by the SDK's own bridge (``tier0_to_detections``)."""
    present = [t for t in _list(body.get("tracks"), "tracks") if _tier0_present(t)]
    detections = tier0_to_detections({"frame": body.get("frame") or {}, "tracks": present})
    return detection_tracks(detections)


def detection_tracks(detections: Any) -> list[Track]:
    """Contract detections (``label``, ``confidence`` or ``score``, ``bbox``, ``track_id``)."""
    out: list[Track] = []
    for raw in _list(detections, "detections"):
        if not isinstance(raw, Mapping) or (label := _label(raw.get("label"))) is None:
            continue
        score = raw.get("confidence", raw.get("score"))
        box = raw.get("bbox", raw.get("bbox_normalized"))
        bbox = _bbox(box) if isinstance(box, Mapping) else _xywh(box)
        out.append(_track(raw.get("track_id"), label, score, bbox))
    return out


def _tier0_present(track: Any) -> bool:
    """Core's overlay rule: matched this frame, or not looked for and matched recently.
    A track looked for and missed is gone; one never re-found (a phantom on the sky)
    ages out. Fields an older producer lacks read as present."""
    if not isinstance(track, Mapping):
        return False
    if track.get("matched") is not False:
        return True
    misses = _number(track.get("misses"))
    if misses is None or misses > 0:
        return False
    age = track.get("since_match_s")
    if age is None:
        return track.get("stationary") is True
    since = _number(age)
    return since is not None and since <= COAST_WINDOW_S


def _track(track_id: Any, label: str, score: Any, bbox: dict[str, float] | None) -> Track:
    readable = isinstance(track_id, int | str) and not isinstance(track_id, bool)
    ident = str(track_id) if readable and str(track_id) else None
    return {"id": ident, "label": label, "score": _number(score), "bbox": bbox}


def _list(value: Any, what: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise BadTracks(f"{what} is not a list ({type(value).__name__})")
    return value


def _label(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    return value.strip() or None


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _bbox(box: Mapping[str, Any]) -> dict[str, float] | None:
    values = [_number(box.get(key)) for key in ("x", "y", "w", "h")]
    return _normalised(values)


def _xywh(box: Any) -> dict[str, float] | None:
    if not isinstance(box, list | tuple) or len(box) != 4:
        return None
    return _normalised([_number(v) for v in box])


def _normalised(values: list[float | None]) -> dict[str, float] | None:
    """The box clamped to the frame (a tracker's box may reach past the edge), or None
    when it has no area or is in pixels (without the frame size it cannot be placed)."""
    if any(v is None for v in values):
        return None
    x, y, w, h = (float(v) for v in values if v is not None)
    if w <= 0 or h <= 0 or max(abs(x), abs(y), w, h) > _PIXELS:
        return None
    x1, y1 = _clamp(x), _clamp(y)
    x2, y2 = _clamp(x + w), _clamp(y + h)
    if x2 <= x1 or y2 <= y1:
        return None
    return {"x": x1, "y": y1, "w": round(x2 - x1, 6), "h": round(y2 - y1, 6)}


def _clamp(value: float) -> float:
    return min(1.0, max(0.0, value))
