"""A small protocol-v1 test client over real WebSockets.

Every message received is kept in `inbox` (not yet consumed) and `history`
(everything, in order). `request()` sends with a fresh `id` and returns the
message whose `re` matches, leaving events that arrived meanwhile in the inbox.

    async with Client.connect(url) as c:
        welcome = await c.hello("alice")
        created = await c.request({"t": "create", "game": "bakers_game"})
        lobby = await c.next("lobby")
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import Callable
from typing import Any

import msgspec
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

Message = dict[str, Any]
DEFAULT_TIMEOUT = 10.0


class Client:
    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.inbox: list[Message] = []
        self.history: list[Message] = []
        self.raw: list[bytes | str] = []
        self._ids = itertools.count(1)
        self._arrived = asyncio.Condition()
        self._reader = asyncio.create_task(self._read())
        self.player: str | None = None
        self.token: str | None = None
        self.welcome: Message | None = None
        # When each message arrived (time.time()), by the message's id(): kept apart so that
        # the messages stay exactly what the server sent.
        self.arrived: dict[int, float] = {}

    @classmethod
    def connect(cls, url: str, **kwargs: Any) -> _Connecting:
        return _Connecting(url, kwargs)

    async def _read(self) -> None:
        try:
            async for frame in self.ws:
                self.raw.append(frame)
                msg = msgspec.msgpack.decode(frame) if isinstance(frame, bytes) else {"text": frame}
                self.arrived[id(msg)] = time.time()
                async with self._arrived:
                    self.inbox.append(msg)
                    self.history.append(msg)
                    self._arrived.notify_all()
        except ConnectionClosed:
            pass
        finally:
            async with self._arrived:
                self._arrived.notify_all()

    # ------------------------------------------------------------ sending

    async def send(self, msg: Message) -> None:
        await self.ws.send(msgspec.msgpack.encode(msg))

    async def send_raw(self, data: bytes | str) -> None:
        await self.ws.send(data)

    async def request(self, msg: Message, timeout: float = DEFAULT_TIMEOUT) -> Message:
        rid = next(self._ids) + 1000
        await self.send({**msg, "id": rid})
        return await self.take(lambda m: m.get("re") == rid, timeout)

    async def hello(self, name: str, token: str | None = None, **extra: Any) -> Message:
        msg: Message = {"t": "hello", "v": 1, "name": name, **extra}
        if token is not None:
            msg["token"] = token
        reply = await self.request(msg)
        if reply["t"] == "welcome":
            self.player, self.token, self.welcome = reply["player"], reply["token"], reply
        return reply

    # ------------------------------------------------------------ receiving

    async def take(
        self, pred: Callable[[Message], bool], timeout: float = DEFAULT_TIMEOUT
    ) -> Message:
        """Remove and return the first inbox message matching `pred` (waiting for it)."""
        async with asyncio.timeout(timeout), self._arrived:
            while True:
                for i, msg in enumerate(self.inbox):
                    if pred(msg):
                        return self.inbox.pop(i)
                if self._reader.done():
                    raise ConnectionError(f"connection closed ({self.close_code}) while waiting")
                await self._arrived.wait()

    async def next(self, t: str, timeout: float = DEFAULT_TIMEOUT, **fields: Any) -> Message:
        """The next message of type `t` (whose fields equal `fields`), not a reply."""
        return await self.take(
            lambda m: (
                m.get("t") == t and "re" not in m and all(m.get(k) == v for k, v in fields.items())
            ),
            timeout,
        )

    async def quiet(self, seconds: float = 0.3) -> list[Message]:
        """Wait a little and return (and consume) whatever arrived unasked meanwhile."""
        await asyncio.sleep(seconds)
        async with self._arrived:
            out, self.inbox = self.inbox, []
        return out

    async def wait_closed(self, timeout: float = DEFAULT_TIMEOUT) -> int | None:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await self._reader
        return self.close_code

    @property
    def close_code(self) -> int | None:
        return self.ws.close_code

    @property
    def closed(self) -> bool:
        return self._reader.done()

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await self.ws.close()
        self._reader.cancel()
        with contextlib.suppress(BaseException):
            await self._reader


class _Connecting:
    def __init__(self, url: str, kwargs: dict[str, Any]) -> None:
        self.url, self.kwargs = url, kwargs
        self.client: Client | None = None

    def __await__(self) -> Any:
        return self._open().__await__()

    async def _open(self) -> Client:
        ws = await connect(self.url, compression=None, max_size=2**20, **self.kwargs)
        self.client = Client(ws)
        return self.client

    async def __aenter__(self) -> Client:
        return await self._open()

    async def __aexit__(self, *exc: object) -> None:
        if self.client is not None:
            await self.client.close()
