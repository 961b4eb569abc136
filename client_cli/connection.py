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
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidURI, WebSocketException

from client_cli.messages import (
    PROTOCOL_VERSION,
    ProtocolError,
    ServerError,
    Welcome,
    as_error,
    decode,
    encode,
    parse,
)

log = logging.getLogger(__name__)

OPEN_TIMEOUT_S = 10.0
HELLO_TIMEOUT_S = 10.0
MAX_FRAME = 1 << 20
BACKOFF_FIRST_S = 0.5
BACKOFF_MAX_S = 10.0


class ConnectionLost(Exception):
    """The connection dropped while a request that must not be repeated was unanswered."""


class ConnectError(Exception):
    """The server could not be reached or refused the session."""


@dataclass
class _Request:
    message: dict[str, Any]
    future: asyncio.Future[dict[str, Any]]
    resend: bool


@dataclass
class Backoff:
    """Delays between reconnection attempts: doubling from `first` up to `cap`, with jitter."""

    first: float = BACKOFF_FIRST_S
    cap: float = BACKOFF_MAX_S
    attempt: int = 0
    rng: random.Random = field(default_factory=random.Random)

    def next_delay(self) -> float:
        base = min(self.cap, self.first * (2**self.attempt))
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
        self.events: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.welcome: Welcome | None = None
        self.connected = False
        self._ws: ClientConnection | None = None
        self._ids = itertools.count(1)
        self._pending: dict[int, _Request] = {}
        self._supervisor: asyncio.Task[None] | None = None
        self._closing = False
        self._backoff = Backoff()

    # -- public -------------------------------------------------------------------------

    async def open(self) -> Welcome:
        """Connect for the first time; ConnectError if the server cannot be reached."""
        try:
            await self._open_once()
        except (OSError, TimeoutError, WebSocketException, ProtocolError) as exc:
            raise ConnectError(f"cannot reach the server at {self.url}: {describe(exc)}") from exc
        except ServerError as exc:
            hint = ": run again with --name NAME" if exc.code == "name_taken" else ""
            raise ConnectError(
                f"the server refused the session: {exc.msg} ({exc.code}){hint}"
            ) from exc
        self._supervisor = asyncio.create_task(self._supervise(), name="connection")
        assert self.welcome is not None
        return self.welcome

    async def request(self, message: dict[str, Any], *, resend: bool = True) -> dict[str, Any]:
        """Send a request and wait for its reply; a ServerError if the reply is an `error`.

        With `resend`, a request unanswered when the connection drops is sent again after
        reconnecting; otherwise it fails with ConnectionLost.
        """
        if self._closing:
            raise ConnectionLost("the connection is closed")
        rid = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        request = _Request({**message, "id": rid}, future, resend)
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
        if reply.get("t") == "error":
            raise as_error(reply)
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
        self.events.put_nowait(
            {
                "t": "welcome",
                "player": welcome.player,
                "name": welcome.name,
                "reconnected": again,
                "active": welcome.active,
            }
        )
        for state in welcome.active:
            self.events.put_nowait(state)
        # Resend what the last connection left unanswered, in the order it was asked.
        # If this connection drops too, the supervisor notices and tries again.
        with contextlib.suppress(ConnectionClosed):
            for rid in unanswered:
                request = self._pending.get(rid)
                if request is not None and not request.future.done():
                    log.debug("resending %s", _brief(request.message))
                    await ws.send(encode(request.message))

    async def _hello(self, ws: ClientConnection) -> Welcome:
        token = self.token
        while True:
            hello: dict[str, Any] = {"t": "hello", "v": PROTOCOL_VERSION, "name": self.name}
            hello["id"] = 0
            if token:
                hello["token"] = token
            await ws.send(encode(hello))
            while True:
                reply = decode(await ws.recv())
                if reply.get("t") in ("welcome", "error"):
                    break
            if reply["t"] == "welcome":
                welcome = parse(reply)
                assert isinstance(welcome, Welcome)
                return welcome
            error = as_error(reply)
            if error.code == "auth_failed" and token:
                self.on_status("The server does not know your token; joining as a new player.")
                token = None
                continue
            raise error

    async def _send(self, message: dict[str, Any]) -> None:
        ws = self._ws
        if ws is None:
            return
        log.debug("sending %s", _brief(message))
        # On failure the supervisor notices and reconnects; the request stays pending.
        with contextlib.suppress(ConnectionClosed):
            await ws.send(encode(message))

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

    def _dispatch(self, frame: bytes | str) -> None:
        message = decode(frame)
        log.debug("received %s", _brief(message))
        rid = message.get("re")
        if rid is not None:
            request = self._pending.get(rid) if isinstance(rid, int) else None
            if request is not None and not request.future.done():
                request.future.set_result(message)
                return
            if message.get("t") != "error":
                return  # a late reply to a request that already had its answer
        self.events.put_nowait(message)


def _brief(message: dict[str, Any]) -> str:
    """A message for the debug log: never the token, and no board."""
    return str({k: ("…" if k in ("token", "view", "active") else v) for k, v in message.items()})


def describe(exc: BaseException) -> str:
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, InvalidURI):
        return f"invalid URL {exc.uri!r}"
    text = str(exc)
    return text or type(exc).__name__
