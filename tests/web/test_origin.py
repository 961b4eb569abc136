"""The WebSocket handshake's Origin check: the server's own pages and the origins of
--allowed-origins may open a session; a page of any other origin gets HTTP 403 and no
session; clients that send no Origin (the terminal client, bots) are not concerned."""

from __future__ import annotations

import asyncio

import pytest
from support.server_proc import ServerFactory
from support.ws_client import Client
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from server.config import normalise_origin


async def _status(url: str, origin: str | None) -> int:
    try:
        async with connect(url, origin=origin, compression=None) as ws:  # type: ignore[arg-type]
            await ws.close()
            return 101
    except InvalidStatus as exc:
        return exc.response.status_code


async def test_foreign_pages_are_refused_and_the_own_origin_allowed(servers: ServerFactory) -> None:
    server = servers.start()
    port = server.port
    assert await _status(server.ws_url, None) == 101
    assert await _status(server.ws_url, f"http://127.0.0.1:{port}") == 101
    assert await _status(server.ws_url, f"https://127.0.0.1:{port}") == 101  # behind TLS
    assert await _status(server.ws_url, "http://evil.example") == 403
    assert await _status(server.ws_url, f"http://127.0.0.1:{port + 1}") == 403
    assert await _status(server.ws_url, "null") == 403
    assert "WebSocket handshake from origin 'http://evil.example' refused" in server.log_text()


async def test_allowed_origins_setting(servers: ServerFactory) -> None:
    server = servers.start(
        args=["--allowed-origins", "https://play.example.org,http://a.test:8080/"]
    )
    assert await _status(server.ws_url, "https://play.example.org") == 101
    assert await _status(server.ws_url, "https://PLAY.example.org:443") == 101
    assert await _status(server.ws_url, "http://a.test:8080") == 101
    assert await _status(server.ws_url, "http://play.example.org") == 403
    assert await _status(server.ws_url, "https://evil.example") == 403
    async with Client.connect(server.ws_url, origin="https://play.example.org") as c:
        assert (await c.hello("cat"))["t"] == "welcome"


async def test_the_public_urls_origin_is_allowed(servers: ServerFactory) -> None:
    """Behind a proxy that rewrites Host, the page a race link opens is at the public URL."""
    server = servers.start(env={"SOLITAIRE_PUBLIC_URL": "https://play.example.org/solitaire/"})
    assert await _status(server.ws_url, "https://play.example.org") == 101
    assert await _status(server.ws_url, "http://play.example.org") == 403
    assert await _status(server.ws_url, "https://evil.example") == 403


async def test_the_terminal_clients_websocket_library_sends_no_origin() -> None:
    """What websockets' client (the terminal client's) sends: no Origin header at all."""
    seen: list[bytes] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append(await reader.readuntil(b"\r\n\r\n"))
        writer.close()

    listener = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    with pytest.raises(Exception):  # noqa: B017 - the listener answers nothing
        async with connect(f"ws://127.0.0.1:{port}/ws", open_timeout=5):
            pass
    listener.close()
    assert seen and b"\r\nupgrade: websocket" in seen[0].lower()
    assert b"\r\norigin:" not in seen[0].lower()


def test_origins_are_normalised() -> None:
    assert normalise_origin("HTTPS://Play.Example.org:443/") == "https://play.example.org"
    assert normalise_origin("http://a.test:8080") == "http://a.test:8080"
    for bad in ("null", "ftp://x", "https://x/path", "play.example.org"):
        with pytest.raises(ValueError):
            normalise_origin(bad)
