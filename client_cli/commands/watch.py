"""`solitaire watch CODE`: follow a race as a spectator, every seat's board live."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import sys
import threading
from typing import TYPE_CHECKING

import protocol as p
from client_cli.commands import Subcommands, add_command
from client_cli.commands.context import build_context
from client_cli.commands.race import race_code
from client_cli.connection import ConnectError, Connection, ConnectionLost
from client_cli.context import Context
from client_cli.failures import fail, in_words
from client_cli.messages import Event, ProtocolError, ServerError, Welcomed, as_plain
from client_cli.plain_front import PlainFront
from client_cli.terminal_input import settle
from client_cli.watching import WatchPhase, WatchSession

if TYPE_CHECKING:
    from client_cli.watch_screen import WatchScreen

log = logging.getLogger(__name__)

EXPLAIN = {
    p.NO_SPECTATORS: "",
    p.NOT_FOUND: " (check the code: 12 characters, like 7K3M2PQX9ABC)",
}


def register(subparsers: Subcommands) -> None:
    watch = add_command(
        subparsers,
        "watch",
        help="watch a race as a spectator: every player's board, live",
        description="Watch the race with code CODE: every player's board as that player sees "
        "it (face-down cards stay face down), less the cards a player still playing has not "
        "seen yet, their scores, moves and clocks, live, then the standings. Its host decides "
        "whether a race may be watched (solitaire race new --no-spectators says no); its own "
        "players may watch it too.\n\n"
        "Keys: Tab or the arrow keys show the next or previous player's board, 1 to 9 a player "
        "by their place, s the standings once the race is over, q leaves.\n\n"
        "With --plain: one JSON object per line on stdout for every message (`seat` carries a "
        "player's board), until the race's result; a line `quit` on stdin leaves before.",
        epilog="example: solitaire watch 7K3M2PQX9ABC",
    )
    watch.add_argument("code", metavar="CODE",
                       help="the race's code (12 characters; any case)")  # fmt: skip
    watch.set_defaults(func=run_watch)


def run_watch(args: argparse.Namespace) -> int:
    code = race_code(args.code)
    if code is None:
        return 2
    ctx = build_context(args)
    if not ctx.plain and not (sys.stdin.isatty() and sys.stdout.isatty()):
        return fail("the watch screen needs a terminal; scripts use --plain")
    return asyncio.run(Watcher(ctx, WatchSession(race=code)).run())


class Watcher:
    """One spectator's session: connect, `watch`, then follow the race until it ends or
    the person leaves. After a reconnect it asks to watch again (the server follows one
    connection, and tells a new one the race as it then stands)."""

    def __init__(self, ctx: Context, session: WatchSession) -> None:
        self.ctx = ctx
        self.session = session
        self.leave = asyncio.Event()
        self.over = asyncio.Event()
        self.plain = PlainFront() if ctx.plain else None
        self.screen: WatchScreen | None = None
        self.conn: Connection | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    def status(self, text: str) -> None:
        self.session.status = "" if text.startswith("Reconnected") else text
        if self.plain is not None:
            self.plain.message({"t": "status", "msg": text})
        self._changed()

    async def run(self) -> int:
        conn = self.conn = self.ctx.connection(self.status)
        try:
            await conn.open()
        except ConnectError as exc:
            return fail(self.ctx.unreachable(exc))
        self.ctx.opened()
        try:
            try:
                await self._watch()
            except ServerError as exc:
                return fail(f"cannot watch race {self.session.race}: {in_words(exc)}"
                            + EXPLAIN.get(exc.code, ""))  # fmt: skip
            except (ConnectionLost, ProtocolError) as exc:
                return fail(f"cannot watch race {self.session.race}: {exc}")
            pump = asyncio.create_task(self._pump(conn), name="events")
            try:
                if self.plain is not None:
                    await self._plain_loop()
                else:
                    await self._screen_loop()
            finally:
                pump.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await pump
        finally:
            await conn.close()
        if self.plain is None:
            print(self._summary())
        return 0

    async def _watch(self) -> None:
        assert self.conn is not None
        reply = await self.conn.request(p.Watch(race=self.session.race))
        self.take(reply)

    async def _pump(self, conn: Connection) -> None:
        while True:
            message = await conn.events.get()
            if isinstance(message, Welcomed):
                if message.reconnected:
                    task = asyncio.create_task(self._watch_again(), name="watch-again")
                    self._tasks.add(task)
                    task.add_done_callback(self._tasks.discard)
                continue
            self.take(message)

    async def _watch_again(self) -> None:
        try:
            await self._watch()
        except (ServerError, ConnectionLost, ProtocolError) as exc:
            self.status(f"Could not watch race {self.session.race} again: {exc}")

    def take(self, message: Event) -> None:
        if self.session.apply(message) and self.plain is not None:
            self.plain.message(as_plain(message))  # type: ignore[arg-type]
        elif isinstance(message, p.Error) and self.plain is not None:
            self.plain.message(as_plain(message))
        if self.session.phase is WatchPhase.DONE:
            self.over.set()
        self._changed()

    def _changed(self) -> None:
        if self.screen is not None:
            self.screen.changed()

    async def _plain_loop(self) -> None:
        quit_line = asyncio.create_task(_quit_typed(), name="stdin")
        over = asyncio.create_task(self.over.wait())
        try:
            await asyncio.wait({quit_line, over}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            quit_line.cancel()
            over.cancel()

    async def _screen_loop(self) -> None:
        from client_cli.watch_screen import WatchScreen  # only the screen needs prompt_toolkit

        screen = self.screen = WatchScreen(self.session, self.ctx.theme, self.leave.set)
        app = asyncio.create_task(screen.run())
        leave = asyncio.create_task(self.leave.wait())
        await asyncio.wait({app, leave}, return_when=asyncio.FIRST_COMPLETED)
        screen.exit()
        with contextlib.suppress(Exception):
            await app
        leave.cancel()
        self.screen = None

    def _summary(self) -> str:
        s = self.session
        if s.result is not None:
            standings = ", ".join(f"{x.rank}. {x.name} {x.score}" for x in s.result.standings)
            return f"Race {s.race} is over: {standings}."
        return f"Stopped watching race {s.race}; watch it again with: solitaire watch {s.race}"


async def _quit_typed() -> None:
    """Returns once stdin says `quit` (a spectator has nothing else to type). The end of
    stdin is not a quit: `solitaire --plain watch CODE < /dev/null` watches to the end."""
    loop = asyncio.get_running_loop()
    typed: asyncio.Future[None] = loop.create_future()

    def read() -> None:
        for line in sys.stdin:
            if line.strip().lower() in ("quit", "q", "exit"):
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(settle, typed, None)
                return

    threading.Thread(target=read, name="stdin", daemon=True).start()
    await typed
