"""`solitaire race new GAME` and `solitaire race join CODE`."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from client_cli.commands import add_command, game_arg
from client_cli.commands.context import build_context
from client_cli.connection import Connection
from client_cli.messages import ServerError
from client_cli.play import Play
from client_cli.runner import play_game
from client_cli.session import GameSession, Seat

RACE_CODE_ALPHABET = set("23456789ABCDEFGHJKLMNPQRSTUVWXYZ")

PLAY_HELP = """\
Playing: type a move (t3-f, w-r2, c3-c8, deal) and press Enter. Tab lists the
legal moves; a pile alone (t3) plays the only move starting there; d deals.
resign gives up the game, quit leaves (the game stays open to come back to).
"""


def register(subparsers: Any) -> None:
    race = add_command(
        subparsers,
        "race",
        help="race friends on the same deal",
        description="Race friends on the same deal: one player creates a race and shares its "
        "code, the others join with it, the host starts it.",
    )
    actions = race.add_subparsers(dest="race_action", metavar="ACTION", required=True)
    new = add_command(
        actions,
        "new",
        help="create a race and wait for players in its lobby",
        description="Create a race of GAME, print its code to share, and wait in the lobby; "
        "press Enter to start once everyone is in.\n\n" + PLAY_HELP,
        epilog="example: solitaire race new quatorze --time-limit 600",
    )
    new.add_argument("game", type=game_arg, metavar="GAME", help="doublets, quatorze, "
                     "bakers_game or hopscotch")  # fmt: skip
    new.add_argument("--seed", type=int, help="deal number to play (default: a random deal)")
    new.add_argument("--max-players", type=int, metavar="N", help="2 to 16 (default 8)")
    new.add_argument("--time-limit", type=int, metavar="SECONDS",
                     help="30 to 7200 seconds (default: no limit)")  # fmt: skip
    new.add_argument("--bots", type=int, default=0, metavar="N",
                     help="seat N bots played by the server, 0 to 15 (they count in "
                     "--max-players; their names end with '(bot)')")  # fmt: skip
    new.add_argument("--bot-strength", choices=("easy", "medium", "hard"), default="medium",
                     help="how well the bots play (default medium)")  # fmt: skip
    new.set_defaults(func=run_new)
    join = add_command(
        actions,
        "join",
        help="join a race by its code (or come back to one you left)",
        description="Join the race with code CODE and wait for its host to start it; if you "
        "are already playing in it, carry on where you left off.\n\n" + PLAY_HELP,
        epilog="example: solitaire race join 7K3M2P",
    )
    join.add_argument("code", metavar="CODE", help="the 6-character race code")
    join.set_defaults(func=run_join)


def run_new(args: argparse.Namespace) -> int:
    ctx = build_context(args)
    session = GameSession(kind="race", game=args.game)
    create: dict[str, Any] = {"t": "create", "game": args.game}
    if args.seed is not None:
        create["seed"] = args.seed
    if args.max_players is not None:
        create["max_players"] = args.max_players
    if args.time_limit is not None:
        create["time_limit_s"] = args.time_limit
    if args.bots:
        create["bots"] = args.bots
        create["bot_strength"] = args.bot_strength

    async def setup(play: Play, conn: Connection) -> None:
        # Never resent: a second `create` would make a second race.
        reply = await conn.request(create, resend=False)
        session.seats[session.me] = Seat(session.me, ctx.name)
        session.host = session.me
        play.take(reply, reply=True)
        code = session.race
        if not ctx.plain:
            print(f"Race code: {code}  (others join with: solitaire race join {code})")

    return asyncio.run(play_game(ctx, session, setup))


def run_join(args: argparse.Namespace) -> int:
    code = args.code.strip().upper()
    if len(code) != 6 or not set(code) <= RACE_CODE_ALPHABET:
        print(f"solitaire: {args.code!r} is not a race code (6 characters like 7K3M2P)",
              file=sys.stderr)  # fmt: skip
        return 2
    ctx = build_context(args)
    session = GameSession(kind="race", game="", race=code)

    async def setup(play: Play, conn: Connection) -> None:
        assert conn.welcome is not None
        for state in conn.welcome.active:
            if state.get("kind") == "race" and state.get("race") == code:
                session.game = str(state.get("game"))
                play.take(state, reply=True)
                play.session.say("Welcome back: carrying on where you left off.")
                # The welcome has one's own game; joining again brings the race's start
                # (its time limit) and where every seat stands, as events after the lobby.
                try:
                    play.take(await conn.request({"t": "join", "race": code}), reply=True)
                except ServerError as exc:
                    play.tell(f"Could not catch up with race {code}: {exc.msg}", error=True)
                return
        reply = await conn.request({"t": "join", "race": code})
        session.game = str(reply.get("game", ""))
        play.take(reply, reply=True)

    return asyncio.run(play_game(ctx, session, setup))
