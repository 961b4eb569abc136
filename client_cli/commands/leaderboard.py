"""`solitaire leaderboard GAME [--date D|all]`."""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt

import protocol as p
from client_cli.commands import Subcommands, add_command, game_arg
from client_cli.commands.context import build_context
from client_cli.commands.oneshot import ask, print_json
from client_cli.panels import leaderboard_lines, plain_text
from client_cli.theme import Theme

# The protocol's limits: a --limit the server would refuse is told in words first.
MAX_LIMIT = p.DEFAULT_LIMITS.leaderboard_max_rows
DEFAULT_LIMIT = p.DEFAULT_LIMITS.leaderboard_default_rows


def register(subparsers: Subcommands) -> None:
    board = add_command(
        subparsers,
        "leaderboard",
        help="show a daily leaderboard (today's, a past day's, or all time)",
        description="Show the daily challenge's leaderboard of GAME: today's by default, "
        "a past day's with --date, or the all-time board with --date all. Past days also "
        "show their deal's seed.",
        epilog="examples:\n  solitaire leaderboard quatorze\n"
        "  solitaire leaderboard doublets --date 2026-11-28\n"
        "  solitaire leaderboard hopscotch --date all --around-me",
    )
    board.add_argument("game", type=game_arg, metavar="GAME",
                       help="doublets, quatorze, bakers_game or hopscotch")  # fmt: skip
    board.add_argument("--date", type=date_arg, metavar="D",
                       help="YYYY-MM-DD (UTC day) or 'all' (default: today)")  # fmt: skip
    board.add_argument("--limit", type=int, default=DEFAULT_LIMIT, metavar="N",
                       help=f"how many entries, 1 to {MAX_LIMIT} "
                       f"(default {DEFAULT_LIMIT})")  # fmt: skip
    board.add_argument("--around-me", action="store_true",
                       help="centre the entries on your own")  # fmt: skip
    board.set_defaults(func=run)


def date_arg(text: str) -> str:
    if text == "all":
        return text
    try:
        return dt.date.fromisoformat(text).isoformat()
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not YYYY-MM-DD or 'all'") from None


def run(args: argparse.Namespace) -> int:
    if not 1 <= args.limit <= MAX_LIMIT:
        raise SystemExit(f"solitaire: --limit must be 1 to {MAX_LIMIT}")
    ctx = build_context(args)
    request = p.Leaderboard(
        game=args.game, date=args.date, limit=args.limit, around_me=args.around_me
    )
    board, me = asyncio.run(ask(ctx, request, p.LeaderboardReply))
    if board is None:
        return 1
    if ctx.plain:
        print_json(board)
        return 0
    plain = Theme(unicode=ctx.theme.unicode, colour=False)
    print(plain_text(leaderboard_lines(board, me, plain)))
    return 0
