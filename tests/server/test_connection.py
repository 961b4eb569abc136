"""How messages reach the server (server/edge/connection.py): fragments, pipelining, order."""

from __future__ import annotations

import asyncio
import contextlib
import socket

import msgspec
from helpers import close_all, seat_race
from hypothesis import given, settings
from hypothesis import strategies as st
from support.ws_client import Client
from websockets.asyncio.client import connect
from websockets.client import ClientProtocol
from websockets.frames import Close, Frame, Opcode, apply_mask
from websockets.http11 import Request
from websockets.protocol import OPEN
from websockets.server import ServerProtocol
from websockets.uri import parse_uri

from server.edge.connection import (
    ConnectionServer,
    FrameCutter,
    InboxConnection,
    Limits,
    serve_connections,
)


def mp(**fields: object) -> bytes:
    return msgspec.msgpack.encode(fields)


def pieces(data: bytes, count: int) -> list[bytes]:
    size = -(-len(data) // count)
    return [data[i : i + size] for i in range(0, len(data), size)]


async def test_a_fragmented_request_is_one_request(server):
    _code, seats, _ = await seat_race(server.ws_url, ["ann", "bob"], "quatorze", 7)
    ann = seats[0]
    try:
        whole = await ann.client.request({"t": "get", "gid": ann.gid})
        # The same request in five fragments (websockets sends an iterable as fragments).
        await ann.client.ws.send(pieces(mp(t="get", gid=ann.gid, id=77), 5))
        split = await ann.client.take(lambda m: m.get("re") == 77)
        assert split["t"] == "state" and split["view"] == whole["view"]
        assert split["n"] == whole["n"]
    finally:
        await close_all(seats)


async def test_too_many_fragments_close_1009_and_others_carry_on(server):
    _code, seats, _ = await seat_race(server.ws_url, ["victim", "attacker"], "quatorze", 7)
    victim, attacker = seats
    try:
        # 300 fragments of one byte: far under the size limit, over the 256 fragments kept.
        frame = mp(t="get", gid="x", pad="p" * 280)
        await attacker.client.ws.send(pieces(frame, len(frame)))
        assert await attacker.client.wait_closed() == 1009
        assert (await victim.play())["t"] == "state"
    finally:
        await close_all(seats)


async def test_pipelined_moves_are_answered_in_order(server):
    """40 moves sent without waiting (more than the 16 messages read ahead before the
    server stops reading): each is applied once, in order, and answered in order."""
    _code, seats, _ = await seat_race(server.ws_url, ["ann", "bob"], "quatorze", 7)
    ann = seats[0]
    try:
        game = ann.game.copy()
        moves = []
        for _ in range(40):
            legal = sorted(game.legal_moves())
            if not legal:
                break
            game.play(legal[0])
            moves.append(legal[0])
        assert len(moves) >= 20, "the deal should allow a long run of moves"
        for n, m in enumerate(moves):
            await ann.client.send({"t": "move", "gid": ann.gid, "n": n, "m": m, "id": 500 + n})
        replies = [await ann.client.take(lambda r, i=i: r.get("re") == 500 + i) for i in
                   range(len(moves))]  # fmt: skip
        assert [r["n"] for r in replies] == list(range(1, len(moves) + 1))
        assert replies[-1]["view"] == game.view()
        order = [m["re"] for m in ann.client.history if 500 <= (m.get("re") or 0) < 1000]
        assert order == sorted(order) and len(order) == len(moves)
    finally:
        await close_all(seats)


async def test_text_frames_after_hello_are_bad_requests(server):
    c = await Client.connect(server.ws_url)
    try:
        await c.hello("texter")
        await c.send_raw('{"t": "get"}')
        err = await c.next("error")
        assert err["code"] == "bad_request" and "text" in err["msg"]
        assert (await c.request({"t": "get", "gid": "r.AAAAAA.x"}))["code"] == "not_found"
    finally:
        await c.close()


# ---------------------------------------------------------------- frames cut anywhere
# The server takes whole binary frames itself and leaves everything else to websockets'
# parser (server/edge/connection.py); these drive a raw TCP socket, so that where each write
# ends is ours to choose, and check that no cut loses, duplicates or garbles a message.


class RawClient:
    """A WebSocket client on a plain asyncio stream: websockets' Sans-I/O protocol makes
    the bytes, the test decides how they are cut into writes."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 protocol: ClientProtocol) -> None:  # fmt: skip
        self.reader, self.writer, self.protocol = reader, writer, protocol
        self.messages: list[dict] = []
        self.control: list[Frame] = []

    @classmethod
    async def connect(cls, url: str, receive_buffer: int = 0) -> RawClient:
        """A connection; with `receive_buffer`, its socket's receive buffer that size and
        no larger (the kernel otherwise grows it with what arrives unread: 32 MB here)."""
        uri = parse_uri(url)
        sock = socket.socket()
        if receive_buffer:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        sock.setblocking(False)
        await asyncio.get_running_loop().sock_connect(sock, (uri.host, uri.port))
        reader, writer = await asyncio.open_connection(sock=sock)
        protocol = ClientProtocol(uri)
        protocol.send_request(protocol.connect())
        c = cls(reader, writer, protocol)
        await c.write(b"".join(protocol.data_to_send()))
        while protocol.state is not OPEN:
            protocol.receive_data(await asyncio.wait_for(reader.read(65536), 10))
            protocol.events_received()
        return c

    @classmethod
    async def greeted(cls, url: str, name: str, receive_buffer: int = 0) -> RawClient:
        """Connected, said hello in one write, and got the welcome (message 0)."""
        c = await cls.connect(url, receive_buffer)
        await c.write(c.frame({"t": "hello", "v": 1, "name": name, "id": 1}))
        await c.until(1)
        return c

    def frame(self, message: dict) -> bytes:
        """The bytes of one masked binary frame carrying `message`."""
        self.protocol.send_binary(mp(**message))
        return b"".join(self.protocol.data_to_send())

    def ping(self, data: bytes) -> bytes:
        self.protocol.send_ping(data)
        return b"".join(self.protocol.data_to_send())

    async def write(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def write_cut(self, data: bytes, cuts: list[int]) -> None:
        """Writes `data` in pieces ending at `cuts`, pausing between them so that each
        piece reaches the server in a read of its own."""
        start = 0
        for end in [*cuts, len(data)]:
            await self.write(data[start:end])
            await asyncio.sleep(0.02)
            start = end

    async def until(self, count: int) -> list[dict]:
        """Reads until `count` data messages have arrived (control frames are kept aside)."""
        while len(self.messages) < count:
            data = await asyncio.wait_for(self.reader.read(65536), 10)
            assert data, "the server closed the connection"
            self.protocol.receive_data(data)
            for frame in self.protocol.events_received():
                if frame.opcode is Opcode.BINARY:
                    self.messages.append(msgspec.msgpack.decode(frame.data))
                else:
                    self.control.append(frame)
        return self.messages[:count]

    async def rest(self, timeout: float, *, until_reset: bool = False) -> bytes:
        """Every byte the server sends from here until it ends the connection (each read
        within `timeout`); with `until_reset`, a reset ends it as the end of the stream does."""
        data = b""
        with contextlib.suppress(*((ConnectionResetError,) if until_reset else ())):
            while chunk := await asyncio.wait_for(self.reader.read(1 << 20), timeout):
                data += chunk
        return data

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(OSError):
            await self.writer.wait_closed()


async def test_frames_cut_at_every_byte_and_across_frames_arrive_whole(server):
    c = await RawClient.connect(server.ws_url)
    try:
        hello = c.frame({"t": "hello", "v": 1, "name": "cutter", "id": 1})
        await c.write_cut(hello, list(range(1, len(hello))))  # one byte per write
        (welcome,) = await c.until(1)
        assert welcome["t"] == "welcome" and welcome["re"] == 1
        # Three requests in one stream, cut inside a header, between the header and the
        # mask, inside the payload, and one cut that ends a frame and starts the next.
        frames = [c.frame({"t": "get", "gid": f"r.AAAAAA.cut{i}", "id": 10 + i}) for i in range(3)]
        stream = b"".join(frames)
        first = len(frames[0])
        cuts = [1, 2, 6, first + 3, first + len(frames[1]) - 1]
        await c.write_cut(stream, cuts)
        replies = (await c.until(4))[1:]
        assert [r["re"] for r in replies] == [10, 11, 12]
        assert all(r["t"] == "error" and r["code"] == "not_found" for r in replies)
        assert all("no such game" in r["msg"] for r in replies)
    finally:
        await c.close()


def masked_frame(message: dict, mask: bytes) -> bytes:
    payload = mp(**message)
    assert len(payload) < 126
    return bytes([0x82, 0x80 | len(payload)]) + mask + apply_mask(payload, mask)


async def test_a_header_alone_then_a_mask_that_looks_like_a_header(server):
    """websockets' parser takes a frame's header before its mask and payload have arrived,
    with nothing left in its buffer: the bytes that follow are the rest of that frame,
    even when they would read as a frame of their own (this mask reads as an empty
    binary frame)."""
    c = await RawClient.greeted(server.ws_url, "masker")
    try:
        frame = masked_frame({"t": "get", "gid": "r.AAAAAA.m", "id": 30}, b"\x82\x80\x00\x00")
        nxt = c.frame({"t": "get", "gid": "r.AAAAAA.n", "id": 31})
        await c.write_cut(frame + nxt, [2])
        replies = (await c.until(3))[1:]
        assert [(r["re"], r["code"]) for r in replies] == [(30, "not_found"), (31, "not_found")]
        await asyncio.sleep(0.2)
        assert len(c.messages) == 3 and not c.control  # nothing else came back
    finally:
        await c.close()


async def test_a_ping_between_requests_in_one_write_is_answered_in_place(server):
    c = await RawClient.greeted(server.ws_url, "pinger")
    try:
        get = [c.frame({"t": "get", "gid": f"r.AAAAAA.p{i}", "id": 20 + i}) for i in range(3)]
        # request, ping, request, and half of a third request, in one write; then the rest.
        burst = get[0] + c.ping(b"are you there") + get[1] + get[2][:5]
        await c.write(burst)
        await asyncio.sleep(0.05)
        await c.write(get[2][5:])
        replies = (await c.until(4))[1:]
        assert [r["re"] for r in replies] == [20, 21, 22]
        pongs = [f for f in c.control if f.opcode is Opcode.PONG]
        assert [f.data for f in pongs] == [b"are you there"]
    finally:
        await c.close()


async def test_an_unmasked_frame_from_a_client_closes_1002(server):
    c = await RawClient.greeted(server.ws_url, "unmasked")
    try:
        payload = mp(t="get", gid="r.AAAAAA.x", id=2)
        await c.write(bytes([0x82, len(payload)]) + payload)  # no mask bit, no mask
        c.protocol.receive_data(await c.rest(10))
        closes = [f for f in c.protocol.events_received() if f.opcode is Opcode.CLOSE]
        assert closes and Close.parse(closes[0].data).code == 1002
        assert len(c.messages) == 1  # the unmasked request was not served
    finally:
        await c.close()


# ---------------------------------------------------------------- the frame cutter alone
# FrameCutter (server/edge/connection.py) takes whole masked binary frames itself and passes
# everything else to websockets' ServerProtocol. Whatever the frames and wherever the
# reads end, a ServerProtocol behind the cutter must end up where a ServerProtocol fed the
# whole stream does: the same messages and control frames in the same order, the same
# bytes sent back, the same state.

MAX = 300  # max_size of both sides: some frames below are over it


class Side:
    """A ServerProtocol fed bytes, that accepts the handshake as soon as it has the
    request, and what it made of them (messages whole, fragments joined)."""

    def __init__(self) -> None:
        self.server = ServerProtocol(max_size=MAX)
        self.got: list[tuple[str, bytes]] = []
        self.sent: list[bytes] = []  # after the handshake response
        self.taken = 0
        self._parts: list[Frame] = []

    def feed(self, data: bytes) -> bool:
        server = self.server
        server.receive_data(data)
        for event in server.events_received():
            if isinstance(event, Request):
                server.send_response(server.accept(event))
                server.data_to_send()  # the response (its Date header may differ)
            elif event.opcode in (Opcode.TEXT, Opcode.BINARY, Opcode.CONT):
                self._parts.append(event)
                if event.fin:
                    joined = b"".join(bytes(p.data) for p in self._parts)
                    self.got.append((self._parts[0].opcode.name, joined))
                    self._parts.clear()
            else:
                self.got.append((event.opcode.name, bytes(event.data)))
        self.sent += server.data_to_send()
        return server.state is OPEN

    def take(self, message: bytes) -> None:
        self.got.append(("BINARY", message))
        self.taken += 1


def handshake_request() -> bytes:
    client = ClientProtocol(parse_uri("ws://127.0.0.1/ws"))
    client.send_request(client.connect())
    return b"".join(client.data_to_send())


def raw_frame(first: int, payload: bytes, mask: bytes | None, wide: int = 0) -> bytes:
    """A frame byte by byte: `first` is FIN, RSV and opcode; `wide` forces the 16-bit (2)
    or 64-bit (8) length even for a short payload."""
    n = len(payload)
    if wide == 8 or n >= 1 << 16:
        length = bytes([127]) + n.to_bytes(8, "big")
    elif wide == 2 or n >= 126:
        length = bytes([126]) + n.to_bytes(2, "big")
    else:
        length = bytes([n])
    if mask is None:
        return bytes([first]) + length + payload
    body = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return bytes([first, length[0] | 0x80]) + length[1:] + mask + body


def payload(size: int, seed: int) -> bytes:
    return bytes((seed * 31 + i * 7) % 256 for i in range(size))


masks = st.binary(min_size=4, max_size=4)
sizes = st.integers(0, 140) | st.integers(290, 310)  # around 126 and around MAX
frames = st.one_of(
    st.tuples(st.just("binary"), sizes, masks),
    st.tuples(st.just("binary16"), st.integers(0, 20), masks),  # a 16-bit length for 0-20 bytes
    st.tuples(st.just("binary64"), st.integers(0, 20), masks),
    st.tuples(st.just("text"), sizes, masks),
    st.tuples(st.just("fragmented"), st.integers(1, 4), masks),
    st.tuples(st.just("ping"), st.integers(0, 20), masks),
    st.tuples(st.just("pong"), st.integers(0, 20), masks),
    st.tuples(st.just("unmasked"), st.integers(0, 20), st.just(b"")),
    st.tuples(st.just("close"), st.just(0), masks),
)


def frame_bytes(kind: str, size: int, mask: bytes, seed: int) -> bytes:
    data = payload(size, seed)
    if kind == "binary":
        return raw_frame(0x82, data, mask)
    if kind == "binary16":
        return raw_frame(0x82, data, mask, wide=2)
    if kind == "binary64":
        return raw_frame(0x82, data, mask, wide=8)
    if kind == "text":
        return raw_frame(0x81, data, mask)
    if kind == "fragmented":  # a binary message in `size` pieces, the last one final
        pieces = [raw_frame(0x02 if i == 0 else 0x00, payload(9, seed + i), mask)
                  for i in range(size)]  # fmt: skip
        return b"".join(pieces) + raw_frame(0x80, payload(3, seed), mask)
    if kind == "ping":
        return raw_frame(0x89, data, mask)
    if kind == "pong":
        return raw_frame(0x8A, data, mask)
    if kind == "unmasked":
        return raw_frame(0x82, data, None)
    return raw_frame(0x88, (1000).to_bytes(2, "big") + b"bye", mask)


def run_both(request: bytes, frames: bytes, cuts: list[int]) -> tuple[Side, Side]:
    """The reference is fed the request, accepts it, then gets every frame at once; the
    cutter gets the request and the frames in one stream, in reads ending at `cuts`."""
    reference = Side()
    reference.feed(request)
    reference.feed(frames)
    stream = request + frames
    cut = Side()
    cutter = FrameCutter(cut.feed, cut.take, MAX)
    start = 0
    for end in [*sorted(set(cuts)), len(stream)]:
        if end > start:
            cutter.receive(stream[start:end], cut.server.state is OPEN)
            start = end
    return reference, cut


@settings(max_examples=400, deadline=None)
@given(
    st.lists(frames, max_size=12),
    st.lists(st.floats(0, 1, exclude_max=True), max_size=10),
)
def test_the_cutter_leaves_the_protocol_where_the_whole_stream_would(chosen, cut_at):
    request = handshake_request()
    stream = b"".join(frame_bytes(k, n, m, i) for i, (k, n, m) in enumerate(chosen))
    cuts = [int(x * (len(request) + len(stream))) for x in cut_at]
    reference, cut = run_both(request, stream, cuts)
    assert cut.got == reference.got
    assert cut.sent == reference.sent
    assert cut.server.state is reference.server.state


def test_the_cutter_takes_whole_binary_frames_and_passes_the_rest_on():
    """The comparison above holds trivially if everything is passed on: here whole
    masked binary frames are taken, before and after frames that are passed on and
    across reads that end inside a header, a mask or a payload."""
    mask = b"\x82\x80\x00\x00"  # reads as the header of an empty binary frame
    moves = [raw_frame(0x82, payload(40, i), mask) for i in range(3)]
    ping = raw_frame(0x89, b"hi", mask)
    long16 = raw_frame(0x82, payload(200, 9), mask)  # a 16-bit length, under MAX
    text = raw_frame(0x81, b"text", mask)
    request = handshake_request()
    stream = moves[0] + ping + moves[1] + long16 + text + moves[2]
    reference, cut = run_both(request, stream, [])
    assert cut.got == reference.got and cut.taken == 4  # the three moves and the 200 bytes
    assert [kind for kind, _ in cut.got] == ["BINARY", "PING", "BINARY", "BINARY", "TEXT",
                                             "BINARY"]  # fmt: skip
    # A frame that starts in one read and ends in another is passed on, and the cutter
    # takes the next whole frame after it: a cut after its first 2 bytes, then after its
    # mask, then inside its payload.
    start = len(request) + len(stream) - len(text) - len(moves[2]) - len(long16)
    reference, cut = run_both(request, stream, [start + 2, start + 8, start + 100])
    assert cut.got == reference.got
    assert cut.taken == 3  # the 200 bytes were passed on; the last move was taken
    # Inside a fragmented message, a final binary frame is websockets' protocol error.
    fragmented = raw_frame(0x02, b"ab", mask) + moves[0] + raw_frame(0x80, b"cd", mask)
    reference, cut = run_both(request, fragmented, [])
    assert cut.got == reference.got and cut.taken == 0
    assert cut.server.state is not OPEN


# ---------------------------------------------------------------- keepalive
# A server of server/edge/connection.py in this process, with pings far more often than the
# real server's, and a handler that only waits for the connection to close.


def quiet_server(limits: Limits) -> ConnectionServer:
    async def handler(ws: InboxConnection) -> None:
        await ws.wait_closed()

    async def routes(ws: InboxConnection, request: Request) -> None:
        return None

    return serve_connections(handler, "127.0.0.1", 0, routes=routes, limits=limits)


async def test_keepalive_closes_a_client_that_never_answers_pings_1011():
    async with quiet_server(Limits(ping_interval=0.2, ping_timeout=2.0)) as server:
        url = f"ws://127.0.0.1:{server.sockets[0].getsockname()[1]}/ws"
        silent = await RawClient.connect(url)  # reads, never writes the pongs it owes
        try:
            async with connect(url, ping_interval=None) as answering:  # answers every ping
                silent.protocol.receive_data(await silent.rest(30))
                frames = silent.protocol.events_received()
                assert frames and frames[0].opcode is Opcode.PING
                close = Close.parse(frames[-1].data)
                assert (close.code, close.reason) == (1011, "keepalive ping timeout")
                # Pinged as often, the client that answers is still connected.
                (kept,) = [c for c in server.connections if c.protocol.state is OPEN]
                assert answering.state is OPEN and kept.latency > 0
        finally:
            await silent.close()


async def test_the_server_closes_a_player_who_stops_answering_pings_and_keeps_one_who_does(
    servers,
):
    """The real server with pings every 0.2 s (--ping-interval-s, --ping-timeout-s): a
    greeted player whose client stops answering pings is closed with 1011; one whose client
    answers them stays, through many more pings than it takes to close the other."""
    server = servers.start(env={"SOLITAIRE_PING_INTERVAL_S": "0.2",
                                "SOLITAIRE_PING_TIMEOUT_S": "1"})  # fmt: skip
    silent = await RawClient.greeted(server.ws_url, "silent")  # then reads, never answers
    try:
        async with Client.connect(server.ws_url, ping_interval=None) as answering:  # it pongs
            await answering.hello("answering")
            silent.protocol.receive_data(await silent.rest(30))
            frames = silent.protocol.events_received()
            pings = [f for f in frames if f.opcode is Opcode.PING]
            assert len(pings) >= 1 and frames[-1].opcode is Opcode.CLOSE
            close = Close.parse(frames[-1].data)
            assert (close.code, close.reason) == (1011, "keepalive ping timeout")
            # Ten more pings' time: the answering player is still there and served.
            await asyncio.sleep(2.0)
            reply = await answering.request({"t": "get", "gid": "r.AAAAAA.none"})
            assert reply["t"] == "error" and reply["code"] == "not_found"
            assert not answering.closed
    finally:
        await silent.close()


async def test_a_client_that_stops_reading_is_closed_and_others_carry_on(servers):
    """A player who sends requests and never reads the replies: once the replies waiting
    for its socket pass max_outbox_bytes (256 KB), the server drops the connection instead
    of keeping them (which would grow without bound), logs why, and serves others meanwhile.
    The rate limits are lifted so that the requests come fast enough to fill the buffers,
    and the reader's socket buffer is kept small (the kernel would grow it to tens of MB)."""
    server = servers.start(env={"SOLITAIRE_RATE": "5000", "SOLITAIRE_BURST": "100000"})
    slow = await RawClient.greeted(server.ws_url, "slowreader", receive_buffer=64 * 1024)
    player = slow.messages[0]["player"]
    try:
        await slow.write(slow.frame({"t": "practice", "game": "doublets", "seed": 7, "id": 2}))
        (_welcome, state) = await slow.until(2)
        get = slow.frame({"t": "get", "gid": state["gid"], "id": 3})  # a state reply each
        async with Client.connect(server.ws_url) as other:
            await other.hello("reader")
            sent, dropped = 0, False
            loop = asyncio.get_running_loop()
            deadline = loop.time() + 60
            while not dropped and loop.time() < deadline:
                # Counted before the write: one that times out may still have gone out,
                # whole or in part, and been answered.
                sent += 200
                try:
                    await asyncio.wait_for(slow.write(get * 200), 5)
                except (ConnectionError, TimeoutError):
                    dropped = True  # the server stopped reading for good, or reset
                if not dropped and "reads too slowly" in server.log_text():
                    dropped = True
                # Served all the while: another player's request is answered.
                reply = await other.request({"t": "get", "gid": "p.none"}, timeout=10)
                assert reply["t"] == "error"
            assert dropped, f"{sent} requests unread and the connection still open"
            # What the socket still holds drains, then the connection ends.
            # It may end with a reset: the server aborts a connection whose close goes unanswered.
            received = len(await slow.rest(30, until_reset=True))
            # Every reply had been sent? Then nothing was dropped: the test proves nothing.
            assert received < sent * len(msgspec.msgpack.encode(state)), (received, sent)
        log = server.log_text()
        assert f"(player {player}) reads too slowly: closed" in log, log[-2000:]
    finally:
        await slow.close()
