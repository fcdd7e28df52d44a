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
not (:class:`.views.ConfirmView`).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from datetime import timedelta
from typing import Any, Final

from homeassistant.components.http.auth import async_sign_path
from homeassistant.core import HomeAssistant

from ...const import DOMAIN

ANSWER_URL: Final = f"/api/{DOMAIN}/answer/{{token}}"
CONFIRM_URL: Final = f"/api/{DOMAIN}/answer/{{token}}/confirm"
DATA_FORM_KEY: Final = f"{DOMAIN}_form_key"
PICTURE_URL: Final = f"/api/{DOMAIN}/picture/{{entry_id}}/{{name}}"
#: A link never lives longer than this, whatever the question's timeout.
MAX_LINK_S: Final = 24 * 3600.0


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
