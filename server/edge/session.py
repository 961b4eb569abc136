"""One WebSocket connection: greeting, rate limits, decoding, dispatch, sending.

Messages arrive in the connection's inbox (server/edge/connection.py); a worker task,
started when one arrives, handles them one at a time, in order. Once the player has asked
for more than the hello, it waits for the next message when the inbox is empty, and ends
when idle for a while (server/edge/lingering.py). Sending never waits: frames are queued
and written once per turn of the event loop (server/edge/outgoing.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, NoReturn

from websockets.exceptions import ConnectionClosed
from websockets.protocol import State as WsState

import protocol as p
from server.config import Config
from server.edge.admission import Admission, NewPlayers
from server.edge.connection import InboxConnection
from server.edge.dispatch import Handler
from server.edge.hub import Hub
from server.edge.legal import frame_with_legal, with_legal
from server.edge.lingering import Lingering
from server.edge.outgoing import Outgoing
from server.edge.ratelimit import FloodGuard, TokenBucket
from server.metrics import Metrics
from server.play.players import Players, Who
from server.play.presence import Presence
from server.store.unavailable import StoreUnavailable

log = logging.getLogger(__name__)

# Requests whose only effect is their answer, and which hold a solver worker meanwhile:
# a closed connection's are dropped if queued, cancelled if under way.
ANSWER_ONLY = (p.Hint,)
PEER_CHECK_S = 0.25  # how often a connection waiting for one of them is checked
LINGER_S = 10.0  # a worker idle for one to two of these ends (server/edge/lingering.py)


@dataclass
class SessionContext:
    """What every session of the process shares: its dependencies, named."""

    instance: str
    config: Config
    metrics: Metrics
    admission: Admission
    new_players: NewPlayers
    hub: Hub
    decoder: p.RequestDecoder
    players: Players
    presence: Presence
    handlers: dict[type[p.Request], Handler]
    spawn: Callable[[Coroutine[Any, Any, Any]], None]
    ids: Iterator[int]
    sessions: set[Session]
    draining: Callable[[], bool]
    outgoing: Outgoing = field(default_factory=Outgoing)
    lingering: Lingering = field(default_factory=lambda: Lingering(LINGER_S))


class _Closed(Exception):
    """This session closed its connection."""


class Session:
    def __init__(self, ctx: SessionContext, ws: InboxConnection) -> None:
        self.ctx = ctx
        self.ws = ws
        self.uid = f"{ctx.instance}.{next(ctx.ids)}"
        self.player: str | None = None
        self.who: Who | None = None
        self.welcomed = False
        self.legal = False  # hello asked for `legal` in its states (server/edge/legal.py)
        cfg = ctx.config
        self.bucket = TokenBucket(cfg.rate, cfg.burst)
        self.flood = FloodGuard(cfg.flood_limit, cfg.flood_window_s)
        self.busy = False
        self._loop = asyncio.get_running_loop()
        self._worker: asyncio.Task[None] | None = None
        # The worker waiting for the next message (server/edge/lingering.py): its result
        # says whether to go on (a message came) or end (idle).
        self._parked: asyncio.Future[bool] | None = None
        self._lingers = False  # a request after the hello came: the worker waits when idle
        self._search: asyncio.Task[bool] | None = None  # an ANSWER_ONLY request under way
        self._refused = False  # the connection is closing on our side: read nothing more
        self._outbox: list[bytes] = []
        self._flush_scheduled = False
        # Events for this connection that arrive while it handles a request go out after
        # the request's replies, as a client expects (a move's state, then its progress).
        self._held: list[bytes] | None = None
        self._hello_timer: asyncio.TimerHandle | None = None  # until the hello is answered

    def __repr__(self) -> str:
        return f"<Session {self.uid} player={self.player}>"

    # ------------------------------------------------------------ life

    async def run(self) -> None:
        """Serves the connection until it closes (websockets' handler for it)."""
        ctx, ws = self.ctx, self.ws
        ctx.sessions.add(self)
        ctx.metrics.connections.inc()
        ctx.metrics.connections_opened.inc()
        self._hello_timer = self._loop.call_later(ctx.config.hello_timeout_s, self._hello_overdue)
        ws.on_message = self._wake
        self._wake()  # messages that arrived before this handler ran
        try:
            await ws.wait_closed()
            self.let_go()
            worker = self._worker
            if worker is not None:
                # A request under way still finishes: its move is stored even if nobody
                # is left to hear the reply. Only a search, which changes nothing, stops
                # (the solver pool frees its worker): nobody is left to hear its answer.
                if self._search is not None:
                    self._search.cancel()
                await asyncio.wait([worker])
        finally:
            self._stop_hello_timer()
            ws.on_message = None
            ws.inbox.clear()
            ctx.lingering.discard(self)
            ctx.hub.remove(self)
            ctx.sessions.discard(self)
            ctx.metrics.connections.dec()
            if self.who is not None and self.welcomed:
                log.debug("player %s disconnected (%s)", self.player, self.uid)
                ctx.spawn(ctx.presence.departed(self.who, ctx.draining()))

    def _wake(self) -> None:
        """A message is in the inbox: wake the worker if it waits, start it if there is none."""
        if self._refused:
            self.ws.inbox.clear()
        elif (parked := self._parked) is not None:
            self._parked = None
            parked.set_result(True)
        elif self._worker is None:
            self._worker = self._loop.create_task(self._work())

    def let_go(self) -> None:
        """Ends the worker if it waits for a message (idle, or the connection closed)."""
        if (parked := self._parked) is not None:
            self._parked = None
            parked.set_result(False)

    async def _work(self) -> None:
        """Handles the inbox's messages one at a time, in order; then, once the player has
        asked for more than the hello, waits for the next ones until let go."""
        ws = self.ws
        try:
            while True:
                frame = ws.take()
                if frame is None:
                    if not self._lingers:
                        return
                    parked = self._parked = self._loop.create_future()
                    self.ctx.lingering.add(self)
                    if not await parked:
                        return
                    continue
                request = self._request(frame)
                if request is None:
                    continue
                if isinstance(request, ANSWER_ONLY) and ws.protocol.state is not WsState.OPEN:
                    log.debug("connection %s closed: its queued %s dropped", self.uid,
                              type(request).__name__)  # fmt: skip
                    continue
                if self.welcomed and isinstance(request, ANSWER_ONLY):
                    await self._answer_while_open(request)
                elif self.welcomed:
                    self._lingers = True
                    await self._dispatch(request)
                else:
                    self.welcomed = await self._dispatch(request, greeting=True)
                    if self.welcomed:
                        self._stop_hello_timer()
        except (ConnectionClosed, _Closed):
            ws.inbox.clear()
        finally:
            self._worker = None
            self._parked = None

    async def _answer_while_open(self, request: p.Request) -> None:
        """A request whose only effect is its answer, in a task of its own that `run`
        cancels when the connection closes (the requests queued after it still run)."""
        search = self._loop.create_task(self._dispatch(request))
        self._search = search
        try:
            await asyncio.wait([search], timeout=PEER_CHECK_S)
            while not search.done():
                # With a full inbox reading is paused, and a client that left is noticed
                # only by asking the socket.
                if self.ws.peer_gone():
                    log.info("connection %s (player %s) gone during a %s: stopped", self.uid,
                             self.player, type(request).__name__)  # fmt: skip
                    search.cancel()
                    self.ws.transport.abort()
                await asyncio.wait([search], timeout=PEER_CHECK_S)
        finally:
            self._search = None
        if not search.cancelled():
            search.result()  # ConnectionClosed, as from any request

    def _stop_hello_timer(self) -> None:
        """Its time is over once the hello is answered (an idle player would otherwise
        hold the timer for hello_timeout_s after greeting)."""
        if self._hello_timer is not None:
            self._hello_timer.cancel()
            self._hello_timer = None

    def _hello_overdue(self) -> None:
        self._hello_timer = None
        if not self.welcomed:
            self._refused = True
            self.ctx.spawn(self.close(p.CLOSE_POLICY, "no hello in time"))

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
        request = self.ctx.decoder.decode(frame)
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
        self.ctx.spawn(self.close(p.CLOSE_POLICY, reason))
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
        re = self.ctx.decoder.decode_id(frame) if isinstance(frame, bytes) else None
        self.error(p.RATE_LIMITED, "too many messages; slow down", re)
        return False

    async def _dispatch(self, request: p.Request, *, greeting: bool = False) -> bool:
        """Answers one request (the one place a refusal becomes an `error` reply); True if
        it was answered without an error."""
        ctx = self.ctx
        if ctx.draining():
            self.error(p.UNAVAILABLE, "the server is shutting down; reconnect", request.id)
            return False
        self.busy = True
        self._held = []
        try:
            if isinstance(request, p.Hello):
                if not greeting:
                    raise p.Refused(p.BAD_REQUEST, "hello was already said")
                self.who, replies = await self._hello(request)
                self.legal = request.legal
                await ctx.presence.arrived(self.who)
                self.player = self.who.player
                ctx.hub.add(self)
            else:
                handler = ctx.handlers.get(type(request))
                if handler is None:
                    tag = type(request).__struct_config__.tag
                    raise p.Refused(p.BAD_REQUEST, f"{tag!r} is not served here")
                assert self.who is not None
                replies = await handler(self.who, request)
            if replies and replies[0].re is None:
                replies[0].re = request.id  # the first reply is the request's answer
            for reply in replies:
                self.send(reply)
            return True
        except ConnectionClosed:
            raise
        except StoreUnavailable as exc:
            log.warning("player %s: store unavailable: %s", self.player, exc)
            self.send(exc.reply(request.id))
        except p.Refused as refused:
            self.send(refused.reply(request.id))
        except Exception:
            log.exception("player %s: %s failed", self.player, type(request).__name__)
            self.error(p.INTERNAL, "internal error", request.id)
        finally:
            self.busy = False
            held, self._held = self._held, None
            if held:
                self.send_frames(held)
        return False

    async def _hello(self, request: p.Hello) -> tuple[Who, list[p.Message]]:
        """Players.hello, within the address's allowance of new players (a hello without
        a token makes one)."""
        ctx, address = self.ctx, self.ws.address
        if request.token is not None:
            return self._public(await ctx.players.hello(request, self.uid))
        await ctx.new_players.take(address)
        try:
            return self._public(await ctx.players.hello(request, self.uid))
        except p.Refused:
            # No player was made (a taken name, a wrong version, the store failing).
            try:
                await ctx.new_players.give_back(address)
            except StoreUnavailable as exc:
                log.warning("connection %s: new player of %s not given back: %s",
                            self.uid, address, exc)  # fmt: skip
            raise

    def _public(self, welcomed: tuple[Who, list[p.Message]]) -> tuple[Who, list[p.Message]]:
        """The welcome with the server's public address, when its operator set one."""
        url = self.ctx.config.public_url
        who, replies = welcomed
        if url is not None and replies and isinstance(replies[0], p.Welcome):
            replies[0].url = url
        return who, replies

    # ------------------------------------------------------------ sending

    def send(self, message: p.Message) -> None:
        if self.legal:
            message = with_legal(message)
        self._queue((p.encode(message),))

    def deliver(self, frames: Iterable[bytes]) -> None:
        """Event frames for this connection (the hub's delivery)."""
        if self.legal:
            frames = [frame_with_legal(f) for f in frames]
        if self._held is not None:
            self._held.extend(frames)
        else:
            self._queue(frames)

    def error(self, code: str, msg: str, re: int | None) -> None:
        self.send(p.Error(re=re, code=code, msg=msg))

    def send_frames(self, frames: Iterable[bytes]) -> None:
        self._queue(frames)

    def _queue(self, frames: Iterable[bytes]) -> None:
        """Queue frames; everything queued during one turn of the event loop leaves in one write.

        Never waits: a reply and the events that follow it (a move's `state` and its
        `progress`) cost one system call, and one slow reader never holds up the others.

        The connection and its write buffer are checked once per turn, by the first frames
        queued: nothing is written to it before the flush, and the flush itself writes
        nothing to a connection no longer open. (A move queues its frames to each seat of
        its race, four calls for about one flush: checking each was a measurable part.)
        """
        if not self._flush_scheduled:
            ws = self.ws
            if ws.protocol.state is not WsState.OPEN:
                return
            if ws.transport.get_write_buffer_size() > self.ctx.config.max_outbox_bytes:
                log.warning("connection %s (player %s) reads too slowly: closed", self.uid,
                            self.player)  # fmt: skip
                self.ctx.spawn(self.close(p.CLOSE_POLICY, "not reading fast enough"))
                return
            self._flush_scheduled = True
            self.ctx.outgoing.add(self)
        self._outbox.extend(frames)

    def flush(self) -> None:
        """Writes the frames queued this turn (server/edge/outgoing.py calls it)."""
        self._flush_scheduled = False
        frames, self._outbox = self._outbox, []
        if frames:
            self.ws.write_binaries(frames)

    async def close(self, code: int, reason: str) -> None:
        with contextlib.suppress(ConnectionClosed):
            await self.ws.close(code, reason)
