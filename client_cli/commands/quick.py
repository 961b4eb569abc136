"""`solitaire quick GAME`: wait in the queue for a quick race, then play it."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import time
from typing import Any

import protocol as p
from client_cli.boards import game_title
from client_cli.commands import add_command, game_arg
from client_cli.commands.context import build_context
from client_cli.commands.race import PLAY_HELP, join_race
from client_cli.connection import ConnectionLost
from client_cli.context import EXCHANGE_FAILURES, Context
from client_cli.messages import ProtocolError, ServerError, as_plain

LEAVE_TIMEOUT_S = 3.0  # waiting for `unqueued` after Ctrl-C, at most


def register(subparsers: Any) -> None:
    quick = add_command(
        subparsers,
        "quick",
        help="race players of about your rating, whoever is waiting",
        description="Wait in the server's queue for a quick race of GAME against 1 to 3 "
        "players whose ratings are close to yours (a timer shows how long you have waited; "
        "Ctrl-C leaves the queue). The race starts by itself a few seconds after it forms, "
        "and is rated. Alone for long, you are offered an unrated race against a bot.\n\n"
        + PLAY_HELP,
        epilog="example: solitaire quick quatorze",
    )
    quick.add_argument("game", type=game_arg, metavar="GAME",
                       help="doublets, quatorze, bakers_game or hopscotch")  # fmt: skip
    quick.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    ctx = build_context(args)
    try:
        code = asyncio.run(wait_for_race(ctx, args.game))
    except KeyboardInterrupt:
        _say(ctx, "left", "Left the queue.")
        return 130
    if code is None:
        return 1
    return join_race(ctx, code, quick=True)


async def wait_for_race(ctx: Context, game: str) -> str | None:
    """Queue for `game` and wait, showing the time waited, until a race is formed: its
    code (None after saying why there is none). Cancelled (Ctrl-C), it leaves the queue."""

    def on_status(text: str) -> None:
        _say(ctx, "status", text)

    conn = ctx.connection(on_status)
    try:
        welcome = await conn.open()
        ctx.opened()
        queued = await conn.request(p.Queue(game=game))
        assert isinstance(queued, p.Queued)
        if ctx.plain:
            _plain(queued)
        began = time.monotonic()
        title = game_title(game)
        while True:
            if not ctx.plain:
                waited = int(time.monotonic() - began)
                # One short line, rewritten in place: it must not wrap in 80 columns.
                print(
                    f"\rQuick {title} race for {welcome.name[:24]} ({queued.rating}): "
                    f"waiting {waited // 60}:{waited % 60:02d}, Ctrl-C leaves",
                    end="",
                    flush=True,
                )
            try:
                event = await asyncio.wait_for(conn.events.get(), timeout=1.0)
            except TimeoutError:
                continue
            if isinstance(event, p.Queued) and event.bot:
                if ctx.plain:
                    _plain(event)
                else:
                    print(f"\nNobody near your rating yet: a {event.bot} bot races you (unrated).")
            elif isinstance(event, p.Matched):
                if ctx.plain:
                    _plain(event)
                else:
                    print(f"\nMatched: race {event.race} starts in a few seconds.")
                return event.race
    except asyncio.CancelledError:
        # Ctrl-C: out of the queue before going (a matcher round may still seat us).
        with contextlib.suppress(TimeoutError, ConnectionLost, ServerError, ProtocolError):
            await asyncio.wait_for(conn.request(p.Unqueue(), resend=False), LEAVE_TIMEOUT_S)
        if not ctx.plain:
            print()
        raise
    except EXCHANGE_FAILURES as exc:
        print(f"solitaire: {ctx.failure(exc)}", file=sys.stderr)
    finally:
        await conn.close()
    return None


def _plain(message: p.Message) -> None:
    out = {k: v for k, v in as_plain(message).items() if k not in ("id", "re")}
    print(json.dumps(out, ensure_ascii=False), flush=True)


def _say(ctx: Context, kind: str, text: str) -> None:
    if ctx.plain:
        print(json.dumps({"t": kind, "msg": text}), flush=True)
    else:
        print(text, file=sys.stderr)
