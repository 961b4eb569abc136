"""What replay viewers cost the players: move round trips with and without viewers, same run.

    .venv/bin/python -m bench.replays [--players 16] [--viewers 16] [--seconds 5] [--rounds 3]
                                        [--long-moves 20000]

1. Starts a Redis (REDIS_URL, or the embedded valkey-server) and a real `solitaire-server`
   process on a free port, with a fresh namespace and the rate limit lifted.
2. Plays two finished races to replay: a short one (a Doublets game of a few dozen moves)
   and a long one (`--long-moves` moves of Baker's Game deal 2, a card going back and forth
   between a free cell and an empty column), each through the real move path.
3. `--players` players each play practice games of Doublets (legal moves from the engine),
   `--player-rate` moves a second (0: one after another, as fast as the replies come):
   every move's round trip is timed.
4. In alternate phases of `--seconds` (`--rounds` of each), the players play alone, or
   beside `--viewers` viewers who load `--viewer-rate` replays a second each (0: as fast
   as they come): `--web-share` of them (half) web pages of the long race at random
   positions, the others `replay` requests (every page of the long game's moves, then the
   short race's).

Prints the players' moves per second and p50/p99 round trip in each phase, what the viewers
got done, and the ratios with viewers / alone (medians of the rounds).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import statistics
import time

from websockets.asyncio.client import connect

import engine
from bench import leaderboard
from bench.figures import percentile
from bench.race_server import run_on_redis, running_race_server

# The long game replayed is a race seat of more moves than ranked games may have.
SETTINGS = {"SOLITAIRE_LOG_LEVEL": "WARNING", "SOLITAIRE_MAX_RANKED_MOVES": "100000"}


class Client(leaderboard.Client):
    """bench/leaderboard.py's client, greeted as a new player of its own."""

    @classmethod
    async def open(cls, port: int, name: str) -> Client:
        ws = await connect(f"ws://127.0.0.1:{port}/ws", compression=None, max_size=2**22)
        c = cls(ws, "")
        c.player = (await c.ask({"t": "hello", "v": 1, "name": name}))["player"]
        return c


async def http_get(port: int, path: str) -> tuple[int, int]:
    """(status, body bytes) of one GET on a fresh connection (the server closes each)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: bench\r\n\r\n".encode())
    await writer.drain()
    data = await reader.read()
    writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), len(body)


def long_line(count: int) -> list[str]:
    """Legal moves of Baker's Game deal 2: a walk to a free cell card beside an empty column,
    then that card back and forth between them (found with the engine, deterministic)."""
    for attempt in range(1000):
        rng, game = random.Random(attempt), engine.new_game("bakers_game", 2)
        moves: list[str] = []
        for _ in range(200):
            legal = sorted(game.legal_moves())
            if not legal:
                break
            piles = game.piles
            empty = [c for c in piles if c.startswith("t") and not piles[c]]
            cells = [c for c in piles if c.startswith("r") and piles[c]]
            if empty and cells:
                there, back = f"{cells[0]}-{empty[0]}", f"{empty[0]}-{cells[0]}"
                if there in legal:
                    while len(moves) < count:
                        game.play(there)
                        moves.append(there)
                        there, back = back, there
                    return moves[:count]
            move = rng.choice(legal)
            game.play(move)
            moves.append(move)
    raise RuntimeError("no long line found")


def short_line(seed: int) -> list[str]:
    game, moves = engine.new_game("doublets", seed), []
    while not game.over:
        legal = sorted(game.legal_moves())
        move = next((m for m in legal if m.endswith("-f")), legal[0])
        game.play(move)
        moves.append(move)
    return moves


async def finished_race(port: int, game: str, seed: int, moves: list[str]) -> str:
    """A race of one seat, played and closed: its gid."""
    c = await Client.open(port, f"replayed-{game}-{seed}")  # names are unique
    code = (await c.ask({"t": "create", "game": game, "seed": seed}))["race"]
    await c.ask({"t": "start", "race": code})
    gid = f"r.{code}.{c.player}"
    for n, move in enumerate(moves):
        await c.ask({"t": "move", "gid": gid, "n": n, "m": move})
    with contextlib.suppress(RuntimeError):  # a game over already is finished
        await c.ask({"t": "resign", "gid": gid})
    await c.ws.close()
    return gid


class Pace:
    """`rate` times a second at most (0: as fast as the replies come), without drifting."""

    def __init__(self, rate: float) -> None:
        self.gap = 1 / rate if rate else 0.0
        self.next = time.perf_counter() + random.random() * self.gap

    async def wait(self) -> None:
        if self.gap:
            self.next += self.gap
            await asyncio.sleep(max(0.0, self.next - time.perf_counter()))


async def player(c: Client, seed: int, stop: asyncio.Event, lat: list[float], rate: float) -> None:
    pace = Pace(rate)
    while not stop.is_set():
        state = await c.ask({"t": "practice", "game": "doublets", "seed": seed})
        for n, move in enumerate(short_line(seed)):
            await pace.wait()
            if stop.is_set():
                return
            t0 = time.perf_counter()
            await c.ask({"t": "move", "gid": state["gid"], "n": n, "m": move})
            lat.append(time.perf_counter() - t0)
        seed += 1


async def web_viewer(
    port: int, gid: str, n: int, stop: asyncio.Event, done: list[int], seed: int, rate: float
) -> None:
    rng, pace = random.Random(seed), Pace(rate)
    while not stop.is_set():
        await pace.wait()
        status, _ = await http_get(port, f"/replay/{gid}?n={rng.randint(0, n)}")
        assert status == 200, status
        done[0] += 1


async def ws_viewer(
    c: Client, gids: list[str], stop: asyncio.Event, done: list[int], rate: float
) -> None:
    pace = Pace(rate)
    while not stop.is_set():
        for gid in gids:
            await pace.wait()
            reply = await c.ask({"t": "replay", "gid": gid})
            while reply["start"] + len(reply["moves"]) < reply["n"]:
                start = reply["start"] + len(reply["moves"])
                reply = await c.ask({"t": "replay", "gid": gid, "start": start})
            done[1] += 1


def figures(lat: list[float], seconds: float) -> tuple[float, float, float]:
    return len(lat) / seconds, percentile(lat, 0.50) * 1000, percentile(lat, 0.99) * 1000


async def bench(args: argparse.Namespace, redis_url: str) -> None:
    async with running_race_server(redis_url, SETTINGS) as server:
        await measure(args, server.port)


async def measure(args: argparse.Namespace, port: int) -> None:
    t0 = time.perf_counter()
    long_moves = long_line(args.long_moves)
    long_gid = await finished_race(port, "bakers_game", 2, long_moves)
    short_gid = await finished_race(port, "doublets", 5, short_line(5))
    took = time.perf_counter() - t0
    print(f"replays to watch: {len(long_moves):,} moves of Baker's Game and a Doublets "
          f"game of {len(short_line(5))}, played in {took:.1f} s")  # fmt: skip
    print(f"players: {args.players} at {args.player_rate or 'full'} moves/s each; viewers: "
          f"{args.viewers} at {args.viewer_rate or 'full'} pages/s each\n")  # fmt: skip
    players = [await Client.open(port, f"player{i}") for i in range(args.players)]
    watchers = [await Client.open(port, f"viewer{i}") for i in range(args.viewers)]
    results: dict[str, list[tuple[float, float, float]]] = {"alone": [], "viewers": []}
    for rnd in range(1, args.rounds + 1):
        for phase in ("alone", "viewers"):
            stop, lat, done = asyncio.Event(), list[float](), [0, 0]
            tasks = [asyncio.create_task(player(c, 1 + 97 * i, stop, lat, args.player_rate))
                     for i, c in enumerate(players)]  # fmt: skip
            if phase == "viewers":
                half = round(args.viewers * args.web_share)
                rate = args.viewer_rate
                tasks += [asyncio.create_task(web_viewer(port, long_gid, len(long_moves),
                                                         stop, done, i, rate))
                          for i in range(half)]  # fmt: skip
                tasks += [asyncio.create_task(ws_viewer(c, [long_gid, short_gid], stop, done,
                                                        rate))
                          for c in watchers[half:]]  # fmt: skip
            await asyncio.sleep(args.seconds)
            stop.set()
            await asyncio.gather(*tasks)
            rate, p50, p99 = figures(lat, args.seconds)
            results[phase].append((rate, p50, p99))
            seen = (f"; viewers: {done[0] / args.seconds:,.1f} web pages/s, "
                    f"{done[1] / args.seconds:,.1f} whole replays/s by message"
                    if phase == "viewers" else "")  # fmt: skip
            print(f"round {rnd}, players {phase:<8} {rate:>8,.0f} moves/s   "
                  f"p50 {p50:6.2f} ms   p99 {p99:6.2f} ms{seen}")  # fmt: skip
    print()
    alone = [statistics.median(x) for x in zip(*results["alone"], strict=True)]
    beside = [statistics.median(x) for x in zip(*results["viewers"], strict=True)]
    for i, what in enumerate(("moves per second", "p50 round trip", "p99 round trip")):
        print(f"ratio with viewers / alone, {what}: {beside[i] / alone[i]:.2f}")
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    for c in players + watchers:
        await c.ws.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=16, help="players moving (16)")
    parser.add_argument("--viewers", type=int, default=16, help="replay viewers (16)")
    parser.add_argument("--seconds", type=float, default=5.0, help="per phase (5)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of both phases (3)")
    parser.add_argument(
        "--player-rate",
        type=float,
        default=10.0,
        help="moves a second of each player, 0: as fast as replies come (10)",
    )
    parser.add_argument(
        "--viewer-rate",
        type=float,
        default=2.0,
        help="pages a second of each viewer, 0: as fast as they come (2)",
    )
    parser.add_argument(
        "--web-share",
        type=float,
        default=0.5,
        help="the share of viewers on web pages, the others by message (0.5)",
    )
    parser.add_argument("--long-moves", type=int, default=20_000,
                        help="moves of the long game watched (20000)")  # fmt: skip
    args = parser.parse_args()
    run_on_redis(bench, args)


if __name__ == "__main__":
    main()
