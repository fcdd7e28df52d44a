"""Searching the site's history for the assistant: one seam, OpenNVR's ``/search`` behind it.

:class:`HistorySearch` is what the ``search_history`` tool asks. Today the only
implementation is :class:`NvrHistorySearch`, OpenNVR's own plain-language search over
recorded visits. A local index of this site's AI decisions can take its place (or be fused
with it) by registering another factory with :func:`set_history_search`; the tool does not
change. Every hit carries its event id, and only hits on cameras the asker may see are
returned.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from homeassistant.core import HomeAssistant
from homeassistant.util.hass_dict import HassKey

from ..ai import PyOpenNvrReadPort
from ..host.workflows import WorkflowHost
from .access import Asker


@dataclass(frozen=True, slots=True)
class Hit:
    """One thing found: an OpenNVR event id (what a citation points at) and what it says."""

    event_id: int
    camera: str
    label: str
    at: str
    caption: str | None = None
    plate: str | None = None
    score: float | None = None


class HistorySearch(Protocol):
    """Finds what happened on a site (see the module docstring)."""

    async def search(
        self, asker: Asker, query: str, *, camera_id: int | None, since: str | None, limit: int
    ) -> Sequence[Hit]:
        """Hits for ``query``, best first, only on cameras ``asker`` may see."""
        ...


class NvrHistorySearch:
    """OpenNVR's ``GET /search``, through the NVR read port."""

    def __init__(self, host: WorkflowHost) -> None:
        self._host = host

    async def search(
        self, asker: Asker, query: str, *, camera_id: int | None, since: str | None, limit: int
    ) -> Sequence[Hit]:
        names = asker.port_names()
        port = PyOpenNvrReadPort(self._host.client, names)
        camera = asker.cameras.get(camera_id) if camera_id is not None else None
        # A user who may not see every camera gets more rows, then only theirs.
        asked = limit if asker.sees_all or camera is not None else limit * 5
        found = await port.search(query=query, camera=camera, start=since, limit=asked)
        visible = set(asker.cameras.values()) | set(asker.roles)
        hits = [
            Hit(e.id, e.camera, e.label, e.started_at, e.caption, e.plate, e.score)
            for e in found
            if asker.sees_all or e.camera in visible
        ]
        return hits[:limit]


HistoryFactory = Callable[[WorkflowHost], HistorySearch]
_FACTORY: HassKey[HistoryFactory] = HassKey("opennvr_workflows_history_search")


def set_history_search(hass: HomeAssistant, factory: HistoryFactory) -> None:
    """Use ``factory`` for every later ``search_history`` call."""
    hass.data[_FACTORY] = factory


def history_search(hass: HomeAssistant, host: WorkflowHost) -> HistorySearch:
    """The search the tool asks: the registered one, else OpenNVR's."""
    factory = hass.data.get(_FACTORY, NvrHistorySearch)
    return factory(host)
