"""The stream probe against a real RTSP(S) server on a loopback port: what it answers
for a stream that opens, one refused, one not published, TLS trouble, nothing listening,
and a server that is not RTSP."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncGenerator

import pytest

from custom_components.opennvr_workflows.nvr.rtsp_probe import (
    StreamProblem,
    probe_rtsp,
    stream_address,
)
from tests.fakes.rtsp_server import FakeStreamServer
from tests.fakes.tls import self_signed_context

TOKEN = "s3cr3t-token"


def _accepts(path: str, token: str | None) -> bool:
    return token == TOKEN


def no_verify() -> ssl.SSLContext:
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return ctx


@pytest.fixture
async def rtsps(socket_enabled: None) -> AsyncGenerator[FakeStreamServer]:
    server = FakeStreamServer(
        ssl_context=self_signed_context(), published={"cam2"}, accepts=_accepts
    )
    await server.start()
    yield server
    await server.stop()


async def test_a_published_stream_with_its_token_opens(rtsps: FakeStreamServer) -> None:
    url = f"rtsps://127.0.0.1:{rtsps.port}/cam2?token={TOKEN}"
    result = await probe_rtsp(url, no_verify())
    assert result.ok, result
    assert result.problem is None
    assert result.detail == "200 OK"
    assert rtsps.requests == [f"DESCRIBE {url} RTSP/1.0"]


@pytest.mark.parametrize(
    ("path", "token", "problem", "detail"),
    [
        ("cam2", "wrong", StreamProblem.REFUSED, "401 Unauthorized"),
        ("cam7", TOKEN, StreamProblem.NOT_FOUND, "404 Not Found"),
    ],
)
async def test_what_the_server_refuses_is_named(
    rtsps: FakeStreamServer, path: str, token: str, problem: StreamProblem, detail: str
) -> None:
    url = f"rtsps://127.0.0.1:{rtsps.port}/{path}?token={token}"
    result = await probe_rtsp(url, no_verify())
    assert not result.ok
    assert result.problem is problem
    assert result.detail == detail
    assert token not in result.detail


async def test_an_untrusted_certificate_is_a_tls_problem(rtsps: FakeStreamServer) -> None:
    result = await probe_rtsp(
        f"rtsps://127.0.0.1:{rtsps.port}/cam2?token={TOKEN}", ssl.create_default_context()
    )
    assert result.problem is StreamProblem.TLS
    assert result.detail == "CERTIFICATE_VERIFY_FAILED"
    assert rtsps.requests == []  # nothing was sent over a connection that failed the check


async def test_nothing_listening_is_unreachable(socket_enabled: None) -> None:
    server = FakeStreamServer()
    await server.start()
    port = server.port
    await server.stop()  # the port is free again: connections are refused
    result = await probe_rtsp(f"rtsps://127.0.0.1:{port}/cam2?token=x", no_verify())
    assert result.problem is StreamProblem.UNREACHABLE
    assert "refused" in result.detail.lower()


async def test_a_server_that_never_answers_is_unreachable_in_time(socket_enabled: None) -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()  # reads until the client gives up
        writer.close()

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        result = await probe_rtsp(f"rtsp://127.0.0.1:{port}/cam2", no_verify(), within_s=0.2)
    finally:
        server.close()
        await server.wait_closed()
    assert result.problem is StreamProblem.UNREACHABLE
    assert result.detail == "no answer in time"


@pytest.mark.parametrize(
    ("answer", "detail"),
    [(b"HTTP/1.1 400 Bad Request\r\n\r\n", "no RTSP answer"), (b"", "no RTSP answer")],
)
async def test_a_server_that_is_not_rtsp_failed(
    socket_enabled: None, answer: bytes, detail: str
) -> None:
    async def http(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(answer)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(http, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        result = await probe_rtsp(f"rtsp://127.0.0.1:{port}/cam2", no_verify())
    finally:
        server.close()
        await server.wait_closed()
    assert result.problem is StreamProblem.FAILED
    assert result.detail == detail


async def test_other_statuses_fail_with_their_status_line(socket_enabled: None) -> None:
    server = FakeStreamServer()
    server._answer = lambda method, url, cseq: b"RTSP/1.0 503 Service Unavailable\r\n\r\n"  # type: ignore[method-assign]
    await server.start()
    try:
        result = await probe_rtsp(f"rtsp://127.0.0.1:{server.port}/cam2", no_verify())
    finally:
        await server.stop()
    assert result.problem is StreamProblem.FAILED
    assert result.detail == "503 Service Unavailable"


async def test_credentials_in_the_url_go_as_basic_auth(socket_enabled: None) -> None:
    seen: list[bytes] = []

    async def record(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append(await reader.readuntil(b"\r\n\r\n"))
        writer.write(b"RTSP/1.0 200 OK\r\nCSeq: 1\r\n\r\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(record, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        result = await probe_rtsp(f"rtsp://viewer:pw@127.0.0.1:{port}/cam2", no_verify())
    finally:
        server.close()
        await server.wait_closed()
    assert result.ok
    request = seen[0].decode()
    assert request.startswith(f"DESCRIBE rtsp://127.0.0.1:{port}/cam2 RTSP/1.0\r\n")
    assert "Authorization: Basic dmlld2VyOnB3\r\n" in request  # viewer:pw


@pytest.mark.parametrize("url", ["https://127.0.0.1/cam2", "rtsp:///cam2", "not a url at all"])
async def test_what_is_not_an_rtsp_url_is_refused_without_connecting(url: str) -> None:
    result = await probe_rtsp(url, no_verify())
    assert result.problem is StreamProblem.FAILED
    assert result.detail.startswith("not an RTSP URL")


def test_address_names_host_and_port_only() -> None:
    assert stream_address("rtsps://nvr.local:8322/cam2?token=abc") == "nvr.local:8322"
    assert stream_address("rtsps://nvr.local/cam2?token=abc") == "nvr.local:322"
    assert stream_address("rtsp://u:p@10.0.0.2/cam2") == "10.0.0.2:554"
