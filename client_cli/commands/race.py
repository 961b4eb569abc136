"""`solitaire race new GAME` and `solitaire race join CODE`."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys

import protocol as p
from client_cli.commands import Subcommands, add_command, game_arg
from client_cli.commands.context import build_context
from client_cli.commands.solve import _seed
from client_cli.connection import Connection
from client_cli.context import Context
from client_cli.game_kind import GameKind
from client_cli.game_session import GameSession, Seat
from client_cli.links import BadLink, is_link, race_link
from client_cli.links import parse as parse_link
from client_cli.messages import ServerError, expect
from client_cli.plain_front import PlainFront
from client_cli.play import Play
from client_cli.runner import play_game

log = logging.getLogger(__name__)

RACE_CODE_ALPHABET = set(p.RACE_ALPHABET)
# This server's codes have 12 characters; older servers' had 6, and the protocol allows 16.
RACE_CODE_LENGTHS = range(6, 17)
# The protocol's limits (a server's defaults), checked here first so that a mistake is told
# in words rather than as the server's validation text.
LIMITS = p.DEFAULT_LIMITS
MIN_PLAYERS, MAX_PLAYERS = LIMITS.min_players, LIMITS.max_players
DEFAULT_MAX_PLAYERS = LIMITS.default_max_players
MIN_TIME_LIMIT_S, MAX_TIME_LIMIT_S = LIMITS.min_time_limit_s, LIMITS.max_time_limit_s

PLAY_HELP = """\
Playing: type a move and press Enter: Quatorze c3-c8; Baker's Game t3-r0, t2-t6;
Doublets deal, w-f, r3-f; Hopscotch deal, w-f2, r1-f0. Tab lists the legal moves;
a pile alone (t3) plays the only move starting there; d deals. resign gives up the
game (the screen asks first), quit leaves (the game stays open to come back to).
"""


def register(subparsers: Subcommands) -> None:
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
    new.add_argument("--seed", type=_seed, metavar="N",
                     help="deal number, 1 to 2147483647 (default: a random deal)")  # fmt: skip
    new.add_argument("--max-players", type=_max_players, metavar="N",
                     help=f"{MIN_PLAYERS} to {MAX_PLAYERS} "
                     f"(default {DEFAULT_MAX_PLAYERS})")  # fmt: skip
    new.add_argument("--time-limit", type=_time_limit, metavar="SECONDS",
                     help=f"{MIN_TIME_LIMIT_S} to {MAX_TIME_LIMIT_S} seconds "
                     "(default: no limit)")  # fmt: skip
    new.add_argument("--bots", type=_bots, default=0, metavar="N",
                     help=f"seat N bots played by the server, 0 to {MAX_PLAYERS - 1} (they count "
                     "in --max-players; their names end with '(bot)')")  # fmt: skip
    new.add_argument("--bot-strength", choices=("easy", "medium", "hard"), default="medium",
                     help="how well the bots play (default medium)")  # fmt: skip
    new.add_argument("--no-spectators", dest="spectators", action="store_false",
                     help="nobody may watch the race (by default anyone with its code may, "
                     "with solitaire watch CODE or on the server's /race/CODE page)")  # fmt: skip
    new.set_defaults(func=run_new)
    join = add_command(
        actions,
        "join",
        help="join a race by its code (or come back to one you left)",
        description="Join the race the host shared, by its link (which names the server too) "
        "or its code (on the server you use), and wait for its host to start it; if you are "
        "already playing in it, carry on where you left off.\n\n" + PLAY_HELP,
        epilog="examples: solitaire race join https://play.example.org/r/7K3M2PQX9ABC\n"
        "          solitaire race join 7K3M2PQX9ABC",
    )
    join.add_argument("code", metavar="LINK|CODE",
                      help="the race's link (http(s)://HOST[:PORT]/r/CODE: its server is "
                      "used, and saved once it answers) or its code (12 characters)")  # fmt: skip
    join.set_defaults(func=run_join)


def _whole_number(text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of {what}") from None


def _time_limit(text: str) -> int:
    seconds = _whole_number(text, "seconds")
    if not MIN_TIME_LIMIT_S <= seconds <= MAX_TIME_LIMIT_S:
        raise argparse.ArgumentTypeError(
            f"a time limit is {MIN_TIME_LIMIT_S} to {MAX_TIME_LIMIT_S} seconds "
            f"({MAX_TIME_LIMIT_S / 3600:g} hours); "
            f"{seconds} is too {'short' if seconds < MIN_TIME_LIMIT_S else 'long'}"
        )
    return seconds


def _max_players(text: str) -> int:
    count = _whole_number(text, "players")
    if not MIN_PLAYERS <= count <= MAX_PLAYERS:
        raise argparse.ArgumentTypeError(
            f"a race seats {MIN_PLAYERS} to {MAX_PLAYERS} players, not {count}"
        )
    return count


def _bots(text: str) -> int:
    count = _whole_number(text, "bots")
    if not 0 <= count <= MAX_PLAYERS - 1:
        raise argparse.ArgumentTypeError(f"a race has 0 to {MAX_PLAYERS - 1} bots, not {count}")
    return count


def run_new(args: argparse.Namespace) -> int:
    seats = args.max_players or DEFAULT_MAX_PLAYERS
    if args.bots + 1 > seats:
        print(f"solitaire: {args.bots} bots and you need {args.bots + 1} seats, and the race has "
              f"{seats}; raise --max-players or seat fewer bots", file=sys.stderr)  # fmt: skip
        return 2
    ctx = build_context(args)
    session = GameSession(kind=GameKind.RACE, game=args.game)
    create = p.Create(
        game=args.game,
        seed=args.seed,
        max_players=args.max_players,
        time_limit_s=args.time_limit,
        bots=args.bots,
        bot_strength=args.bot_strength if args.bots else "medium",  # the default: not sent
        spectators=args.spectators,
    )

    async def setup(play: Play, conn: Connection) -> None:
        # Never resent: a second `create` would make a second race.
        created = expect(await conn.request(create, resend=False), p.Created)
        session.seats[session.me] = Seat(session.me, ctx.name, moves=0)
        session.host = session.me
        play.take(created, reply=True)
        code = created.race
        link = race_link(session.web, code)
        if ctx.plain:
            # One line that a script can hand to friends as it is.
            PlainFront().message({"t": "link", "race": code, "url": link})
        else:
            print(f"Race code: {code}  (others join with: solitaire race join {link})")

    return asyncio.run(play_game(ctx, session, setup))


def race_code(text: str) -> str | None:
    """The race code a player typed, upper-cased; None (said on stderr) if it is none."""
    code = text.strip().upper()
    if len(code) not in RACE_CODE_LENGTHS or not set(code) <= RACE_CODE_ALPHABET:
        print(f"solitaire: {text!r} is not a race code (12 characters like 7K3M2PQX9ABC)",
              file=sys.stderr)  # fmt: skip
        return None
    return code


def run_join(args: argparse.Namespace) -> int:
    text = args.code
    if is_link(text):
        try:
            link = parse_link(text)
        except BadLink as exc:
            print(f"solitaire: {exc}", file=sys.stderr)
            return 2
        # The link's server is the race's: it takes the place of --server.
        args.server, text = link.server, link.code
    code = race_code(text)
    if code is None:
        return 2
    return join_race(build_context(args), code)


def join_race(ctx: Context, code: str, quick: bool = False) -> int:
    """Play race `code` as a seat: join it (or come back to it) and play it to its end
    (`quick`: a quick race, which starts by itself)."""
    session = GameSession(kind=GameKind.RACE, game="", race=code, quick=quick)

    async def setup(play: Play, conn: Connection) -> None:
        assert conn.welcome is not None
        for state in conn.welcome.active:
            if state.kind == GameKind.RACE and state.race == code:
                session.game = state.game
                play.take(state, reply=True)
                play.session.say("Welcome back: carrying on where you left off.")
                # The welcome carries one's own game only: joining again brings the lobby
                # (every seat's name), then the race's start (its time limit) and a
                # `progress` per seat, as events after the lobby.
                try:
                    play.take(await conn.request(p.Join(race=code)), reply=True)
                except ServerError as exc:  # the game itself is back; the others are not
                    log.warning("race %s: could not join again: %s", code, exc)
                    play.tell(f"Could not catch up with race {code}: {exc.msg}", error=True)
                    return
                await catch_up_challenge(play, conn)
                return
        reply = await conn.request(p.Join(race=code))
        session.game = reply.game if isinstance(reply, p.Lobby) else ""
        play.take(reply, reply=True)
        await catch_up_challenge(play, conn)

    return asyncio.run(play_game(ctx, session, setup))


async def catch_up_challenge(play: Play, conn: Connection) -> None:
    """If the race is asynchronous (a challenge), learn until when it stays open: what the
    screen says once one's own run is over. A server without challenges refuses: ignored."""
    try:
        reply = await conn.request(p.Challenges())
    except ServerError as exc:
        log.info("challenges not listed: %s", exc)
        return
    play.take(reply, reply=True)
