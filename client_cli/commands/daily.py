"""`solitaire daily GAME`: today's ranked deal."""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from client_cli.commands import add_command, game_arg
from client_cli.commands.context import build_context
from client_cli.commands.race import PLAY_HELP
from client_cli.connection import Connection
from client_cli.messages import ServerError
from client_cli.play import Play
from client_cli.runner import play_game
from client_cli.session import GameSession


def register(subparsers: Any) -> None:
    daily = add_command(
        subparsers,
        "daily",
        help="play today's daily challenge (one ranked attempt per game and day)",
        description="Play today's deal of GAME, the same for everyone (UTC days). You have one "
        "ranked attempt; leaving and coming back resumes it. At the end you see your rank "
        "and the leaderboard around you.\n\n" + PLAY_HELP,
        epilog="example: solitaire daily hopscotch",
    )
    daily.add_argument("game", type=game_arg, metavar="GAME", help="doublets, quatorze, "
                       "bakers_game or hopscotch")  # fmt: skip
    daily.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    ctx = build_context(args)
    session = GameSession(kind="daily", game=args.game)

    async def setup(play: Play, conn: Connection) -> None:
        try:
            reply = await conn.request({"t": "daily", "game": args.game})
        except ServerError as exc:
            if exc.code != "already_played":
                raise
            play.session.say("You have played today's deal already; here is where you stand.")
            await play.show_leaderboard(None)
            session.phase = "done"
            play.over.set()
            return
        play.take(reply, reply=True)

    return asyncio.run(play_game(ctx, session, setup))
