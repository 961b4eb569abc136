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
    request: dict[str, Any] = {"t": "stats"}
    if args.game:
        request["game"] = args.game
    reply, _me = asyncio.run(ask(ctx, request))
    if reply is None:
        return 1
    if ctx.plain:
        print_json(reply)
    else:
        print(format_stats(reply))
    return 0


def format_stats(reply: dict[str, Any]) -> str:
    """A readable table of whatever per-game figures the server sends."""
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
