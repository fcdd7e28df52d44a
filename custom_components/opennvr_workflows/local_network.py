"""Is a server on the local network? The rule behind "frames stay in the house".

An AI step sends the camera's pictures, and the step's texts (plates, names the model
read, the site's facts), to the Ollama server in the options. That is private only
when the server is in the house: an address on a loopback, private (RFC 1918, IPv6
unique local) or link-local network, or a name that resolves only to such addresses.
Anything else (a public address, a name that resolves to one, a name that does not
resolve) counts as outside, and is used only when an admin allowed it in the options.
"""

from __future__ import annotations

import asyncio
import socket
from ipaddress import ip_address
from typing import Final
from urllib.parse import urlsplit

from homeassistant.util.network import is_local

#: How long a name may take to resolve before it counts as not local.
RESOLVE_TIMEOUT_S: Final = 5.0
#: Names that are this machine by definition (RFC 6761).
_LOOPBACK_NAMES: Final = ("localhost",)


async def async_is_local(url: str) -> bool:
    """Whether every address the host of ``url`` stands for is on the local network."""
    try:
        # The host alone: a bad port is the model check's to report, not a "where".
        host = urlsplit(url).hostname
    except ValueError:
        return False
    if not host:
        return False
    name = host.lower().rstrip(".")
    if name in _LOOPBACK_NAMES or name.endswith(".localhost"):
        return True
    literal = _address(name)
    if literal is not None:
        return literal
    try:
        async with asyncio.timeout(RESOLVE_TIMEOUT_S):
            infos = await asyncio.get_running_loop().getaddrinfo(
                name, None, type=socket.SOCK_STREAM
            )
    except (OSError, TimeoutError, UnicodeError):
        return False
    found = [_address(str(info[4][0])) for info in infos]
    return bool(found) and all(found)


def _address(text: str) -> bool | None:
    """Whether ``text`` is a local address; None when it is not an address at all."""
    try:
        address = ip_address(text.split("%", 1)[0])  # a zone index: fe80::1%eth0
    except ValueError:
        return None
    return is_local(address)
