"""`solitaire ratings GAME`: a game's ratings from quick races."""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

import protocol as p
from client_cli.boards import game_title
from client_cli.commands import add_command, game_arg
from client_cli.commands.context import build_context
from client_cli.commands.oneshot import ask, print_json

MAX_LIMIT = p.DEFAULT_LIMITS.leaderboard_max_rows
DEFAULT_LIMIT = p.DEFAULT_LIMITS.leaderboard_default_rows
NAME_WIDTH = 24


def register(subparsers: Any) -> None:
    ratings = add_command(
        subparsers,
        "ratings",
        help="show a game's ratings (from quick races), highest first",
        description="Show the ratings of GAME's players, highest first: a new player starts "
        "at 1500 and is provisional (*) for their first 10 rated races.",
        epilog="examples:\n  solitaire ratings quatorze\n  solitaire ratings doublets --around-me",
    )
    ratings.add_argument("game", type=game_arg, metavar="GAME",
                         help="doublets, quatorze, bakers_game or hopscotch")  # fmt: skip
    ratings.add_argument("--limit", type=int, default=DEFAULT_LIMIT, metavar="N",
                         help=f"how many players, 1 to {MAX_LIMIT} "
                         f"(default {DEFAULT_LIMIT})")  # fmt: skip
    ratings.add_argument("--around-me", action="store_true",
                         help="centre the list on your own rating")  # fmt: skip
    ratings.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if not 1 <= args.limit <= MAX_LIMIT:
        raise SystemExit(f"solitaire: --limit must be 1 to {MAX_LIMIT}")
    ctx = build_context(args)
    request = p.Ratings(game=args.game, limit=args.limit, around_me=args.around_me)
    board, me = asyncio.run(ask(ctx, request, p.RatingsReply))
    if board is None:
        return 1
    if ctx.plain:
        print_json(board)
    else:
        print(format_ratings(board, me))
    return 0


def format_ratings(board: p.RatingsReply, me: str) -> str:
    title = f"{game_title(board.game)} ratings"
    if board.me is not None:
        title += f": you are #{board.me.rank} of {board.total} at {board.me.rating}"
    else:
        title += f": {board.total} rated player{'' if board.total == 1 else 's'}"
    lines = [title, "", f" #    {'Player':<{NAME_WIDTH}} Rating  Races"]
    for e in board.entries:
        mark = ">" if e.player == me else " "
        star = "*" if e.provisional else " "
        name = f"{e.name[:NAME_WIDTH]:<{NAME_WIDTH}}"
        lines.append(f"{mark}{e.rank:>4} {name} {e.rating:>5}{star} {e.games:>6}")
    if not board.entries:
        lines.append("  (nobody yet: solitaire quick GAME plays a rated race)")
    if any(e.provisional for e in board.entries):
        lines.append("* provisional: fewer than 10 rated races")
    return "\n".join(lines)
