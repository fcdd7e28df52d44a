"""Passwords written into addresses, taken out wherever an address is shown to someone.

An address may carry its own credentials (``http://user:password@ollama:11434``,
``nats://user:pw@nvr:4222``, ``tls://token@nvr``, a webhook's ``https://key@host``), and
such an address ends up in places that are read by others: diagnostics attached to a
support request, a step's error in a run's trace, the log. Redacting named fields misses
the address that sits in another field, in a list, in an error text or in a dict key, so
the user-info is stripped from every address found in any text instead.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

#: ``scheme://`` then the user-info up to its last ``@`` before the host (the authority
#: ends at ``/``, ``?``, ``#`` or a space; a password with an unencoded ``@`` is taken whole).
_USERINFO: Final = re.compile(r"(?P<scheme>[a-z][a-z0-9+.\-]*://)[^/?#\s]*@", re.IGNORECASE)


def strip_userinfo(text: str) -> str:
    """``text`` with the ``user:password@`` of every address in it removed."""
    if "@" not in text:
        return text
    return _USERINFO.sub(r"\g<scheme>", text)


def strip_userinfo_deep(data: Any) -> Any:
    """A copy of ``data`` (mappings, lists, tuples, sets, texts, anything else as it is)
    with :func:`strip_userinfo` applied to every text in it, mapping keys included."""
    if isinstance(data, str):
        return strip_userinfo(data)
    if isinstance(data, Mapping):
        return {strip_userinfo_deep(k): strip_userinfo_deep(v) for k, v in data.items()}
    if isinstance(data, list | tuple | set | frozenset):
        return [strip_userinfo_deep(v) for v in data]
    return data
