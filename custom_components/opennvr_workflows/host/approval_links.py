"""Signed links: the page with every reply (the Android card's *More replies*), and the
question's picture for the phone's card.

Both are Home Assistant paths signed with ``async_sign_path`` (the content user, an
expiry): they open without a login, and Home Assistant itself refuses them once expired or
altered, before this code runs. Signing keys live for one Home Assistant process, so the
links are made again at every start for the questions still open.

Following an answer link never answers: ``GET`` shows a page with the question, its
picture and a button per reply; only the button (a ``POST``) answers, so a link previewer
or a prefetching mail client cannot approve anything. Home Assistant accepts signatures on
``GET`` only, so each button carries its own proof instead: an HMAC of the token and the
link's expiry under a key of this process (:func:`form_proof`), checked with the expiry
before anything is answered.

An answer link is a credential of the person it was made for, so it goes only to that
person: on their own phones' cards, never in Home Assistant's shared notifications (every
user reads those). A button's ``POST`` answers only with the person's own login (the
request's user is the token's), or with no login and the proof, which only a page opened
from that person's link carries; a request logged in as anyone else is refused, proof or
not (:class:`ConfirmView`).
"""

from __future__ import annotations

import hashlib
import hmac
import html
import secrets
import time
from datetime import timedelta
from http import HTTPStatus
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from aiohttp import web
from homeassistant.components.http import KEY_HASS, KEY_HASS_USER, HomeAssistantView
from homeassistant.components.http.auth import async_sign_path
from homeassistant.core import HomeAssistant, callback

from ..const import DOMAIN
from .read_scope import signed_request

if TYPE_CHECKING:
    from .approvals import ApprovalDesk

ANSWER_URL: Final = f"/api/{DOMAIN}/answer/{{token}}"
CONFIRM_URL: Final = f"/api/{DOMAIN}/answer/{{token}}/confirm"
DATA_FORM_KEY: Final = f"{DOMAIN}_form_key"
PICTURE_URL: Final = f"/api/{DOMAIN}/picture/{{entry_id}}/{{name}}"
DATA_DESKS: Final = f"{DOMAIN}_approval_desks"
#: A link never lives longer than this, whatever the question's timeout.
MAX_LINK_S: Final = 24 * 3600.0
_NAME_OK: Final = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_.")


def sign(hass: HomeAssistant, path: str, seconds: float) -> str:
    """``path`` signed for ``seconds`` (at least one, at most :data:`MAX_LINK_S`)."""
    lifetime = timedelta(seconds=max(1.0, min(seconds, MAX_LINK_S)))
    return async_sign_path(hass, path, lifetime, use_content_user=True)


def answer_link(hass: HomeAssistant, token: str, seconds: float) -> str:
    return sign(hass, ANSWER_URL.format(token=token), seconds)


def form_proof(hass: HomeAssistant, token: str, expires: int) -> str:
    """What a page's button sends to show it came from a valid link (see the module)."""
    key: bytes = hass.data.setdefault(DATA_FORM_KEY, secrets.token_bytes(32))
    return hmac.new(key, f"{token}:{expires}".encode(), hashlib.sha256).hexdigest()


def proof_holds(hass: HomeAssistant, token: str, expires: str, proof: str) -> bool:
    """Whether a button's proof is this process's, for this token, and not expired."""
    try:
        until = int(expires)
    except ValueError:
        return False
    if until < time.time():
        return False
    return hmac.compare_digest(form_proof(hass, token, until), proof)


def button(hass: HomeAssistant, token: str, seconds: float, label: str) -> dict[str, Any]:
    """A page button that answers with ``token`` (valid for ``seconds``)."""
    expires = int(time.time() + max(1.0, min(seconds, MAX_LINK_S)))
    return {
        "label": label,
        "action": CONFIRM_URL.format(token=token),
        "fields": {"expires": str(expires), "proof": form_proof(hass, token, expires)},
    }


def picture_link(hass: HomeAssistant, entry_id: str, name: str, seconds: float) -> str:
    return sign(hass, PICTURE_URL.format(entry_id=entry_id, name=name), seconds)


@callback
def async_register_views(hass: HomeAssistant) -> None:
    """The answer page and the picture, once per Home Assistant (from the domain's setup,
    before the HTTP server starts)."""
    hass.data.setdefault(DATA_DESKS, {})
    hass.http.register_view(AnswerView())
    hass.http.register_view(ConfirmView())
    hass.http.register_view(PictureView())


@callback
def register_desk(hass: HomeAssistant, desk: ApprovalDesk) -> None:
    """Serve this entry's questions."""
    hass.data.setdefault(DATA_DESKS, {})[desk.entry_id] = desk


@callback
def unregister_desk(hass: HomeAssistant, desk: ApprovalDesk) -> None:
    desks: dict[str, ApprovalDesk] = hass.data.get(DATA_DESKS, {})
    if desks.get(desk.entry_id) is desk:
        del desks[desk.entry_id]


def answers_here(hass: HomeAssistant, desk: ApprovalDesk, token: str) -> bool:
    """Whether ``desk`` handles a tap with ``token``: the desk that made it, or for a token
    no desk made (a forgery, refused and logged once), the first desk."""
    desks = _desks(hass)
    if desk.knows(token):
        return True
    return not any(d.knows(token) for d in desks) and bool(desks) and desks[0] is desk


def _desks(hass: HomeAssistant) -> list[ApprovalDesk]:
    return list(hass.data.get(DATA_DESKS, {}).values())


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
        for desk in _desks(hass):
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
        for desk in _desks(hass):
            if desk.knows(token):
                done = await desk.answer_link(token, real_user)
                return _page(done, HTTPStatus.OK if done.get("ok") else HTTPStatus.FORBIDDEN)
        text = desk_text(hass, "approval_link_unknown")
        return _page({"title": "", "lines": [text]}, HTTPStatus.NOT_FOUND)


class PictureView(HomeAssistantView):
    """The picture a question was asked about, for the phone's card and the answer page:
    only through a signed link (a person's own token is refused,
    :func:`.read_scope.signed_request`), since a link is made only for someone who may see
    the question's camera."""

    url = PICTURE_URL
    name = f"api:{DOMAIN}:picture"
    requires_auth = True

    async def get(self, request: web.Request, entry_id: str, name: str) -> web.Response:
        hass: HomeAssistant = request.app[KEY_HASS]
        if not signed_request(request):
            return web.Response(status=HTTPStatus.FORBIDDEN)
        desk = hass.data.get(DATA_DESKS, {}).get(entry_id)
        if desk is None or not name or not set(name) <= _NAME_OK or name.startswith("."):
            return web.Response(status=HTTPStatus.NOT_FOUND)
        path: Path = desk.pictures / name
        data = await hass.async_add_executor_job(_read, path)
        if data is None:
            return web.Response(status=HTTPStatus.NOT_FOUND)
        return web.Response(body=data, content_type="image/jpeg")


def desk_text(hass: HomeAssistant, key: str) -> str:
    for desk in _desks(hass):
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
