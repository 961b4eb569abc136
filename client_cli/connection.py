"""The client's link to the server: one logical session over any number of WebSockets.

`Connection` sends requests with ids and matches replies by `re`; everything
else the server sends (lobby, start, state, progress, result, and the
`welcome.active` games after each reconnect) arrives on the `events` queue in
order, including between a request and its reply. Each session begins there
with a `welcome` event (`reconnected` true after a drop, and its `active` games).

When the socket drops it reconnects by itself with exponential backoff,
says what it is doing through `on_status`, sends `hello` with the same token,
replays the welcome's active games as events, and resends every unanswered
request that is safe to repeat. For `move` that is always safe: the protocol's
`n` makes a repeated move a no-op that still gets its `state` reply.

Requests are the protocol's structs and so are the messages: a type this client does not
know arrives as a `p.UnknownMessage` (passed over by the session), and a message it cannot
read fails the request it answers, or is logged and passed over if it is an event.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import random
from collections.abc import Callable
from dataclasses import dataclass, field

import msgspec
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus, InvalidURI, WebSocketException

import protocol as p
from client_cli.messages import Event, Incoming, ProtocolError, ServerError, Welcomed, as_plain

log = logging.getLogger(__name__)

OPEN_TIMEOUT_S = 10.0
HELLO_TIMEOUT_S = 10.0
MAX_FRAME = 1 << 20
BACKOFF_FIRST_S = 0.5
BACKOFF_MAX_S = 10.0


class ConnectionLost(Exception):
    """The connection dropped while a request that must not be repeated was unanswered."""


class ConnectError(Exception):
    """The server could not be reached or refused the session (`refused`: the server
    answered, so its address is right; `code` its error code)."""

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.code = code

    @property
    def refused(self) -> bool:
        return self.code is not None


@dataclass
class _Request:
    message: p.Request
    future: asyncio.Future[Incoming]
    resend: bool


@dataclass
class Backoff:
    """Delays between reconnection attempts: doubling from `first` up to `cap`, with jitter."""

    first: float = BACKOFF_FIRST_S
    cap: float = BACKOFF_MAX_S
    attempt: int = 0
    rng: random.Random = field(default_factory=random.Random)

    def next_delay(self) -> float:
        base = min(self.cap, self.first * 2.0**self.attempt)
        self.attempt += 1
        return base * self.rng.uniform(0.8, 1.2)

    def reset(self) -> None:
        self.attempt = 0


class Connection:
    def __init__(
        self,
        url: str,
        name: str,
        token: str | None,
        *,
        on_status: Callable[[str], None] = lambda _msg: None,
        on_token: Callable[[str], None] = lambda _tok: None,
    ) -> None:
        self.url = url
        self.name = name
        self.token = token
        self.on_status = on_status
        self.on_token = on_token
        self.events: asyncio.Queue[Event] = asyncio.Queue()
        self.welcome: p.Welcome | None = None
        self.connected = False
        self._ws: ClientConnection | None = None
        self._ids = itertools.count(1)
        self._pending: dict[int, _Request] = {}
        self._supervisor: asyncio.Task[None] | None = None
        self._closing = False
        self._backoff = Backoff()
        self._decoder = p.MessageDecoder()

    # -- public -------------------------------------------------------------------------

    async def open(self) -> p.Welcome:
        """Connect for the first time; ConnectError if the server cannot be reached."""
        try:
            await self._open_once()
        except (OSError, TimeoutError, WebSocketException, ProtocolError) as exc:
            raise ConnectError(f"cannot reach the server at {self.url}: {describe(exc)}") from exc
        except ServerError as exc:
            hint = ": run again with --name NAME" if exc.code == p.NAME_TAKEN else ""
            raise ConnectError(
                f"the server refused the session: {exc.msg} ({exc.code}){hint}", exc.code
            ) from exc
        self._supervisor = asyncio.create_task(self._supervise(), name="connection")
        assert self.welcome is not None
        return self.welcome

    async def request(self, message: p.Request, *, resend: bool = True) -> Incoming:
        """Send a request and wait for its reply; a ServerError if the reply is an `error`,
        a ProtocolError if it cannot be read.

        With `resend`, a request unanswered when the connection drops is sent again after
        reconnecting; otherwise it fails with ConnectionLost.
        """
        if self._closing:
            raise ConnectionLost("the connection is closed")
        rid = next(self._ids)
        future: asyncio.Future[Incoming] = asyncio.get_running_loop().create_future()
        request = _Request(msgspec.structs.replace(message, id=rid), future, resend)
        self._pending[rid] = request
        if self.connected:
            await self._send(request.message)
        elif not resend:
            del self._pending[rid]
            raise ConnectionLost("not connected to the server")
        try:
            reply = await future
        finally:
            self._pending.pop(rid, None)
        if isinstance(reply, p.Error):
            raise ServerError(reply.code, reply.msg)
        return reply

    async def close(self) -> None:
        self._closing = True
        if self._supervisor:
            self._supervisor.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._supervisor
        if self._ws is not None:
            with contextlib.suppress(Exception):
                await self._ws.close()
        for request in self._pending.values():
            if not request.future.done():
                request.future.set_exception(ConnectionLost("the connection is closed"))

    # -- internals ----------------------------------------------------------------------

    async def _open_once(self) -> None:
        ws = await connect(
            self.url, open_timeout=OPEN_TIMEOUT_S, max_size=MAX_FRAME, compression=None
        )
        try:
            welcome = await asyncio.wait_for(self._hello(ws), HELLO_TIMEOUT_S)
        except BaseException:
            await ws.close()
            raise
        # Only what was pending before this point is resent below; later requests go out
        # by themselves, so nothing is sent twice (a second `create` would be a second race).
        unanswered = sorted(self._pending)
        again = self.welcome is not None
        self._ws = ws
        self.welcome = welcome
        self.connected = True
        if welcome.token != self.token:
            self.token = welcome.token
            self.on_token(welcome.token)
        self.events.put_nowait(Welcomed(welcome, again))
        for state in welcome.active:
            self.events.put_nowait(state)
        # Resend what the last connection left unanswered, in the order it was asked.
        # If this connection drops too, the supervisor notices and tries again.
        with contextlib.suppress(ConnectionClosed):
            for rid in unanswered:
                request = self._pending.get(rid)
                if request is not None and not request.future.done():
                    _log_message("resending", request.message)
                    await ws.send(p.encode(request.message))

    async def _hello(self, ws: ClientConnection) -> p.Welcome:
        token = self.token
        while True:
            try:
                hello = p.Hello(id=0, v=p.VERSION, name=self.name, token=token or None)
            except ValueError as exc:  # a name from a hand-edited settings file
                raise ConnectError(f"cannot introduce yourself as {self.name!r}: {exc}") from exc
            await ws.send(p.encode(hello))
            while True:
                reply = self._read(await ws.recv())
                if isinstance(reply, p.BadFrame) and reply.t in ("welcome", "error"):
                    raise ProtocolError(f"unreadable {reply.t}: {reply.msg}")
                if isinstance(reply, p.Welcome | p.Error):
                    break
            if isinstance(reply, p.Welcome):
                return reply
            error = ServerError(reply.code, reply.msg)
            if error.code == p.AUTH_FAILED and token:
                self.on_status("The server does not know your token; joining as a new player.")
                token = None
                continue
            raise error

    async def _send(self, message: p.Request) -> None:
        ws = self._ws
        if ws is None:
            return
        _log_message("sending", message)
        # On failure the supervisor notices and reconnects; the request stays pending.
        with contextlib.suppress(ConnectionClosed):
            await ws.send(p.encode(message))

    async def _supervise(self) -> None:
        while not self._closing:
            ws = self._ws
            assert ws is not None
            reason = "closed"
            try:
                async for frame in ws:
                    self._dispatch(frame)
            except ConnectionClosed as exc:
                reason = describe(exc)
            except ProtocolError as exc:
                reason = str(exc)
                await ws.close()
            else:
                if ws.close_code is not None:
                    reason = f"code {ws.close_code}"
            if self._closing:
                return
            self.connected = False
            self._ws = None
            log.info("connection lost: %s", reason)
            for rid, request in list(self._pending.items()):
                if not request.resend and not request.future.done():
                    request.future.set_exception(ConnectionLost("the connection dropped"))
                    del self._pending[rid]
            await self._reconnect(reason)

    async def _reconnect(self, reason: str) -> None:
        self._backoff.reset()
        delay = self._backoff.next_delay()
        self.on_status(f"Connection lost ({reason}); reconnecting in {delay:.1f} s…")
        while not self._closing:
            await asyncio.sleep(delay)
            try:
                await self._open_once()
            except (OSError, TimeoutError, WebSocketException, ProtocolError, ServerError) as exc:
                log.info("reconnect attempt %d failed: %s", self._backoff.attempt, describe(exc))
                delay = self._backoff.next_delay()
                self.on_status(
                    f"Server unreachable ({describe(exc)}); retrying in {delay:.1f} s "
                    f"(attempt {self._backoff.attempt})."
                )
                continue
            self.on_status("Reconnected to the server.")
            return

    def _read(self, frame: bytes | str) -> Incoming | p.BadFrame:
        """A frame as a message; ProtocolError if it is no message at all (a broken link)."""
        if isinstance(frame, str):
            raise ProtocolError("the server sent a text frame")
        message = self._decoder.decode(frame)
        if isinstance(message, p.BadFrame) and message.t is None:
            raise ProtocolError(f"a frame that is not a message: {message.msg}")
        if not isinstance(message, p.BadFrame):
            _log_message("received", message)
        return message

    def _dispatch(self, frame: bytes | str) -> None:
        message = self._read(frame)
        rid = message.re
        request = self._pending.get(rid) if rid is not None else None
        if isinstance(message, p.BadFrame):
            # A known type that does not fit its struct (a broken or incompatible server): it
            # fails the request it answers; an event is passed over, the connection kept.
            log.warning("unreadable message from the server: %s", message.msg)
            if request is not None and not request.future.done():
                request.future.set_exception(ProtocolError(f"unreadable reply: {message.msg}"))
            return
        if rid is not None:
            if request is not None and not request.future.done():
                request.future.set_result(message)
                return
            if not isinstance(message, p.Error):
                return  # a late reply to a request that already had its answer
        self.events.put_nowait(message)


def _log_message(what: str, message: msgspec.Struct) -> None:
    """A message for the debug log: never the token, and no board."""
    if log.isEnabledFor(logging.DEBUG):
        fields = as_plain(message).items()
        brief = {k: ("…" if k in ("token", "view", "active") else v) for k, v in fields}
        log.debug("%s %s", what, brief)


def describe(exc: BaseException) -> str:
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, InvalidURI):
        return f"invalid URL {exc.uri!r}"
    if isinstance(exc, InvalidStatus):
        # The server says why in the body (full, too many connections from here, ...).
        response = exc.response
        reason = response.body.decode(errors="replace").strip()[:200] if response.body else ""
        return f"HTTP {response.status_code}" + (f": {reason}" if reason else "")
    text = str(exc)
    return text or type(exc).__name__
