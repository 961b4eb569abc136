#!/usr/bin/env python3
"""Benchmark: what one acknowledged move costs the store, read from the store's own counters.

    .venv/bin/python -m bench.store_cost [--games 40] [--in-flight 1] [--idle-s 10]
                                         [--unrated] [--redis-url URL]

What it does (loopback only, stops by itself):

- starts a valkey-server of its own in a temporary directory, set as the server's embedded
  store is (append-only file, `appendfsync always`), and two `solitaire-server` processes
  on it (bench/race_server.py) sharing one namespace, as two instances of a deployment
  do. The store must be the bench's alone: its counters count every client's work, so on
  a Redis others use (`--redis-url`, never REDIS_URL implicitly) the figures include
  theirs and the bench says so;
- plays Baker's Game deals the engine's solver wins (every line a few dozen moves), with
  real WebSocket clients (tests/support/ws_client.py), in four kinds of move:
  - `race move`: a move of a seat in a race of four, two seats on each instance, so
    that every move's progress reaches two seats through the bus (Redis pub/sub) and two
    locally; every move of each seat's winning line but the last;
  - `race finish`: the last move of each seat's line, which wins its game; the fourth
    seat's also ends the race (its close, the result and, unless `--unrated`, the seats'
    ratings: a quick race is rated);
  - `daily move`: a move of a player's attempt at today's daily deal of Baker's Game
    (one new player per attempt), along the deal's winning line, which the bench reads
    from its store (the server keeps it to show once the day is over); every move but
    the last;
  - `daily finish`: the last move of that line, which wins the attempt and ranks it on
    the day's board and the player's stats.
  `--games` is the number of race seats (rounded up to tables of four) and of daily
  attempts, so of finishing moves of each kind;
- first measures what the store does when nobody plays: one INFO call's own cost (by
  back-to-back calls), and the servers' own background work a second (presence,
  leases, sweeps; the store's own timers) over an idle window of `--idle-s` seconds;
- reads `INFO commandstats stats cpu persistence` just before the moves of each kind
  and SETTLE_S after the last one is acknowledged (with `--in-flight` games played at
  once, each one move at a time: 1 by default, so that each move is a group commit of
  its own, the most a move can cost; more lets the group commit share one script call
  among the moves that arrive together). Taken out of each kind's window, command by
  command: one INFO call (the reading that opens the window is counted in it) and the
  background work of an idle window of the same length; the rest is divided by the
  moves acknowledged. A command of the background that happened to fall outside the
  window can show as a small negative share;
- prints, per kind: commands per move (in all, and by command: the scripts' EVALSHA calls
  and the commands the scripts run inside, which Redis counts under their own names),
  bytes in and out per move (out includes what pub/sub delivers to the other
  instance), bytes appended to the append-only file per move, the store's CPU
  (used_cpu_user + used_cpu_sys: all its threads, fsync's kernel time included) per move,
  and the moves a second one store core could take at that CPU (1e6 / µs): the figure
  the capacity model's "moves per Redis shard" starts from. The baseline is printed
  too. It exits 1 if a kind acknowledged no move or cost no command.

The store's CPU counters tick with the kernel's accounting (a few milliseconds at a
time on some kernels): use enough moves (the default gives about a thousand of each
ordinary kind) for the figure to mean something. For the capacity model, run on a quiet
machine:

    .venv/bin/python -m bench.store_cost --games 40
    .venv/bin/python -m bench.store_cost --games 40 --in-flight 16

A run near midnight UTC fails (the daily attempts' day changes under them).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import datetime as dt
import os
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis.asyncio as aioredis

from bench.race_server import RaceServer, drop_namespace, start_race_server, wait_healthy
from engine.solve import find_winnable_seed
from server.store.embedded import EmbeddedRedis
from server.store.keys import Keys
from tests.support.ws_client import Client

GAME = "bakers_game"
SEATS = 4  # a race's: a quick race's most
KINDS = ("race move", "race finish", "daily move", "daily finish")
SETTLE_S = 0.3  # after a window's last ack, for work the moves set off (events, closes)


# ---------------------------------------------------------------- the store's counters


@dataclass(frozen=True)
class Counters:
    """What the store has counted since it started."""

    calls: Counter[str]  # by command name, lower case (scripts' inner commands included)
    net_in: int
    net_out: int
    aof: int  # the append-only file's size
    cpu_s: float  # user + system, all threads
    at: float  # time.perf_counter() when read

    def __sub__(self, other: Counters) -> Cost:
        return Cost(
            {k: float(v - other.calls.get(k, 0)) for k, v in self.calls.items()},
            self.net_in - other.net_in,
            self.net_out - other.net_out,
            self.aof - other.aof,
            self.cpu_s - other.cpu_s,
            self.at - other.at,
        )


@dataclass(frozen=True)
class Cost:
    """What the store did in a window of `seconds` between two readings of its counters,
    or a part of it (a rate, a difference)."""

    calls: dict[str, float]
    net_in: float
    net_out: float
    aof: float
    cpu_s: float
    seconds: float

    def minus(self, other: Cost) -> Cost:
        """This window less `other`'s work (its length is this one's)."""
        names = {*self.calls, *other.calls}
        return Cost(
            {k: self.calls.get(k, 0.0) - other.calls.get(k, 0.0) for k in names},
            self.net_in - other.net_in,
            self.net_out - other.net_out,
            self.aof - other.aof,
            self.cpu_s - other.cpu_s,
            self.seconds,
        )

    def times(self, factor: float) -> Cost:
        """Every figure times `factor` (the length too)."""
        return Cost(
            {k: v * factor for k, v in self.calls.items()},
            self.net_in * factor,
            self.net_out * factor,
            self.aof * factor,
            self.cpu_s * factor,
            self.seconds * factor,
        )

    def commands(self) -> dict[str, float]:
        """The calls by command, the INFO calls that read the counters left out; what
        rounds to none of them left out too."""
        return {k: v for k, v in self.calls.items() if k != "info" and abs(v) >= 0.5}


async def read_counters(r: aioredis.Redis) -> Counters:
    info = await r.info("commandstats", "stats", "cpu", "persistence")
    at = time.perf_counter()
    calls: Counter[str] = Counter()
    for key, value in info.items():
        if key.startswith("cmdstat_"):
            calls[key.removeprefix("cmdstat_")] = int(value["calls"])
    return Counters(
        calls,
        int(info["total_net_input_bytes"]),
        int(info["total_net_output_bytes"]),
        int(info.get("aof_current_size", 0)),
        float(info["used_cpu_user"]) + float(info["used_cpu_sys"]),
        at,
    )


async def window(r: aioredis.Redis, work: Callable[[], Awaitable[int]]) -> tuple[Cost, int]:
    """What the store did from just before `work` (which returns the moves it had
    acknowledged) to SETTLE_S after it; and those moves. A window holds one INFO call's
    work: the reading that opens it is counted once it has been read."""
    before = await read_counters(r)
    moves = await work()
    await asyncio.sleep(SETTLE_S)
    return await read_counters(r) - before, moves


@dataclass(frozen=True)
class Baseline:
    """What the store does when nobody plays: one INFO call (measured by back-to-back
    readings) and the servers' own background work per second (an idle window less its
    INFO call)."""

    info: Cost
    per_s: Cost

    @classmethod
    async def measure(cls, r: aioredis.Redis, idle_s: float, calls: int = 20) -> Baseline:
        first = await read_counters(r)
        for _ in range(calls - 1):
            await read_counters(r)
        info = (await read_counters(r) - first).times(1 / calls)

        async def idle() -> int:
            await asyncio.sleep(max(0.0, idle_s - SETTLE_S))
            return 0

        quiet, _ = await window(r, idle)
        return cls(info, quiet.minus(info).times(1 / quiet.seconds))

    def of(self, busy: Cost) -> Cost:
        """What of a window of `busy`'s length was not the moves': its INFO call and the
        background work of that long."""
        return self.per_s.times(busy.seconds).minus(self.info.times(-1))  # plus the INFO


@dataclass(frozen=True)
class Kind:
    """One kind's measurement: the moves acknowledged, and what the store did in their
    window less the baseline: the moves' cost."""

    moves: int
    busy: Cost
    net: Cost


async def measured(
    r: aioredis.Redis, baseline: Baseline, work: Callable[[], Awaitable[int]]
) -> Kind:
    busy, moves = await window(r, work)
    return Kind(moves, busy, busy.minus(baseline.of(busy)))


# ---------------------------------------------------------------- the players


@dataclass
class Seat:
    """A player on one game: its connection, its gid and the line it plays."""

    client: Client
    gid: str
    line: list[str]
    n: int = 0  # moves acknowledged

    async def play(self, count: int) -> int:
        """The next `count` moves of its line, each acknowledged before the next."""
        for _ in range(count):
            reply = await self.client.request(
                {"t": "move", "gid": self.gid, "n": self.n, "m": self.line[self.n]}, timeout=60
            )
            if reply.get("t") != "state" or reply.get("n") != self.n + 1:
                raise RuntimeError(f"move {self.n} of {self.gid}: {reply}")
            self.n += 1
            # Progress events, read by nobody here, would make every later wait scan them.
            inbox = self.client.inbox
            inbox[:] = [m for m in inbox if m.get("t") != "progress"]
        return count


async def play_all(seats: Sequence[Seat], count: Callable[[Seat], int], in_flight: int) -> int:
    """Each seat's `count(seat)` next moves, `in_flight` seats playing at once (each seat
    one move at a time); the moves acknowledged."""
    todo: Iterator[Seat] = iter(list(seats))
    done = 0

    async def worker() -> None:
        nonlocal done
        for seat in todo:
            played = await seat.play(count(seat))  # not `done += await`: read before it
            done += played

    await asyncio.gather(*(worker() for _ in range(in_flight)))
    return done


async def greeted(url: str, name: str, stack: contextlib.AsyncExitStack) -> Client:
    client = await stack.enter_async_context(Client.connect(url))
    welcome = await client.hello(name)
    if welcome.get("t") != "welcome":
        raise RuntimeError(f"hello {name}: {welcome}")
    return client


async def race_tables(
    servers: Sequence[RaceServer],
    tables: int,
    seed: int,
    line: list[str],
    rated: bool,
    stack: contextlib.AsyncExitStack,
) -> list[Seat]:
    """`tables` races of SEATS players, started, seats spread evenly over `servers`."""
    seats = []
    tag = uuid.uuid4().hex[:6]
    for t in range(tables):
        clients = [
            await greeted(servers[s % len(servers)].url, f"r{tag}.{t}.{s}", stack)
            for s in range(SEATS)
        ]
        host = clients[0]
        create = {"t": "create", "game": GAME, "seed": seed, "max_players": SEATS}
        if rated:
            create["rated"] = True
        created = await host.request(create)
        if created.get("t") != "created":
            raise RuntimeError(f"create: {created}")
        code = created["race"]
        for c in clients[1:]:
            joined = await c.request({"t": "join", "race": code})
            if joined.get("t") != "lobby":
                raise RuntimeError(f"join: {joined}")
        started = await host.request({"t": "start", "race": code})
        if started.get("t") != "start":
            raise RuntimeError(f"start: {started}")
        for c in clients:
            await c.next("state")  # each seat's first state: the race has begun for it
            c.inbox.clear()
            seats.append(Seat(c, f"r.{code}.{c.player}", line))
    return seats


async def daily_attempts(
    server: RaceServer, players: int, stack: contextlib.AsyncExitStack
) -> list[Seat]:
    """`players` new players, each with today's daily attempt at GAME begun, and the deal's
    winning line read from the store (the first asker waits for the deal's search)."""
    tag = uuid.uuid4().hex[:6]
    attempts: list[tuple[Client, dict[str, Any]]] = []
    for i in range(players):
        c = await greeted(server.url, f"d{tag}.{i}", stack)
        state = await c.request({"t": "daily", "game": GAME, "confirm": True}, timeout=120)
        if state.get("t") != "state" or state.get("n") != 0:
            raise RuntimeError(f"daily: {state}")
        c.inbox.clear()
        attempts.append((c, state))
    date = attempts[0][1]["date"]
    if any(s["date"] != date for _, s in attempts):
        raise RuntimeError("the UTC day changed while the attempts began: run it again")
    r = aioredis.Redis.from_url(server.redis_url, decode_responses=True)
    try:
        deal = await r.hgetall(Keys(server.namespace).day_deal(GAME, date))
    finally:
        await r.aclose()
    line = str(deal.get("line", "")).split()
    if deal.get("proven") != "1" or not line:
        raise RuntimeError(f"today's {GAME} deal has no winning line stored: {deal}")
    return [Seat(c, s["gid"], line) for c, s in attempts]


async def results_reached(seats: Sequence[Seat]) -> None:
    """Every race seat has had its race's result."""
    for seat in seats:
        await seat.client.next("result", timeout=60)


# ---------------------------------------------------------------- the run


@contextlib.asynccontextmanager
async def two_instances(redis_url: str, tmp: Path) -> AsyncIterator[list[RaceServer]]:
    """Two race servers on `redis_url`, one namespace; stopped (and it dropped) after."""
    namespace = f"bench{uuid.uuid4().hex[:8]}"
    servers: list[RaceServer] = []
    try:
        for name in ("instance-a", "instance-b"):
            server = start_race_server(
                tmp, name, "", redis_url, settings={"SOLITAIRE_NAMESPACE": namespace}
            )
            servers.append(dataclasses.replace(server, namespace=namespace))
        for server in servers:
            await asyncio.to_thread(wait_healthy, server)
        yield servers
    finally:
        for server in servers:
            await asyncio.to_thread(server.stop)
        await drop_namespace(redis_url, namespace)


async def run(args: argparse.Namespace, redis_url: str, tmp: Path) -> int:
    seed, line = find_winnable_seed(GAME, 1, budget_s_each=5.0, max_tries=40)
    tables = -(-args.games // SEATS)
    r = aioredis.Redis.from_url(redis_url)
    async with two_instances(redis_url, tmp) as servers, contextlib.AsyncExitStack() as stack:
        print(f"{GAME}: race deal {seed} ({len(line)}-move winning line); "
              f"{tables} races of {SEATS} (seats on 2 instances, 2 each, "
              f"{'unrated' if args.unrated else 'rated'}), {args.games} daily attempts; "
              f"{args.in_flight} move(s) in flight")  # fmt: skip
        seats = await race_tables(servers, tables, seed, line, not args.unrated, stack)
        daily = await daily_attempts(servers[0], args.games, stack)
        print(f"today's daily deal of {GAME}: a {len(daily[0].line)}-move winning line")
        await asyncio.sleep(1.0)  # the set-up's own work done
        baseline = await Baseline.measure(r, args.idle_s)
        costs: dict[str, Kind] = {}

        async def race_finish() -> int:
            done = await play_all(seats, lambda s: 1, args.in_flight)
            await results_reached(seats)
            return done

        costs["race move"] = await measured(
            r, baseline, lambda: play_all(seats, lambda s: len(s.line) - 1, args.in_flight)
        )
        costs["race finish"] = await measured(r, baseline, race_finish)
        costs["daily move"] = await measured(
            r, baseline, lambda: play_all(daily, lambda s: len(s.line) - 1, args.in_flight)
        )
        costs["daily finish"] = await measured(
            r, baseline, lambda: play_all(daily, lambda s: 1, args.in_flight)
        )
    await r.aclose()
    report(costs, baseline)
    bad = [kind for kind, k in costs.items() if k.moves <= 0 or not k.net.commands()]
    return 1 if bad else 0


def report(costs: dict[str, Kind], baseline: Baseline) -> None:
    info, idle = baseline.info, baseline.per_s
    print(f"baseline: one INFO call {info.net_in:.0f} B in, {info.net_out:.0f} B out, "
          f"{info.cpu_s * 1e6:.0f} µs store CPU; the servers' background work a second "
          f"{sum(idle.commands().values()) if idle.commands() else 0:.1f} commands, "
          f"{idle.net_in:.0f} B in, {idle.net_out:.0f} B out, {idle.cpu_s * 1e6:.0f} µs CPU; "
          f"each window less one INFO call and its length of background work")  # fmt: skip
    for kind, k in costs.items():
        print(f"{kind}: window {k.busy.seconds:.2f} s, {k.busy.cpu_s * 1e3:.1f} ms store CPU, "
              f"{sum(k.busy.commands().values()):.0f} commands")  # fmt: skip
    print(f"{'kind':<13}{'moves':>7}{'cmds/move':>11}{'B in/move':>11}{'B out/move':>12}"
          f"{'AOF B/move':>12}{'CPU µs/move':>13}{'moves/s/core':>14}")  # fmt: skip
    for kind, k in costs.items():
        cost, moves = k.net, k.moves
        cmds = sum(cost.commands().values())
        us = cost.cpu_s * 1e6 / moves
        per_core = f"{1e6 / us:,.0f}" if us > 0 else "-"
        print(f"{kind:<13}{moves:>7}{cmds / moves:>11.2f}{cost.net_in / moves:>11.0f}"
              f"{cost.net_out / moves:>12.0f}{cost.aof / moves:>12.0f}{us:>13.1f}"
              f"{per_core:>14}")  # fmt: skip
    for kind, k in costs.items():
        ranked = sorted(k.net.commands().items(), key=lambda kv: (-kv[1], kv[0]))
        shown = ", ".join(f"{name} {calls / k.moves:.2f}" for name, calls in ranked)
        print(f"  {kind}, commands/move: {shown}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=40,
                        help="race seats (in tables of 4) and daily attempts: the "
                             "finishing moves of each")  # fmt: skip
    parser.add_argument("--in-flight", type=int, default=1, help="moves in flight at once")
    parser.add_argument("--idle-s", type=float, default=10.0,
                        help="seconds of idle: the servers' background work")  # fmt: skip
    parser.add_argument("--unrated", action="store_true", help="races that change no rating")
    parser.add_argument("--redis-url", default=None,
                        help="measure this store instead of one of the bench's own: its "
                             "counters then count everyone else's work on it too")  # fmt: skip
    args = parser.parse_args()
    if args.games < 1 or args.in_flight < 1 or args.idle_s < 1:
        parser.error("--games >= 1, --in-flight >= 1, --idle-s >= 1")
    print(f"cpu cores: {os.cpu_count()}, store: "
          f"{args.redis_url or 'a valkey-server of its own (appendfsync always)'}, started "
          f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M:%S} UTC, load average "
          f"{os.getloadavg()[0]:.2f} (others' work shares the cores)")  # fmt: skip
    if args.redis_url:
        print("WARNING: a store the bench does not own: its counters include the work of "
              "every other client of it")  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="bench-store-cost-") as d:
        tmp = Path(d)
        if args.redis_url:
            return asyncio.run(run(args, args.redis_url, tmp))
        with EmbeddedRedis(tmp / "store") as store:
            return asyncio.run(run(args, store.url, tmp))


if __name__ == "__main__":
    sys.exit(main())
