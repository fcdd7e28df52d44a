"""How many unacknowledged alerts wait on OpenNVR for one person, and the newest of them.

OpenNVR's alerts inbox answers a page at a time (``{"alerts": [...], "total": n}``, 50 rows
by default), and ``total`` is the count over every page. Reading the length of the first page
as the count said "50 waiting" while OpenNVR had 86. A person who may see every camera gets
OpenNVR's own total from one request; for anyone else the alerts of cameras they may not see
must not be counted, so the pages are read (up to :data:`MAX_PAGES`) and the visible rows
counted; past that the count is a lower bound and says so (``exact`` False).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

__all__ = ["MAX_PAGES", "PAGE", "AlertCount", "count_unacked_alerts"]

#: Rows asked for a page, and the most pages read to count a restricted person's alerts.
PAGE: Final = 50
MAX_PAGES: Final = 10


class AlertsInbox(Protocol):
    """The part of pyopennvr's client this reads."""

    async def get_alerts(self, *, unacked: bool = ..., skip: int = ..., limit: int = ...) -> Any:
        """``GET /alerts-inbox``."""


@dataclass(slots=True)
class AlertCount:
    """Unacknowledged alerts one person may hear of."""

    #: How many (OpenNVR's total for a person who sees everything).
    count: int = 0
    #: False when more pages waited than were read: ``count`` is then "at least".
    exact: bool = True
    #: The rows read that the person may see, newest first as OpenNVR gave them.
    newest: list[dict[str, Any]] = field(default_factory=list)


async def count_unacked_alerts(
    inbox: AlertsInbox, sees: Callable[[dict[str, Any]], bool], *, sees_everything: bool
) -> AlertCount:
    """Count the unacknowledged alerts ``sees`` lets through (see the module's docstring).

    Raises what the client raises (``OpenNVRError``); the caller says it could not read.
    """
    out = AlertCount()
    skip = 0
    for _ in range(MAX_PAGES):
        data = await inbox.get_alerts(unacked=True, skip=skip, limit=PAGE)
        page = _rows(data)
        rows = [r for r in page if sees(r)]
        total = data.get("total") if isinstance(data, dict) else None
        out.newest.extend(rows)
        if sees_everything and isinstance(total, int) and not isinstance(total, bool):
            out.count = max(total, len(rows))
            return out
        out.count += len(rows)
        skip += len(page)
        if len(page) < PAGE or (isinstance(total, int) and skip >= total):
            return out
    out.exact = False
    return out


def _rows(data: Any) -> list[dict[str, Any]]:
    alerts = data.get("alerts") if isinstance(data, dict) else None
    return [r for r in alerts or () if isinstance(r, dict)]
