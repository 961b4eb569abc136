"""WebSocket connections: websockets' Sans-I/O ServerProtocol, driven from our own
asyncio protocol, with each complete message put in an inbox as it arrives.

websockets' ServerProtocol does the protocol (the handshake, pings, closes, size
limits, every kind of frame); this module owns the socket: it feeds the protocol what
arrives, writes what the protocol has to send, runs the HTTP routes, the keepalive
pings (visited by the server's one Ticker, server/edge/keepalive.py) and the timeouts,
and hands each complete message to the inbox, which wakes the session
(server/session.py) that handles it. Only websockets' public API is used.

A connection past its handshake keeps only what it still needs (its address for the
limits, its peer for the logs): the handshake's request, response and headers are let go,
since twenty thousand idle connections hold them all for as long as they last.

The whole, final, masked binary frames that clients send nearly always are cut out of
the stream here (FrameCutter) instead of going through websockets' parser: to know
where frames start, the cutter reads the header of every frame it passes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import http
import logging
import random
import socket
import struct
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from types import TracebackType
from typing import Any, cast

from websockets.frames import CloseCode, Frame, Opcode
from websockets.http11 import Request, Response
from websockets.protocol import State
from websockets.server import ServerProtocol

from server.edge.admission import Admission
from server.edge.keepalive import Ticker

log = logging.getLogger(__name__)

_SHORT = struct.Struct("!BB")
_MEDIUM = struct.Struct("!BBH")
_LONG = struct.Struct("!BBQ")
_FIN_BINARY = 0x82  # FIN bit and the binary opcode
_DATA = (Opcode.TEXT, Opcode.BINARY, Opcode.CONT)
# Linux's TCP states (include/net/tcp_states.h) once the peer has sent FIN or RST:
# CLOSE, CLOSE_WAIT, LAST_ACK, CLOSING.
_TCP_PEER_GONE = frozenset((7, 8, 9, 11))


def binary_frame_header(length: int) -> bytes:
    """The header of a final, unmasked binary frame of `length` bytes (RFC 6455 5.2)."""
    if length < 126:
        return _SHORT.pack(_FIN_BINARY, length)
    if length < 1 << 16:
        return _MEDIUM.pack(_FIN_BINARY, 126, length)
    return _LONG.pack(_FIN_BINARY, 127, length)


def unmask(payload: bytes, mask: bytes) -> bytes:
    """`payload` XOR the 4-byte `mask` repeated (RFC 6455 5.3), as one big-integer XOR."""
    n = len(payload)
    key = (mask * ((n >> 2) + 1))[:n]
    return (int.from_bytes(payload) ^ int.from_bytes(key)).to_bytes(n)


class FrameCutter:
    """Splits what a client sends into the whole, final, masked binary frames it takes
    itself (unmasked, to `take`) and everything else, passed on in order to `pass_on`
    (which feeds websockets' ServerProtocol).

    websockets parses each frame through a chain of generators (a few µs a frame); here
    a frame costs a header check and the unmasking. To know where each frame starts, the
    cutter finds the end of the HTTP request and then reads the header of every frame it
    passes on, so it skips exactly that frame's bytes. It takes a frame only where
    websockets' parser would read it as the same message: the connection open (as
    `pass_on` and the caller say), not inside a fragmented message, the frame masked and
    within `max_size` (a 64-bit length never is). Anything else (a control, text or
    fragmented frame, an unmasked or oversized one, a partial one) is passed on.
    """

    def __init__(
        self, pass_on: Callable[[bytes], bool], take: Callable[[bytes], None], max_size: int | None
    ) -> None:
        self._pass_on = pass_on  # returns whether the connection is (still) open
        self._take = take
        self._limit = max_size if max_size is not None else (1 << 16) - 1
        self._in_request = True  # the HTTP request has not ended yet
        self._tail = b""  # its last 3 bytes so far, to find its end across reads
        self._left = 0  # bytes still to come of the frame being passed on
        self._header = b""  # the start of a header passed on before the rest arrived
        self._fragmented = False  # inside a fragmented message

    def receive(self, data: bytes, is_open: bool) -> None:
        """Cuts `data`, the next bytes from the client; `is_open`: the connection is open."""
        if self._in_request:
            end = self._request_end(data)
            if end is None or end == len(data):
                self._pass_on(data)
                return
            is_open = self._pass_on(data[:end])
            data = data[end:]
        off = start = 0  # next byte to read; first byte neither passed on nor taken
        end = len(data)
        while off < end:
            left = self._left
            if left:
                if left >= end - off:
                    self._left = left - (end - off)
                    break
                off += left
                self._left = 0
                continue
            if is_open and not self._header and not self._fragmented and data[off] == _FIN_BINARY:
                stop = self._whole_frame_end(data, off, end)
                if stop:
                    if start < off:  # what came before goes first, and may close the connection
                        is_open = self._pass_on(data[start:off])
                        start = off
                    if is_open:
                        head = off + (6 if data[off + 1] & 0x7F < 126 else 8)
                        self._take(unmask(data[head:stop], data[head - 4 : head]))
                        off = start = stop
                        continue
            off = self._skip_header(data, off, end)
        if start < end:
            self._pass_on(data[start:] if start else data)

    def _request_end(self, data: bytes) -> int | None:
        """Where the HTTP request ends in `data`, if it does: after its first empty line.
        (websockets requires CRLF line ends and reads no body, so if it accepts the
        request at all, the request ends exactly there.)"""
        seen = self._tail + data
        found = seen.find(b"\r\n\r\n")
        if found < 0:
            self._tail = seen[-3:]
            return None
        self._in_request = False
        self._tail = b""
        return found + 4 - (len(seen) - len(data))

    def _whole_frame_end(self, data: bytes, off: int, end: int) -> int:
        """The end of the frame starting at `off` (FIN and binary) if it is masked, within
        the size limit and all in `data` up to `end`; else 0."""
        if end - off < 6:
            return 0
        length = data[off + 1]
        if length < 0x80:  # unmasked: a protocol error, for websockets to report
            return 0
        length &= 0x7F
        head = off + 6
        if length == 126:
            if end - off < 8:
                return 0
            length = (data[off + 2] << 8) | data[off + 3]
            head += 2
        elif length == 127:
            return 0
        stop = head + length
        return stop if length <= self._limit and stop <= end else 0

    def _skip_header(self, data: bytes, off: int, end: int) -> int:
        """Reads the header of a frame passed on, starting at `off` (or before this read, in
        `_header`); returns where its payload starts, or `end` if the header goes on."""
        known = self._header
        header = known + data[off : off + 14]
        if len(header) >= 2:
            b0, b1 = header[0], header[1]
            length = b1 & 0x7F
            size = 2 + (4 if b1 & 0x80 else 0) + (2 if length == 126 else 8 if length == 127 else 0)
            if len(header) >= size:
                if length == 126:
                    length = int.from_bytes(header[2:4])
                elif length == 127:
                    length = int.from_bytes(header[2:10])
                opcode, fin = b0 & 0x0F, b0 & 0x80
                if opcode in (1, 2):  # text, binary
                    self._fragmented = not fin
                elif opcode == 0 and fin:  # the last continuation
                    self._fragmented = False
                self._header = b""
                self._left = length
                return off + size - len(known)
        self._header = header
        return end


@dataclass(frozen=True)
class Limits:
    """Sizes and timeouts of every connection (the defaults are websockets' own)."""

    max_size: int | None = 2**20  # a larger message closes with 1009
    write_limit: int = 2**15  # high-water mark of the write buffer (low: a quarter)
    ping_interval: float | None = 20.0  # keepalive pings; None: none
    ping_timeout: float | None = 20.0  # a ping unanswered this long closes with 1011
    open_timeout: float = 10.0  # from the connection to the end of the handshake
    close_timeout: float = 10.0  # from the close frame to the end of TCP
    # The protocol already caps a whole message at max_size; this caps how many pieces it
    # may come in (empty fragments cost nothing to send but a list entry each to keep).
    max_fragments: int = 256
    # Flow control: reading pauses while this many messages wait, resumes at the low mark.
    inbox_high: int = 16
    inbox_low: int = 4


Routes = Callable[["InboxConnection", Request], Awaitable[Response | None]]
Handler = Callable[["InboxConnection"], Awaitable[None]]


class InboxConnection(asyncio.Protocol):
    """One client connection, with its data messages in `inbox`.

    `inbox` holds bytes for binary messages and str for text messages (one that is not
    UTF-8 closes the connection with 1007 instead). `on_message` is called after each
    message is queued; reading pauses while the inbox is full. `protocol` is websockets'
    ServerProtocol (its `state` says whether the connection is open); `transport` the
    asyncio transport.
    """

    # Attributes by slot, not in a dict per connection: twenty thousand of them live at once.
    __slots__ = (
        "_close_timer",
        "_cutter",
        "_drained",
        "_fragments",
        "_loop",
        "_lost",
        "_lost_waiters",
        "_ping",
        "_ping_sent",
        "_reading_paused",
        "_request_rcvd",
        "_writing_paused",
        "address",
        "inbox",
        "latency",
        "limits",
        "on_message",
        "protocol",
        "server",
        "transport",
    )  # fmt: skip

    transport: asyncio.Transport

    def __init__(self, server: ConnectionServer, *, take_frames: bool = True) -> None:
        self.server = server
        limits = server.limits
        self.limits = limits
        self.protocol = ServerProtocol(max_size=limits.max_size)
        self.inbox: deque[bytes | str] = deque()
        self.on_message: Callable[[], None] | None = None
        self.address = ""  # the client's address as the limits count it (server/edge/admission.py)
        self.latency = 0.0  # round trip of the last keepalive ping answered, seconds
        self._loop = asyncio.get_running_loop()
        # The request, until the handshake ends (then None, and the request gone with it).
        self._request_rcvd: asyncio.Future[Request] | None = self._loop.create_future()
        self._lost: asyncio.Future[None] = self._loop.create_future()
        self._lost_waiters: list[asyncio.Future[None]] | None = None  # see wait_closed
        self._fragments: list[Frame] | None = None  # of a fragmented message, while it comes
        self._reading_paused = False
        self._writing_paused = False
        self._drained: asyncio.Future[None] | None = None
        self._ping: bytes | None = None  # the keepalive ping awaiting its pong
        self._ping_sent = 0.0  # when the last keepalive ping was sent (loop time)
        self._close_timer: asyncio.TimerHandle | None = None
        self._cutter = (
            FrameCutter(self._feed, self._enqueue, limits.max_size) if take_frames else None
        )

    def __repr__(self) -> str:
        return f"<InboxConnection {self.peer} {self.protocol.state.name}>"

    @property
    def peer(self) -> str:
        address = self.transport.get_extra_info("peername")
        return f"{address[0]}:{address[1]}" if isinstance(address, tuple) else str(address)

    # ------------------------------------------------------------ for the session

    def peer_gone(self) -> bool:
        """Whether the client has closed or reset its side of the TCP connection, even
        while reading is paused (a client that sends a full inbox and leaves: its FIN
        waits behind bytes nobody reads). Linux tells it (TCP_INFO's state); elsewhere only
        a connection already lost counts."""
        if self._lost.done():
            return True
        sock = self.transport.get_extra_info("socket")
        if sock is None or not hasattr(socket, "TCP_INFO"):
            return False
        try:
            state = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 1)[0]
        except (OSError, AttributeError):
            return False
        return state in _TCP_PEER_GONE

    def take(self) -> bytes | str | None:
        """The oldest message waiting, or None."""
        inbox = self.inbox
        if not inbox:
            return None
        if self._reading_paused and len(inbox) <= self.limits.inbox_low:
            self._reading_paused = False
            self.transport.resume_reading()
        return inbox.popleft()

    def write_binaries(self, messages: Iterable[bytes]) -> None:
        """Sends each message as one binary frame, all in one write, if the connection is
        open (else nothing).

        Framed here rather than by the protocol object: a server's frames are unmasked and
        we never fragment, so a frame is a header and the payload, and websockets'
        general path (a Frame object and its serializer per message) was a twentieth of
        the CPU of a move. Whole frames go to the transport in one write, so they never
        interleave with the control frames that the protocol sends.
        """
        if self.protocol.state is not State.OPEN:
            return
        parts: list[bytes] = []
        for message in messages:
            parts.append(binary_frame_header(len(message)))
            parts.append(message)
        self.transport.write(b"".join(parts))

    async def close(self, code: int = 1000, reason: str = "") -> None:
        """Starts the closing handshake (if open) and waits until the TCP connection is
        closed: by the client after the handshake, else aborted after close_timeout."""
        if self.protocol.state is State.OPEN:
            self.protocol.send_close(code, reason)
            self._send_data()
            await self._drain()
        self._expect_close()
        await self.wait_closed()

    def wait_closed(self) -> Awaitable[None]:
        """Done once the TCP connection is closed (await it).

        Each wait has a future of its own, so that cancelling it leaves `_lost` alone;
        asyncio.shield did the same with a dozen objects (closures, cells, contexts) per
        wait, and every idle connection's session waits here for as long as it lives.
        A future, not a coroutine: one frame less per idle connection."""
        waiter: asyncio.Future[None] = self._loop.create_future()
        if self._lost.done():
            waiter.set_result(None)
            return waiter
        if self._lost_waiters is None:
            self._lost_waiters = []
        self._lost_waiters.append(waiter)
        return waiter

    # ------------------------------------------------------------ life

    async def serve(self, routes: Routes, handler: Handler) -> None:
        """The connection's whole life: the handshake (or an HTTP reply), then `handler`,
        then the close. Never raises: an unexpected error aborts the connection."""
        try:
            try:
                async with asyncio.timeout(self.limits.open_timeout):
                    await self._handshake(routes)
            except TimeoutError:
                log.debug("connection %s: no handshake within %gs", self.peer,
                          self.limits.open_timeout)  # fmt: skip
            self._request_rcvd = None
            if self.protocol.state is not State.OPEN:
                self.transport.abort()
                return
            self.server.connections.add(self)
            if self.limits.ping_interval is not None:
                self._ping_sent = self._loop.time()
                self.server.keepalive.add(self, self._ping_sent + self.limits.ping_interval)
            try:
                await handler(self)
            except Exception:
                log.exception("connection %s: handler failed", self.peer)
                await self.close(1011)
            else:
                await self.close(1000)
            finally:
                self.server.connections.discard(self)
        except Exception:
            log.exception("connection %s: failed", self.peer)
            self.transport.abort()
        finally:
            self.server.served(self)

    async def _handshake(self, routes: Routes) -> None:
        received = self._request_rcvd
        assert received is not None
        either: list[asyncio.Future[Any]] = [received, self._lost]
        await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        if not received.done():  # closed, or not a valid HTTP request (which has been answered)
            return
        request = received.result()
        try:
            await self._answer(routes, request)
        finally:
            # websockets' parser keeps the request for as long as the connection lasts
            # (a local of its generator): its headers, a dozen containers, are let go.
            request.headers.clear()

    async def _answer(self, routes: Routes, request: Request) -> None:
        """Answers the handshake's request: an HTTP route's response, or the upgrade."""
        protocol = self.protocol
        try:
            response = await routes(self, request)
        except Exception as exc:
            protocol.handshake_exc = exc
            log.exception("connection %s: HTTP route for %s failed", self.peer, request.path)
            response = protocol.reject(
                http.HTTPStatus.INTERNAL_SERVER_ERROR,
                "Failed to open a WebSocket connection.\nSee server log for more information.\n",
            )
        if response is None:
            response = protocol.accept(request)  # 101, or 400/426 for a bad upgrade request
        if response.status_code == http.HTTPStatus.SWITCHING_PROTOCOLS:
            if not self.server.is_serving():
                response = protocol.reject(http.HTTPStatus.SERVICE_UNAVAILABLE,
                                           "Server is shutting down.\n")  # fmt: skip
            elif (admission := self.server.admission) is not None:
                forwarded = request.headers.get_all("X-Forwarded-For")
                self.address, refusal = admission.admit(self, self.address, forwarded)
                if refusal is not None:
                    response = protocol.reject(refusal.status, refusal.text)
                    response.headers["Retry-After"] = str(refusal.retry_after_s)
        if protocol.state is not State.CONNECTING:  # the client left meanwhile
            return
        protocol.send_response(response)
        self._send_data()
        if protocol.close_expected():  # not a WebSocket: wait for the client to close TCP
            self._expect_close()
            await self.wait_closed()

    def keepalive(self, now: float) -> float | None:
        """A visit of the server's keepalive Ticker, at loop time `now`: pings every
        ping_interval (counted from the last ping; the next waits for the pong of the last);
        a ping unanswered for ping_timeout closes with 1011. Returns when to come back."""
        if self.protocol.state is not State.OPEN:
            return None  # closing: the close timer ends it
        limits = self.limits
        interval, timeout = limits.ping_interval, limits.ping_timeout
        assert interval is not None
        if self._ping is not None and timeout is not None:
            if now < self._ping_sent + timeout:
                return self._ping_sent + timeout
            if self._writing_paused:
                # The ping waits behind data the client has not read yet: its time runs
                # from when the buffer drains, as websockets' keepalive counts it.
                return now + timeout
            log.info("connection %s: keepalive ping unanswered for %gs; closed",
                     self.peer, timeout)  # fmt: skip
            self.protocol.fail(1011, "keepalive ping timeout")
            self._send_data()
            self._expect_close()
            return None
        if now < self._ping_sent + interval:  # the pong came early: ping on time
            return self._ping_sent + interval
        data = struct.pack("!I", random.getrandbits(32))
        self._ping, self._ping_sent = data, now
        self.protocol.send_ping(data)
        self._send_data()
        return now + (interval if timeout is None else min(interval, timeout))

    def _pong(self, data: bytes) -> None:
        """The pong of the ping awaited (others, unsolicited or late, change nothing)."""
        if data != self._ping:
            return
        self._ping = None
        now = self._loop.time()
        self.latency = now - self._ping_sent
        interval = self.limits.ping_interval
        if interval is not None and now >= self._ping_sent + interval:  # answered late
            self.server.keepalive.add(self, now)

    def _expect_close(self) -> None:
        """The TCP connection should close soon: abort it if it has not after close_timeout."""
        if self._close_timer is None and not self._lost.done():
            self._close_timer = self._loop.call_later(self.limits.close_timeout, self._abort)

    def _abort(self) -> None:
        if not self._lost.done():
            log.debug("connection %s: not closed within %gs of its close; aborted", self.peer,
                      self.limits.close_timeout)  # fmt: skip
            self.transport.abort()

    # ------------------------------------------------------------ receiving

    def _feed(self, data: bytes) -> bool:
        """Passes bytes to the protocol and handles what it makes of them; returns whether
        the connection is open."""
        protocol = self.protocol
        protocol.receive_data(data)
        events = protocol.events_received()
        self._send_data()  # pongs, close frames, the end of the stream
        if protocol.close_expected():
            self._expect_close()
        for event in events:
            if isinstance(event, Frame):
                self._frame(event)
            elif isinstance(event, Request):
                received = self._request_rcvd
                if received is not None and not received.done():
                    received.set_result(event)
        return protocol.state is State.OPEN

    def _frame(self, frame: Frame) -> None:
        opcode = frame.opcode
        if opcode not in _DATA:
            if opcode is Opcode.PONG:
                self._pong(bytes(frame.data))
            return  # pings are answered, closes echoed, by the protocol
        fragments = self._fragments
        if not frame.fin or fragments:
            if fragments is None:
                fragments = self._fragments = []
            fragments.append(frame)
            if len(fragments) > self.limits.max_fragments:
                fragments.clear()
                self.protocol.fail(1009, f"more than {self.limits.max_fragments} fragments")
                self._send_data()
                self._expect_close()
                return
            if not frame.fin:
                return
            opcode = fragments[0].opcode
            data = b"".join(f.data for f in fragments)
            fragments.clear()
        else:
            data = bytes(frame.data)
        if opcode is Opcode.TEXT:
            try:
                text = data.decode()
            except UnicodeDecodeError as exc:
                # RFC 6455 8.1: a text message that is not UTF-8 fails the connection (1007).
                self.protocol.fail(CloseCode.INVALID_DATA, f"invalid UTF-8 at byte {exc.start}")
                self._send_data()
                self._expect_close()
                return
            self._enqueue(text)
        else:
            self._enqueue(data)

    def _enqueue(self, message: bytes | str) -> None:
        self.inbox.append(message)
        if len(self.inbox) >= self.limits.inbox_high and not self._reading_paused:
            self._reading_paused = True
            self.transport.pause_reading()
        if self.on_message is not None:
            self.on_message()

    def _send_data(self) -> None:
        transport = self.transport
        for data in self.protocol.data_to_send():
            if data:
                transport.write(data)
            elif transport.can_write_eof():  # the protocol's end of stream: half-close
                with contextlib.suppress(Exception):  # a socket that is already gone
                    transport.write_eof()
            else:
                transport.close()

    async def _drain(self) -> None:
        """Waits while the write buffer is over its high-water mark (or until closed)."""
        while self._writing_paused and not self._lost.done():
            if self._drained is None:
                self._drained = self._loop.create_future()
            await asyncio.wait([self._drained, self._lost], return_when=asyncio.FIRST_COMPLETED)

    # ------------------------------------------------------------ asyncio.Protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # A stream transport (uvloop's are not subclasses of asyncio.Transport).
        transport = cast(asyncio.Transport, transport)
        transport.set_write_buffer_limits(self.limits.write_limit)
        self.transport = transport
        address = transport.get_extra_info("peername")
        peer = address[0] if isinstance(address, tuple) else str(address)
        self.address = peer
        admission = self.server.admission
        if admission is not None:
            self.address, welcome = admission.opened(self, peer)
            if not welcome:
                log.debug("connection %s: its address holds too many connections; closed", peer)
                transport.abort()
                return
        self.server.started(self)

    def data_received(self, data: bytes) -> None:
        if self._cutter is not None:
            self._cutter.receive(data, self.protocol.state is State.OPEN)
        else:
            self._feed(data)

    def eof_received(self) -> None:
        self.protocol.receive_eof()
        self._send_data()
        # Returning None closes the transport: a WebSocket never writes after the client's EOF.

    def connection_lost(self, exc: Exception | None) -> None:
        self.protocol.receive_eof()  # idempotent; the state becomes CLOSED
        self.server.keepalive.discard(self)
        if self._close_timer is not None:
            self._close_timer.cancel()
            self._close_timer = None
        if self.server.admission is not None:
            self.server.admission.closed(self)
        self._lost.set_result(None)
        for waiter in self._lost_waiters or ():
            if not waiter.done():  # not cancelled
                waiter.set_result(None)
        self._lost_waiters = None
        if self._drained is not None and not self._drained.done():
            self._drained.set_result(None)

    def pause_writing(self) -> None:
        self._writing_paused = True

    def resume_writing(self) -> None:
        self._writing_paused = False
        if self._drained is not None:
            if not self._drained.done():
                self._drained.set_result(None)
            self._drained = None


@dataclass(frozen=True)
class Listen:
    """How the server takes its port when several processes serve it (server/workers.py):
    `reuse_port` binds a socket of its own beside the others' (SO_REUSEPORT: the kernel
    spreads new connections over them); `sock` is a listening socket made elsewhere and
    shared (where the platform has no SO_REUSEPORT). Neither: a socket of its own, alone."""

    reuse_port: bool = False
    sock: socket.socket | None = None


class ConnectionServer:
    """Listens, and serves each connection: HTTP `routes` first (a response ends the
    connection; None goes on to the WebSocket handshake), then `handler` for each open
    WebSocket connection until the handler returns.

    Use as `async with serve_connections(...) as server:`; `close()` stops listening
    (and, unless told otherwise, closes open connections with 1001), `wait_closed()`
    waits until every connection is done.
    """

    def __init__(self, handler: Handler, routes: Routes, host: str | None, port: int | None,
                 limits: Limits, take_frames: bool = True,
                 admission: Admission | None = None,
                 listen: Listen | None = None) -> None:  # fmt: skip
        self.handler = handler
        self.routes = routes
        self.host = host
        self.port = port
        self.listen = listen or Listen()
        self.limits = limits
        self.take_frames = take_frames
        self.admission = admission  # None: no limits on connections
        self.connections: set[InboxConnection] = set()  # WebSocket connections past their handshake
        self.keepalive = _ticker(limits)  # visits the connections whose ping is due
        self._tasks: dict[InboxConnection, asyncio.Task[None]] = {}  # their lives, running
        self._server: asyncio.Server | None = None
        self._closing: asyncio.Task[None] | None = None
        self._closed = asyncio.Event()

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        factory = self._connection
        if self.listen.sock is not None:
            self._server = await loop.create_server(factory, sock=self.listen.sock)
        else:
            self._server = await loop.create_server(
                factory, self.host, self.port or 0, reuse_port=self.listen.reuse_port or None
            )

    def _connection(self) -> InboxConnection:
        return InboxConnection(self, take_frames=self.take_frames)

    def started(self, connection: InboxConnection) -> None:
        """A connection was made: its life runs in a task of its own, tracked from here
        on, so that closing the server cannot miss it."""
        task = asyncio.get_running_loop().create_task(connection.serve(self.routes, self.handler))
        self._tasks[connection] = task

    def served(self, connection: InboxConnection) -> None:
        """A connection's life is over (the last thing its task does). Said by the task
        rather than by a done callback, which cost a bound method and a context copy per
        connection for as long as it lived."""
        self._tasks.pop(connection, None)

    @property
    def sockets(self) -> tuple[Any, ...]:
        return tuple(self._server.sockets) if self._server is not None else ()

    def is_serving(self) -> bool:
        return self._server is not None and self._server.is_serving()

    def close(self, close_connections: bool = True) -> None:
        """Stops listening (WebSocket handshakes not yet answered get 503); with
        `close_connections`, closes the open connections with 1001. Idempotent."""
        if self._closing is not None:
            return
        if self._server is not None:
            self._server.close()
        self._closing = asyncio.get_running_loop().create_task(self._close(close_connections))

    async def _close(self, close_connections: bool) -> None:
        if close_connections:
            await asyncio.gather(*(c.close(1001) for c in list(self.connections)))
        if self._server is not None:
            await self._server.wait_closed()
        while self._tasks:
            await asyncio.wait(list(self._tasks.values()))
        self.keepalive.close()
        self._closed.set()

    async def wait_closed(self) -> None:
        """Waits until the server is closed (see close()) and every connection is done."""
        await self._closed.wait()

    async def __aenter__(self) -> ConnectionServer:
        if self._server is None:
            await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
        await self.wait_closed()


def _ticker(limits: Limits) -> Ticker:
    """The keepalive Ticker for these limits: its resolution a twentieth of the shortest
    of the two keepalive periods, at most a second (a ping a second late is on time)."""
    periods = [p for p in (limits.ping_interval, limits.ping_timeout) if p is not None]
    return Ticker(min([1.0, *(p / 20 for p in periods)]))


def serve_connections(
    handler: Handler,
    host: str | None,
    port: int | None,
    *,
    routes: Routes,
    limits: Limits | None = None,
    take_frames: bool = True,
    admission: Admission | None = None,
    listen: Listen | None = None,
) -> ConnectionServer:
    """A server for `async with`: it listens on entry and closes everything on exit."""
    return ConnectionServer(
        handler, routes, host, port, limits or Limits(), take_frames, admission, listen
    )
