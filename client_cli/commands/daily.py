"""`solitaire daily GAME`: today's ranked deal."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

import protocol as p
from client_cli.commands import add_command, game_arg
from client_cli.commands.context import build_context
from client_cli.commands.oneshot import ask
from client_cli.commands.race import PLAY_HELP
from client_cli.connection import Connection
from client_cli.messages import ServerError
from client_cli.panels import leaderboard_lines, plain_text
from client_cli.play import AROUND_ME_LIMIT, Play
from client_cli.runner import SHARE_INTRO, Context, fail, play_game
from client_cli.session import GameSession
from client_cli.share import share_text
from client_cli.theme import Theme

PLAYED = "You have played today's deal already; here is where you stand."


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
    if not ctx.plain and not (sys.stdin.isatty() and sys.stdout.isatty()):
        return asyncio.run(where_i_stand(ctx, args.game))
    session = GameSession(kind="daily", game=args.game)

    async def setup(play: Play, conn: Connection) -> None:
        try:
            reply = await conn.request(p.Daily(game=args.game))
        except ServerError as exc:
            if exc.code != p.ALREADY_PLAYED:
                raise
            play.session.say(PLAYED)
            await play.show_leaderboard(None)
            session.phase = "done"
            play.over.set()
            return
        play.take(reply, reply=True)

    return asyncio.run(play_game(ctx, session, setup))


async def where_i_stand(ctx: Context, game: str) -> int:
    """Without a terminal there is no playing, but a played day's standing can be shown.

    Asked through the leaderboard (around the player), never with `daily`, which would
    start the attempt's clock."""
    request = p.Leaderboard(game=game, around_me=True, limit=AROUND_ME_LIMIT)
    board, me = await ask(ctx, request, p.LeaderboardReply)
    if board is None:
        return 1
    if board.me is None:
        return fail(
            "today's deal is not played yet, and playing it needs a terminal "
            "(scripts and bots use --plain)"
        )
    plain = Theme(unicode=ctx.theme.unicode, colour=False)
    print(PLAYED)
    print(plain_text(leaderboard_lines(board, me, plain)))
    # The moves' scores are not known here: the share text comes without its picture.
    share = share_text(board.game, board.date, board.me, board.total, {}, ctx.theme.unicode)
    print(f"\n{SHARE_INTRO}\n{share}")
    return 0
