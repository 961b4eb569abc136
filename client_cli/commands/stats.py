"""`solitaire stats [GAME]`: your daily-challenge record."""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from client_cli.boards import game_title
from client_cli.commands import add_command, game_arg
from client_cli.commands.context import build_context
from client_cli.commands.oneshot import ask, print_json
from client_cli.session import clock


def register(subparsers: Any) -> None:
    stats = add_command(
        subparsers,
        "stats",
        help="show your daily-challenge statistics and streaks",
        description="Show your record in the daily challenge: attempts, wins, averages and "
        "streaks, per game (or for one GAME).",
        epilog="example: solitaire stats quatorze",
    )
    stats.add_argument("game", type=game_arg, metavar="GAME", nargs="?",
                       help="only this game (default: all four)")  # fmt: skip
    stats.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    ctx = build_context(args)
    reply, _me = asyncio.run(ask(ctx, {"t": "stats"}))
    if reply is None:
        return 1
    games = reply.get("games")
    if args.game and isinstance(games, dict):
        reply = {**reply, "games": {k: v for k, v in games.items() if k == args.game}}
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


def format_stats(reply: dict[str, Any]) -> str:
    """A table of the per-game figures; figures this client does not know are listed too."""
    games = reply.get("games")
    if isinstance(games, dict) and all(isinstance(v, dict) for v in games.values()):
        header = f"{'Game':<14}" + " ".join(f"{title:>{_width(title)}}" for _, title in COLUMNS)
        lines = [f"Daily challenge statistics for {reply.get('name', 'you')}", "", header]
        for game, figures in games.items():
            cells = []
            for key, title in COLUMNS:
                value = figures.get(key)
                cells.append(f"{'-' if value is None else value!s:>{_width(title)}}")
            lines.append(f"{game_title(game):<14}" + " ".join(cells))
        if not games:
            lines.append("(no daily challenge played yet)")
        return "\n".join(lines)
    return _format_generic(reply)


def _width(title: str) -> int:
    return max(len(title), 6) if title != "Last played" else 11


def _format_generic(reply: dict[str, Any]) -> str:
    games = reply.get("games")
    if isinstance(games, dict):
        rows = list(games.items())
    elif isinstance(games, list):
        rows = [(str(g.get("game", "?")), g) for g in games if isinstance(g, dict)]
    else:
        rows = [(str(reply.get("game", "")), reply)]
    lines = [f"Daily challenge statistics for {reply.get('name', 'you')}"]
    for game, figures in rows:
        lines.append("")
        lines.append(game_title(game) if game else "All games")
        if not isinstance(figures, dict):
            lines.append(f"  {figures}")
            continue
        for key, value in figures.items():
            if key in ("t", "re", "game", "player", "name"):
                continue
            shown = clock(value) if key.endswith("_ms") and isinstance(value, int) else value
            lines.append(f"  {key.replace('_', ' '):<22} {shown}")
    return "\n".join(lines)
