"""OpenNVR's own history search (``GET /search``, plain-language search over recorded
visits) as the person asking may see it: one of the lists the history search fuses
(:mod:`.search`), and what it falls back on alone when the site's index cannot answer.

Every hit carries its event id (what a citation points at), and only hits on cameras the
asker may see are returned: a user who may not see every camera gets more rows from
OpenNVR, then only theirs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...ai import PyOpenNvrReadPort
from ..asker import Asker

if TYPE_CHECKING:
    from ..workflows import WorkflowHost


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


class NvrHistorySearch:
    """OpenNVR's ``GET /search``, through the NVR read port."""

    def __init__(self, host: WorkflowHost) -> None:
        self._host = host

    async def search(
        self, asker: Asker, query: str, *, camera_id: int | None, since: str | None, limit: int
    ) -> Sequence[Hit]:
        """Hits for ``query``, best first, only on cameras ``asker`` may see."""
        names = asker.port_names()
        port = PyOpenNvrReadPort(self._host.client, names)
        camera = asker.cameras.get(camera_id) if camera_id is not None else None
        asked = limit if asker.sees_all or camera is not None else limit * 5
        found = await port.search(query=query, camera=camera, start=since, limit=asked)
        visible = set(asker.cameras.values()) | set(asker.roles)
        hits = [
            Hit(e.id, e.camera, e.label, e.started_at, e.caption, e.plate, e.score)
            for e in found
            if asker.sees_all or e.camera in visible
        ]
        return hits[:limit]
