#!/usr/bin/env python3
"""Benchmark: does one very long game slow down everybody else?

    .venv/bin/python -m bench.long_games [--moves 100000] [--seconds 5] [--rounds 3]

What it does (loopback only, bounded in time, stops by itself):

- starts a real `solitaire-server` (REDIS_URL if set, else a valkey-server of the bench's
  own in a temporary directory) with the per-connection rate limit at its default (20
  messages a second);
- grows a Baker's Game practice game to `--moves` moves (the protocol's limit by default)
  by writing them straight into the store through the server's own code (the game
  machine and the group commit, tests/support/long_game.py), as the issue's reproduction
  did by cycling two moves;
- a bystander, another player, asks `get` on a short game of their own 15 times a second
  (one request at a time) for `--seconds`, first alone (the baseline), then while the long
  game's player sends 19 undos a second (within the rate limit); the two alternate for
  `--rounds` rounds, so that a change in the machine's load hits both alike;
- prints the bystander's p50, p99 and max round trip in each, with the ratio loaded /
  baseline (medians over the rounds), the undos answered and their round trips, and what
  the server's /metrics say the loads cost (moves read, moves replayed in the event loop
  and in worker threads).

Before snapshots, an undo at 100,000 moves replayed the whole game in the event loop
(about 110 ms): only about half of the undos were answered and the bystander's median
went from 1.3 ms to 35 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time

from bench.figures import percentile
from bench.race_server import RaceServer, run_on_redis, running_race_server
from server.config import DEFAULT
from tests.support.long_game import BAKERS_SEED, bakers_cycle, game_metrics, grow
from tests.support.ws_client import Client

# The per-connection rate limit at its default: the undos keep within it.
SETTINGS = {"SOLITAIRE_RATE": str(DEFAULT.rate), "SOLITAIRE_BURST": str(DEFAULT.burst)}


UNDO_RATE = 19.0  # a second: within the default limit of 20 messages a second
GET_RATE = 15.0  # the bystander's, also within it


async def bystander(c: Client, gid: str, seconds: float) -> list[float]:
    """Round trips (ms) of `get`, one at a time, GET_RATE a second, for `seconds`."""
    out: list[float] = []
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        t0 = time.perf_counter()
        reply = await c.request({"t": "get", "gid": gid}, timeout=60)
        out.append((time.perf_counter() - t0) * 1000)
        assert reply["t"] == "state", reply
        await asyncio.sleep(max(0.0, start + len(out) / GET_RATE - time.perf_counter()))
    return out


async def undoer(c: Client, gid: str, seconds: float) -> tuple[int, int, list[float]]:
    """Undos at UNDO_RATE a second for `seconds`, not waiting for the answers before the
    next: (sent, answered, their round trips in ms)."""
    sent: dict[int, float] = {}
    times: list[float] = []
    answered = 0

    async def one(i: int) -> None:
        nonlocal answered
        t0 = time.perf_counter()
        reply = await c.request({"t": "undo", "gid": gid}, timeout=seconds + 30)
        if reply["t"] == "state":
            answered += 1
            times.append((time.perf_counter() - t0) * 1000)

    tasks = []
    start = time.perf_counter()
    i = 0
    while time.perf_counter() - start < seconds:
        sent[i] = time.perf_counter()
        tasks.append(asyncio.create_task(one(i)))
        i += 1
        await asyncio.sleep(max(0.0, start + i / UNDO_RATE - time.perf_counter()))
    await asyncio.gather(*tasks, return_exceptions=True)
    return len(sent), answered, times


async def run(args: argparse.Namespace, redis_url: str) -> int:
    async with running_race_server(redis_url, SETTINGS) as server:
        return await measure(args, server)


async def measure(args: argparse.Namespace, server: RaceServer) -> int:
    redis_url, namespace = server.redis_url, server.namespace
    async with Client.connect(server.url) as long_c, Client.connect(server.url) as by:
        await long_c.hello("long")
        await by.hello("bystander")
        practice = {"t": "practice", "game": "bakers_game", "seed": BAKERS_SEED}
        long_gid = (await long_c.request(practice))["gid"]
        by_gid = (await by.request(practice))["gid"]
        t0 = time.perf_counter()
        await grow(redis_url, namespace, long_gid, bakers_cycle(args.moves))
        print(f"grew a practice game to {args.moves} moves in {time.perf_counter() - t0:.1f} s")
        got = await long_c.request({"t": "get", "gid": long_gid}, timeout=60)
        assert got["n"] == args.moves, got
        base_rows: list[tuple[float, float, float, int]] = []
        load_rows: list[tuple[float, float, float, int]] = []
        sent_total = answered_total = 0
        undo_times: list[float] = []
        before = game_metrics(server.page())
        for r in range(1, args.rounds + 1):
            alone = await bystander(by, by_gid, args.seconds)
            both = await asyncio.gather(
                bystander(by, by_gid, args.seconds), undoer(long_c, long_gid, args.seconds)
            )
            loaded, (sent, answered, times) = both
            sent_total, answered_total = sent_total + sent, answered_total + answered
            undo_times += times
            for name, rows, values in (("alone", base_rows, alone), ("undos", load_rows, loaded)):
                row = (percentile(values, 0.5), percentile(values, 0.99), max(values), len(values))
                rows.append(row)
                print(
                    f"round {r}, bystander {name:5}: get p50 {row[0]:6.2f} ms  p99 {row[1]:6.2f} "
                    f"ms  max {row[2]:7.2f} ms  ({row[3]} gets)"
                )
        after = game_metrics(server.page())
    med = [statistics.median(r[i] for r in base_rows) for i in range(3)]
    loaded_med = [statistics.median(r[i] for r in load_rows) for i in range(3)]
    print(
        f"bystander, median of {args.rounds} rounds: alone p50 {med[0]:.2f} p99 {med[1]:.2f} "
        f"max {med[2]:.2f} ms; with undos p50 {loaded_med[0]:.2f} p99 {loaded_med[1]:.2f} "
        f"max {loaded_med[2]:.2f} ms"
    )
    print(
        f"ratio with undos / alone: p50 {loaded_med[0] / med[0]:.2f}  "
        f"p99 {loaded_med[1] / med[1]:.2f}  max {loaded_med[2] / med[2]:.2f}"
    )
    print(
        f"undos of the {args.moves}-move game: {answered_total} of {sent_total} answered; "
        f"round trip p50 {percentile(undo_times, 0.5):.2f} ms  "
        f"p99 {percentile(undo_times, 0.99):.2f} ms"
    )

    def spent(name: str) -> float:
        return after.get(name, 0.0) - before.get(name, 0.0)

    loads = spent("solitaire_game_loads")
    read = spent("solitaire_game_moves_read")
    in_loop = spent('solitaire_game_moves_replayed{where="loop"}')
    in_threads = spent('solitaire_game_moves_replayed{where="thread"}')
    print(
        f"server: {loads:.0f} game loads, {read:.0f} moves read, {in_loop:.0f} moves replayed "
        f"in the event loop, {in_threads:.0f} in threads, for {answered_total} undos"
    )
    return 0 if answered_total == sent_total else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moves", type=int, default=100_000, help="the long game's length")
    parser.add_argument("--seconds", type=float, default=5.0, help="of each measurement")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if args.moves < 2 or args.rounds < 1 or args.seconds <= 0:
        parser.error("--moves >= 2, --rounds >= 1, --seconds > 0")
    return run_on_redis(run, args)


if __name__ == "__main__":
    sys.exit(main())
