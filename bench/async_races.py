"""The asynchronous-race part of bench/server.py: seats racing three ghosts each, against
seats in live races of four, on the same server in the same run.

Both loads have the same number of playing seats, each playing one legal Doublets move
every `PACE_S` seconds (paced, not closed-loop: a person's pace, where what a move costs
the server is what matters), and each seat hears three other runs:

- live: races of four seats, all four playing: every move's `progress` goes to all four;
- asynchronous: races of four seats whose three earlier runs were played before the
  measured window (at the same pace, then resigned), and one seat playing in it: it
  hears the three earlier runs as ghosts, scheduled by the server from their stored
  moves and times.

Measured: the server's CPU per acknowledged move in each load (the rounds alternate, the
medians are compared), and how late each ghost `progress` arrives against the time its
move was made in the earlier run (the seat's own start plus the ghost's elapsed time, on
the same machine's clock).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec
from websockets.asyncio.client import ClientConnection, connect

from bench.figures import percentile

GAME = "doublets"
SEATS = 4
PACE_S = 0.1  # one move every 100 ms per seat
WINDOW_S = 3600


class Conn:
    """One bot's connection: requests by id, everything else kept with its arrival time."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.ids = itertools.count(1)
        self.waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.events: list[tuple[float, dict[str, Any]]] = []
        self.arrived = asyncio.Event()
        self.reader = asyncio.create_task(self._read())

    @classmethod
    async def open(cls, url: str, name: str) -> Conn:
        conn = cls(await connect(url, max_size=None, compression=None))
        welcome = await conn.request({"t": "hello", "v": 1, "name": name})
        assert welcome["t"] == "welcome", welcome
        return conn

    async def _read(self) -> None:
        with contextlib.suppress(Exception):
            async for frame in self.ws:
                now = time.time()
                if not isinstance(frame, bytes):  # the server sends binary frames only
                    raise TypeError("a text frame")
                msg = msgspec.msgpack.decode(frame)
                fut = self.waiting.pop(msg.get("re", -1), None)
                if fut is not None:
                    fut.set_result(msg)
                else:
                    self.events.append((now, msg))
                    self.arrived.set()

    async def request(self, msg: dict[str, Any]) -> dict[str, Any]:
        rid = next(self.ids)
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiting[rid] = fut
        await self.ws.send(msgspec.msgpack.encode({**msg, "id": rid}))
        return await asyncio.wait_for(fut, 30)

    async def next(self, check: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        while True:
            for i, (_at, msg) in enumerate(self.events):
                if check(msg):
                    del self.events[i]
                    return msg
            self.arrived.clear()
            await asyncio.wait_for(self.arrived.wait(), 30)

    async def close(self) -> None:
        await self.ws.close()
        self.reader.cancel()


@dataclass
class Seat:
    conn: Conn
    gid: str
    moves: list[str]
    n: int = 0
    start_ms: int = 0
    acked: list[float] = field(default_factory=list)  # when each move was acknowledged


async def play_paced(seat: Seat, until: float, rnd: random.Random) -> None:
    """One move every PACE_S seconds (first after a random part of it) until `until`."""
    await asyncio.sleep(rnd.random() * PACE_S)
    next_at = time.monotonic()
    while time.monotonic() < until and seat.n < len(seat.moves):
        reply = await seat.conn.request(
            {"t": "move", "gid": seat.gid, "n": seat.n, "m": seat.moves[seat.n]}
        )
        if reply.get("t") != "state":
            raise RuntimeError(f"move refused: {reply}")
        seat.n += 1
        seat.acked.append(time.monotonic())
        next_at += PACE_S
        await asyncio.sleep(max(0.0, next_at - time.monotonic()))


@dataclass
class Measured:
    moves: int
    cpu_s: float
    lateness_ms: list[float] = field(default_factory=list)

    @property
    def cpu_us_per_move(self) -> float:
        return 1e6 * self.cpu_s / max(self.moves, 1)


async def measure(
    seats: list[Seat], seconds: float, warmup: float, cpu: Callable[[], float], seed: int
) -> Measured:
    """Play every seat paced; count the moves and the server's CPU within the window."""
    rnd = random.Random(seed)
    begin = time.monotonic()
    start, end = begin + warmup, begin + warmup + seconds
    players = [asyncio.create_task(play_paced(s, end + PACE_S, rnd)) for s in seats]
    await asyncio.sleep(max(0.0, start - time.monotonic()))
    cpu0 = cpu()
    await asyncio.sleep(max(0.0, end - time.monotonic()))
    cpu1 = cpu()
    await asyncio.gather(*players)
    moves = sum(1 for s in seats for t in s.acked if start <= t < end)
    return Measured(moves, cpu1 - cpu0)


async def live_load(
    url: str, count: int, seqs: list[tuple[int, list[str]]], seconds: float, warmup: float,
    cpu: Callable[[], float], tag: str,
) -> Measured:  # fmt: skip
    """`count` seats in live races of four, all playing."""
    conns: list[Conn] = []
    seats: list[Seat] = []
    try:
        for r in range(count // SEATS):
            seed, moves = seqs[r % len(seqs)]
            group = [await Conn.open(url, f"live{tag}{r}s{i}") for i in range(SEATS)]
            conns += group
            created = await group[0].request(
                {"t": "create", "game": GAME, "seed": seed, "max_players": SEATS}
            )
            code = created["race"]
            for c in group[1:]:
                assert (await c.request({"t": "join", "race": code}))["t"] == "lobby"
            await group[0].request({"t": "start", "race": code})
            for c in group:
                state = await c.next(lambda m: m.get("t") == "state")
                seats.append(Seat(c, state["gid"], moves))
        return await measure(seats, seconds, warmup, cpu, 1)
    finally:
        for c in conns:
            await c.close()


async def async_load(
    url: str, count: int, seqs: list[tuple[int, list[str]]], seconds: float, warmup: float,
    cpu: Callable[[], float], tag: str,
) -> Measured:  # fmt: skip
    """`count` seats, each in an asynchronous race of four whose three earlier runs were
    played (at the same pace) before, and resigned."""
    conns: list[Conn] = []
    try:
        codes, earlier = [], []
        for r in range(count):
            seed, moves = seqs[r % len(seqs)]
            group = [await Conn.open(url, f"early{tag}{r}s{i}") for i in range(SEATS - 1)]
            conns += group
            created = await group[0].request(
                {"t": "create", "game": GAME, "seed": seed, "max_players": SEATS,
                 "async": True, "window_s": WINDOW_S}
            )  # fmt: skip
            codes.append((created["race"], moves))
            for c in group:
                await c.request({"t": "join", "race": created["race"]})
                state = await c.next(lambda m: m.get("t") == "state")
                earlier.append(Seat(c, state["gid"], moves))
        # The earlier runs, long enough to cover the measured seats' window.
        rnd = random.Random(2)
        until = time.monotonic() + warmup + seconds + 1
        await asyncio.gather(*(play_paced(s, until, rnd) for s in earlier))
        for s in earlier:
            await s.conn.request({"t": "resign", "gid": s.gid})
        seats: list[Seat] = []
        for r, (code, moves) in enumerate(codes):
            c = await Conn.open(url, f"late{tag}{r}")
            conns.append(c)
            await c.request({"t": "join", "race": code})
            start = await c.next(lambda m: m.get("t") == "start")
            state = await c.next(lambda m: m.get("t") == "state")
            seats.append(Seat(c, state["gid"], moves, start_ms=start["starts_at_ms"]))
        measured = await measure(seats, seconds, warmup, cpu, 3)
        for s in seats:
            first: set[str] = set()
            for at, msg in s.conn.events:
                if msg.get("t") != "progress" or not msg.get("ghost"):
                    continue
                if msg["player"] not in first:
                    first.add(msg["player"])  # the catch-up at the join: not scheduled
                    continue
                measured.lateness_ms.append(at * 1000 - (s.start_ms + msg["elapsed_ms"]))
        return measured
    finally:
        for c in conns:
            await c.close()


async def compare(
    url: str, seats: int, seqs: list[tuple[int, list[str]]], rounds: int, seconds: float,
    warmup: float, cpu: Callable[[], float],
) -> bool:  # fmt: skip
    """Alternate the two loads for `rounds` rounds; print the figures and the ratio."""
    seats = max(SEATS, seats - seats % SEATS)
    live: list[Measured] = []
    ghosts: list[Measured] = []
    for r in range(rounds):
        live.append(await live_load(url, seats, seqs, seconds, warmup, cpu, f"{r}"))
        ghosts.append(await async_load(url, seats, seqs, seconds, warmup, cpu, f"{r}"))
    live_us = statistics.median(m.cpu_us_per_move for m in live)
    async_us = statistics.median(m.cpu_us_per_move for m in ghosts)
    late = [x for m in ghosts for x in m.lateness_ms]
    print(f"  asynchronous races: {seats} seats playing a move every {PACE_S * 1000:.0f} ms, "
          f"each hearing 3 other runs ({rounds} rounds of {seconds:g} s)")  # fmt: skip
    for r, (a, b) in enumerate(zip(live, ghosts, strict=True)):
        print(f"    round {r + 1}: live races of {SEATS}: {a.moves} moves, "
              f"{a.cpu_us_per_move:.1f} us server CPU/move; async with 3 ghosts: {b.moves} "
              f"moves, {b.cpu_us_per_move:.1f} us/move")  # fmt: skip
    ratio = async_us / live_us
    print(f"    server CPU per move (medians): live {live_us:.1f} us, async {async_us:.1f} us, "
          f"ratio async/live {ratio:.2f} (target <= 1.2)")  # fmt: skip
    print(f"    ghost timing error over {len(late)} scheduled ghost events: "
          f"p50 {percentile(late, 0.5):.1f} ms, p99 {percentile(late, 0.99):.1f} ms, "
          f"max {max(late, default=float('nan')):.1f} ms (late > 0)")  # fmt: skip
    return bool(late)
