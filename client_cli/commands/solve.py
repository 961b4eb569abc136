"""`solitaire solve GAME SEED`: the solver's verdict on a deal, its line and its statistics.

Runs on this machine with the shared engine (no server needed): the deal is the same one
that a race or practice game with that seed deals.
"""

from __future__ import annotations

import argparse
import json
import textwrap

import protocol as p
from client_cli.commands import Subcommands, add_command, game_arg
from client_cli.words import count
from engine.solve import solve

SEED_MAX = p.SEED_MAX
VERDICTS = {
    "won": "won",
    "unwinnable": "proven unwinnable",
    "gave_up": "gave up (budget spent; nothing proven)",
}


def register(subparsers: Subcommands) -> None:
    parser = add_command(
        subparsers,
        "solve",
        help="solve a deal: verdict, winning line and search statistics",
        description="Search deal SEED of GAME with the solver (knowing every hidden card) and "
        "print its verdict (won, proven unwinnable, or gave up within the budget), the "
        "winning line in move strings, and how many positions it searched in how long. "
        "With --plain, one JSON object.",
        epilog="example: solitaire solve bakers_game 2 --budget-s 5",
    )
    parser.add_argument("game", type=game_arg, metavar="GAME", help="doublets, quatorze, "
                        "bakers_game or hopscotch")  # fmt: skip
    parser.add_argument("seed", type=_seed, metavar="SEED", help=f"deal number, 1 to {SEED_MAX}")
    parser.add_argument(
        "--budget-s",
        type=_budget,
        default=10.0,
        metavar="S",
        help="seconds the search may take (default 10)",
    )
    parser.set_defaults(func=run)


def _seed(text: str) -> int:
    try:
        seed = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a deal number: {text!r}") from None
    if not 1 <= seed <= SEED_MAX:
        raise argparse.ArgumentTypeError(f"a deal number is 1 to {SEED_MAX}")
    return seed


def _budget(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < value <= 3600:
        raise argparse.ArgumentTypeError("the budget is more than 0 and at most 3600 seconds")
    return value


def run(args: argparse.Namespace) -> int:
    result = solve(args.game, args.seed, budget_s=args.budget_s)
    if args.plain:
        print(
            json.dumps(
                {
                    "game": args.game,
                    "seed": args.seed,
                    "verdict": result.verdict,
                    "moves": result.moves,
                    "par": len(result.moves) if result.verdict == "won" else None,
                    "nodes": result.nodes,
                    "seconds": round(result.seconds, 4),
                    "best_line": result.best_line if result.verdict != "won" else None,
                }
            )
        )
        return 0
    print(f"{args.game} deal {args.seed}: {VERDICTS[result.verdict]}")
    print(
        f"searched {result.nodes} positions in {result.seconds:.3f} s (budget {args.budget_s:g} s)"
    )
    if result.verdict == "won":
        print(f"winning line, {count(len(result.moves), 'move')}:")
        print(textwrap.fill(" ".join(result.moves), 78))
    elif result.verdict == "gave_up" and result.best_line:
        print(f"best line found, {count(len(result.best_line), 'move')}:")
        print(textwrap.fill(" ".join(result.best_line), 78))
    return 0
