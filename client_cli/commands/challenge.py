"""`solitaire challenge GAME` and `solitaire challenges`: asynchronous races.

A challenge is a race whose seats play at different times, within a window: whoever joins
is dealt at once and races the earlier runs as ghosts; the standings come once every seat
has played, or when the window ends.
"""

from __future__ import annotations

import argparse
import asyncio
import time

import protocol as p
from client_cli.boards import game_title
from client_cli.commands import Subcommands, add_command, game_arg
from client_cli.commands.context import build_context
from client_cli.commands.oneshot import ask, print_json
from client_cli.commands.race import (
    DEFAULT_MAX_PLAYERS,
    MAX_PLAYERS,
    PLAY_HELP,
    _max_players,
    _time_limit,
    _whole_number,
    catch_up_challenge,
)
from client_cli.commands.solve import _seed
from client_cli.connection import Connection
from client_cli.game_kind import GameKind
from client_cli.game_session import GameSession, Seat, clock
from client_cli.play import Play
from client_cli.replay_refs import web_base
from client_cli.runner import play_game

WINDOW_MIN_S, WINDOW_MAX_S = p.WINDOW_MIN_S, p.WINDOW_MAX_S


def register(subparsers: Subcommands) -> None:
    new = add_command(
        subparsers,
        "challenge",
        help="challenge friends to a deal they play when they like (an asynchronous race)",
        description="Create an asynchronous race of GAME: print its code and the link to share, "
        "then play your run at once (--later: play it afterwards with solitaire race join "
        "CODE). Everyone who joins within the window plays the same deal on their own "
        "clock, racing the earlier runs as ghosts; the standings come when every seat has "
        "played or the window ends.\n\n" + PLAY_HELP,
        epilog="example: solitaire challenge quatorze --players 3 --window 3d",
    )
    new.add_argument("game", type=game_arg, metavar="GAME", help="doublets, quatorze, "
                     "bakers_game or hopscotch")  # fmt: skip
    new.add_argument("--players", "--max-players", dest="max_players", type=_max_players,
                     metavar="N", help=f"seats, 2 to {MAX_PLAYERS}; the race closes once all "
                     f"have played (default {DEFAULT_MAX_PLAYERS})")  # fmt: skip
    new.add_argument("--window", type=_window, metavar="TIME",
                     help="how long the race stays open: seconds, or with a unit (90m, 12h, 3d); "
                     "10 minutes to 7 days (default 1 day)")  # fmt: skip
    new.add_argument("--time-limit", type=_time_limit, metavar="SECONDS",
                     help="each seat's own time limit (default: none)")  # fmt: skip
    new.add_argument("--seed", type=_seed, metavar="N",
                     help="deal number, 1 to 2147483647 (default: a random deal)")  # fmt: skip
    new.add_argument("--later", action="store_true",
                     help="only create it and print its code; play later with solitaire race "
                     "join CODE")  # fmt: skip
    new.set_defaults(func=run_challenge)
    listing = add_command(
        subparsers,
        "challenges",
        help="list your asynchronous races, open and lately closed, with their standings",
        description="List your asynchronous races: those still open (until when, how many "
        "have played, the scores of those who have finished, once you have played yourself) "
        "and those closed lately, with their standings.",
        epilog="example: solitaire challenges",
    )
    listing.set_defaults(func=run_list)


UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def _window(text: str) -> int:
    raw = text.strip().lower()
    unit = UNITS.get(raw[-1:], 0)
    seconds = _whole_number(raw[:-1] if unit else raw, "seconds") * (unit or 1)
    if not WINDOW_MIN_S <= seconds <= WINDOW_MAX_S:
        raise argparse.ArgumentTypeError(
            f"a challenge stays open 10 minutes to 7 days ({WINDOW_MIN_S} to {WINDOW_MAX_S} "
            f"seconds), not {seconds} seconds"
        )
    return seconds


def share_lines(code: str, server: str, window_s: int) -> list[str]:
    return [
        f"Challenge code: {code}  (open for {_span(window_s)})",
        f"Friends play it with: solitaire race join {code}",
        f"or in a browser: {web_base(server)}/r/{code}",
    ]


def run_challenge(args: argparse.Namespace) -> int:
    ctx = build_context(args)
    window = args.window or 24 * 3600
    create = p.Create(
        game=args.game,
        seed=args.seed,
        max_players=args.max_players,
        time_limit_s=args.time_limit,
        async_=True,
        window_s=window,
    )
    if args.later:
        reply, _me = asyncio.run(ask(ctx, create, p.Created))
        if reply is None:
            return 1
        if ctx.plain:
            print_json(reply)
        else:
            print("\n".join(share_lines(reply.race, ctx.server, window)))
        return 0
    session = GameSession(kind=GameKind.RACE, game=args.game)
    session.async_race = True

    async def setup(play: Play, conn: Connection) -> None:
        # Never resent: a second `create` would make a second race.
        reply = await conn.request(create, resend=False)
        session.seats[session.me] = Seat(session.me, ctx.name, moves=0)
        play.take(reply, reply=True)
        code = session.race
        assert code is not None
        if not ctx.plain:
            print("\n".join(share_lines(code, ctx.server, window)))
        play.take(await conn.request(p.Join(race=code)), reply=True)
        await catch_up_challenge(play, conn)
        play.session.say(f"Challenge {code}: others play it with solitaire race join {code}")

    status = asyncio.run(play_game(ctx, session, setup))
    if session.race and not ctx.plain:  # said again once the screen is gone, to share
        print("\n".join(share_lines(session.race, ctx.server, window)))
    return status


def run_list(args: argparse.Namespace) -> int:
    ctx = build_context(args)
    reply, me = asyncio.run(ask(ctx, p.Challenges(), p.ChallengesReply))
    if reply is None:
        return 1
    if ctx.plain:
        print_json(reply)
    else:
        print(format_challenges(reply, me, time.time()))
    return 0


def format_challenges(reply: p.ChallengesReply, me: str, now_s: float) -> str:
    if not reply.races:
        return "No challenges yet: make one with solitaire challenge GAME."
    lines: list[str] = []
    for c in reply.races:
        when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(c.closes_at_ms / 1000))
        if c.open:
            left = _span(max(0, int(c.closes_at_ms / 1000 - now_s)))
            status = f"open until {when} ({left} left)"
        else:
            status = f"closed {when}"
        lines.append(f"{c.race}  {game_title(c.game)}  {c.seats}/{c.max_players} seats  {status}")
        if c.open and not c.played:
            lines.append(f"    you have not played it yet: solitaire race join {c.race}")
        for s in c.standings:
            mark = ">" if s.player == me else " "
            outcome = "won" if s.won else ("resigned" if s.resigned else "")
            lines.append(
                f"  {mark}{s.rank:>2}. {s.name[:16]:<16} {s.score:>4} pts {s.moves:>4} moves "
                f"{clock(s.time_ms):>6} {outcome}".rstrip()
            )
        if c.open and c.played and len(c.standings) < c.seats:
            lines.append(f"    {c.seats - len(c.standings)} still playing")
    return "\n".join(lines)


def _span(seconds: int) -> str:
    if seconds >= 86400:
        return f"{seconds / 86400:.1f}".rstrip("0").rstrip(".") + " days"
    if seconds >= 3600:
        return f"{seconds / 3600:.1f}".rstrip("0").rstrip(".") + " hours"
    return f"{max(1, seconds // 60)} minutes"
