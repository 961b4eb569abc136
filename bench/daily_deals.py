#!/usr/bin/env python3
"""How long the server's search for a winnable daily deal takes, per game, and how many
candidate deals it needs: the figures behind the budgets in server/config.py.

    .venv/bin/python -m bench.daily_deals [--days 30] [--games hopscotch ...]

For each of `--days` dates (from 2026-01-01) and each game, runs exactly the job the server
runs in its solver pool (server/solver_pool.find_daily_deal, with the configured node budget,
time cap and candidate limit) from that day's HMAC seed under a fixed secret, and prints the
median / p90 / max time, the candidates needed, and how many days fell back (none proven).
The baseline in the same run is a single solve of the first candidate with the same budget
(what a daily would cost if any deal would do), and the ratio against it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import sys
import time

import engine
from bench.figures import percentile
from engine.solve import solve
from server.config import DEFAULT
from server.daily.seeds import daily_seed
from server.solver_pool import find_daily_deal

SECRET = b"bench-daily-deals"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=30, help="dates per game (default 30)")
    parser.add_argument("--games", nargs="+", default=list(engine.GAMES), choices=engine.GAMES)
    args = parser.parse_args()
    cfg = DEFAULT
    print(
        f"daily deal search: {args.days} days per game; budget {cfg.daily_budget_nodes} "
        f"positions (cap {cfg.daily_budget_s:g} s) per candidate, at most "
        f"{cfg.daily_max_candidates} candidates"
    )
    first_day = dt.date(2026, 1, 1)
    for game in args.games:
        times, tries, pars, base = [], [], [], []
        fallbacks = 0
        for d in range(args.days):
            day = first_day + dt.timedelta(days=d)
            seed = daily_seed(SECRET, day, game)
            started = time.perf_counter()
            solve(game, seed, budget_nodes=cfg.daily_budget_nodes, budget_s=cfg.daily_budget_s)
            base.append(time.perf_counter() - started)
            found = find_daily_deal(
                game, seed, cfg.daily_budget_nodes, cfg.daily_budget_s, cfg.daily_max_candidates
            )
            times.append(found["seconds"])
            tries.append(found["candidates"])
            if found["proven"]:
                pars.append(len(found["line"]))
                assert engine.replay(game, found["seed"], found["line"]).won
            else:
                fallbacks += 1
        med, base_med = statistics.median(times), statistics.median(base)
        print(
            f"{game:<12} time median {med:6.2f} s  p90 {percentile(times, 0.9):6.2f} s  "
            f"max {max(times):6.2f} s | candidates median {statistics.median(tries):g} "
            f"max {max(tries)} | par median {statistics.median(pars) if pars else '-'} | "
            f"fallbacks {fallbacks}/{args.days} | one solve median {base_med:.2f} s, "
            f"ratio {med / base_med if base_med else float('nan'):.1f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
