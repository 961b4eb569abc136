"""`solitaire practice GAME [--seed N]`: an unranked game with undo and hints."""

from __future__ import annotations

import argparse
import asyncio
import sys

import protocol as p
from client_cli.commands import Subcommands, add_command, game_arg
from client_cli.commands.context import build_context
from client_cli.commands.race import PLAY_HELP
from client_cli.commands.solve import _seed
from client_cli.connection import Connection
from client_cli.game_kind import GameKind
from client_cli.game_session import GameSession
from client_cli.play import Play
from client_cli.practice_deals import random_seed, told, winnable_deal
from client_cli.runner import play_game

PRACTICE_HELP = """\
Practice only: undo (or u) takes back your last move, hint (or i) asks the server's
solver for a good next move. Nothing here is ranked.
"""


def register(subparsers: Subcommands) -> None:
    parser = add_command(
        subparsers,
        "practice",
        help="play an unranked game with undo and hints",
        description="Play a deal of GAME on your own, unranked: take back moves and ask for "
        "hints as often as you like. A random deal that the solver has won (searched "
        "here, a second or so at most per deal tried), unless --any-deal, or --seed names "
        "one (the deal's number is shown, so you can play it again).\n\n"
        + PLAY_HELP
        + "\n"
        + PRACTICE_HELP,
        epilog="example: solitaire practice bakers_game --seed 2",
    )
    parser.add_argument("game", type=game_arg, metavar="GAME", help="doublets, quatorze, "
                        "bakers_game or hopscotch")  # fmt: skip
    parser.add_argument("--seed", type=_seed, default=None, metavar="N",
                        help="deal number, 1 to 2147483647 (default: a random winnable "
                        "deal)")  # fmt: skip
    parser.add_argument("--any-deal", action="store_true",
                        help="a random deal, winnable or not (no search first)")  # fmt: skip
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    ctx = build_context(args)
    session = GameSession(kind=GameKind.PRACTICE, game=args.game)
    seed, about = args.seed, ""
    if seed is None and not args.any_deal:
        if not ctx.plain:
            print("Looking for a deal the solver can win…", file=sys.stderr)
        picked = winnable_deal(args.game, random_seed())
        seed, about = picked.seed, told(picked)

    async def setup(play: Play, conn: Connection) -> None:
        reply = await conn.request(p.Practice(game=args.game, seed=seed))
        play.take(reply, reply=True)
        if about:
            play.tell(f"{about} Undo (u) and hint (i) work here.")
        else:
            play.session.say("Practice: undo (u) and hint (i) work here. help lists the rest.")

    return asyncio.run(play_game(ctx, session, setup))
