"""A case's pictures, through signed links: the home's kept ones and the shipped ones.

The responses that name cases (``list_cases``, ``measure_model``'s failed cases) link
their pictures with paths Home Assistant signs (:func:`..approvals.links.sign`), made only
for a caller who may see every camera the case's run touched. The view serves nothing
else: a person's own token is refused, as for a run's evidence, since the camera check
is made when the link is made, for that person.
"""

from __future__ import annotations

import re
from http import HTTPStatus
from pathlib import Path
from typing import TYPE_CHECKING, Final

from aiohttp import web
from homeassistant.components.http import KEY_HASS, HomeAssistantView
from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import HomeAssistant, callback

from ...const import DOMAIN
from ...evaluation.case_loader import DEFAULT_CASES
from ..approvals.links import sign
from ..read_scope import signed_request
from .store import picture_folder

if TYPE_CHECKING:
    from ...coordinator import OpenNVRConfigEntry

CASE_PICTURE_URL: Final = f"/api/{DOMAIN}/case_picture/{{entry_id}}/{{kind}}/{{name}}"
#: How long a case picture's link holds.
LINK_S: Final = 3600.0
#: A picture file's name in a cases folder (no folder parts).
_NAME: Final = re.compile(r"^[A-Za-z0-9_.-]+\.(jpg|jpeg|png)$")


def picture_link(hass: HomeAssistant, entry_id: str, home: bool, name: str) -> str:
    """A signed link to the picture ``name`` of the home's cases (``home``) or the
    shipped ones; the caller's right to see it is checked before (see the module)."""
    kind = "home" if home else "shipped"
    return sign(hass, CASE_PICTURE_URL.format(entry_id=entry_id, kind=kind, name=name), LINK_S)


@callback
def async_register_case_picture_view(hass: HomeAssistant) -> None:
    hass.http.register_view(CasePictureView())


class CasePictureView(HomeAssistantView):
    """A case's picture, on a signed link only."""

    url = CASE_PICTURE_URL
    name = f"api:{DOMAIN}:case_picture"
    requires_auth = True  # a signed path authenticates

    async def get(self, request: web.Request, entry_id: str, kind: str, name: str) -> web.Response:
        hass: HomeAssistant = request.app[KEY_HASS]
        if not signed_request(request):
            return web.Response(status=HTTPStatus.FORBIDDEN)
        entry: OpenNVRConfigEntry | None = hass.config_entries.async_get_entry(entry_id)
        if entry is None or entry.domain != DOMAIN or entry.state is not ConfigEntryState.LOADED:
            return web.Response(status=HTTPStatus.NOT_FOUND)
        evaluation = entry.runtime_data.evaluation
        if not _NAME.match(name) or kind not in ("home", "shipped") or evaluation is None:
            return web.Response(status=HTTPStatus.NOT_FOUND)
        root = evaluation.cases.root if kind == "home" else DEFAULT_CASES
        path = picture_folder(root) / name
        data = await hass.async_add_executor_job(_read, path)
        if data is None:
            return web.Response(status=HTTPStatus.NOT_FOUND)
        return web.Response(
            body=data,
            content_type="image/png" if name.endswith(".png") else "image/jpeg",
            headers={"Cache-Control": "private, max-age=3600"},
        )


def _read(path: Path) -> bytes | None:
    """(blocking)"""
    try:
        return path.read_bytes() if path.is_file() else None
    except OSError:
        return None
