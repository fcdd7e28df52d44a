"""A stream server that answers the way MediaMTX (OpenNVR's) does to a player's DESCRIBE.

Only the start of a session: a published path with an accepted token gets ``200`` and a
session description; a token it does not accept ``401``; a path nobody publishes ``404``.
No media is sent: it answers whether a stream *could* be opened, which is what the camera
entity asks before offering one. Serves RTSPS when given a TLS context.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import Callable

from yarl import URL

SDP = (
    "v=0\r\no=- 0 0 IN IP4 127.0.0.1\r\ns=Stream\r\nc=IN IP4 0.0.0.0\r\nt=0 0\r\n"
    "m=video 0 RTP/AVP 96\r\na=rtpmap:96 H264/90000\r\na=control:trackID=0\r\n"
)


class FakeStreamServer:
    """``await server.start()`` binds 127.0.0.1 (``port`` 0: any free port)."""

    def __init__(
        self,
        *,
        ssl_context: ssl.SSLContext | None = None,
        published: set[str] | None = None,
        accepts: Callable[[str, str | None], bool] = lambda path, token: True,
    ) -> None:
        self.ssl_context = ssl_context
        #: Paths with a publisher (``cam2``); None: every path.
        self.published = published
        #: Whether ``(path, token)`` may read.
        self.accepts = accepts
        #: The request line of every request (method and URL as sent).
        self.requests: list[str] = []
        self.port = 0
        self._server: asyncio.Server | None = None

    async def start(self, port: int = 0) -> None:
        # TLS is started in the handler: a client refusing the certificate is then an
        # answer of this server, not an error reported to the event loop.
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
            if self.ssl_context is not None:
                await writer.start_tls(self.ssl_context)
            head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
            lines = head.split("\r\n")
            self.requests.append(lines[0])
            method, target, _ = [*lines[0].split(" ", 2), "", ""][:3]
            cseq = next((ln.split(":", 1)[1].strip() for ln in lines if ln.startswith("CSeq")), "0")
            writer.write(self._answer(method, URL(target), cseq))
            await writer.drain()
        writer.close()

    def _answer(self, method: str, url: URL, cseq: str) -> bytes:
        path = url.path.strip("/")
        if method == "OPTIONS":
            return _reply("200 OK", cseq, "Public: DESCRIBE, SETUP, PLAY, TEARDOWN\r\n")
        if method != "DESCRIBE":
            return _reply("501 Not Implemented", cseq)
        if not self.accepts(path, url.query.get("token")):
            return _reply("401 Unauthorized", cseq, 'WWW-Authenticate: Basic realm="mediamtx"\r\n')
        if self.published is not None and path not in self.published:
            return _reply("404 Not Found", cseq)
        body = SDP.encode()
        headers = f"Content-Type: application/sdp\r\nContent-Length: {len(body)}\r\n"
        return _reply("200 OK", cseq, headers) + body


def _reply(status: str, cseq: str, headers: str = "") -> bytes:
    return f"RTSP/1.0 {status}\r\nCSeq: {cseq}\r\n{headers}\r\n".encode()
