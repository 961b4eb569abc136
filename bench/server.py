#!/usr/bin/env python3
"""Benchmark of the race server flat out against an echo, a durable echo and a durable
relay, same run.

    .venv/bin/python -m bench.server [--players 200] [--seats 4] [--seconds 5] [--rounds 3]
        [--idle 5000] [--async-share 0.25] [--store-fsync always|everysec|always,everysec]
        [--baseline-server EXE]

What it does (loopback only, bounded in time and connection count, stops by itself):

- a bare echo server (websockets, msgpack decode + encode, no compression) runs in a child
  process; N closed-loop bots send it move-sized frames: round trips per second, p50/p99
  round trip, server CPU per message;
- the bots of both loads run in this process on the lean client of bench/lean_client.py
  (raw frames on an asyncio protocol), not on websockets' client: they share the CPUs
  with the server under test, and websockets' client took them 30-60 us a move, half
  what the race server itself spent, so the ratio measured the bots as much as the
  servers;
- the real `solitaire-server` runs beside it (REDIS_URL if set, else a valkey-server of the
  bench's own in a temporary directory, started as the server starts its embedded store, with
  `--store-fsync`'s appendfsync; `--store-fsync always,everysec` runs one server on a store of
  each kind, every round playing both) with the per-connection rate limit lifted (the bots
  play as fast as replies come) and no background search for daily deals; N bots in
  tables of `--seats` (4: each move's progress goes to the three other seats, as in
  bench/capacity.py; `--seats 1`: each bot the only seat of its own race, no fan-out)
  play legal moves of Doublets computed with the engine from the deal, each seat sending
  its next move as soon as the last is answered: the host (a different seat each race)
  creates a race, the others join, the host starts it, every seat plays (a seat that does
  not finish resigns), and once every seat has had the result the table races again. Each
  table cuts its first game short at a random point, so that the tables' races do not all
  end together. Every move is checked and stored before its reply; at the end the stored
  move counts are compared with the acknowledged ones;
- each run measures `--seconds` from `--warmup` seconds after its last bot became ready
  (connected, and for the race server greeted and playing its first race): 200 bots
  greeting and starting races at once take a few seconds here, and those first moves
  are not what a running server does;
- the two loads alternate for `--rounds` rounds, so that a change in the machine's load
  hits both alike; the medians are compared;
- finally `--idle` connections (up to 20,000) are opened to each server (to the race server
  as greeted players) by helper processes of 5,000 each, and the server's resident memory
  per idle connection is reported. Where the hard open-file limit keeps one process below
  `--idle` connections, this phase runs each server on as many processes as it takes (echo
  servers on one port, the race server with `--workers`) and sums their memory.

- a durable echo (the same echo, but each message is appended to the race server's Redis
  through redis-py before its reply, the appends of one loop turn in one pipeline, as the
  server's group commit does) runs as a third load in the same rounds: the floor of
  "stored before the reply" with this stack; at the end the stored messages are counted.

- the durable relay of bench/relay_server.py runs as a fourth load in the same rounds, on
  the same store, in tables of `--seats` as the race server's: each move appended to its
  seat's list in Redis (pipelined per loop turn), acknowledged once stored, and sent on
  to the other seats of its table as a small progress event: the least a race server
  must do with a move. At the end each seat's stored list is compared with its
  acknowledged moves. Target: the race server's throughput >= 0.70 of the relay's.

- `--baseline-server EXE` runs another solitaire-server executable (an earlier commit's,
  from its own checkout and venv) on the same store in the same rounds, and compares the
  two.

- asynchronous races (bench/async_races.py): a share of `--players` (`--async-share`) seats
  play paced moves against three ghosts each, alternating with as many seats in live races
  of four: the server's CPU per move of both (target: async within 1.2x of live) and the
  ghost timing error (p50, p99, max).

Prints the figures and the ratios server/echo, server/durable echo and server/relay
(throughput, p99, server CPU per move).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import msgspec
from websockets.asyncio.client import connect

import engine
from bench import async_races
from bench.figures import percentile
from bench.lean_client import LeanClient
from bench.race_server import (
    IDLE_PER_HELPER,
    ROOT,
    BaselineServer,
    RaceServer,
    bench_module,
    cpu_s,
    drop_keys,
    drop_namespace,
    free_port,
    idle_players,
    list_lengths,
    raise_open_files,
    rss_kb,
    start_baseline_server,
    start_race_server,
    store_client,
    wait_port,
    worker_pids,
)
from bench.relay_server import serve_until_sigterm
from engine.solve.bot import choose_move
from server import collector
from server.config import DEFAULT
from server.store.embedded import FSYNC_POLICIES, EmbeddedRedis

GAME = "doublets"
RESULT_TIMEOUT_S = 30.0  # from a table's last move to every seat's result
IDLE_TARGET_KB = 20  # server memory per idle greeted player, at up to 20,000 of them
enc = msgspec.msgpack.encode
dec = msgspec.msgpack.decode


class Reply(msgspec.Struct):
    """What a bot reads of each frame it gets during the load; the rest (a state's view
    above all) is skipped unread. Echo and race bots read their replies alike."""

    t: str
    re: int | None = None
    n: int = 0
    finished: bool = False
    race: str | None = None  # a result's


read_reply = msgspec.msgpack.Decoder(Reply).decode


# ---------------------------------------------------------------- echo server (child process)


def run_echo_server(port: int) -> None:
    decoder = msgspec.msgpack.Decoder()
    encoder = msgspec.msgpack.Encoder()

    async def handler(ws) -> None:  # type: ignore[no-untyped-def]
        async for frame in ws:
            msg = decoder.decode(frame)
            msg["re"] = msg.get("id")
            await ws.send(encoder.encode(msg))

    async def main() -> None:
        # The race server's collector schedule (server/collector.py), so that both servers run
        # alike (a bench run is too short for the server's timed full collections).
        collector.schedule(DEFAULT.gc_young_threshold)
        # reuse_port: the idle phase may run several on one port (see idle_processes).
        await serve_until_sigterm(handler, port, reuse_port=True)

    asyncio.run(main())


def run_durable_echo_server(port: int, redis_url: str, key: str) -> None:
    """The echo, durable: each message is appended to a Redis list before its reply. The
    appends of one loop turn go in one pipeline (one round trip), as the race server's
    group commit sends the moves of a turn in one script call."""
    import redis.asyncio as aioredis

    decoder = msgspec.msgpack.Decoder()
    encoder = msgspec.msgpack.Encoder()

    async def main() -> None:
        collector.schedule(DEFAULT.gc_young_threshold)
        redis = aioredis.Redis.from_url(redis_url)
        loop = asyncio.get_running_loop()
        pending: list[tuple[bytes, asyncio.Future[None]]] = []
        wake = asyncio.Event()

        async def writer() -> None:
            while True:
                await wake.wait()
                wake.clear()
                batch, pending[:] = list(pending), []
                if not batch:
                    continue
                async with redis.pipeline(transaction=False) as pipe:
                    pipe.rpush(key, *[frame for frame, _ in batch])
                    await pipe.execute()
                for _, fut in batch:
                    fut.set_result(None)

        async def handler(ws) -> None:  # type: ignore[no-untyped-def]
            async for frame in ws:
                msg = decoder.decode(frame)
                fut = loop.create_future()
                pending.append((frame, fut))
                wake.set()
                await fut  # stored before the reply
                msg["re"] = msg.get("id")
                await ws.send(encoder.encode(msg))

        task = asyncio.create_task(writer())
        # Its bots are long gone when it is stopped: no need to wait long for their closes.
        await serve_until_sigterm(handler, port, close_timeout=2)
        task.cancel()
        await redis.aclose()

    asyncio.run(main())


# ---------------------------------------------------------------- helpers


def move_sequences(count: int) -> list[tuple[int, list[str]]]:
    """Whole Doublets games (seed, moves) as an easy bot plays them: the server's own bot
    policy (engine/solve/bot.py), from the public view."""
    out = []
    for seed in range(1, count + 1):
        g = engine.new_game(GAME, seed)
        rnd = random.Random(seed)
        moves = []
        while not g.over:
            m = choose_move(g.view(), "easy", rnd)
            if m is None:
                break
            g.play(m)
            moves.append(m)
        out.append((seed, moves))
    return out


@dataclass
class Window:
    """The measured window: it opens `warmup` seconds after the last bot became ready
    (connected; for the race server, greeted and playing), so that no run counts the
    connection storm of its start, and lasts `seconds`."""

    players: int
    warmup: float
    seconds: float
    ready: int = 0
    start: float = float("inf")
    end: float = float("inf")
    opened: asyncio.Event = field(default_factory=asyncio.Event)

    def bot_ready(self) -> None:
        self.ready += 1
        if self.ready == self.players:
            self.start = time.perf_counter() + self.warmup
            self.end = self.start + self.seconds
            self.opened.set()


@dataclass
class Load:
    rtts: list[float] = field(default_factory=list)
    moves: int = 0
    races: int = 0
    errors: int = 0
    acked_by_gid: dict[str, int] = field(default_factory=dict)
    client_cpu: float = 0.0
    replies: int = 0  # every reply, the warm-up's too (the echo loads)


@dataclass
class Figures:
    name: str
    rate: float
    p50_ms: float
    p99_ms: float
    cpu_us: float
    client_cpu_us: float
    idle_kb: float = 0.0


def summarise(name: str, load: Load, seconds: float, cpu: float) -> Figures:
    p50 = percentile(load.rtts, 0.50) * 1000
    p99 = percentile(load.rtts, 0.99) * 1000
    per = 1e6 / max(load.moves, 1)
    return Figures(name, load.moves / seconds, p50, p99, cpu * per, load.client_cpu * per)


# ---------------------------------------------------------------- bots


async def echo_bot(url: str, seqs: list[tuple[int, list[str]]], i: int, seats: int,
                   window: Window, load: Load) -> None:  # fmt: skip
    """One echo player (`seats` is 1: an echo has no tables)."""
    ws = await lean_connect(url)
    try:
        _seed, moves = seqs[i % len(seqs)]
        gid = f"r.BENCH{i}.player{i}"
        n = 0
        window.bot_ready()
        while True:
            now = time.perf_counter()
            if now >= window.end:
                break
            m = moves[n % len(moves)]
            ws.send(enc({"t": "move", "gid": gid, "n": n, "m": m, "id": n}))
            reply = read_reply(await ws.recv())
            done = time.perf_counter()
            if reply.re != n:
                load.errors += 1
            load.replies += 1
            if now >= window.start:  # the warm-up is not counted
                load.rtts.append(done - now)
                load.moves += 1
            n += 1
    finally:
        ws.close()


async def lean_connect(url: str) -> LeanClient:
    """A bot's connection: the lean client of lean_client.py (for both loads alike)."""
    parts = urlsplit(url)
    assert parts.hostname and parts.port
    return await LeanClient.connect(parts.hostname, parts.port, parts.path or "/")


@dataclass
class Seat:
    """One player of a bot table: its connection, its request ids, and the races whose
    result it has been sent (a result may come before or after the reply to the last
    move, and while the seat waits for another reply)."""

    ws: LeanClient
    player: str = ""
    rid: int = 0
    results: set[str] = field(default_factory=set)

    def next_id(self) -> int:
        self.rid += 1
        return self.rid

    async def reply(self, rid: int) -> Reply:
        """The reply to request `rid`; the events before it are skipped (results noted)."""
        while True:
            reply = read_reply(await self.ws.recv())
            if reply.re == rid:
                return reply
            if reply.t == "result" and reply.race is not None:
                self.results.add(reply.race)

    async def request(self, msg: dict[str, Any]) -> dict[str, Any]:
        """A request (create, join, start, resign) and its whole reply."""
        rid = self.next_id()
        self.ws.send(enc({**msg, "id": rid}))
        while True:
            reply: dict[str, Any] = dec(await self.ws.recv())
            if reply.get("re") == rid:
                return reply
            if reply.get("t") == "result":
                self.results.add(reply["race"])

    async def result(self, race: str) -> None:
        """Until the race's result has come."""
        while race not in self.results:
            reply = read_reply(await self.ws.recv())
            if reply.t == "result" and reply.race is not None:
                self.results.add(reply.race)
        self.results.discard(race)


async def race_table(url: str, seqs: list[tuple[int, list[str]]], i: int, seats: int,
                     window: Window, load: Load) -> None:  # fmt: skip
    """A table of `seats` players racing each other: the host (a different seat each race)
    creates a race of a Doublets deal, the others join, the host starts it, every seat plays
    the deal's moves as fast as its replies come (a seat that does not finish resigns),
    and the next race begins once every seat has had the result. With one seat, a player
    racing alone."""
    table = [Seat(await lean_connect(url)) for _ in range(seats)]
    try:
        # Names are unique on a server, and every round brings its bots anew.
        tag = uuid.uuid4().hex[:8]
        for s, seat in enumerate(table):
            welcome = await seat.request({"t": "hello", "v": 1, "name": f"bot{i}.{s}.{tag}"})
            assert welcome["t"] == "welcome", welcome
            seat.player = welcome["player"]
        k = i
        races = 0
        while time.perf_counter() < window.end:
            seed, moves = seqs[k % len(seqs)]
            k += 7
            host = table[races % seats]
            create: dict[str, Any] = {"t": "create", "game": GAME, "seed": seed}
            if seats > 1:
                create["max_players"] = seats
            created = await host.request(create)
            assert created["t"] == "created", created
            code = created["race"]
            for seat in table:
                if seat is not host:
                    joined = await seat.request({"t": "join", "race": code})
                    assert joined["t"] == "lobby", joined
            started = await host.request({"t": "start", "race": code})
            assert started["t"] == "start", started
            load.races += 1
            if not races:
                for _ in table:
                    window.bot_ready()
                # Tables that start together would finish their games together, and every
                # race's end and the next one's creation would fall in the same half second
                # again and again: players of a real server come and go at random. So each
                # table cuts its first game short at a random point (its seats resign).
                moves = moves[: random.Random(i).randint(1, len(moves))]
            races += 1
            played = await asyncio.gather(
                *(race_game(seat, f"r.{code}.{seat.player}", moves, window, load)
                  for seat in table)
            )  # fmt: skip
            if not all(played):  # the window's end, or an error (counted)
                break
            try:
                async with asyncio.timeout(RESULT_TIMEOUT_S):
                    for seat in table:
                        await seat.result(code)
            except TimeoutError:
                load.errors += 1
                break
    finally:
        for seat in table:
            seat.ws.close()


async def race_game(seat: Seat, gid: str, moves: list[str], window: Window, load: Load) -> bool:
    """One seat's game of a race: its moves, each sent once the last was answered; a
    resignation if they did not finish it. False if the window ended or a reply was wrong."""
    finished = False
    for n, m in enumerate(moves):
        now = time.perf_counter()
        if now >= window.end:
            return False
        rid = seat.next_id()
        seat.ws.send(enc({"t": "move", "gid": gid, "n": n, "m": m, "id": rid}))
        reply = await seat.reply(rid)
        done = time.perf_counter()
        if reply.t != "state" or reply.n != n + 1:
            load.errors += 1
            return False
        load.acked_by_gid[gid] = n + 1
        if now >= window.start:  # the warm-up is not counted
            load.rtts.append(done - now)
            load.moves += 1
        finished = reply.finished
    if not finished:
        resigned = await seat.request({"t": "resign", "gid": gid})
        if resigned["t"] != "state":
            load.errors += 1
            return False
    return True


async def relay_table(url: str, seqs: list[tuple[int, list[str]]], i: int, seats: int,
                      window: Window, load: Load) -> None:  # fmt: skip
    """A table of `seats` players on the durable relay (bench/relay_server.py): each seat
    joins the table, then sends moves of a deal, each once the last was acknowledged,
    while the progress events of the other seats come in between."""
    table = [Seat(await lean_connect(url)) for _ in range(seats)]
    try:
        name = f"t{i}.{uuid.uuid4().hex[:8]}"  # each round's tables anew
        for s, seat in enumerate(table):
            joined = await seat.request({"t": "join", "table": name, "seat": s})
            assert joined["t"] == "joined", joined
            seat.player = f"{name}:{s}"
        for _ in table:
            window.bot_ready()
        await asyncio.gather(
            *(relay_seat(seat, seqs[(i + s) % len(seqs)][1], window, load)
              for s, seat in enumerate(table))
        )  # fmt: skip
    finally:
        for seat in table:
            seat.ws.close()


async def relay_seat(seat: Seat, moves: list[str], window: Window, load: Load) -> None:
    n = 0
    while True:
        now = time.perf_counter()
        if now >= window.end:
            break
        rid = seat.next_id()
        seat.ws.send(enc({"t": "move", "n": n, "m": moves[n % len(moves)], "id": rid}))
        reply = await seat.reply(rid)
        done = time.perf_counter()
        if reply.t != "ack" or reply.n != n + 1:
            load.errors += 1
            break
        n += 1
        load.acked_by_gid[seat.player] = n
        if now >= window.start:  # the warm-up is not counted
            load.rtts.append(done - now)
            load.moves += 1


# A load's bot: (url, the move sequences, its index, its seats, the window, the load's
# tally); an echo's bot is one player, a table's its `seats` players.
Bot = Callable[[str, list[tuple[int, list[str]]], int, int, "Window", "Load"], Awaitable[None]]


async def drive(
    bot: Bot,
    url: str,
    players: int,
    seats: int,
    seconds: float,
    warmup: float,
    seqs: list[tuple[int, list[str]]],
    pid: int,
) -> tuple[Load, float, float]:
    """Run `players` players in bots of `seats`; measure the window: (load, seconds,
    server CPU s)."""
    load = Load()
    window = Window(players, warmup, seconds)

    async def cpu_marks() -> tuple[float, float, float, float]:
        await asyncio.wait_for(window.opened.wait(), timeout=120)
        await asyncio.sleep(max(0.0, window.start - time.perf_counter()))
        server0, client0 = cpu_s(pid), time.process_time()
        await asyncio.sleep(max(0.0, window.end - time.perf_counter()))
        return server0, client0, cpu_s(pid), time.process_time()

    marks = asyncio.create_task(cpu_marks())
    await asyncio.gather(*(bot(url, seqs, i, seats, window, load) for i in range(players // seats)))
    server0, client0, server1, client1 = await marks
    load.client_cpu = client1 - client0
    return load, seconds, server1 - server0


def hold_idle(url: str, count: int, first: int, hello: bool) -> None:
    """A helper process of the idle phase: opens `count` connections (greeted as players
    idle{first}, idle{first + 1}, ... with `hello`), says "ready" and holds them until its
    stdin closes. Helpers keep the bench's own open files and CPU out of the phase."""

    async def main() -> None:
        conns = []
        for start in range(0, count, 250):
            batch = await asyncio.gather(
                *(
                    connect(url, compression=None, open_timeout=60)
                    for _ in range(start, min(count, start + 250))
                )
            )
            if hello:
                await asyncio.gather(
                    *(
                        ws.send(
                            enc({"t": "hello", "v": 1, "name": f"idle{first + start + j}", "id": 1})
                        )
                        for j, ws in enumerate(batch)
                    )
                )
                await asyncio.gather(*(ws.recv() for ws in batch))
            conns += batch
        print("ready", flush=True)
        await asyncio.to_thread(sys.stdin.buffer.read)
        await asyncio.gather(*(ws.close() for ws in conns), return_exceptions=True)

    asyncio.run(main())


async def idle_connections(url: str, count: int, pids: list[int], hello: bool) -> float:
    """Growth of the servers' resident memory (summed over `pids`) per idle connection, KB."""
    await asyncio.sleep(0.5)
    before = sum(rss_kb(pid) for pid in pids)
    async with idle_players(url, count, hello):
        after = sum(rss_kb(pid) for pid in pids)
    return (after - before) / count


def idle_processes(idle: int, open_files: int) -> int:
    """Processes each server needs to hold `idle` connections when one process may keep
    `open_files` open: more than one only where the hard limit is below that."""
    return max(1, math.ceil(idle / (open_files - 200)))


# ---------------------------------------------------------------- main


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=200, help="concurrent bots (default 200)")
    parser.add_argument("--seconds", type=float, default=5.0, help="measured seconds per run")
    parser.add_argument("--warmup", type=float, default=1.0,
                        help="warm-up seconds per run, from when every bot is ready")  # fmt: skip
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds (default 3)")
    parser.add_argument("--seats", type=int, default=4,
                        help="players per table of the race server and the relay: races of "
                             "this many seats, each move sent on to the others (default 4; 1: "
                             "each bot races alone, no fan-out)")  # fmt: skip
    parser.add_argument("--idle", type=int, default=5000, help="idle connections (default 5000)")
    parser.add_argument("--async-share", type=float, default=0.25,
                        help="share of --players that also play asynchronous races against "
                        "three ghosts each, compared with as many seats in live races of four "
                        "(default 0.25; 0: not run)")  # fmt: skip
    parser.add_argument("--store-fsync",
                        help="appendfsync of the bench's own store, as the server's "
                             "--store-fsync: always or everysec, or both comma-separated "
                             "(a race server on each, in the same alternating rounds); "
                             f"not with REDIS_URL (default {DEFAULT.store_fsync})")  # fmt: skip
    parser.add_argument("--baseline-server", type=Path, metavar="EXE",
                        help="another solitaire-server executable (e.g. an earlier version's, "
                             "from its own checkout and venv) run on the same store in the same "
                             "alternating rounds, and compared with this one")  # fmt: skip
    parser.add_argument("--serve-echo", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--serve-durable-echo", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--hold-idle", nargs=3, metavar=("URL", "COUNT", "FIRST"),
                        help=argparse.SUPPRESS)  # fmt: skip
    parser.add_argument("--hello", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_echo:
        run_echo_server(args.serve_echo)
        return 0
    if args.serve_durable_echo:
        port, url, key = args.serve_durable_echo
        run_durable_echo_server(int(port), url, key)
        return 0
    if args.hold_idle:
        url, count, first = args.hold_idle
        hold_idle(url, int(count), int(first), args.hello)
        return 0
    if not (1 <= args.players <= 2000 and 0 < args.seconds <= 60 and 0 <= args.idle <= 20000
            and 1 <= args.rounds <= 10):  # fmt: skip
        parser.error("players 1..2000, seconds up to 60, idle up to 20000, rounds 1..10")
    if not 1 <= args.seats <= DEFAULT.max_players or args.players % args.seats:
        parser.error(f"--seats: 1..{DEFAULT.max_players}, and --players a multiple of it")
    if args.store_fsync is not None and os.environ.get("REDIS_URL"):
        parser.error("--store-fsync sets the bench's own store: unset REDIS_URL to use it")
    args.store_fsync = (args.store_fsync or DEFAULT.store_fsync).split(",")
    if not set(args.store_fsync) <= set(FSYNC_POLICIES) or len(set(args.store_fsync)) != len(
        args.store_fsync
    ):
        parser.error(f"--store-fsync: {' or '.join(FSYNC_POLICIES)}, or both comma-separated")
    if args.baseline_server is not None and not args.baseline_server.is_file():
        parser.error(f"--baseline-server: no such executable {args.baseline_server}")
    if args.baseline_server is not None and len(args.store_fsync) > 1:
        parser.error("--baseline-server compares on one store: give one --store-fsync")
    # Each idle connection takes a descriptor in a helper process and one in a server; a
    # few hundred more go to the bots, the store's connections and the servers' own files.
    args.open_files = raise_open_files(args.idle + args.players + 1000)
    if args.open_files < IDLE_PER_HELPER + args.players + 500:
        parser.error(f"the open-file limit ({args.open_files}) is too low for the bench: "
                     "raise it (ulimit -n)")  # fmt: skip
    return asyncio.run(run(args))


@dataclass
class Target:
    """One race server under test, with what its rounds measured."""

    server: RaceServer
    runs: list[Figures] = field(default_factory=list)
    total: Load = field(default_factory=Load)


async def run(args: argparse.Namespace) -> int:
    print(f"bench/server.py: {args.players} players (races and relay in tables of {args.seats}), "
          f"{args.rounds} rounds of {args.seconds:g} s "
          f"measured (+{args.warmup:g} s warm-up) per server, {args.idle} idle connections; "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")  # fmt: skip
    seqs = move_sequences(40)
    print(
        f"  {GAME}: {len(seqs)} deals, {sum(len(m) for _, m in seqs)} legal moves from the engine"
    )
    # The bots too collect as the servers do; the same for both loads.
    collector.schedule(DEFAULT.gc_young_threshold)
    tmp = Path(tempfile.mkdtemp(prefix="bench-server-"))
    procs: list[subprocess.Popen[bytes]] = []
    stoppers: list[Callable[[], None]] = []
    try:
        # The echo baseline and the race servers run side by side; the rounds alternate
        # between them, so that a change in the machine's load hits all alike.
        echo_port = free_port()
        echo = subprocess.Popen(
            bench_module("bench.server", "--serve-echo", str(echo_port)),
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        procs.append(echo)
        targets: list[Target] = []
        redis_url = os.environ.get("REDIS_URL")
        if redis_url:
            targets.append(Target(start_race_server(tmp, "solitaire-server", redis_url, redis_url)))
        for fsync in [] if redis_url else args.store_fsync:
            # The store the server starts by itself, as it starts it (server/store/embedded.py),
            # on the same disk as the server's default ./data would be.
            embedded = EmbeddedRedis(data_dir=tmp / f"valkey-{fsync}", fsync=fsync)
            url = embedded.start()
            stoppers.append(embedded.stop)
            name = "solitaire-server" + (f" ({fsync})" if len(args.store_fsync) > 1 else "")
            store = f"embedded valkey-server, appendfsync {fsync}"
            targets.append(Target(start_race_server(tmp, name, store, url)))
        if args.baseline_server is not None:
            first = targets[0].server
            targets.append(
                Target(start_race_server(tmp, "baseline server", first.store, first.redis_url,
                                         args.baseline_server))
            )  # fmt: skip
        procs += [t.server.proc for t in targets]
        # The durable echo: the floor of "stored before the reply" with this stack, on the
        # first race server's store.
        durable_port = free_port()
        durable_key = f"{{bench-durable-{uuid.uuid4().hex[:8]}}}:log"
        durable = subprocess.Popen(
            bench_module("bench.server", "--serve-durable-echo", str(durable_port),
                         targets[0].server.redis_url, durable_key),
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        procs.append(durable)
        # The durable relay (bench/relay_server.py): stored, acknowledged and sent on to the
        # table's other seats, on the same store as the durable echo.
        relay = start_baseline_server("relay", targets[0].server.redis_url)
        procs.append(relay.proc)
        relay.wait_ready()
        wait_port(durable_port)
        wait_port(echo_port)
        for t in targets:
            wait_port(t.server.port)
        echo_url = f"ws://127.0.0.1:{echo_port}/"

        durable_url = f"ws://127.0.0.1:{durable_port}/"
        echo_runs: list[Figures] = []
        durable_runs: list[Figures] = []
        relay_runs: list[Figures] = []
        relay_total = Load()
        durable_acked = durable_errors = 0
        for r in range(args.rounds):
            load, secs, cpu = await drive(echo_bot, echo_url, args.players, 1, args.seconds,
                                          args.warmup, seqs, echo.pid)  # fmt: skip
            echo_runs.append(summarise(f"echo, round {r + 1}", load, secs, cpu))
            load, secs, cpu = await drive(echo_bot, durable_url, args.players, 1, args.seconds,
                                          args.warmup, seqs, durable.pid)  # fmt: skip
            durable_runs.append(summarise(f"durable echo, round {r + 1}", load, secs, cpu))
            durable_acked += load.replies
            durable_errors += load.errors
            load, secs, cpu = await drive(relay_table, relay.url, args.players, args.seats,
                                          args.seconds, args.warmup, seqs,
                                          relay.proc.pid)  # fmt: skip
            relay_runs.append(summarise(f"relay, round {r + 1}", load, secs, cpu))
            relay_total.acked_by_gid.update(load.acked_by_gid)
            relay_total.errors += load.errors
            for t in targets:
                load, secs, cpu = await drive(race_table, t.server.url, args.players, args.seats,
                                              args.seconds, args.warmup, seqs,
                                              t.server.proc.pid)  # fmt: skip
                t.runs.append(summarise(f"{t.server.name}, round {r + 1}", load, secs, cpu))
                t.total.acked_by_gid.update(load.acked_by_gid)
                t.total.races += load.races
                t.total.errors += load.errors
        ghosts_ok = True
        if args.async_share > 0:
            first = targets[0].server
            ghosts_ok = await async_races.compare(
                first.url, round(args.players * args.async_share), seqs, args.rounds,
                args.seconds, args.warmup, lambda: cpu_s(first.proc.pid),
            )  # fmt: skip
        stored = [
            await stored_moves(t.server.redis_url, t.server.namespace, t.total) for t in targets
        ]
        durable_stored = await list_length(targets[0].server.redis_url, durable_key)
        relay_found, relay_acked = await relay_stored(targets[0].server.redis_url, relay,
                                                      relay_total)  # fmt: skip
        echo_f = median_of("echo (websockets+msgpack)", echo_runs)
        durable_f = median_of("durable echo (+ redis-py)", durable_runs)
        relay_f = median_of("durable relay", relay_runs)
        medians = [median_of(t.server.name, t.runs) for t in targets]
        if args.idle:
            # Memory per connection does not depend on the store: the first server only.
            echo_f.idle_kb, medians[0].idle_kb = await idle_phase(
                args, tmp, targets[0].server, echo_url, echo.pid, procs
            )
        for p in (echo, durable, relay.proc, *(t.server.proc for t in targets)):
            p.send_signal(signal.SIGTERM)
        # Waited for in threads: our event loop must keep answering closing handshakes.
        await asyncio.to_thread(echo.wait, 10)
        await asyncio.to_thread(durable.wait, 10)
        await asyncio.to_thread(relay.proc.wait, 10)
        for t in targets:
            try:
                await asyncio.to_thread(t.server.proc.wait, 60)
            except subprocess.TimeoutExpired:
                print("  the server did not stop within 60 s of SIGTERM; its log ends:")
                print("\n".join(t.server.log.read_text().splitlines()[-15:]))
                raise
            await drop_namespace(t.server.redis_url, t.server.namespace)

        stores = "; ".join(
            (f"{t.server.name}: " if len(targets) > 1 else "") + t.server.store for t in targets
        )
        print(f"  store: {stores}; race server rate limit lifted for the bots")
        print(f"  {'':36}{'moves/s':>9}{'p50 ms':>9}{'p99 ms':>9}{'server CPU':>12}"
              f"{'bots CPU':>10}{'KB/idle conn':>14}")  # fmt: skip
        print(f"  {'':36}{'':>9}{'':>9}{'':>9}{'us/move':>12}{'us/move':>10}")
        rows = [*echo_runs, *durable_runs, *relay_runs, *(f for t in targets for f in t.runs),
                echo_f, durable_f, relay_f, *medians]  # fmt: skip
        for f in rows:
            idle = f"{f.idle_kb:14.1f}" if f.idle_kb else ""
            print(f"  {f.name:36}{f.rate:9.0f}{f.p50_ms:9.2f}{f.p99_ms:9.2f}{f.cpu_us:12.1f}"
                  f"{f.client_cpu_us:10.1f}{idle}")  # fmt: skip
        for name, runs, base_f, throughput_target, p99_target in (
            ("echo", echo_runs, echo_f, "", ""),
            ("durable echo", durable_runs, durable_f, "target >= 0.70; ", " (target <= 2)"),
            ("relay", relay_runs, relay_f, "target >= 0.70; ", ""),
        ):
            for t, server_f in zip(targets, medians, strict=True):
                per_round = ", ".join(
                    f"{s.rate / e.rate:.2f}" for e, s in zip(runs, t.runs, strict=True)
                )
                label = f" ({t.server.name})" if len(targets) > 1 else ""
                print(f"  ratio server/{name}{label} (medians): throughput "
                      f"{server_f.rate / base_f.rate:.2f} ({throughput_target}by round "
                      f"{per_round}), p99 {server_f.p99_ms / base_f.p99_ms:.2f}{p99_target}, "
                      f"server CPU per move {server_f.cpu_us / base_f.cpu_us:.1f}x")  # fmt: skip
        print(f"  durable echo: {durable_acked} replies, {durable_stored} messages stored, "
              f"{durable_errors} errors")  # fmt: skip
        print(f"  durable relay: errors: {relay_total.errors}; acknowledged moves found in the "
              f"store: {relay_found} of {relay_acked}")  # fmt: skip
        if len(targets) == 2:
            (a, b), (fa, fb) = targets, medians
            per_round = ", ".join(
                f"{x.rate / y.rate:.2f}" for x, y in zip(a.runs, b.runs, strict=True)
            )
            print(f"  ratio {a.server.name} / {b.server.name} (medians): "
                  f"throughput {fa.rate / fb.rate:.2f} "
                  f"(by round {per_round}), p50 {fa.p50_ms / fb.p50_ms:.2f}, "
                  f"p99 {fa.p99_ms / fb.p99_ms:.2f}, "
                  f"server CPU per move {fa.cpu_us / fb.cpu_us:.2f}")  # fmt: skip
        ok = durable_stored >= durable_acked and durable_errors == 0
        ok = ok and relay_found == relay_acked and relay_total.errors == 0
        for t, (found, acked) in zip(targets, stored, strict=True):
            commit = [line for line in t.server.log.read_text().splitlines()
                      if "group commit:" in line]  # fmt: skip
            label = f"{t.server.name}: " if len(targets) > 1 else ""
            if commit:
                # From the group commit's own words on: its logger's name moved between versions.
                print(f"  {label}server's group commit:" + commit[-1].split("group commit:", 1)[-1])
            print(f"  {label}races played: {t.total.races}; errors: {t.total.errors}; "
                  f"acknowledged moves found in the store: {found} of {acked}")  # fmt: skip
            ok = ok and found == acked and t.total.errors == 0
        if args.idle:
            server_f = medians[0]
            idle_ok = "under" if server_f.idle_kb < IDLE_TARGET_KB else "OVER"
            print(f"  {args.idle} idle players: {server_f.idle_kb:.1f} KB each "
                  f"({idle_ok} the {IDLE_TARGET_KB} KB target; "
                  f"echo server {echo_f.idle_kb:.1f} KB)")  # fmt: skip
        return 0 if ok and ghosts_ok else 1
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        for stop in stoppers:
            stop()
        shutil.rmtree(tmp, ignore_errors=True)


async def idle_phase(
    args: argparse.Namespace,
    tmp: Path,
    first: RaceServer,
    echo_url: str,
    echo_pid: int,
    procs: list[subprocess.Popen[bytes]],
) -> tuple[float, float]:
    """KB per idle connection of the echo server and of the race server.

    Where one process may not hold `--idle` connections (a hard open-file limit that low),
    each server runs on as many processes as it takes for this phase: echo servers sharing
    one port, and the race server with `--workers`; their memory is summed."""
    k = idle_processes(args.idle, args.open_files)
    if k == 1:
        echo_kb = await idle_connections(echo_url, args.idle, [echo_pid], hello=False)
        race_kb = await idle_connections(first.url, args.idle, [first.proc.pid], hello=True)
        return echo_kb, race_kb
    print(f"  idle phase on {k} processes of each server: the open-file limit here "
          f"({args.open_files}) keeps one process below {args.idle} connections")  # fmt: skip
    port = free_port()
    echoes = [
        subprocess.Popen(
            bench_module("bench.server", "--serve-echo", str(port)),
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(k)
    ]
    race = start_race_server(tmp, first.name, first.store, first.redis_url, workers=k)
    procs += [*echoes, race.proc]
    for e in echoes:
        assert e.stdout is not None
        await asyncio.to_thread(e.stdout.readline)  # "ready": listening
    deadline = time.monotonic() + 60
    while len(worker_pids(race.proc.pid)) < k or race.log.read_text().count(" listening ") < k:
        if time.monotonic() > deadline or race.proc.poll() is not None:
            raise RuntimeError(f"the {k} workers did not start; see {race.log}")
        await asyncio.sleep(0.1)
    echo_kb = await idle_connections(f"ws://127.0.0.1:{port}/", args.idle,
                                     [e.pid for e in echoes], hello=False)  # fmt: skip
    race_kb = await idle_connections(race.url, args.idle, worker_pids(race.proc.pid),
                                     hello=True)  # fmt: skip
    for p in (*echoes, race.proc):
        p.send_signal(signal.SIGTERM)
    for p in (*echoes, race.proc):
        await asyncio.to_thread(p.wait, 60)
    await drop_namespace(race.redis_url, race.namespace)
    return echo_kb, race_kb


def median_of(name: str, runs: list[Figures]) -> Figures:
    def med(field: str) -> float:
        value: float = statistics.median(getattr(f, field) for f in runs)
        return value

    return Figures(
        f"{name}, median",
        med("rate"),
        med("p50_ms"),
        med("p99_ms"),
        med("cpu_us"),
        med("client_cpu_us"),
    )


async def stored_moves(url: str, namespace: str, load: Load) -> tuple[int, int]:
    """(acknowledged moves found in Redis, acknowledged moves) over every bot game."""
    counts = await stored_counts(url, namespace, list(load.acked_by_gid))
    found = sum(min(c, a) for c, a in zip(counts, load.acked_by_gid.values(), strict=True))
    return found, sum(load.acked_by_gid.values())


async def stored_counts(
    url: str, namespace: str, gids: list[str], cluster: bool = False
) -> list[int]:
    """The length of each game's stored move list, in the order of `gids`."""
    from server.store.keys import Keys

    r = store_client(url, cluster)
    keys = Keys(namespace)
    counts: list[int] = []
    try:
        for at in range(0, len(gids), 1000):
            pipe = r.pipeline(transaction=False)
            for gid in gids[at : at + 1000]:
                pipe.llen(keys.game(gid).moves)  # type: ignore[union-attr]
            counts += await pipe.execute()
    finally:
        await r.aclose()
    return counts


async def relay_stored(url: str, relay: BaselineServer, load: Load) -> tuple[int, int]:
    """(acknowledged moves found in the relay's seat lists, acknowledged moves); the lists
    are then dropped."""
    seats = list(load.acked_by_gid)
    counts = await list_lengths(url, [f"{relay.key}:{seat}" for seat in seats])
    await drop_keys(url, f"{relay.key}:*")
    found = sum(min(c, a) for c, a in zip(counts, load.acked_by_gid.values(), strict=True))
    return found, sum(load.acked_by_gid.values())


async def list_length(url: str, key: str) -> int:
    """Entries of a list, which is then dropped (the durable echo's log)."""
    import redis.asyncio as aioredis

    r = aioredis.Redis.from_url(url)
    try:
        n = int(await r.llen(key))
        await r.delete(key)
        return n
    finally:
        await r.aclose()


if __name__ == "__main__":
    sys.exit(main())
