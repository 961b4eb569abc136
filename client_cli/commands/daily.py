"""`solitaire daily GAME`: today's ranked deal."""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import sys

import protocol as p
from client_cli.boards import game_title
from client_cli.commands import Subcommands, add_command, game_arg
from client_cli.commands.context import build_context
from client_cli.commands.oneshot import ask
from client_cli.commands.race import PLAY_HELP
from client_cli.connection import Connection
from client_cli.context import Context
from client_cli.failures import fail
from client_cli.game_kind import GameKind
from client_cli.game_session import GameSession
from client_cli.messages import ServerError, as_plain
from client_cli.panels import leaderboard_lines, plain_text
from client_cli.plain_front import PlainFront
from client_cli.play import AROUND_ME_LIMIT, Play
from client_cli.runner import SetupEnded, play_game
from client_cli.share import share_text
from client_cli.summary import SHARE_INTRO
from client_cli.terminal_input import ask_yes_no
from client_cli.theme import Theme

PLAYED = "You have played today's deal already; here is where you stand."


def register(subparsers: Subcommands) -> None:
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


def question(status: p.DailyStatus) -> str:
    left_s = max(0, status.ends_at_ms // 1000 - int(dt.datetime.now(dt.UTC).timestamp()))
    hours, minutes = left_s // 3600, left_s % 3600 // 60
    return (
        # Each line fits 80 columns, Baker's Game's too.
        f"Today's {game_title(status.game)} daily ({status.date}, UTC) is your one ranked "
        f"attempt.\nOnce it is dealt, its clock runs until you finish; the "
        f"day ends in {hours} h {minutes:02} min.\nDeal it now? [y/N] "
    )


def run(args: argparse.Namespace) -> int:
    ctx = build_context(args)
    if not ctx.plain and not (sys.stdin.isatty() and sys.stdout.isatty()):
        return asyncio.run(where_i_stand(ctx, args.game))
    session = GameSession(kind=GameKind.DAILY, game=args.game)

    async def played(play: Play) -> None:
        play.session.say(PLAYED)
        await play.show_leaderboard(None)
        session.ranked()
        play.over.set()

    async def setup(play: Play, conn: Connection) -> None:
        try:
            reply = await conn.request(p.Daily(game=args.game))
        except ServerError as exc:
            if exc.code != p.ALREADY_PLAYED:
                raise
            await played(play)
            return
        if not isinstance(reply, p.DailyStatus):  # a server from before confirmations
            play.take(reply, reply=True)
            return
        if reply.status == "finished":
            await played(play)
            return
        if reply.status == "not_started" and not args.confirm:
            if ctx.plain:
                PlainFront().message(as_plain(reply))
                raise SetupEnded(
                    "solitaire: today's attempt is not dealt yet; run again with --confirm "
                    "to deal your one ranked attempt",
                    1,
                )
            if not await ask_yes_no(question(reply)):
                raise SetupEnded("Not dealt. Your attempt waits for you until the day ends.", 0)
        try:
            reply = await conn.request(p.Daily(game=args.game, confirm=True))
        except ServerError as exc:
            if exc.code != p.ALREADY_PLAYED:
                raise
            await played(play)
            return
        play.take(reply, reply=True)

    return asyncio.run(play_game(ctx, session, setup))


async def where_i_stand(ctx: Context, game: str) -> int:
    """Without a terminal there is no playing, but a played day's standing can be shown.

    Asked through the leaderboard (around the player), never with `daily`, which a server
    from before confirmations answers by dealing the attempt and starting its clock."""
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
