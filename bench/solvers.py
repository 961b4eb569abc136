"""Solver benchmark: per game, what share of deals is won / proven unwinnable / given up
within a time budget, and how long each answer takes.

    .venv/bin/python -m bench.solvers                      # 200 seeds per game, 2 s each
    .venv/bin/python -m bench.solvers --seeds 50 --games bakers_game hopscotch

Deals are seeds 1..N (--first-seed moves the window). Every won line is replayed on the
engine and counted if it fails to win. For Baker's Game the reference is Freecell Solver
(`fc-solve -g ko_bakers_game`, Debian's freecell-solver-bin: exactly our rules), run in the
same process loop on the same deals with no limit; its time is the wall time of one
`fc-solve` process per deal (so it includes starting that process, a few milliseconds),
and the run also checks that every verdict we reach is the one fc-solve reaches.
Worst case: games x seeds x budget (4 x 200 x 2 s is about 27 minutes; Quatorze and
Doublets answer in milliseconds on most deals, Hopscotch often uses its whole budget).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field

import engine
from bench.figures import percentile
from engine.solve import solve


@dataclass
class GameRun:
    game_id: str
    verdicts: Counter[str] = field(default_factory=Counter)
    times: list[float] = field(default_factory=list)
    nodes: list[int] = field(default_factory=list)
    bad_replays: int = 0
    fc_times: list[float] = field(default_factory=list)
    fc_start: float = 0.0
    fc_disagreements: list[int] = field(default_factory=list)


def fc_board(piles: dict[str, list[str]]) -> str:
    """A dealt Baker's Game position in fc-solve's board format (one column a line)."""
    return "".join(": " + " ".join(piles[f"t{i}"]) + "\n" for i in range(8))


def _fc_solve_process(fc_solve: str, board: str) -> subprocess.CompletedProcess[str]:
    # One invocation for deals and for the start-up baseline alike, so the baseline
    # measures exactly the overhead that every per-deal time includes.
    return subprocess.run(
        [fc_solve, "-g", "ko_bakers_game", "-"],
        input=board,
        capture_output=True,
        text=True,
        env={**os.environ, "FREECELL_SOLVER_QUIET": "1"},
        check=False,
    )


def run_fc_solve(fc_solve: str, seed: int) -> tuple[str, float]:
    board = fc_board(engine.game_class("bakers_game").dealt_piles(seed))
    started = time.perf_counter()
    done = _fc_solve_process(fc_solve, board)
    elapsed = time.perf_counter() - started
    return ("won" if "This game is solveable." in done.stdout else "unwinnable"), elapsed


TRIVIAL_BOARD = "Foundations: H-K C-K D-K S-K\nFreecells: - - - -\n" + ":\n" * 8


def fc_solve_start_time(fc_solve: str, runs: int = 20) -> float:
    """Median wall time of fc-solve on a board that is already won: the cost of starting
    the process and reading a board, which every per-deal fc-solve time includes."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        _fc_solve_process(fc_solve, TRIVIAL_BOARD)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def bench_game(game_id: str, seeds: range, budget_s: float, fc_solve: str | None) -> GameRun:
    run = GameRun(game_id)
    if fc_solve and game_id == "bakers_game":
        run.fc_start = fc_solve_start_time(fc_solve)
    started = time.perf_counter()
    for done, seed in enumerate(seeds, 1):
        result = solve(game_id, seed, budget_s=budget_s)
        run.verdicts[result.verdict] += 1
        run.times.append(result.seconds)
        run.nodes.append(result.nodes)
        if result.verdict == "won" and not engine.replay(game_id, seed, result.moves).won:
            run.bad_replays += 1
        if fc_solve and game_id == "bakers_game":
            verdict, elapsed = run_fc_solve(fc_solve, seed)
            run.fc_times.append(elapsed)
            if result.verdict != "gave_up" and result.verdict != verdict:
                run.fc_disagreements.append(seed)
        if done % 10 == 0 or done == len(seeds):
            print(
                f"  {game_id}: {done}/{len(seeds)} deals, {time.perf_counter() - started:.0f} s,"
                f" {dict(run.verdicts)}",
                file=sys.stderr,
                flush=True,
            )
    return run


def report(run: GameRun, n: int) -> list[str]:
    def share(verdict: str) -> str:
        return f"{run.verdicts[verdict]:4d} ({100 * run.verdicts[verdict] / n:5.1f}%)"

    lines = [
        f"{run.game_id:12s} won {share('won')}  unwinnable {share('unwinnable')}"
        f"  gave up {share('gave_up')}",
        f"{'':12s} time median {statistics.median(run.times) * 1000:8.1f} ms"
        f"  p90 {percentile(run.times, 0.9) * 1000:8.1f} ms"
        f"  max {max(run.times) * 1000:8.1f} ms"
        f"  nodes median {statistics.median(run.nodes):.0f}"
        f"  won lines failing replay: {run.bad_replays}",
    ]
    if run.fc_times:
        ours_med, fc_med = statistics.median(run.times), statistics.median(run.fc_times)
        ours_tot, fc_tot = sum(run.times), sum(run.fc_times)
        lines += [
            f"{'':12s} fc-solve (ko_bakers_game, same deals): median {fc_med * 1000:8.1f} ms"
            f"  p90 {percentile(run.fc_times, 0.9) * 1000:8.1f} ms  total {fc_tot:.1f} s",
            f"{'':12s} fc-solve process start (a board already won): median"
            f" {run.fc_start * 1000:.1f} ms, included in each fc-solve time above",
            f"{'':12s} ratio ours / fc-solve: median {ours_med / fc_med:.1f}x,"
            f" total {ours_tot / fc_tot:.1f}x (ours total {ours_tot:.1f} s);"
            f" verdicts differing from fc-solve: {run.fc_disagreements or 'none'}",
        ]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=200, help="deals per game (default 200)")
    parser.add_argument("--first-seed", type=int, default=1, help="first deal (default 1)")
    parser.add_argument(
        "--budget-s", type=float, default=2.0, help="time budget per deal (default 2)"
    )
    parser.add_argument(
        "--games",
        nargs="+",
        choices=engine.GAMES,
        default=list(engine.GAMES),
        help="games to run (default: all four)",
    )
    parser.add_argument("--no-fc-solve", action="store_true", help="skip the fc-solve baseline")
    args = parser.parse_args(argv)
    if args.seeds < 1 or args.budget_s <= 0:
        parser.error("--seeds and --budget-s must be positive")

    fc_solve = None if args.no_fc_solve else shutil.which("fc-solve")
    if "bakers_game" in args.games and not fc_solve and not args.no_fc_solve:
        print(
            "fc-solve not found (apt-get install freecell-solver-bin): no baseline",
            file=sys.stderr,
        )
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    runs = [bench_game(g, seeds, args.budget_s, fc_solve) for g in args.games]

    print(
        f"Solvers: seeds {seeds.start}..{seeds.stop - 1}, budget {args.budget_s:g} s per deal"
        f" (Python {platform.python_version()}, {os.cpu_count()} cores)"
    )
    for run in runs:
        print("\n".join(report(run, len(seeds))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
