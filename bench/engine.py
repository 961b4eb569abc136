"""Engine benchmark: how fast play(), legal_moves(), playouts and replays are, per game.

Baseline, measured in the same run on the same positions: a msgpack encode plus decode
of the game's public view (what the server does with a view for every move anyway).
Targets (issue 2): play() at most 2x that round trip, legal_moves() at most 10x.

    .venv/bin/python -m bench.engine            # about 30 s
    .venv/bin/python -m bench.engine --quick    # a few seconds, rougher figures

Method: random legal playouts from seeds 1, 2, ... give the sample positions. For each
position the call is timed in a tight loop of REPEAT calls (play() on REPEAT fresh copies,
so that every call plays the same move from the same position) and divided by REPEAT;
the figure printed is the median over positions. Timer and loop overheads are included
in every figure alike, so the ratios are fair.
"""

from __future__ import annotations

import argparse
import platform
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgpack

import engine
from engine.game import Game

PLAY_TARGET = 2.0
LEGAL_TARGET = 10.0
REPLAY_LENGTH = 150
PLAYOUT_CAP = 1000  # Baker's Game can cycle for ever under random play
LENGTH_LIMITS = {
    "quatorze": " (a whole game has at most 26 moves)",
    "hopscotch": " (a whole game has at most 144: 48 deals, 48 cards home, 48 parked)",
}


@dataclass
class Figures:
    game_id: str
    positions: int
    play_us: float
    legal_us: float
    view_us: float
    msgpack_us: float
    playouts_per_s: float
    capped: int
    replay_moves: int
    replay_ms: float

    @property
    def play_ratio(self) -> float:
        return self.play_us / self.msgpack_us

    @property
    def legal_ratio(self) -> float:
        return self.legal_us / self.msgpack_us


def playout(game_id: str, seed: int, rng: random.Random, cap: int) -> tuple[Game, list[str]]:
    game = engine.new_game(game_id, seed)
    moves: list[str] = []
    while len(moves) < cap:
        legal = game.legal_moves()
        if not legal:
            break
        move = rng.choice(legal)
        game.play(move)
        moves.append(move)
    return game, moves


def sample_positions(game_id: str, wanted: int) -> list[tuple[Game, str]]:
    """(position, move played from it) pairs from random playouts."""
    samples: list[tuple[Game, str]] = []
    seed = 0
    while len(samples) < wanted:
        seed += 1
        rng = random.Random(seed)
        game = engine.new_game(game_id, seed)
        for _ in range(400):
            legal = game.legal_moves()
            if not legal:
                break
            move = rng.choice(legal)
            samples.append((game.copy(), move))
            game.play(move)
    return samples[:wanted]


def per_call_us(run: Callable[[], None], repeat: int) -> float:
    start = time.perf_counter_ns()
    run()
    return (time.perf_counter_ns() - start) / repeat / 1000


def measure_calls(
    samples: list[tuple[Game, str]], repeat: int
) -> tuple[float, float, float, float]:
    play_times, legal_times, view_times, msgpack_times = [], [], [], []
    packb, unpackb = msgpack.packb, msgpack.unpackb
    for game, move in samples:
        copies = [game.copy() for _ in range(repeat)]

        def play_all(copies: list[Game] = copies, move: str = move) -> None:
            for copy in copies:
                copy.play(move)

        def legal_all(game: Game = game) -> None:
            legal_moves = game.legal_moves
            for _ in range(repeat):
                legal_moves()

        def view_all(copies: list[Game] = copies) -> None:
            # Fresh games each time: view() computes `over`, which a game then caches.
            for copy in copies:
                copy.view()

        view = game.view()

        def roundtrip_all(view: dict[str, Any] = view) -> None:
            for _ in range(repeat):
                unpackb(packb(view))

        play_times.append(per_call_us(play_all, repeat))
        view_times.append(per_call_us(view_all, repeat))
        legal_times.append(per_call_us(legal_all, repeat))
        msgpack_times.append(per_call_us(roundtrip_all, repeat))
    return (
        statistics.median(play_times),
        statistics.median(legal_times),
        statistics.median(view_times),
        statistics.median(msgpack_times),
    )


def measure_playouts(game_id: str, seconds: float) -> tuple[float, int]:
    """Whole random playouts (legal_moves + choice + play until over) per second."""
    count = capped = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        count += 1
        _, moves = playout(game_id, count, random.Random(count), PLAYOUT_CAP)
        capped += len(moves) == PLAYOUT_CAP
    return count / (time.perf_counter() - start), capped


def long_game(game_id: str, tries: int) -> tuple[int, list[str]]:
    """A legal move list of REPLAY_LENGTH moves, or the longest random playout found."""
    best: tuple[int, list[str]] = (1, [])
    for seed in range(1, tries + 1):
        _, moves = playout(game_id, seed, random.Random(seed), REPLAY_LENGTH)
        if len(moves) > len(best[1]):
            best = (seed, moves)
        if len(moves) == REPLAY_LENGTH:
            break
    return best


def measure_replay(game_id: str, seed: int, moves: list[str], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter_ns()
        engine.replay(game_id, seed, moves)
        times.append((time.perf_counter_ns() - start) / 1e6)
    return statistics.median(times)


def bench_game(game_id: str, quick: bool) -> Figures:
    positions = 300 if quick else 2000
    repeat = 10 if quick else 30
    samples = sample_positions(game_id, positions)
    play_us, legal_us, view_us, msgpack_us = measure_calls(samples, repeat)
    playouts_per_s, capped = measure_playouts(game_id, 0.5 if quick else 2.0)
    seed, moves = long_game(game_id, 200 if quick else 2000)
    replay_ms = measure_replay(game_id, seed, moves, 20 if quick else 100)
    return Figures(
        game_id,
        len(samples),
        play_us,
        legal_us,
        view_us,
        msgpack_us,
        playouts_per_s,
        capped,
        len(moves),
        replay_ms,
    )


def report(figures: list[Figures]) -> None:
    print()
    print(
        f"{'game':<12} {'play us':>8} {'legal us':>9} {'view us':>8} {'msgpack us':>11} "
        f"{'play/mp':>8} {'legal/mp':>9} {'playouts/s':>11} {'replay':>17}"
    )
    for f in figures:
        print(
            f"{f.game_id:<12} {f.play_us:>8.2f} {f.legal_us:>9.2f} {f.view_us:>8.2f} "
            f"{f.msgpack_us:>11.2f} "
            f"{f.play_ratio:>7.2f}x {f.legal_ratio:>8.2f}x {f.playouts_per_s:>11.0f} "
            f"{f.replay_ms:>8.3f} ms/{f.replay_moves:<3}"
        )
    print()
    print("play, legal, view: median us per call of play(), legal_moves() and view() (on a")
    print("position just played to, so view() also works out `over`); msgpack: encode+decode")
    print("of the same position's view; replay: engine.replay() of a game of that many moves.")
    print(f"Targets: play() <= {PLAY_TARGET:g}x and legal_moves() <= {LEGAL_TARGET:g}x msgpack.")
    for f in figures:
        play_ok = "ok" if f.play_ratio <= PLAY_TARGET else "MISSED"
        legal_ok = "ok" if f.legal_ratio <= LEGAL_TARGET else "MISSED"
        print(
            f"  {f.game_id:<12} play {f.play_ratio:.2f}x ({play_ok})   "
            f"legal_moves {f.legal_ratio:.2f}x ({legal_ok})"
        )
    notes = []
    for f in figures:
        if f.replay_moves < REPLAY_LENGTH:
            notes.append(
                f"  {f.game_id}: no {REPLAY_LENGTH}-move game found; replay timed on the "
                f"longest random playout, {f.replay_moves} moves" + LENGTH_LIMITS.get(f.game_id, "")
            )
        if f.capped:
            notes.append(
                f"  {f.game_id}: {f.capped} playouts stopped at {PLAYOUT_CAP} moves (cycling)"
            )
    if notes:
        print("Notes:")
        print("\n".join(notes))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples, a few seconds")
    parser.add_argument("--game", choices=engine.GAMES, action="append", help="only this game")
    args = parser.parse_args()
    print(
        f"engine benchmark: Python {platform.python_version()}, msgpack "
        f"{'.'.join(map(str, msgpack.version))}, {'quick' if args.quick else 'full'} run"
    )
    figures = []
    for game_id in args.game or engine.GAMES:
        start = time.perf_counter()
        figures.append(bench_game(game_id, args.quick))
        print(f"  {game_id}: measured in {time.perf_counter() - start:.1f} s", flush=True)
    report(figures)


if __name__ == "__main__":
    main()
