"""What is wrong with an address typed into a form, when "cannot reach" would mislead.

Two mistakes are common when a person types a server's address: something that is not a
web address at all (no scheme, a stray space, ``nvr.local:8080``), and ``https`` in front
of a server that only speaks plain HTTP. Both used to surface as "cannot reach" or as a
certificate problem whose advice (turn verification off) does not help; these checks let
the forms say what is really wrong.
"""

from __future__ import annotations

from typing import Final

import aiohttp
from homeassistant.core import HomeAssistant
from homeassistant.helpers.aiohttp_client import async_get_clientsession
from yarl import URL

#: The example address the forms show (given as a description placeholder: Home
#: Assistant's rules keep addresses out of translated text).
URL_EXAMPLE: Final = "https://nvr.local"
#: The example NATS addresses the NATS form shows.
NATS_URL_EXAMPLE: Final = "nats://nvr.local:4222"
TLS_URL_EXAMPLE: Final = "tls://nvr.local:4222"
#: How long the plain-HTTP probe may take: only a server that answers at once counts.
_PROBE_SECONDS: Final = 5.0


def web_address_problem(text: str) -> str | None:
    """``invalid_url`` when ``text`` is not an http or https address with a host, else
    None (the form error's translation key)."""
    if not text or any(ch.isspace() for ch in text):
        return "invalid_url"
    try:
        url = URL(text)
    except ValueError:
        return "invalid_url"
    if url.scheme not in ("http", "https") or not url.host:
        return "invalid_url"
    try:
        url.port  # noqa: B018  # a port out of range raises here
    except ValueError:
        return "invalid_url"
    return None


async def async_speaks_plain_http(hass: HomeAssistant, address: str) -> bool:
    """Whether the host and port of the ``https`` ``address`` answer plain HTTP: then a
    failed TLS handshake means ``https`` was written for a server without it."""
    url = URL(address)
    if url.scheme != "https" or not url.host:
        return False
    plain = URL.build(scheme="http", host=url.host, port=url.port or 443, path="/")
    session = async_get_clientsession(hass, verify_ssl=False)
    try:
        async with session.get(
            plain, timeout=aiohttp.ClientTimeout(total=_PROBE_SECONDS), allow_redirects=False
        ) as response:
            return response.status > 0
    except (aiohttp.ClientError, TimeoutError, ValueError):
        return False
