"""The ``search_history`` action: the site's history (AI decisions and OpenNVR's recorded
events) found by words and meaning, as the person calling may see it.

Response: ``{query, results, found, searched}``; each result has ``kind`` (``decision``
or ``event``), ``score``, ``found_by``, ``at``, the camera, and the ids it came from:
``run_id`` and ``step`` for a decision (with ``event_id`` or ``alert_id`` when its run was
about one), ``event_id`` for an event. ``searched`` says for each list (``words``,
``meaning``, ``nvr``) ``ok``, ``off`` or why it failed. See :mod:`.search`.
"""

from __future__ import annotations

from datetime import timedelta

from homeassistant.core import HomeAssistant, ServiceCall, ServiceResponse
from homeassistant.util import dt as dt_util

from ..action_support import entry_of
from ..asker import async_asker
from ..errors import invalid, listed


async def async_search_history(hass: HomeAssistant, call: ServiceCall) -> ServiceResponse:
    """Search the site's history as the caller (only the cameras they may see)."""
    runtime = entry_of(hass, call).runtime_data
    search, host = runtime.history, runtime.workflows
    if search is None or host is None:
        raise invalid("no_loaded_entry")
    asker = await async_asker(hass, host, call.context)
    camera_id = None
    if camera := call.data.get("camera"):
        camera_id = asker.camera(str(camera))
        if camera_id is None:  # a hidden camera answers like one that does not exist
            raise invalid("unknown_camera", camera=camera, roles=listed(asker.names()))
    hours = call.data.get("hours")
    since = dt_util.utcnow() - timedelta(hours=float(hours)) if hours else None
    query = str(call.data["query"])
    answer = await search.search(
        asker, query, camera_id=camera_id, since=since, limit=int(call.data["limit"])
    )
    return {"query": query, **answer.as_dict()}
