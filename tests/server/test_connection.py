"""How messages reach the server (server/edge/connection.py): fragments, pipelining, order."""

from __future__ import annotations

import asyncio
import contextlib

import msgspec
from helpers import close_all, seat_race
from support.ws_client import Client
from websockets.client import ClientProtocol
from websockets.frames import Close, Frame, Opcode, apply_mask
from websockets.protocol import OPEN
from websockets.uri import parse_uri


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
    async def connect(cls, url: str) -> RawClient:
        uri = parse_uri(url)
        reader, writer = await asyncio.open_connection(uri.host, uri.port)
        protocol = ClientProtocol(uri)
        protocol.send_request(protocol.connect())
        c = cls(reader, writer, protocol)
        await c.write(b"".join(protocol.data_to_send()))
        while protocol.state is not OPEN:
            protocol.receive_data(await asyncio.wait_for(reader.read(65536), 10))
            protocol.events_received()
        return c

    @classmethod
    async def greeted(cls, url: str, name: str) -> RawClient:
        """Connected, said hello in one write, and got the welcome (message 0)."""
        c = await cls.connect(url)
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
        data = b""
        while chunk := await asyncio.wait_for(c.reader.read(65536), 10):
            data += chunk
        c.protocol.receive_data(data)
        closes = [f for f in c.protocol.events_received() if f.opcode is Opcode.CLOSE]
        assert closes and Close.parse(closes[0].data).code == 1002
        assert len(c.messages) == 1  # the unmasked request was not served
    finally:
        await c.close()
