"""The pages behind the signed links (:mod:`.links`): the answer page with a
button per reply, its button, and the question's picture. Each finds the question among
the desks of the loaded entries (:func:`.desk.serving_desks`), so one Home Assistant
serves every site's questions at the same addresses.
"""

from __future__ import annotations

import html
from http import HTTPStatus
from pathlib import Path
from typing import Any, Final

from aiohttp import web
from homeassistant.components.http import KEY_HASS, KEY_HASS_USER, HomeAssistantView
from homeassistant.core import HomeAssistant, callback

from ...const import DOMAIN
from ..read_scope import signed_request
from .desk import serving_desks
from .links import ANSWER_URL, CONFIRM_URL, PICTURE_URL, proof_holds

_NAME_OK: Final = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_.")


@callback
def async_register_views(hass: HomeAssistant) -> None:
    """The answer page and the picture, once per Home Assistant (from the domain's setup,
    before the HTTP server starts)."""
    hass.http.register_view(AnswerView())
    hass.http.register_view(ConfirmView())
    hass.http.register_view(PictureView())


class AnswerView(HomeAssistantView):
    """The page behind an answer link."""

    url = ANSWER_URL
    name = f"api:{DOMAIN}:answer"
    requires_auth = True  # the signature is the authentication

    async def get(self, request: web.Request, token: str) -> web.Response:
        hass: HomeAssistant = request.app[KEY_HASS]
        if not signed_request(request):
            # Only the signed link the person's own phone received opens the page; a
            # login alone never does (the token would be the only credential).
            return web.Response(status=HTTPStatus.FORBIDDEN)
        for desk in serving_desks(hass):
            page = await desk.answer_page(token, _real_user(request))
            if page is not None:
                return _page(page)
        return _page({"title": "", "lines": [desk_text(hass, "approval_link_unknown")]}, 404)


class ConfirmView(HomeAssistantView):
    """A page's button: answers as the token's person, when the request is logged in as
    that person, or is not logged in and its proof holds (see the module docstring)."""

    url = CONFIRM_URL
    name = f"api:{DOMAIN}:answer:confirm"
    requires_auth = False  # the login or the proof is the authentication; checked first

    async def post(self, request: web.Request, token: str) -> web.Response:
        hass: HomeAssistant = request.app[KEY_HASS]
        form = await request.post()
        real_user = _real_user(request)
        # Someone else's login is not waved through by a proof: the desk refuses it as
        # another person's answer (and logs it), below.
        if real_user is None and not proof_holds(
            hass, token, str(form.get("expires", "")), str(form.get("proof", ""))
        ):
            text = desk_text(hass, "approval_link_unknown")
            return _page({"title": "", "lines": [text]}, HTTPStatus.FORBIDDEN)
        for desk in serving_desks(hass):
            if desk.knows(token):
                done = await desk.answer_link(token, real_user)
                return _page(done, HTTPStatus.OK if done.get("ok") else HTTPStatus.FORBIDDEN)
        text = desk_text(hass, "approval_link_unknown")
        return _page({"title": "", "lines": [text]}, HTTPStatus.NOT_FOUND)


class PictureView(HomeAssistantView):
    """The picture a question was asked about, for the phone's card and the answer page:
    only through a signed link (a person's own token is refused,
    :func:`..read_scope.signed_request`), since a link is made only for someone who may see
    the question's camera."""

    url = PICTURE_URL
    name = f"api:{DOMAIN}:picture"
    requires_auth = True

    async def get(self, request: web.Request, entry_id: str, name: str) -> web.Response:
        hass: HomeAssistant = request.app[KEY_HASS]
        if not signed_request(request):
            return web.Response(status=HTTPStatus.FORBIDDEN)
        desk = next((d for d in serving_desks(hass) if d.entry_id == entry_id), None)
        if desk is None or not name or not set(name) <= _NAME_OK or name.startswith("."):
            return web.Response(status=HTTPStatus.NOT_FOUND)
        path: Path = desk.pictures / name
        data = await hass.async_add_executor_job(_read, path)
        if data is None:
            return web.Response(status=HTTPStatus.NOT_FOUND)
        return web.Response(body=data, content_type="image/jpeg")


def desk_text(hass: HomeAssistant, key: str) -> str:
    for desk in serving_desks(hass):
        return desk.texts(key, {})
    return key


def _real_user(request: web.Request) -> str | None:
    """The person behind the request, when it came with a person's own login (a signed
    link authenticates as Home Assistant's content user, which is no one)."""
    user = request.get(KEY_HASS_USER)
    if user is None or user.system_generated:
        return None
    return str(user.id)


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _page(page: dict[str, Any], status: int = HTTPStatus.OK) -> web.Response:
    """A small self-contained HTML page; everything from a workflow or a user is escaped."""
    title = html.escape(str(page.get("title") or ""))
    lines = "".join(f"<p>{html.escape(str(line))}</p>" for line in page.get("lines", ()))
    picture = page.get("picture")
    image = f'<img src="{html.escape(picture)}" alt="">' if picture else ""
    forms = "".join(
        f'<form method="post" action="{html.escape(b["action"])}">'
        + "".join(
            f'<input type="hidden" name="{html.escape(k)}" value="{html.escape(v)}">'
            for k, v in b.get("fields", {}).items()
        )
        + f'<button type="submit">{html.escape(b["label"])}</button></form>'
        for b in page.get("buttons", ())
    )
    body = (
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        "<meta name='robots' content='noindex'>"
        f"<title>{title}</title><style>body{{font-family:sans-serif;max-width:36em;"
        "margin:2em auto;padding:0 1em}img{max-width:100%}button{font-size:1.2em;"
        "margin:.3em 0;padding:.5em 1em;width:100%}</style></head><body>"
        f"<h1>{title}</h1>{image}{lines}{forms}</body></html>"
    )
    return web.Response(
        text=body,
        status=status,
        content_type="text/html",
        headers={"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"},
    )
