"""The durable relay: the least a race server must do with a move, as the benches' baseline.

    python -m bench.relay_server PORT REDIS_URL PREFIX
    (started by bench/server.py and bench/capacity.py, through
    bench/race_server.py's start_baseline_server, not by hand)

A race of four asks a server, for every move, to read the frame, store the move durably
before answering, acknowledge the sender and tell the three other seats. This server does
exactly that and nothing else (no game rules, no players, no races), on the stack a
Python server would use for it: websockets' asyncio server, msgspec, redis-py, on uvloop
(the race server's default event loop). Its wire protocol is its own, msgpack frames:

- `{"t": "join", "table": str, "seat": int, "id": int}` seats the connection at a table
  (tables exist as soon as someone joins them); answered `{"t": "joined", "re": id}`;
- `{"t": "move", "n": int, "m": str, "id": int}`: the frame, as received, is appended
  (RPUSH) to the seat's list in Redis, `seat_key(PREFIX, table, seat)`; once Redis has
  confirmed it, the sender gets `{"t": "ack", "re": id, "n": n + 1}` and every other seat
  of its table `{"t": "progress", "seat": seat, "n": moves of that seat so far}`;
- anything else is answered `{"t": "error", "re": id}`.

The appends of one loop turn go to Redis in one pipeline, and one pipeline is in flight at
a time (the moves arriving meanwhile form the next one), as the race server's group
commit does. The store is the race server's own in the same bench run, with its
appendfsync: a move acknowledged is as durable as the race server's.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from dataclasses import dataclass, field
from typing import Any

import msgspec

from server import collector
from server.config import DEFAULT


class Frame(msgspec.Struct):
    """What the relay reads of a frame: a join's table and seat, a move's n."""

    t: str
    id: int | None = None
    table: str = ""
    seat: int = 0
    n: int = 0


class Joined(msgspec.Struct, tag_field="t", tag="joined"):
    re: int | None


class Ack(msgspec.Struct, tag_field="t", tag="ack"):
    re: int | None
    n: int


class Progress(msgspec.Struct, tag_field="t", tag="progress"):
    seat: int
    n: int


class Error(msgspec.Struct, tag_field="t", tag="error"):
    re: int | None


def seat_key(prefix: str, table: str, seat: int) -> str:
    """The Redis list of a seat's moves."""
    return f"{prefix}:{table}:{seat}"


@dataclass
class Appends:
    """The moves waiting for the next pipeline: (key, frame, the sender's future)."""

    waiting: list[tuple[str, bytes, asyncio.Future[None]]] = field(default_factory=list)
    wake: asyncio.Event = field(default_factory=asyncio.Event)

    def add(self, key: str, frame: bytes) -> asyncio.Future[None]:
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.waiting.append((key, frame, fut))
        self.wake.set()
        return fut

    async def write(self, redis: Any) -> None:
        """Forever: each batch in one pipeline; every future resolved once Redis confirmed
        its append (or failed with Redis's error)."""
        while True:
            await self.wake.wait()
            self.wake.clear()
            batch, self.waiting = self.waiting, []
            if not batch:
                continue
            try:
                async with redis.pipeline(transaction=False) as pipe:
                    for key, frame, _ in batch:
                        pipe.rpush(key, frame)
                    await pipe.execute()
            except Exception as exc:  # every sender hears of it; the relay goes on
                for _, _, fut in batch:
                    if not fut.done():
                        fut.set_exception(exc)
                continue
            for _, _, fut in batch:
                if not fut.done():
                    fut.set_result(None)


async def serve_until_sigterm(handler: Any, port: int, **options: Any) -> None:
    """A baseline server (this relay, bench/server.py's echoes): websockets' server with
    `handler` on 127.0.0.1:`port`, frames up to 16 KB, no compression, until SIGTERM; it
    says "ready" on its standard output once it listens."""
    from websockets.asyncio.server import serve

    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    async with serve(handler, "127.0.0.1", port, compression=None, max_size=16 * 1024,
                     **options):  # fmt: skip
        print("ready", flush=True)
        await stop.wait()


def run_relay_server(port: int, redis_url: str, prefix: str) -> None:
    import redis.asyncio as aioredis
    from websockets.asyncio.server import ServerConnection, broadcast

    decode = msgspec.msgpack.Decoder(Frame).decode
    encode = msgspec.msgpack.Encoder().encode

    async def main() -> None:
        # The race server's collector schedule (server/collector.py), as the echo servers.
        collector.schedule(DEFAULT.gc_young_threshold)
        redis = aioredis.Redis.from_url(redis_url)
        appends = Appends()
        tables: dict[str, dict[int, ServerConnection]] = {}

        async def handler(ws: ServerConnection) -> None:
            table = ""
            seat = 0
            moves = 0
            others: list[ServerConnection] = []
            seats: dict[int, ServerConnection] = {}
            try:
                async for frame in ws:
                    assert isinstance(frame, bytes)
                    msg = decode(frame)
                    if msg.t == "move" and table:
                        await appends.add(seat_key(prefix, table, seat), frame)
                        moves += 1
                        await ws.send(encode(Ack(msg.id, msg.n + 1)))
                        # The seats of a table change only at joins: the list is rebuilt
                        # when the table's size has changed since the last move.
                        if len(others) != len(seats) - 1:
                            others = [c for s, c in seats.items() if s != seat]
                        broadcast(others, encode(Progress(seat, moves)))
                    elif msg.t == "join" and not table:
                        table, seat = msg.table, msg.seat
                        seats = tables.setdefault(table, {})
                        seats[seat] = ws
                        await ws.send(encode(Joined(msg.id)))
                    else:
                        await ws.send(encode(Error(msg.id)))
            finally:
                if table:
                    seats.pop(seat, None)
                    if not seats:
                        tables.pop(table, None)

        writer = asyncio.create_task(appends.write(redis))
        await serve_until_sigterm(handler, port, close_timeout=2)
        writer.cancel()
        await redis.aclose()

    with contextlib.suppress(ImportError):  # the race server's default loop
        import uvloop

        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    asyncio.run(main())


def main() -> int:
    port, redis_url, prefix = sys.argv[1:4]
    run_relay_server(int(port), redis_url, prefix)
    return 0


if __name__ == "__main__":
    sys.exit(main())
