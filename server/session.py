"""One WebSocket connection: greeting, rate limits, decoding, dispatch, sending.

Messages arrive in the connection's inbox (server/connection.py); a worker task,
started when one arrives and gone when the inbox is empty, handles them one at a
time, in order. Sending never waits: frames are queued and written once per turn
of the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING, NoReturn

from redis.exceptions import RedisError
from websockets.exceptions import ConnectionClosed
from websockets.protocol import State as WsState

from server import protocol as p
from server.connection import InboxConnection
from server.handlers import handle_hello
from server.ratelimit import FloodGuard, TokenBucket
from server.redis_client import StoreUnavailable

if TYPE_CHECKING:
    from server.app import App

log = logging.getLogger(__name__)

_ids = itertools.count(1)


class _Closed(Exception):
    """This session closed its connection."""


class Session:
    def __init__(self, app: App, ws: InboxConnection) -> None:
        self.app = app
        self.ws = ws
        self.uid = f"{app.instance}.{next(_ids)}"
        self.player: str | None = None
        self.name: str | None = None
        self.welcomed = False
        cfg = app.config
        self.bucket = TokenBucket(cfg.rate, cfg.burst)
        self.flood = FloodGuard(cfg.flood_limit, cfg.flood_window_s)
        self.busy = False
        self._loop = asyncio.get_running_loop()
        self._worker: asyncio.Task[None] | None = None
        self._refused = False  # the connection is closing on our side: read nothing more
        self._outbox: list[bytes] = []
        self._flush_scheduled = False

    def __repr__(self) -> str:
        return f"<Session {self.uid} player={self.player}>"

    # ------------------------------------------------------------ life

    async def run(self) -> None:
        """Serves the connection until it closes (the connection server's handler for it)."""
        app, ws = self.app, self.ws
        app.sessions.add(self)
        app.metrics.connections.inc()
        app.metrics.connections_opened.inc()
        timer = self._loop.call_later(app.config.hello_timeout_s, self._hello_overdue)
        ws.on_message = self._wake
        self._wake()  # messages that arrived before this handler ran
        try:
            await ws.wait_closed()
            worker = self._worker
            if worker is not None:
                # A request under way still finishes: its move is stored even if nobody
                # is left to hear the reply.
                await asyncio.shield(worker)
        finally:
            timer.cancel()
            ws.on_message = None
            ws.inbox.clear()
            app.hub.remove(self)
            app.sessions.discard(self)
            app.metrics.connections.dec()
            if self.player:
                log.debug("player %s disconnected (%s)", self.player, self.uid)

    def _wake(self) -> None:
        """A message is in the inbox: start the worker unless it is running."""
        if self._refused:
            self.ws.inbox.clear()
        elif self._worker is None:
            self._worker = self._loop.create_task(self._work())

    async def _work(self) -> None:
        """Handles the inbox's messages one at a time, in order, until it is empty."""
        ws = self.ws
        try:
            while (frame := ws.take()) is not None:
                request = self._request(frame)
                if request is None:
                    continue
                if self.welcomed:
                    await self._dispatch(request)
                else:
                    self.welcomed = await self._dispatch(request, greeting=True)
        except (ConnectionClosed, _Closed):
            ws.inbox.clear()
        finally:
            self._worker = None

    def _hello_overdue(self) -> None:
        if not self.welcomed:
            self._refused = True
            self.app.spawn(self.close(p.CLOSE_POLICY, "no hello in time"))

    def _request(self, frame: bytes | str) -> p.Request | None:
        """The request in a message, or None if there is none to handle (its error is
        sent); raises _Closed when the connection must close (the close is under way)."""
        if not self._admit(frame):
            return None
        if isinstance(frame, str):
            if not self.welcomed:
                self._refuse("the first message must be a binary hello")
            self.error(p.BAD_REQUEST, "text frames are not accepted: send msgpack", None)
            return None
        request = self.app.decoder.decode(frame)
        if isinstance(request, p.BadFrame):
            if self.welcomed or request.t == "hello":  # a bad hello may be said again
                self.error(p.BAD_REQUEST, request.msg, request.re)
                return None
            self._refuse("the first message must be hello")
        if not self.welcomed and not isinstance(request, p.Hello):
            self._refuse("the first message must be hello")
        return request

    def _refuse(self, reason: str) -> NoReturn:
        self._refused = True
        self.app.spawn(self.close(p.CLOSE_POLICY, reason))
        raise _Closed

    def _admit(self, frame: bytes | str) -> bool:
        """Applies the rate limit; False if the message is dropped (with its error sent)."""
        now = self._loop.time()
        flooding = self.flood.flooding(now)
        if self.bucket.allow(now):
            return True
        if flooding:
            log.warning("connection %s (player %s) keeps flooding: closed", self.uid, self.player)
            self._refuse("too many messages")
        re = self.app.decoder.decode_id(frame) if isinstance(frame, bytes) else None
        self.error(p.RATE_LIMITED, "too many messages; slow down", re)
        return False

    async def _dispatch(self, request: p.Request, *, greeting: bool = False) -> bool:
        app = self.app
        if app.draining:
            self.error(p.UNAVAILABLE, "the server is shutting down; reconnect", request.id)
            return False
        self.busy = True
        try:
            if isinstance(request, p.Hello):
                if not greeting:
                    self.error(p.BAD_REQUEST, "hello was already said", request.id)
                    return False
                return await handle_hello(self, request)
            handler = app.handlers.get(type(request))
            if handler is None:
                tag = type(request).__struct_config__.tag
                self.error(p.BAD_REQUEST, f"{tag!r} is not served here", request.id)
                return False
            await handler(self, request)
            return True
        except ConnectionClosed:
            raise
        except (StoreUnavailable, RedisError) as exc:
            log.warning("player %s: store unavailable: %s", self.player, exc)
            self.error(p.UNAVAILABLE, "the store is unavailable; try again", request.id)
        except Exception:
            log.exception("player %s: %s failed", self.player, type(request).__name__)
            self.error(p.INTERNAL, "internal error", request.id)
        finally:
            self.busy = False
        return False

    # ------------------------------------------------------------ sending

    def send(self, message: p.Message) -> None:
        self.send_frames((p.encode(message),))

    def error(self, code: str, msg: str, re: int | None) -> None:
        self.send(p.Error(re=re, code=code, msg=msg))

    def send_frames(self, frames: Iterable[bytes]) -> None:
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
            self._loop.call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_scheduled = False
        frames, self._outbox = self._outbox, []
        if frames:
            self.ws.write_binaries(frames)

    async def close(self, code: int, reason: str) -> None:
        with contextlib.suppress(ConnectionClosed):
            await self.ws.close(code, reason)
