#!/usr/bin/env python3
"""The players of bench/capacity.py: one child process holding tables of players.

    python -m bench.capacity_bots URL INDEX SEATS PACE SERVER
    (started by bench/capacity.py, not by hand)

Each table is SEATS players on lean clients (bench/lean_client.py, which answers the
server's keep-alive pings) who play Doublets deals again and again, every seat playing
the deal's moves as the server's easy bot would (computed from the deal with the engine,
as bench/server.py's bots do), one move every PACE seconds on average (uniformly
jittered between half and one and a half times it). Each table cuts its first game
short at a random point, so that the tables' games do not all end together. What a
table says to the server depends on SERVER (`KINDS`); the pacing, the timing of each
move's acknowledgement and the report are the same for all:

- race (the race server): the host (a different seat each race) creates a race of the
  deal, the others join, the host starts it, every seat plays, a seat that did not
  finish resigns, and the next race begins once every seat has had the result;
- relay (bench/relay_server.py): each seat joins its table once, then plays game after
  game; each move is acknowledged and sent on to the other seats as a progress event;
- durable-echo, echo (bench/server.py's): each seat sends its moves, game after game,
  and gets each back.

Thousands of connections share one event loop here, so a connection has no reader task:
its frames go to a callback (LeanClient.on_frame), which decodes only the few fields a
player looks at (msgspec skips the rest, the game's view above all) and resolves the
request the frame answers.

The parent talks to the child in JSON lines, its commands on the child's stdin and the
answers on its stdout:

- {"cmd": "grow", "tables": K}: K more tables; answered {"grown": K, "failed": F} once
  each has started its first race (or failed to);
- {"cmd": "reset"}: a measured window opens (answered {"reset": true});
- {"cmd": "collect"}: it closes; answered with the window's move count, a histogram of
  their acknowledgement times (see `bucket`), the progress events received, and the
  errors so far (cumulative, by kind, with the first detail of each kind);
- {"cmd": "stop"}: no player sends anything more; once every request in flight has been
  answered (or has timed out), answered with the moves acknowledged under each store key
  (`Kind.key`: a race's game id, a relay's table and seat, "log" for the echoes) and the
  errors, then the child exits.

An error is anything a correct server would not do: an error reply, a reply of another
type, a reply that is not as many moves on as it should be, no reply within
REPLY_TIMEOUT_S, a connection lost. A table that meets one stops; the parent's ramp stops
at that step.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import random
import sys
import time
import traceback
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from bench.figures import histogram_percentile
from bench.lean_client import Fault, LeanClient
from bench.race_server import raise_open_files
from bench.server import GAME, move_sequences
from server import collector
from server.config import DEFAULT

REPLY_TIMEOUT_S = 30.0  # slower than this is a hang, not a slow reply
CONNECT_TIMEOUT_S = 30.0
RESULT_TIMEOUT_S = 30.0  # from a table's last move to every seat's result
STOP_DRAIN_S = REPLY_TIMEOUT_S + 2  # for the requests in flight at a stop
TABLES_CONNECTING = 32  # tables of one child connecting and greeting at once
BUCKETS_PER_E = 100  # histogram buckets per factor e of time: each about 1 % wide
enc = msgspec.msgpack.encode


class Frame(msgspec.Struct):
    """What a player reads of any frame the server sends; the rest is skipped unread."""

    t: str
    re: int | None = None
    n: int = 0
    finished: bool = False
    race: str | None = None
    player: str | None = None
    code: str | None = None
    msg: str | None = None  # an error's


read_frame = msgspec.msgpack.Decoder(Frame).decode


def bucket(seconds: float) -> int:
    """A time's histogram bucket: log-spaced from 1 us, BUCKETS_PER_E to a factor of e."""
    return int(math.log(max(seconds, 1e-6) * 1e6) * BUCKETS_PER_E)


def bucket_ms(index: int) -> float:
    """The upper edge of a bucket, in milliseconds (so a percentile never reads low)."""
    return math.exp((index + 1) / BUCKETS_PER_E) / 1000


def percentile_ms(hist: dict[int, int], q: float) -> float:
    """The q-percentile (0..1) of a histogram (bench/figures.py), in ms; nan when empty."""
    return histogram_percentile(hist, q, bucket_ms)


@dataclass
class Bots:
    """What the players of this process share (one event loop: no locks)."""

    host: str
    port: int
    index: int  # of this child, for unique player names
    seats: int
    pace: float
    seqs: list[tuple[int, list[str]]]
    kind: Kind
    stopping: bool = False
    measuring: bool = False
    hist: Counter[int] = field(default_factory=Counter)
    moves: int = 0  # in the window
    progress: int = 0  # progress events received, in the window
    errors: Counter[str] = field(default_factory=Counter)
    details: dict[str, str] = field(default_factory=dict)
    acked: dict[str, int] = field(default_factory=dict)  # store key -> moves acknowledged
    players: list[Player] = field(default_factory=list)
    tables: list[asyncio.Task[None]] = field(default_factory=list)

    def fault(self, fault: Fault) -> None:
        self.errors[fault.kind] += 1
        self.details.setdefault(fault.kind, fault.detail)

    def think(self, rng: random.Random) -> float:
        return rng.uniform(0.5, 1.5) * self.pace

    def acknowledged(self, seconds: float) -> None:
        if self.measuring:
            self.hist[bucket(seconds)] += 1
            self.moves += 1

    async def connect(self) -> Player:
        try:
            ws = await asyncio.wait_for(
                LeanClient.connect(self.host, self.port, "/ws"), CONNECT_TIMEOUT_S
            )
        except (OSError, TimeoutError) as exc:  # a refused handshake is a ConnectionError
            raise Fault("connection refused", str(exc) or type(exc).__name__) from None
        player = Player(self, ws)
        self.players.append(player)
        return player

    def expire(self) -> None:
        """Fails every request that has waited longer than REPLY_TIMEOUT_S (one sweep a
        second here is cheaper than a timer for each of thousands of requests)."""
        now = time.perf_counter()
        for player in self.players:
            for rid, (fut, sent, kind) in list(player.pending.items()):
                if now - sent > REPLY_TIMEOUT_S and not fut.done():
                    del player.pending[rid]
                    fut.set_exception(Fault(f"{kind}: no reply within {REPLY_TIMEOUT_S:g} s"))

    def in_flight(self) -> int:
        return sum(len(p.pending) for p in self.players)


class Player:
    """One connection and its player: requests answered by id, results kept by race."""

    def __init__(self, bots: Bots, ws: LeanClient) -> None:
        self.bots = bots
        self.ws = ws
        self.id = ""
        self.rid = 0
        # request id -> (its future: the reply and when it came; when it was sent; its type)
        self.pending: dict[int, tuple[asyncio.Future[tuple[Frame, float]], float, str]] = {}
        self.results: dict[str, asyncio.Future[None]] = {}
        self.closed = False
        ws.on_frame = self._frame
        ws.on_close = self._closed

    def _frame(self, data: bytes) -> None:
        arrived = time.perf_counter()
        try:
            frame = read_frame(data)
        except msgspec.DecodeError as exc:
            self.bots.fault(Fault("undecodable frame", str(exc)))
            return
        if frame.re is not None:
            waiting = self.pending.pop(frame.re, None)
            if waiting is not None and not waiting[0].done():
                waiting[0].set_result((frame, arrived))
        elif frame.t == "progress":
            if self.bots.measuring:
                self.bots.progress += 1
        elif frame.t == "result" and frame.race is not None:
            result = self.results.get(frame.race)
            if result is not None and not result.done():
                result.set_result(None)

    def _closed(self) -> None:
        self.closed = True
        for fut, _, kind in self.pending.values():
            if not fut.done():
                fut.set_exception(Fault("connection lost", f"code {self.ws.close_code}, {kind}"))
        self.pending.clear()

    async def request(self, msg: dict[str, Any], want: str) -> tuple[Frame, float]:
        """Sends `msg`; its reply, which must be of type `want`, and the seconds it took."""
        kind = msg["t"]
        if self.closed:
            raise Fault("connection lost", f"code {self.ws.close_code}, before {kind}")
        self.rid += 1
        fut: asyncio.Future[tuple[Frame, float]] = asyncio.get_running_loop().create_future()
        sent = time.perf_counter()
        self.pending[self.rid] = (fut, sent, kind)
        self.ws.send(enc({**msg, "id": self.rid}))
        reply, arrived = await fut
        if reply.t == "error":
            raise Fault(f"{kind}: error {reply.code}", reply.msg or "")
        if reply.t != want:
            raise Fault(f"{kind}: {reply.t} instead of {want}")
        return reply, arrived - sent

    async def play(self, game: str, moves: list[str], rng: random.Random) -> bool:
        """One game from its start: `moves` at the bots' pace, each sent as the server's
        kind has it (`Kind.move`, about the game `game`); whether the server said the
        game finished. Each acknowledged move is counted under `Kind.key`."""
        bots, kind = self.bots, self.bots.kind
        key = kind.key(game, self)
        finished = False
        for n, m in enumerate(moves):
            await asyncio.sleep(bots.think(rng))
            if bots.stopping:
                return False
            reply, took = await self.request(kind.move(game, n, m), kind.ack)
            if reply.n != n + kind.ahead:
                raise Fault(f"move: {kind.ack} not {kind.ahead} move on",
                            f"n {reply.n} after move {n}")  # fmt: skip
            bots.acked[key] = bots.acked.get(key, 0) + 1
            bots.acknowledged(took)
            finished = reply.finished
        return finished

    def close(self) -> None:
        self.ws.close()


async def table(bots: Bots, number: int, ready: asyncio.Future[bool]) -> None:
    """One table's players, game after game, until the bots stop or meet a fault."""
    rng = random.Random(f"{bots.index}.{number}")
    players: list[Player] = []
    try:
        name = f"k{bots.index}.{number}.{rng.getrandbits(24):06x}"  # unique on a server
        for seat in range(bots.seats):
            player = await bots.connect()
            players.append(player)
            await bots.kind.seat(player, name, seat)
        games = 0
        while not bots.stopping:
            await bots.kind.game(bots, players, games, rng, ready)
            games += 1
    except Fault as fault:
        bots.fault(fault)
    except Exception as exc:  # a bug of the bench: counted, so that it cannot pass unseen
        traceback.print_exc()
        bots.fault(Fault("bench bot crashed", repr(exc)))
    finally:
        if not ready.done():
            ready.set_result(False)
        if not bots.stopping:  # at a stop the parent closes every connection at once
            for player in players:
                player.close()


# ---------------------------------------------------------------- the servers' protocols


async def race_seat(player: Player, table: str, seat: int) -> None:
    """A race server's player: greeted under a name of its own."""
    welcome, _ = await player.request({"t": "hello", "v": 1, "name": f"{table}.{seat}"}, "welcome")
    assert welcome.player
    player.id = welcome.player


async def race(
    bots: Bots, players: list[Player], races: int, rng: random.Random, ready: asyncio.Future[bool]
) -> None:
    """One race of the table's players, from its creation to every seat's result."""
    host = players[races % len(players)]
    seed, moves = bots.seqs[rng.randrange(len(bots.seqs))]
    create = {"t": "create", "game": GAME, "seed": seed, "max_players": len(players)}
    code = (await host.request(create, "created"))[0].race
    assert code
    # One after another, as people join: joins at the same instant would only measure how
    # often the lobby's versioned writes collide.
    for player in players:
        if player is not host:
            await player.request({"t": "join", "race": code}, "lobby")
    loop = asyncio.get_running_loop()
    results = [loop.create_future() for _ in players]
    for player, result in zip(players, results, strict=True):
        player.results[code] = result
    await host.request({"t": "start", "race": code}, "start")
    if not ready.done():
        ready.set_result(True)
        moves = moves[: rng.randint(1, len(moves))]
    try:
        # Each seat plays its game out even if another one met a fault (raised after).
        outcomes = await asyncio.gather(
            *(finish(p, f"r.{code}.{p.id}", moves, rng) for p in players), return_exceptions=True
        )
        raise_first_fault(bots, outcomes)
        if bots.stopping:
            return
        try:
            async with asyncio.timeout(RESULT_TIMEOUT_S):
                await asyncio.gather(*results)
        except TimeoutError:
            raise Fault(f"no result within {RESULT_TIMEOUT_S:g} s of the last move") from None
    finally:
        for player in players:
            player.results.pop(code, None)


async def finish(player: Player, gid: str, moves: list[str], rng: random.Random) -> None:
    """A race's game `gid` from its start: `moves`, then a resignation if they did not
    finish it."""
    if not await player.play(gid, moves, rng) and not player.bots.stopping:
        await player.request({"t": "resign", "gid": gid}, "state")


async def relay_seat(player: Player, table: str, seat: int) -> None:
    """A seat of the relay's table (bench/relay_server.py), for good."""
    await player.request({"t": "join", "table": table, "seat": seat}, "joined")
    player.id = f"{table}:{seat}"


async def no_seat(player: Player, table: str, seat: int) -> None:
    """An echo's player: a connection, nothing to say first."""
    player.id = f"{table}.{seat}"


async def deal(
    bots: Bots, players: list[Player], games: int, rng: random.Random, ready: asyncio.Future[bool]
) -> None:
    """One deal played by every seat of the table at once, where there is no race to
    create: the relay and the echoes."""
    _seed, moves = bots.seqs[rng.randrange(len(bots.seqs))]
    if not ready.done():
        ready.set_result(True)
        moves = moves[: rng.randint(1, len(moves))]
    outcomes = await asyncio.gather(
        *(p.play(f"{games}", moves, rng) for p in players), return_exceptions=True
    )
    raise_first_fault(bots, outcomes)


def raise_first_fault(bots: Bots, outcomes: list[Any]) -> None:
    """Of the seats' outcomes (gathered with return_exceptions), the first failure is
    raised; the faults after it are counted, so that none goes unreported."""
    faults = [o for o in outcomes if isinstance(o, BaseException)]
    for fault in faults[1:]:
        if isinstance(fault, Fault):
            bots.fault(fault)
    if faults:
        raise faults[0]


def race_move(game: str, n: int, m: str) -> dict[str, Any]:
    return {"t": "move", "gid": game, "n": n, "m": m}


def relay_move(game: str, n: int, m: str) -> dict[str, Any]:
    return {"t": "move", "n": n, "m": m}


def echo_move(game: str, n: int, m: str) -> dict[str, Any]:
    # As long as a race's move: a game id of a race's length.
    return {"t": "move", "gid": f"r.ECHO{game:>4}.p00000000", "n": n, "m": m}


@dataclass(frozen=True)
class Kind:
    """What a table says to one kind of server: how a seat comes in (`seat`), how a game
    of the table goes (`game`), a move's frame (`move`), the type of its acknowledgement
    (`ack`, which carries n + `ahead`), and the store key the move's count goes under
    (`key`, from the game and the player), for the parent to compare with the store."""

    seat: Callable[[Player, str, int], Awaitable[None]]
    game: Callable[[Bots, list[Player], int, random.Random, asyncio.Future[bool]], Awaitable[None]]
    move: Callable[[str, int, str], dict[str, Any]]
    ack: str
    ahead: int
    key: Callable[[str, Player], str]


KINDS = {
    "race": Kind(race_seat, race, race_move, "state", 1, lambda game, player: game),
    "relay": Kind(relay_seat, deal, relay_move, "ack", 1, lambda game, player: player.id),
    "durable-echo": Kind(no_seat, deal, echo_move, "move", 0, lambda game, player: "log"),
    "echo": Kind(no_seat, deal, echo_move, "move", 0, lambda game, player: "log"),
}


# ---------------------------------------------------------------- the child's commands


async def serve(bots: Bots) -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)

    def answer(msg: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(msg) + "\n")
        sys.stdout.flush()

    async def sweep() -> None:
        while True:
            await asyncio.sleep(1.0)
            bots.expire()

    sweeper = asyncio.create_task(sweep())
    gate = asyncio.Semaphore(TABLES_CONNECTING)

    async def gated_table(number: int, ready: asyncio.Future[bool]) -> None:
        async with gate:  # held until the table has started its first race, or failed
            playing = asyncio.create_task(table(bots, number, ready))
            await ready
        await playing

    while line := await reader.readline():
        cmd = json.loads(line)["cmd"]
        if cmd == "grow":
            first = len(bots.tables)
            readies = [loop.create_future() for _ in range(json.loads(line)["tables"])]
            bots.tables += [
                asyncio.create_task(gated_table(first + i, ready))
                for i, ready in enumerate(readies)
            ]
            started = await asyncio.gather(*readies)
            answer({"grown": len(readies), "failed": started.count(False)})
        elif cmd == "reset":
            bots.hist.clear()
            bots.moves = bots.progress = 0
            bots.measuring = True
            answer({"reset": True})
        elif cmd == "collect":
            bots.measuring = False
            answer({"moves": bots.moves, "progress": bots.progress,
                    "hist": {str(k): v for k, v in bots.hist.items()},
                    "errors": dict(bots.errors), "details": bots.details})  # fmt: skip
        elif cmd == "stop":
            bots.stopping = True
            deadline = time.monotonic() + STOP_DRAIN_S
            while bots.in_flight() and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            # A reply that came this loop turn has woken its table but not run it yet: a
            # cancel now would land instead of the reply, and a move stored and acknowledged
            # would go uncounted (seen in CI as "1 stored moves beyond"). One turn lets every
            # woken table count its ack first, since its wake-up was queued before ours.
            await asyncio.sleep(0)
            for task in bots.tables:
                task.cancel()
            await asyncio.gather(*bots.tables, return_exceptions=True)
            sweeper.cancel()
            for player in bots.players:
                player.close()
            await asyncio.sleep(0.2)  # the close frames go out
            answer({"acked": bots.acked, "errors": dict(bots.errors), "details": bots.details,
                    "in_flight": bots.in_flight()})  # fmt: skip
            return


def main() -> int:
    url, index, seats, pace, kind = sys.argv[1:6]
    host, port = url.rsplit(":", 1)
    raise_open_files(0)  # to the hard limit; the parent keeps each child well below it
    # The bots collect as the server does (bench/server.py's bots too).
    collector.schedule(DEFAULT.gc_young_threshold)
    bots = Bots(host, int(port), int(index), int(seats), float(pace), move_sequences(40),
                KINDS[kind])  # fmt: skip
    with contextlib.suppress(ImportError):  # the bots' loop costs less on uvloop
        import uvloop

        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    asyncio.run(serve(bots))
    return 0


if __name__ == "__main__":
    sys.exit(main())
