"""Whether an RTSP(S) stream can be opened, asked the way a player starts: one DESCRIBE.

OpenNVR advertises its stream server's URLs whether or not Home Assistant can reach them
(a port closed by a firewall, a certificate not trusted, a camera not publishing). Offering
such a stream gives the user a dead player and Home Assistant's stream worker an error every
few seconds, so the camera entity asks first. A DESCRIBE answered ``200`` means a player
would get the stream's description and could start; anything else names what is wrong.
"""

from __future__ import annotations

import asyncio
import base64
import os
import ssl
from dataclasses import dataclass
from enum import StrEnum

from yarl import URL

DEFAULT_PORTS = {"rtsp": 554, "rtsps": 322}
#: A status line is short; a server that sends more before a line end is not RTSP.
MAX_STATUS_LINE = 1024


class StreamProblem(StrEnum):
    """Why a stream cannot be opened (each names a repair the user can read)."""

    UNREACHABLE = "unreachable"  # nothing answers at the address, or not in time
    TLS = "tls"  # the TLS handshake failed (most often: a certificate not trusted)
    REFUSED = "refused"  # 401/403: the stream server did not accept the token
    NOT_FOUND = "not_found"  # 404: no stream is published at that path
    FAILED = "failed"  # another answer, or something that is not RTSP


@dataclass(frozen=True, slots=True)
class ProbeResult:
    """A probe's outcome: ``problem`` None when the stream can be opened; ``detail`` is a
    short technical fact (a status line, an error name) without the URL or its token."""

    problem: StreamProblem | None
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.problem is None


def stream_address(url: str) -> str:
    """``host:port`` of a stream URL: what a message may name (never the path's token)."""
    parsed = URL(url)
    return f"{parsed.host}:{parsed.port or DEFAULT_PORTS.get(parsed.scheme, 554)}"


async def probe_rtsp(
    url: str, ssl_context: ssl.SSLContext, *, within_s: float = 5.0
) -> ProbeResult:
    """DESCRIBE ``url`` (over TLS with ``ssl_context`` for ``rtsps``) and read the status
    line; never raises."""
    parsed = URL(url)
    if parsed.scheme not in DEFAULT_PORTS or not parsed.host:
        return ProbeResult(StreamProblem.FAILED, f"not an RTSP URL ({parsed.scheme or '?'})")
    port = parsed.port or DEFAULT_PORTS[parsed.scheme]
    tls = ssl_context if parsed.scheme == "rtsps" else None
    try:
        async with asyncio.timeout(within_s):
            reader, writer = await asyncio.open_connection(parsed.host, port, ssl=tls)
            try:
                writer.write(_describe(parsed))
                await writer.drain()
                line = await reader.readuntil(b"\n")
            finally:
                writer.close()
    except ssl.SSLError as err:
        return ProbeResult(StreamProblem.TLS, getattr(err, "reason", None) or type(err).__name__)
    except TimeoutError:
        return ProbeResult(StreamProblem.UNREACHABLE, "no answer in time")
    except asyncio.LimitOverrunError, asyncio.IncompleteReadError:
        return ProbeResult(StreamProblem.FAILED, "no RTSP answer")
    except OSError as err:
        # asyncio's own text names the address; the errno says what happened.
        detail = os.strerror(err.errno) if err.errno else type(err).__name__
        return ProbeResult(StreamProblem.UNREACHABLE, detail)
    return _status(line)


def _describe(url: URL) -> bytes:
    """The request: the URL without credentials (sent as Basic auth when it had any)."""
    lines = [
        f"DESCRIBE {url.with_user(None)} RTSP/1.0",
        "CSeq: 1",
        "Accept: application/sdp",
        "User-Agent: OpenNVR Workflows",
    ]
    if url.user is not None:
        pair = f"{url.user}:{url.password or ''}".encode()
        lines.append("Authorization: Basic " + base64.b64encode(pair).decode())
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _status(line: bytes) -> ProbeResult:
    """``RTSP/1.0 200 OK`` -> can be opened; other codes name the problem."""
    parts = line.decode("latin-1").strip().split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("RTSP/") or not parts[1].isdigit():
        return ProbeResult(StreamProblem.FAILED, "no RTSP answer")
    code = int(parts[1])
    detail = " ".join(parts[1:])[:MAX_STATUS_LINE]
    if code == 200:
        return ProbeResult(None, detail)
    if code in (401, 403):
        return ProbeResult(StreamProblem.REFUSED, detail)
    if code == 404:
        return ProbeResult(StreamProblem.NOT_FOUND, detail)
    return ProbeResult(StreamProblem.FAILED, detail)
