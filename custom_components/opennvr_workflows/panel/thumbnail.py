"""A small copy of a run's evidence picture, for the Media panel's grid.

Home Assistant's media browser loads a thumbnail whose address is on Home Assistant with
the viewer's own login (not a signed link), so this view is a reading door of its own
(:mod:`..host.permissions`): every person logged in, for the pictures they may see
(:mod:`..host.model.evidence_scope`, the same decision as the listing); a hidden picture answers
404 like a missing one. The full frame opens through the signed evidence link
(:mod:`.evidence`).
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Final

from aiohttp import web
from homeassistant.components.http import KEY_HASS, KEY_HASS_USER, HomeAssistantView
from homeassistant.core import Context, HomeAssistant, callback

from ..ai.images import ImageError, prepare_image_off_loop
from ..const import DOMAIN
from ..host.model.evidence_scope import visible_picture
from ..host.permissions import allow, async_caller
from .hosts import loaded_hosts

THUMBNAIL_URL: Final = f"/api/{DOMAIN}/thumbnail/{{entry_id}}/{{run_id}}"
#: The long side of a thumbnail, in pixels.
THUMBNAIL_SIDE: Final = 320


def thumbnail_path(entry_id: str, run_id: str) -> str:
    return THUMBNAIL_URL.format(entry_id=entry_id, run_id=run_id)


@callback
def async_register_thumbnail_view(hass: HomeAssistant) -> None:
    hass.http.register_view(EvidenceThumbnailView())


class EvidenceThumbnailView(HomeAssistantView):
    """The picture of a run, small, for a person who may see it."""

    url = THUMBNAIL_URL
    name = f"api:{DOMAIN}:thumbnail"
    requires_auth = True

    async def get(self, request: web.Request, entry_id: str, run_id: str) -> web.Response:
        hass: HomeAssistant = request.app[KEY_HASS]
        user = request[KEY_HASS_USER]
        door = f"http:{THUMBNAIL_URL}"
        caller = allow(door, await async_caller(hass, Context(user_id=user.id)), user.id)
        for host in loaded_hosts(hass):
            if host.entry_id != entry_id or visible_picture(caller, host, run_id) is None:
                continue
            held = await host.evidence_store.async_read(run_id)
            if held is None:
                break
            try:
                small = await prepare_image_off_loop(held.image, THUMBNAIL_SIDE)
            except ImageError:
                break
            return web.Response(
                body=small,
                content_type="image/jpeg",
                headers={"Cache-Control": "private, max-age=86400"},
            )
        return web.Response(status=HTTPStatus.NOT_FOUND)
