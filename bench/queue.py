"""Quick races under a steady stream of players: the queue, the matcher and the store.

    .venv/bin/python -m bench.queue [--players 10000] [--rate 50] [--baseline-pairs 100]

1. Starts its own embedded valkey-server (so that INFO commandstats counts this bench's
   server alone), with appendfsync everysec: the queue and the matcher are measured, not
   the disk (with `always`, every write waits for an fsync, which on a shared machine's
   disk takes whatever the other tenants leave), and one real `solitaire-server` process
   on a free port (bench/race_server.py, with its load settings).
2. Baseline, in the same run: --baseline-pairs pairs of players race the usual way (hello,
   `create`, `join`, `start`): the store's commands per player.
3. --players players arrive at --rate a second, spread over the four games, each on a
   connection of its own: hello, a rating of its own (written straight to the store before
   it queues: mu drawn around 25, sigma settled, so the matcher has a spread of ratings to
   work with; these writes are not counted), `queue`, then it waits for `matched` and
   leaves. The quick races start by themselves as the server's settings say.

Prints, for the arrivals: the time from `queue` to `matched` (p50, p99, max; percentiles
by bench/figures.py, nearest rank), beside the `queue` request's own round trip
(queue -> queued) as the baseline; the matcher's decision time per round (the server's
solitaire_quick_round_seconds histogram: mean, and the bucket holding its p99); the
store's commands per matched player (from hello to matched, the race's start included),
beside the baseline's per player, and their ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import msgpack
import redis.asyncio as aioredis
from websockets.asyncio.client import ClientConnection, connect

from bench.figures import percentile
from bench.race_server import start_race_server, wait_healthy
from server.store.embedded import EmbeddedRedis
from server.store.keys import Keys

GAMES = ["bakers_game", "doublets", "hopscotch", "quatorze"]
MATCHED_TIMEOUT_S = 120.0  # a player still unmatched then counts as failed


class Player:
    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.ids = 0

    async def request(self, msg: dict[str, Any]) -> dict[str, Any]:
        self.ids += 1
        await self.ws.send(msgpack.packb({**msg, "id": self.ids}))
        while True:
            reply = await self._read()
            if reply.get("re") == self.ids:
                return reply

    async def next(self, t: str) -> dict[str, Any]:
        while True:
            msg = await self._read()
            if msg.get("t") == t and "re" not in msg:
                return msg

    async def _read(self) -> dict[str, Any]:
        frame = await self.ws.recv()
        assert isinstance(frame, bytes), frame
        return dict(msgpack.unpackb(frame))


async def commands(r: aioredis.Redis) -> dict[str, int]:
    stats = await r.info("commandstats")
    return {k.removeprefix("cmdstat_"): int(v["calls"]) for k, v in stats.items()}


def delta(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    return {k: after[k] - before.get(k, 0) for k in after if after[k] != before.get(k, 0)}


async def baseline(url: str, pairs: int) -> int:
    """Friend races the usual way: the players made (2 per pair)."""

    async def pair(i: int) -> None:
        async with connect(url) as a, connect(url) as b:
            host, guest = Player(a), Player(b)
            await host.request({"t": "hello", "v": 1, "name": f"h{i}-{uuid.uuid4().hex[:6]}"})
            await guest.request({"t": "hello", "v": 1, "name": f"g{i}-{uuid.uuid4().hex[:6]}"})
            created = await host.request({"t": "create", "game": GAMES[i % 4]})
            await guest.request({"t": "join", "race": created["race"]})
            await host.request({"t": "start", "race": created["race"]})

    for start in range(0, pairs, 10):
        await asyncio.gather(*(pair(i) for i in range(start, min(pairs, start + 10))))
    return 2 * pairs


async def arrivals(
    url: str, r: aioredis.Redis, keys: Keys, players: int, rate: float, seed: int
) -> tuple[list[float], list[float], int]:
    rng = random.Random(seed)
    waits: list[float] = []
    queued_rtt: list[float] = []
    failures = 0

    async def one(i: int) -> None:
        nonlocal failures
        game = GAMES[i % len(GAMES)]
        try:
            async with connect(url, open_timeout=30) as ws:
                pl = Player(ws)
                welcome = await pl.request(
                    {"t": "hello", "v": 1, "name": f"q{i}-{uuid.uuid4().hex[:6]}"}
                )
                mu = rng.gauss(25.0, 4.0)
                await r.hset(
                    keys.rating(game, welcome["player"]),
                    mapping={
                        "name": "x",
                        "mu": repr(mu),
                        "sigma": "2.0",
                        "games": "20",
                        "ver": "20",
                    },
                )
                began = time.perf_counter()
                queued = await pl.request({"t": "queue", "game": game})
                assert queued["t"] == "queued", queued
                queued_rtt.append(time.perf_counter() - began)
                await asyncio.wait_for(pl.next("matched"), MATCHED_TIMEOUT_S)
                waits.append(time.perf_counter() - began)
        except Exception as exc:  # counted and said: a bench reports, it does not stop
            failures += 1
            if failures <= 5:
                print(f"player {i}: {exc!r}", file=sys.stderr)

    tasks = []
    start = time.perf_counter()
    for i in range(players):
        due = start + i / rate
        await asyncio.sleep(max(0.0, due - time.perf_counter()))
        tasks.append(asyncio.create_task(one(i)))
        if i and i % (int(rate) * 20) == 0:
            print(f"  {i} arrived, {len(waits)} matched", file=sys.stderr)
    await asyncio.gather(*tasks)
    return waits, queued_rtt, failures


def scrape(http: str) -> dict[str, float]:
    with urllib.request.urlopen(f"{http}/metrics") as resp:
        text = resp.read().decode()
    out: dict[str, float] = {}
    for line in text.splitlines():
        m = re.match(r"^(solitaire_quick_\S+?)(\{[^}]*\})? (\S+)$", line)
        if m:
            out[m.group(1) + (m.group(2) or "")] = float(m.group(3))
    return out


def round_p99_bucket(metrics: dict[str, float]) -> str:
    count = metrics.get("solitaire_quick_round_seconds_count", 0.0)
    for key, value in sorted(
        (
            (k, v)
            for k, v in metrics.items()
            if k.startswith("solitaire_quick_round_seconds_bucket")
        ),
        key=lambda kv: float(re.search(r'le="([^"]+)"', kv[0]).group(1).replace("+Inf", "inf")),  # type: ignore[union-attr]
    ):
        if value >= 0.99 * count:
            return re.search(r'le="([^"]+)"', key).group(1)  # type: ignore[union-attr]
    return "?"


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--players", type=int, default=10_000)
    ap.add_argument("--rate", type=float, default=50.0)
    ap.add_argument("--baseline-pairs", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    with (
        tempfile.TemporaryDirectory(prefix="bench-queue-") as tmp,
        EmbeddedRedis(Path(tmp) / "valkey", fsync="everysec") as valkey,
    ):
        server = start_race_server(
            Path(tmp), "solitaire-server", "embedded valkey (everysec)", valkey.url,
            settings={"SOLITAIRE_LOG_LEVEL": "WARNING"},
        )  # fmt: skip
        http, url = server.page(), server.url
        try:
            await asyncio.to_thread(wait_healthy, server)
            r = aioredis.Redis.from_url(valkey.url, decode_responses=True)
            keys = Keys(server.namespace)

            before = await commands(r)
            made = await baseline(url, args.baseline_pairs)
            base = delta(before, await commands(r))
            base_per_player = (sum(base.values()) - base.get("info", 0)) / made

            print(f"{args.players} players arriving at {args.rate:g}/s over {len(GAMES)} games...",
                  file=sys.stderr)  # fmt: skip
            before = await commands(r)
            began = time.perf_counter()
            waits, rtts, failures = await arrivals(url, r, keys, args.players, args.rate, args.seed)
            took = time.perf_counter() - began
            used = delta(before, await commands(r))
            metrics = scrape(http)
            await r.aclose()
        finally:
            server.stop()

    matched = len(waits)
    # The bench's own writes: one HSET of a rating per player that got that far.
    total = sum(used.values()) - used.get("info", 0) - (matched + failures)
    rounds = metrics.get("solitaire_quick_round_seconds_count", 0.0)
    round_mean = metrics.get("solitaire_quick_round_seconds_sum", 0.0) / max(1.0, rounds)
    rated = metrics.get('solitaire_quick_races_total{kind="rated"}', 0.0)
    bots = metrics.get('solitaire_quick_races_total{kind="bot"}', 0.0)
    p50, p99 = percentile(waits, 0.5), percentile(waits, 0.99)
    b50, b99 = percentile(rtts, 0.5), percentile(rtts, 0.99)
    print(f"players: {args.players} in {took:.1f} s; matched {matched}, failed {failures}; "
          f"races formed: {rated:.0f} rated, {bots:.0f} against a bot")  # fmt: skip
    print(f"queue -> matched: p50 {p50 * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms, "
          f"max {max(waits) * 1000:.0f} ms")  # fmt: skip
    print(f"baseline queue -> queued (one request's round trip): p50 {b50 * 1000:.1f} ms, "
          f"p99 {b99 * 1000:.1f} ms; matched p50 / that: {p50 / b50:.1f}x")  # fmt: skip
    print(f"matcher: {rounds:.0f} rounds with players waiting, decision {round_mean * 1e6:.0f} us "
          f"a round on average, p99 <= {round_p99_bucket(metrics)} s")  # fmt: skip
    per = total / max(1, matched)
    print(f"store commands per matched player: {per:.1f} (hello to matched, the start "
          f"included); baseline friend race (hello, create/join, start): "
          f"{base_per_player:.1f} per player; ratio {per / base_per_player:.2f}")  # fmt: skip
    top = sorted(used.items(), key=lambda kv: -kv[1])[:8]
    print("  most used: " + ", ".join(f"{k} {v / max(1, matched):.1f}" for k, v in top))


if __name__ == "__main__":
    asyncio.run(main())
