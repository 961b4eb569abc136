"""`solitaire stats [GAME]`: your daily-challenge record."""

from __future__ import annotations

import argparse
import asyncio

import msgspec

import protocol as p
from client_cli.boards import game_title
from client_cli.commands import Subcommands, add_command, game_arg
from client_cli.commands.context import build_context
from client_cli.commands.oneshot import ask, print_json


def register(subparsers: Subcommands) -> None:
    stats = add_command(
        subparsers,
        "stats",
        help="show your daily-challenge statistics, streaks and ratings",
        description="Show your record in the daily challenge: attempts, wins, averages and "
        "streaks, per game (or for one GAME), and your rating in each game you have played "
        "rated races of, with its recent history.",
        epilog="example: solitaire stats quatorze",
    )
    stats.add_argument("game", type=game_arg, metavar="GAME", nargs="?",
                       help="only this game (default: all four)")  # fmt: skip
    stats.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    ctx = build_context(args)
    reply, _me = asyncio.run(ask(ctx, p.Stats(), p.StatsReply))
    if reply is None:
        return 1
    if args.game:
        games = {k: v for k, v in reply.games.items() if k == args.game}
        ratings = {k: v for k, v in (reply.ratings or {}).items() if k == args.game}
        reply = msgspec.structs.replace(reply, games=games, ratings=ratings or None)
    if ctx.plain:
        print_json(reply)
    else:
        print(format_stats(reply))
    return 0


COLUMNS = (
    ("played", "Played"),
    ("won", "Won"),
    ("streak", "Streak"),
    ("best_streak", "Best"),
    ("win_streak", "Wins in a row"),
    ("best_win_streak", "Best"),
    ("last_played", "Last played"),
)


def format_stats(reply: p.StatsReply) -> str:
    """A table of the per-game figures."""
    header = f"{'Game':<14}" + " ".join(f"{title:>{_width(title)}}" for _, title in COLUMNS)
    lines = [f"Daily challenge statistics for {reply.name}", "", header]
    for game, figures in reply.games.items():
        cells = []
        for key, title in COLUMNS:
            value = getattr(figures, key)
            shown = "-" if value is msgspec.UNSET else str(value)
            cells.append(f"{shown:>{_width(title)}}")
        lines.append(f"{game_title(game):<14}" + " ".join(cells))
    if not reply.games:
        lines.append("(no daily challenge played yet)")
    for game, r in sorted((reply.ratings or {}).items()):
        lines += ["", f"{game_title(game)} rating: {r.rating}"
                  f"{' (provisional)' if r.provisional else ''} after {r.games} rated "
                  f"race{'' if r.games == 1 else 's'}"]  # fmt: skip
        for h in r.history[:10]:
            change = h.after - h.before
            lines.append(
                f"  race {h.race}: #{h.rank} of {h.seats}, {h.before} -> {h.after} ({change:+d})"
            )
    return "\n".join(lines)


def _width(title: str) -> int:
    return max(len(title), 6) if title != "Last played" else 11
