"""One WebSocket connection: greeting, rate limits, decoding, dispatch, sending.

Each connection runs in its own task (websockets' handler task); requests of
one connection are handled one at a time, in order.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING

from redis.exceptions import RedisError
from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed
from websockets.protocol import State as WsState

from server import protocol as p
from server.handlers import handle_hello
from server.ratelimit import FloodGuard, TokenBucket
from server.store import StoreUnavailable

if TYPE_CHECKING:
    from server.app import App

log = logging.getLogger(__name__)

_ids = itertools.count(1)


class _Closed(Exception):
    """This session closed its connection."""


class Session:
    def __init__(self, app: App, ws: ServerConnection) -> None:
        self.app = app
        self.ws = ws
        self.uid = f"{app.instance}.{next(_ids)}"
        self.player: str | None = None
        self.name: str | None = None
        cfg = app.config
        self.bucket = TokenBucket(cfg.rate, cfg.burst)
        self.flood = FloodGuard(cfg.flood_limit, cfg.flood_window_s)
        self.busy = False
        self._outbox: list[bytes] = []
        self._flush_scheduled = False

    def __repr__(self) -> str:
        return f"<Session {self.uid} player={self.player}>"

    # ------------------------------------------------------------ life

    async def run(self) -> None:
        app = self.app
        app.sessions.add(self)
        app.metrics.connections.inc()
        app.metrics.connections_opened.inc()
        try:
            if await self._greet():
                await self._serve()
        except (ConnectionClosed, _Closed):
            pass
        finally:
            app.hub.remove(self)
            app.sessions.discard(self)
            app.metrics.connections.dec()
            if self.player:
                log.debug("player %s disconnected (%s)", self.player, self.uid)

    async def _greet(self) -> bool:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.app.config.hello_timeout_s
        while True:
            try:
                async with asyncio.timeout_at(deadline):
                    frame = await self.ws.recv()
            except TimeoutError:
                await self.close(p.CLOSE_POLICY, "no hello in time")
                return False
            if not await self._admit(frame):
                continue
            if isinstance(frame, str):
                await self.close(p.CLOSE_POLICY, "the first message must be a binary hello")
                return False
            request = self.app.decoder.decode(frame)
            if isinstance(request, p.BadFrame):
                if request.t == "hello":
                    await self.error(p.BAD_REQUEST, request.msg, request.re)
                    continue
                await self.close(p.CLOSE_POLICY, "the first message must be hello")
                return False
            if not isinstance(request, p.Hello):
                await self.close(p.CLOSE_POLICY, "the first message must be hello")
                return False
            if await self._dispatch(request, greeting=True):
                return True

    async def _serve(self) -> None:
        async for frame in self.ws:
            if not await self._admit(frame):
                continue
            if isinstance(frame, str):
                await self.error(p.BAD_REQUEST, "text frames are not accepted: send msgpack", None)
                continue
            request = self.app.decoder.decode(frame)
            if isinstance(request, p.BadFrame):
                await self.error(p.BAD_REQUEST, request.msg, request.re)
                continue
            await self._dispatch(request)

    async def _admit(self, frame: str | bytes) -> bool:
        """Applies the rate limit; False if the message is dropped."""
        now = asyncio.get_running_loop().time()
        flooding = self.flood.flooding(now)
        if self.bucket.allow(now):
            return True
        if flooding:
            log.warning("connection %s (player %s) keeps flooding: closed", self.uid, self.player)
            await self.close(p.CLOSE_POLICY, "too many messages")
            raise _Closed
        re = None
        if isinstance(frame, bytes):
            bad = self.app.decoder.decode_id(frame)
            re = bad
        await self.error(p.RATE_LIMITED, "too many messages; slow down", re)
        return False

    async def _dispatch(self, request: p.Request, *, greeting: bool = False) -> bool:
        app = self.app
        if app.draining:
            await self.error(p.UNAVAILABLE, "the server is shutting down; reconnect", request.id)
            return False
        self.busy = True
        try:
            if isinstance(request, p.Hello):
                if not greeting:
                    await self.error(p.BAD_REQUEST, "hello was already said", request.id)
                    return False
                return await handle_hello(self, request)
            handler = app.handlers.get(type(request))
            if handler is None:
                tag = type(request).__struct_config__.tag
                await self.error(p.BAD_REQUEST, f"{tag!r} is not served here", request.id)
                return False
            await handler(self, request)
            return True
        except ConnectionClosed:
            raise
        except (StoreUnavailable, RedisError) as exc:
            log.warning("player %s: store unavailable: %s", self.player, exc)
            await self.error(p.UNAVAILABLE, "the store is unavailable; try again", request.id)
        except Exception:
            log.exception("player %s: %s failed", self.player, type(request).__name__)
            await self.error(p.INTERNAL, "internal error", request.id)
        finally:
            self.busy = False
        return False

    # ------------------------------------------------------------ sending

    async def send(self, message: p.Message) -> None:
        await self.send_frames((p.encode(message),))

    async def error(self, code: str, msg: str, re: int | None) -> None:
        await self.send(p.Error(re=re, code=code, msg=msg))

    async def send_frames(self, frames: Iterable[bytes]) -> None:
        self.push(frames)

    def push(self, frames: Iterable[bytes]) -> None:
        """Queue frames; everything queued during one turn of the event loop leaves in one write.

        Never waits: a reply and the events that follow it (a move's `state` and its
        `progress`) cost one system call, and one slow reader never holds up the others.
        """
        ws = self.ws
        if ws.protocol.state is not WsState.OPEN:
            return
        transport = ws.transport
        if transport.get_write_buffer_size() > self.app.config.max_outbox_bytes:
            log.warning("connection %s (player %s) reads too slowly: closed", self.uid, self.player)
            self.app.spawn(self.close(p.CLOSE_POLICY, "not reading fast enough"))
            return
        self._outbox.extend(frames)
        if not self._flush_scheduled:
            self._flush_scheduled = True
            asyncio.get_running_loop().call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_scheduled = False
        frames, self._outbox = self._outbox, []
        protocol = self.ws.protocol
        if not frames or protocol.state is not WsState.OPEN:
            return
        # websockets' Sans-I/O layer frames the messages; we hand the bytes to the transport.
        for frame in frames:
            protocol.send_binary(frame)
        self.ws.transport.write(b"".join(protocol.data_to_send()))

    async def close(self, code: int, reason: str) -> None:
        with contextlib.suppress(ConnectionClosed):
            await self.ws.close(code, reason)
