"""Running a game from start to end: connect, set up (create, join, daily), play in
the chosen front end, and leave a summary on the terminal afterwards."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import sys
import textwrap
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from client_cli.config import Config
from client_cli.connection import ConnectError, Connection, ConnectionLost
from client_cli.messages import ProtocolError, ServerError
from client_cli.panels import leaderboard_lines, plain_text, result_lines
from client_cli.play import Play
from client_cli.replay import web_base
from client_cli.session import GameSession
from client_cli.share import share_text
from client_cli.theme import Theme

Setup = Callable[[Play, Connection], Awaitable[None]]


class SetupEnded(Exception):
    """The set-up ends the command before any game is played (e.g. a daily not confirmed):
    `message` for the terminal, `status` the exit status."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


@dataclass
class Context:
    """What every command needs: settings, where to connect, how to draw."""

    config: Config
    server: str
    name: str
    theme: Theme
    plain: bool
    server_source: str = "option"  # where `server` came from: option, env, saved, default

    def connection(self, on_status: Callable[[str], None]) -> Connection:
        def remember(token: str) -> None:
            self.config.tokens[self.server] = token
            self.remember_server()
            self.config.save()

        return Connection(
            self.server,
            self.name,
            self.config.token_for(self.server),
            on_status=on_status,
            on_token=remember,
        )

    def remember_server(self) -> None:
        """A --server (or the default) that worked becomes the saved one (not saved here:
        callers save). $SOLITAIRE_SERVER is not saved: it applies while it is set."""
        if self.server_source in ("option", "default"):
            self.config.server = self.server

    def opened(self) -> None:
        """The server welcomed us: remember the --server (or default) that reached it."""
        if self.server_source in ("option", "default") and self.config.server != self.server:
            self.remember_server()
            self.config.save()

    def unreachable(self, error: ConnectError) -> str:
        """The connection error, and where the address came from and how to change it
        (not when the server answered and refused: then its address is not the problem)."""
        if error.refused:
            return str(error)
        pick = "pick another with --server HOST:PORT (saved once a session with it succeeds)"
        where = {
            "option": f"Check the address given with --server, or {pick}. "
            + (
                f"It was not saved: without --server the client still uses {self.config.server}."
                if self.config.server
                else "It was not saved."
            ),
            "env": f"That address is $SOLITAIRE_SERVER: change the variable, or {pick}.",
            "saved": f"That is the saved server (in {self.config.path}); {pick}.",
            "default": f"That is the default server; {pick}, or set $SOLITAIRE_SERVER.",
        }[self.server_source]
        return f"{error}\n" + textwrap.fill(where, 78)


class PlainFront:
    """`--plain`: one JSON object per line on stdout for every message that matters."""

    def changed(self) -> None:
        pass

    def message(self, message: dict[str, Any]) -> None:
        if message.get("t") == "welcome":
            return
        out = {k: v for k, v in message.items() if k not in ("id", "re")}
        sys.stdout.write(json.dumps(out, default=str, ensure_ascii=False) + "\n")
        sys.stdout.flush()


async def open_session(ctx: Context, on_status: Callable[[str], None]) -> Connection:
    conn = ctx.connection(on_status)
    await conn.open()
    ctx.opened()
    return conn


# Request fields as the command line names them, for the server's validation texts.
FIELD_WORDS = {
    "time_limit_s": "the time limit (--time-limit, in seconds)",
    "max_players": "the number of players (--max-players)",
    "seed": "the deal number (--seed)",
    "bots": "the number of bots (--bots)",
    "name": "your name (--name)",
}
BOUND = re.compile(r"Expected `(\w+)` (>=|<=|>|<) (-?\d+) - at `\$\.(\w+)`")
BOUND_WORDS = {">=": "at least", "<=": "at most", ">": "more than", "<": "less than"}


def in_words(exc: ServerError) -> str:
    """A refusal for a person: the server's validation text ("Expected `int` >= 30 - at
    `$.time_limit_s`") said in words; any other reason as the server gave it."""
    match = BOUND.search(exc.msg) if exc.code == "bad_request" else None
    if match is None:
        return f"{exc.msg} ({exc.code})"
    _kind, op, bound, name = match.groups()
    what = FIELD_WORDS.get(name, name.replace("_", " "))
    return f"the server refused: {what} must be {BOUND_WORDS[op]} {bound}"


def fail(message: str) -> int:
    print(f"solitaire: {message}", file=sys.stderr)
    return 1


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
    front: Any = play.listener
    if not ctx.plain:
        from client_cli.screen import PlayScreen  # only the screen needs prompt_toolkit

        front = play.listener = PlayScreen(play, ctx.theme)
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
        if ctx.plain:
            await _plain_loop(play)
            share = daily_share(session, ctx.theme.unicode)
            if share is not None:
                PlainFront().message({"t": "share", "text": share})
        else:
            await _screen_loop(play, front)
            print(summary(session, ctx.theme))
    finally:
        await play.stop()
        await conn.close()
    return 0


async def _screen_loop(play: Play, screen: Any) -> None:
    app = asyncio.create_task(screen.run())
    leave = asyncio.create_task(play.leave.wait())
    await asyncio.wait({app, leave}, return_when=asyncio.FIRST_COMPLETED)
    screen.exit()
    with contextlib.suppress(Exception):
        await app
    leave.cancel()


async def _plain_loop(play: Play) -> None:
    lines = _stdin_lines()
    # A daily's rank ends the session; a race's result does not, so that a script may
    # ask for (or join) a rematch: it ends with the input, an empty line or `quit`.
    ends_when_over = play.session.kind != "race"
    leave = asyncio.create_task(play.leave.wait())
    over: asyncio.Task[bool] | None = None
    try:
        while True:
            nxt = asyncio.create_task(lines.get())
            over = asyncio.create_task(play.over.wait()) if ends_when_over else None
            waits = {nxt, leave} | ({over} if over else set())
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            if over is not None:
                over.cancel()
            if not nxt.done():
                nxt.cancel()
                return
            line = nxt.result()
            if line is None:
                break
            play.submit(line.rstrip("\r\n"))
            await play.idle()
        # End of input: a finished game still waits for its race's result or its rank.
        if play.session.phase in ("finished", "result", "done") and play.session.kind != "practice":
            over = asyncio.create_task(play.over.wait())
            await asyncio.wait({over, leave}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        if over is not None:
            over.cancel()
        leave.cancel()


async def ask_yes_no(question: str) -> bool:
    """Ask on the terminal before the play screen opens; only "y" or "yes" is a yes.

    Read by a daemon thread, so that the connection keeps answering the server's pings
    while the player thinks, and an unanswered question never keeps the process alive."""
    loop = asyncio.get_running_loop()
    answer: asyncio.Future[str] = loop.create_future()

    def read() -> None:
        try:
            line = input(question)
        except (EOFError, OSError):
            line = ""
        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits any more
            loop.call_soon_threadsafe(lambda: answer.done() or answer.set_result(line))

    threading.Thread(target=read, name="question", daemon=True).start()
    return (await answer).strip().lower() in ("y", "yes")


def _stdin_lines() -> asyncio.Queue[str | None]:
    """Lines of stdin, read by a daemon thread (works for ttys, pipes and files alike,
    and never keeps the process alive at exit)."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[str | None] = asyncio.Queue()

    def read() -> None:
        for line in sys.stdin:
            loop.call_soon_threadsafe(queue.put_nowait, line)
        loop.call_soon_threadsafe(queue.put_nowait, None)

    threading.Thread(target=read, name="stdin", daemon=True).start()
    return queue


SHARE_INTRO = "Share your result (no spoilers):"


def daily_share(session: GameSession, unicode: bool) -> str | None:
    """A finished daily's share text, with the player's rank on the board just fetched."""
    board = session.leaderboard
    if session.kind != "daily" or board is None or board.me is None or board.date == "all":
        return None
    return share_text(board.game, board.date, board.me, board.total, session.scores, unicode)


def summary(session: GameSession, theme: Theme) -> str:
    """What stays on the terminal after the play screen closes."""
    plain = Theme(unicode=theme.unicode, colour=False)
    if session.result is not None:
        result, me, web = session.result, session.me, session.web
        notes = session.finish_notes()
        lines = result_lines(result, me, plain, session.time_up, web, keys=False, notes=notes)
        return plain_text(lines)
    if session.leaderboard is not None:
        board = plain_text(leaderboard_lines(session.leaderboard, session.me, plain))
        share = daily_share(session, theme.unicode)
        return board if share is None else f"{board}\n\n{SHARE_INTRO}\n{share}"
    state = session.state
    if session.kind == "race" and session.race:
        if state is not None and not state.finished:
            return (
                f"Left race {session.race}; your game stays open.\n"
                f"Carry on with: solitaire race join {session.race}"
            )
        return f"Left race {session.race}."
    if session.kind == "practice":
        if state is not None and state.seed is not None:
            again = f"solitaire practice {session.game} --seed {state.seed}"
            text = f"Practice deal {state.seed}; play it again with: {again}"
            if state.finished:
                text += f"\nReplay this game with: solitaire replay {state.gid}"
            return text
        return "Bye."
    if state is not None and not state.finished:
        return f"Your daily attempt stays open.\nCarry on with: solitaire daily {session.game}"
    return "Bye."
