"""Running a game from start to end: connect, set up (create, join, daily), play in
the chosen front end, and leave a summary on the terminal afterwards."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from client_cli.connection import ConnectError, Connection, ConnectionLost
from client_cli.context import Context
from client_cli.failures import fail, in_words
from client_cli.game_session import GameSession
from client_cli.messages import ProtocolError, ServerError
from client_cli.plain_front import PlainFront, plain_loop
from client_cli.play import Play
from client_cli.replay_refs import web_base
from client_cli.summary import daily_share, summary

if TYPE_CHECKING:
    from client_cli.screen import PlayScreen

Setup = Callable[[Play, Connection], Awaitable[None]]


class SetupEnded(Exception):
    """The set-up ends the command before any game is played (e.g. a daily not confirmed):
    `message` for the terminal, `status` the exit status."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


async def play_game(ctx: Context, session: GameSession, setup: Setup) -> int:
    if not ctx.plain and not (sys.stdin.isatty() and sys.stdout.isatty()):
        return fail("the play screen needs a terminal; scripts and bots use --plain")
    play: Play | None = None

    def on_status(text: str) -> None:
        if play is not None:
            play.status(text)
        elif ctx.plain:
            PlainFront().message({"t": "status", "msg": text})

    conn = ctx.connection(on_status)
    try:
        welcome = await conn.open()
    except ConnectError as exc:
        return fail(ctx.unreachable(exc))
    ctx.opened()
    session.me, session.my_name = welcome.player, welcome.name
    # Pages and race links: the server's public address if it says one, else ours for it.
    session.web = welcome.url or web_base(ctx.server)
    play = Play(conn, session, PlainFront())
    screen: PlayScreen | None = None
    if not ctx.plain:
        from client_cli.screen import PlayScreen  # only the screen needs prompt_toolkit

        screen = PlayScreen(play, ctx.theme)
        play.listener = screen
    play.start_tasks()
    try:
        try:
            await setup(play, conn)
        except ServerError as exc:
            return fail(in_words(exc))
        except SetupEnded as ended:
            print(ended.message, file=sys.stderr if ended.status else sys.stdout)
            return ended.status
        except ConnectionLost as exc:
            return fail(f"the connection dropped before the server answered: {exc}")
        except ProtocolError as exc:
            return fail(f"the server's answer cannot be read: {exc}")
        if screen is None:
            await plain_loop(play)
            share = daily_share(session, ctx.theme.unicode)
            if share is not None:
                PlainFront().message({"t": "share", "text": share})
        else:
            await _screen_loop(play, screen)
            print(summary(session, ctx.theme))
    finally:
        await play.stop()
        await conn.close()
    return 0


async def _screen_loop(play: Play, screen: PlayScreen) -> None:
    app = asyncio.create_task(screen.run())
    leave = asyncio.create_task(play.leave.wait())
    await asyncio.wait({app, leave}, return_when=asyncio.FIRST_COMPLETED)
    screen.exit()
    with contextlib.suppress(Exception):
        await app
    leave.cancel()
