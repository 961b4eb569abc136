"""A lean WebSocket client for the benchmark's bots: binary frames over an asyncio protocol.

The bots share the machine's CPUs with the servers they measure, so every microsecond a
bot spends on a frame is taken from the server under test. websockets' client parses each
frame in a generator of Python code; this client does what a closed-loop bot needs and no
more: the opening handshake, masked binary frames out, unfragmented frames in (the
servers under test send nothing else), and a close. Both loads (the echo server and the
race server) use it alike.
"""

from __future__ import annotations

import asyncio
import base64
import collections
import os
import struct
from collections.abc import Callable
from typing import cast

from websockets.speedups import apply_mask


class Fault(Exception):
    """Something a correct server does not do; `kind` is what the report counts it under."""

    def __init__(self, kind: str, detail: str = "") -> None:
        super().__init__(f"{kind}: {detail}" if detail else kind)
        self.kind = kind
        self.detail = detail


class Closed(Exception):
    """The connection was closed (by either side) while a bot waited for a frame."""


class LeanClient(asyncio.Protocol):
    def __init__(self) -> None:
        self._transport: asyncio.Transport | None = None
        self._buffer = b""
        self._handshake: asyncio.Future[None] | None = None
        self._frames: collections.deque[bytes] = collections.deque()
        self._waiter: asyncio.Future[None] | None = None
        self._closed = False
        self.close_code: int | None = None  # of the close frame the server sent, if any
        # Where set, each binary frame goes straight to this callback, and `recv` is not
        # used: thousands of connections in one process then need no reader task each
        # (bench/capacity_bots.py). `on_close` is called once the connection is gone.
        self.on_frame: Callable[[bytes], None] | None = None
        self.on_close: Callable[[], None] | None = None

    # ------------------------------------------------------------ asyncio.Protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports are not subclasses of asyncio.Transport, but behave as one.
        self._transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        buf = self._buffer + data if self._buffer else data
        if self._handshake is not None:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                self._buffer = buf
                return
            status = buf[: buf.find(b"\r\n")]
            if b" 101 " not in status:
                self._handshake.set_exception(ConnectionError(status.decode(errors="replace")))
                assert self._transport is not None
                self._transport.close()
                return
            self._handshake.set_result(None)
            self._handshake = None
            buf = buf[end + 4 :]
        at, size = 0, len(buf)
        while size - at >= 2:
            opcode, length = buf[at] & 0x0F, buf[at + 1] & 0x7F
            head = 2
            if length == 126:
                if size - at < 4:
                    break
                (length,) = struct.unpack_from("!H", buf, at + 2)
                head = 4
            elif length == 127:
                if size - at < 10:
                    break
                (length,) = struct.unpack_from("!Q", buf, at + 2)
                head = 10
            if size - at < head + length:
                break
            if opcode == 0x2:
                if self.on_frame is not None:
                    self.on_frame(buf[at + head : at + head + length])
                else:
                    self._frames.append(buf[at + head : at + head + length])
            elif opcode == 0x9:
                self._frame(0x8A, buf[at + head : at + head + length])
            elif opcode == 0x8:
                self._closed = True
                reason = buf[at + head : at + head + length]
                self.close_code = struct.unpack_from("!H", reason)[0] if length >= 2 else 1005
            at += head + length
        self._buffer = buf[at:]
        waiter = self._waiter
        if waiter is not None and (self._frames or self._closed) and not waiter.done():
            waiter.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        self._closed = True
        if self.on_close is not None:
            self.on_close()
        if self._handshake is not None and not self._handshake.done():
            self._handshake.set_exception(exc or ConnectionError("closed during the handshake"))
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    # ------------------------------------------------------------ the bot's side

    @classmethod
    async def connect(cls, host: str, port: int, path: str = "/") -> LeanClient:
        loop = asyncio.get_running_loop()
        _, client = await loop.create_connection(cls, host, port)
        client._handshake = loop.create_future()
        key = base64.b64encode(os.urandom(16)).decode()
        assert client._transport is not None
        client._transport.write(
            f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        await client._handshake
        return client

    def send(self, payload: bytes) -> None:
        """One masked binary frame (RFC 6455 asks clients to mask every frame)."""
        self._frame(0x82, payload)

    def _frame(self, first: int, payload: bytes) -> None:
        """A masked frame: `first` is its first byte (FIN and the opcode)."""
        assert self._transport is not None
        if self._transport.is_closing():
            return
        n = len(payload)
        if n < 126:
            head = bytes((first, 0x80 | n))
        elif n < 65536:
            head = struct.pack("!BBH", first, 0xFE, n)
        else:
            head = struct.pack("!BBQ", first, 0xFF, n)
        mask = os.urandom(4)
        self._transport.write(head + mask + apply_mask(payload, mask))

    async def recv(self) -> bytes:
        while not self._frames:
            if self._closed:
                raise Closed
            self._waiter = asyncio.get_running_loop().create_future()
            await self._waiter
            self._waiter = None
        return self._frames.popleft()

    def close(self) -> None:
        """A close frame (1000), then the connection goes."""
        if self._transport is not None and not self._transport.is_closing():
            mask = os.urandom(4)
            self._transport.write(b"\x88\x82" + mask + apply_mask(b"\x03\xe8", mask))
            self._transport.close()
