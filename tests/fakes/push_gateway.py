"""A stand-in for the companion apps' push service, on a real loopback port.

A phone registered through ``mobile_app`` gives Home Assistant a ``push_url`` and a
``push_token``; ``notify.mobile_app_<device>`` then POSTs every notification to that URL as
JSON (``message``, ``title``, ``data``, ``push_token``, ``registration_info``) and reads the
answer's JSON. Pointing registrations at this server lets a test see exactly what a phone
would have been sent, through Home Assistant's own notify code and HTTP client, with
nothing mocked in between.

It answers 201 with ``{}`` like the real service. :meth:`PushGateway.fail_for` makes it
refuse one phone's pushes (HTTP 500, 429, ...) with the service's error shape, so a test
can see what the sender does when a delivery fails; refused bodies are kept apart in
:attr:`PushGateway.refused`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from aiohttp import web

#: A pushed notification as Home Assistant sent it (the decoded JSON body).
Push = dict[str, Any]


class PushGateway:
    """Records every push Home Assistant sends; ``url`` is the base to register phones with
    (any path under it is accepted, like the real service's per-platform paths)."""

    def __init__(self) -> None:
        #: Every accepted push, in arrival order.
        self.sent: list[Push] = []
        #: Pushes answered with an error (see :meth:`fail_for`), in arrival order.
        self.refused: list[Push] = []
        #: The request path of each accepted push, parallel to :attr:`sent`.
        self.paths: list[str] = []
        self._failing: dict[str, int] = {}
        self._arrived = asyncio.Condition()
        self._runner: web.AppRunner | None = None
        self.port = 0

    @property
    def url(self) -> str:
        if not self.port:
            raise RuntimeError("the push gateway is not started")
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        """Listen on a free loopback port."""
        app = web.Application()
        app.router.add_post("/{path:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert isinstance(server, asyncio.Server)
        self.port = server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> PushGateway:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # ── what was sent ──────────────────────────────────────────────────────────────────

    def to(self, push_token: str) -> list[Push]:
        """The accepted pushes addressed to one phone (by its registration's push token)."""
        return [push for push in self.sent if push.get("push_token") == push_token]

    async def wait_for(self, predicate: Callable[[Push], bool], within: float = 5) -> Push:
        """The first accepted push (already here or still to come) that ``predicate``
        accepts; TimeoutError naming what did arrive when none does in ``within`` s."""
        async with self._arrived:
            try:
                async with asyncio.timeout(within):
                    while True:
                        for push in self.sent:
                            if predicate(push):
                                return push
                        await self._arrived.wait()
            except TimeoutError:
                raise TimeoutError(
                    f"no matching push within {within}s; received: {self.sent!r}"
                ) from None

    # ── failures ───────────────────────────────────────────────────────────────────────

    def fail_for(self, push_token: str, status: int = 500) -> None:
        """Answer this phone's pushes with ``status`` (and the service's error body) until
        :meth:`recover`; 429 is the service's rate limit."""
        self._failing[push_token] = status

    def recover(self, push_token: str) -> None:
        self._failing.pop(push_token, None)

    # ── serving ────────────────────────────────────────────────────────────────────────

    async def _handle(self, request: web.Request) -> web.Response:
        try:
            body = await request.json()
        except ValueError:
            return web.json_response({"message": "Body is not JSON"}, status=400)
        if not isinstance(body, dict) or not isinstance(body.get("push_token"), str):
            return web.json_response({"message": "push_token is required"}, status=400)
        status = self._failing.get(body["push_token"])
        if status is not None:
            self.refused.append(body)
            return web.json_response({"message": f"Refused with {status}"}, status=status)
        async with self._arrived:
            self.sent.append(body)
            self.paths.append(request.path)
            self._arrived.notify_all()
        return web.json_response({}, status=201)
