"""Which cameras' detector tracks some workflow needs: the rest are dropped at the hub.

The detector sends every camera's tracks several times a second, whether or not anything
here reads them. A camera's tracks are *watched* when a runnable (Test or On) workflow has

* a ``detect.person_in_zone`` trigger naming the camera (by a role mapped to it): the
  presence tracker matches its people against the camera's zones; or
* a ``detection.observed.v1`` trigger naming the camera, or naming no camera at all: on a
  site where the websocket is the only source, the detections are derived from the tracks
  (:mod:`.observed`).

Everything else is dropped by :class:`~.hub.EventHub` right after parsing, and only
counted. No entity shows tracks: the camera entities show alerts and contracted events
(:mod:`.bridge`), so nothing on the dashboard goes quiet because of this.

Plain Python, no Home Assistant: the host computes a :class:`TrackWatch` from its
workflows whenever they load or change state and hands it to the hub.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from ..workflow import model

#: The contracted event the websocket's tracks stand in for.
OBSERVED_EVENT: Final = "detection.observed.v1"


@dataclass(frozen=True, slots=True)
class TrackWatch:
    """The cameras (OpenNVR camera ids, as events carry them) whose tracks are needed.

    ``zones``: the cameras the presence tracker matches against their zones; ``observed``:
    the cameras whose tracks become ``detection.observed.v1``. None means every camera."""

    zones: frozenset[str] | None = None
    observed: frozenset[str] | None = None

    def wants(self, camera_id: str | None) -> bool:
        """Whether any consumer needs this camera's tracks (the hub's test, per frame)."""
        zones, observed = self.zones, self.observed
        if zones is None or observed is None:
            return True
        return camera_id in zones or camera_id in observed

    def in_zones(self, camera_id: str) -> bool:
        """Whether a person-in-zone trigger names this camera."""
        return self.zones is None or camera_id in self.zones

    def observes(self, camera_id: str) -> bool:
        """Whether a ``detection.observed.v1`` trigger may fire on this camera."""
        return self.observed is None or camera_id in self.observed


#: Before the host has said anything (and in tests of the hub alone): every camera.
EVERY_CAMERA: Final = TrackWatch()


def track_watch(workflows: Iterable[model.Workflow], roles: Mapping[str, int]) -> TrackWatch:
    """The cameras ``workflows`` (the runnable ones) watch, their roles mapped by ``roles``
    (role -> OpenNVR camera id). A role mapped to no camera watches nothing: its workflow
    cannot start on any camera here."""
    zones: set[str] | None = set()
    observed: set[str] | None = set()
    for workflow in workflows:
        match workflow.when:
            case model.PersonInZoneTrigger(cameras=cameras):
                zones = _add(zones, cameras, roles)
            case model.EventTrigger(event=event, cameras=cameras) if event == OBSERVED_EVENT:
                observed = _add(observed, cameras, roles)
            case _:
                pass
    return TrackWatch(_frozen(zones), _frozen(observed))


def _add(
    watched: set[str] | None, names: tuple[str, ...], roles: Mapping[str, int]
) -> set[str] | None:
    """``watched`` with the cameras of ``names`` added; None (every camera) when a trigger
    names none."""
    if watched is None or not names:
        return None
    watched.update(str(roles[name]) for name in names if name in roles)
    return watched


def _frozen(watched: set[str] | None) -> frozenset[str] | None:
    return None if watched is None else frozenset(watched)
