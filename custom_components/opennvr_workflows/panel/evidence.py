"""The frame a run's AI step looked at, through a signed link.

The host keeps the frame of each run on disk, within the bounds of the options' *Data
kept* page (:mod:`..host.model.evidence_store`); the run page links to it with a path signed by
Home Assistant (the same signing as a question's picture,
:func:`..host.approvals.links.sign`), so an ``<img>`` can load it without the page's token,
and Home Assistant refuses it once expired or altered.

The view serves only such signed requests: a person's own token is refused, since the
check that they may see the frame's camera is made when the link is made, for them
(:func:`evidence_link`), and nowhere else.
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Final

from aiohttp import web
from homeassistant.components.http import KEY_HASS, HomeAssistantView
from homeassistant.components.image import infer_image_type
from homeassistant.core import HomeAssistant, callback

from ..const import DOMAIN
from ..host.approvals.links import sign
from ..host.permissions import Caller
from ..host.read_scope import camera_touched, may_see, signed_request
from ..host.workflows import WorkflowHost
from .hosts import loaded_hosts

EVIDENCE_URL: Final = f"/api/{DOMAIN}/evidence/{{entry_id}}/{{run_id}}"


def evidence_link(
    hass: HomeAssistant,
    host: WorkflowHost,
    caller: Caller,
    run_id: str,
    camera: str | None,
    seconds: float,
) -> str | None:
    """The frame of ``run_id`` (taken on ``camera``, as the step named it) signed for
    ``seconds``, for a ``caller`` who may see that camera; None for anyone else."""
    if not may_see(caller, host, camera_touched(host, camera)):
        return None
    return sign(hass, EVIDENCE_URL.format(entry_id=host.entry_id, run_id=run_id), seconds)


@callback
def async_register_evidence_view(hass: HomeAssistant) -> None:
    hass.http.register_view(EvidenceView())


class EvidenceView(HomeAssistantView):
    """The run's frame while the host keeps it; 404 once the bounds removed it."""

    url = EVIDENCE_URL
    name = f"api:{DOMAIN}:evidence"
    requires_auth = True  # a signed path authenticates

    async def get(self, request: web.Request, entry_id: str, run_id: str) -> web.Response:
        hass: HomeAssistant = request.app[KEY_HASS]
        if not signed_request(request):
            return web.Response(status=HTTPStatus.FORBIDDEN)
        for host in loaded_hosts(hass):
            if host.entry_id != entry_id:
                continue
            held = await host.evidence_store.async_read(run_id)
            if held is not None:
                return web.Response(
                    body=held.image,
                    content_type=infer_image_type(held.image) or "image/jpeg",
                    headers={"Cache-Control": "private, max-age=3600"},
                )
        return web.Response(status=HTTPStatus.NOT_FOUND)
