"""`solitaire daily GAME`: today's ranked deal."""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
from typing import Any

from client_cli.boards import game_title
from client_cli.commands import add_command, game_arg
from client_cli.commands.context import build_context
from client_cli.commands.race import PLAY_HELP
from client_cli.connection import Connection
from client_cli.messages import DailyStatus, ServerError, parse
from client_cli.play import Play
from client_cli.runner import PlainFront, SetupEnded, ask_yes_no, play_game
from client_cli.session import GameSession


def register(subparsers: Any) -> None:
    daily = add_command(
        subparsers,
        "daily",
        help="play today's daily challenge (one ranked attempt per game and day)",
        description="Play today's deal of GAME, the same for everyone (UTC days). You have one "
        "ranked attempt: the client asks before it deals it to you (--confirm answers yes "
        "beforehand; --plain needs it to start an attempt). Its clock runs from the moment "
        "the deal is shown; leaving and coming back resumes it. At the end you see your rank "
        "and the leaderboard around you.\n\n" + PLAY_HELP,
        epilog="examples:\n  solitaire daily hopscotch\n"
        "  solitaire --plain daily quatorze --confirm",
    )
    daily.add_argument("game", type=game_arg, metavar="GAME", help="doublets, quatorze, "
                       "bakers_game or hopscotch")  # fmt: skip
    daily.add_argument("--confirm", "--yes", "-y", dest="confirm", action="store_true",
                       help="start today's ranked attempt without asking")  # fmt: skip
    daily.set_defaults(func=run)


def question(status: DailyStatus) -> str:
    left_s = max(0, status.ends_at_ms // 1000 - int(dt.datetime.now(dt.UTC).timestamp()))
    hours, minutes = left_s // 3600, left_s % 3600 // 60
    return (
        f"Today's {game_title(status.game)} daily ({status.date}, UTC) is your one ranked "
        f"attempt at this deal.\nOnce it is dealt, its clock runs until you finish; the "
        f"day ends in {hours} h {minutes:02} min.\nDeal it now? [y/N] "
    )


def run(args: argparse.Namespace) -> int:
    ctx = build_context(args)
    session = GameSession(kind="daily", game=args.game)

    async def played(play: Play) -> None:
        play.session.say("You have played today's deal already; here is where you stand.")
        await play.show_leaderboard(None)
        session.phase = "done"
        play.over.set()

    async def setup(play: Play, conn: Connection) -> None:
        try:
            reply = await conn.request({"t": "daily", "game": args.game})
        except ServerError as exc:
            if exc.code != "already_played":
                raise
            await played(play)
            return
        status = parse(reply)
        if not isinstance(status, DailyStatus):  # a server from before confirmations
            play.take(reply, reply=True)
            return
        if status.status == "finished":
            await played(play)
            return
        if status.status == "not_started" and not args.confirm:
            if ctx.plain:
                PlainFront().message(reply)
                raise SetupEnded(
                    "solitaire: today's attempt is not dealt yet; run again with --confirm "
                    "to deal your one ranked attempt",
                    1,
                )
            if not await ask_yes_no(question(status)):
                raise SetupEnded("Not dealt. Your attempt waits for you until the day ends.", 0)
        try:
            reply = await conn.request({"t": "daily", "game": args.game, "confirm": True})
        except ServerError as exc:
            if exc.code != "already_played":
                raise
            await played(play)
            return
        play.take(reply, reply=True)

    return asyncio.run(play_game(ctx, session, setup))
