"""Leaderboard queries per second through the real server, against Redis alone.

    .venv/bin/python -m bench.leaderboard [--entries 100000] [--clients 32] [--seconds 5]

1. Starts a Redis (REDIS_URL, or the embedded valkey-server) and a real `solitaire-server`
   process on a free port, with a fresh namespace.
2. Fills today's board of one game with --entries entries (random scores, times and moves)
   straight through the leaderboard store, and connects --clients WebSocket clients whose
   players are given entries of their own at random ranks among them.
3. For --seconds each, every client sends `leaderboard` requests one after another:
   the top 10, then the 10 entries around its own (around_me).
4. The same queries, with the same concurrency, straight on Redis through the store's
   one-round-trip window script (what the server does per request, minus everything else),
   and the time Redis itself spends per query (INFO commandstats; exact with the embedded
   Redis, which nobody else uses; with a shared REDIS_URL other clients' scripts count too).

Prints requests per second for each, the ratio server / Redis-alone, and p50/p99 latency.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import time
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

import msgpack
import redis.asyncio as aioredis
from websockets.asyncio.client import ClientConnection, connect

from bench.figures import percentile
from bench.race_server import run_on_redis, running_race_server
from server.daily.seeds import utc_date
from server.store.boards import LeaderboardStore, Result
from server.store.keys import Keys

GAME = "hopscotch"


def random_result(rng: random.Random, player: str) -> Result:
    score = min(48, int(rng.expovariate(1 / 14)))
    return Result(
        player=player,
        name=f"bot {player[-6:]}",
        score=score,
        moves=rng.randint(score, 300),
        time_ms=rng.randint(20_000, 3_600_000),
        won=score == 48,
    )


async def script_stats(redis: aioredis.Redis) -> tuple[int, int]:
    """EVALSHA calls and microseconds so far, as Redis counts them (INFO commandstats)."""
    stats = (await redis.info("commandstats")).get("cmdstat_evalsha", {})
    return int(stats.get("calls", 0)), int(stats.get("usec", 0))


class Client:
    def __init__(self, ws: ClientConnection, player: str) -> None:
        self.ws = ws
        self.player = player
        self.next_id = 0

    async def ask(self, msg: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        msg["id"] = self.next_id
        await self.ws.send(msgpack.packb(msg))
        while True:
            reply: dict[str, Any] = msgpack.unpackb(await self.ws.recv(decode=False))
            if reply.get("re") == self.next_id:
                if reply["t"] == "error":
                    raise RuntimeError(f"server error: {reply}")
                return reply


async def asking(client: Client, msg: dict[str, Any]) -> dict[str, Any]:
    """One request of the load, a fresh copy each time (ask() numbers it)."""
    return await client.ask(dict(msg))


async def run_for(
    seconds: float, workers: list[Callable[[], Awaitable[object]]]
) -> tuple[int, list[float]]:
    """Each worker calls its coroutine function in a loop; returns (count, latencies in s)."""
    stop = time.perf_counter() + seconds
    latencies: list[float] = []

    async def loop(fn: Callable[[], Awaitable[object]]) -> None:
        while time.perf_counter() < stop:
            t0 = time.perf_counter()
            await fn()
            latencies.append(time.perf_counter() - t0)

    await asyncio.gather(*(loop(w) for w in workers))
    return len(latencies), latencies


def summary(label: str, count: int, lat: list[float], seconds: float) -> float:
    rate = count / seconds
    p50, p99 = percentile(lat, 0.50) * 1000, percentile(lat, 0.99) * 1000
    print(f"  {label:<34} {rate:>9,.0f} req/s   p50 {p50:6.2f} ms   p99 {p99:6.2f} ms")
    return rate


async def bench(args: argparse.Namespace, redis_url: str) -> None:
    async with running_race_server(redis_url, {"SOLITAIRE_LOG_LEVEL": "WARNING"}) as server:
        redis = aioredis.from_url(redis_url, max_connections=args.clients + 8)
        try:
            await measure(args, server.port, server.namespace, redis)
        finally:
            await redis.aclose()


async def measure(args: argparse.Namespace, port: int, ns: str, redis: aioredis.Redis) -> None:
    store = LeaderboardStore(redis, Keys(ns))
    today = utc_date(time.time()).isoformat()
    rng = random.Random(1)

    t0 = time.perf_counter()
    fill = [random_result(rng, f"fill{i:07d}") for i in range(args.entries - args.clients)]
    await store.record_day_many(GAME, today, fill)
    print(f"filled {GAME} {today} with {len(fill):,} entries "
          f"in {time.perf_counter() - t0:.1f} s")  # fmt: skip

    clients: list[Client] = []
    for i in range(args.clients):
        ws = await connect(f"ws://127.0.0.1:{port}/ws", compression=None, max_size=2**20)
        c = Client(ws, "")
        welcome = await c.ask({"t": "hello", "v": 1, "name": f"bench{i}"})
        c.player = welcome["player"]
        clients.append(c)
    await store.record_day_many(GAME, today, [random_result(rng, c.player) for c in clients])
    total = (await store.board(GAME, today, limit=1)).total
    print(f"board total {total:,}; {len(clients)} WebSocket clients connected\n")

    # Warm up both paths (script load, connection pools, caches).
    for c in clients[:4]:
        await c.ask({"t": "leaderboard", "game": GAME, "limit": 10})
    await store.board(GAME, today, limit=10)

    top = {"t": "leaderboard", "game": GAME, "date": today, "limit": 10}
    around = {**top, "around_me": True}
    sample = await clients[0].ask(dict(around))
    me = sample.get("me", {})
    print(f"sample around_me: me rank {me.get('rank')}, "
          f"entries ranks {[e['rank'] for e in sample['entries']]}\n")  # fmt: skip

    print(f"{args.clients} concurrent requesters, {args.seconds:.0f} s each:")
    rates: dict[str, float] = {}
    for label, msg, is_around in (("top 10", top, False), ("around_me (10)", around, True)):
        n, lat = await run_for(args.seconds, [partial(asking, c, msg) for c in clients])
        rates[f"server {label}"] = summary(f"server (WebSocket) {label}", n, lat, args.seconds)
        before = await script_stats(redis)
        n, lat = await run_for(
            args.seconds,
            [
                partial(store.board, GAME, today, limit=10, asker=c.player, around_me=is_around)
                for c in clients
            ],
        )
        rates[f"redis {label}"] = summary(f"Redis alone (store) {label}", n, lat, args.seconds)
        after = await script_stats(redis)
        calls, usec = after[0] - before[0], after[1] - before[1]
        if calls:
            print(f"  {'  inside Redis (EVALSHA, per query)':<34} {usec / calls:9.1f} µs")
    print()
    for label in ("top 10", "around_me (10)"):
        ratio = rates[f"server {label}"] / rates[f"redis {label}"]
        print(f"ratio server / Redis alone, {label}: {ratio:.2f}")
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    for c in clients:
        await c.ws.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=100_000, help="board size (100000)")
    parser.add_argument("--clients", type=int, default=32, help="concurrent clients (32)")
    parser.add_argument("--seconds", type=float, default=5.0, help="per measurement (5)")
    args = parser.parse_args()
    run_on_redis(bench, args)


if __name__ == "__main__":
    main()
