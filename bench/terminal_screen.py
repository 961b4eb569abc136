"""The terminal client as a player runs it, for a bench's baseline: its connection, its
game session, its `Play` loop and its play screen (prompt_toolkit), the keys typed into a
pipe and the screen drawn into memory (an 80x24 VT100 terminal held in a string).

`TerminalScreen.move` types a move and Enter and waits until the screen has been redrawn
with the server's acknowledgement: the whole of the terminal client's own work for a move
(reading the keys, resolving the move against its legal list, the request, taking in the
reply, drawing the board, the side panel and the notice), as a player sees it.
"""

from __future__ import annotations

import asyncio
import io
import time
import uuid
from typing import Any

from prompt_toolkit.application import create_app_session
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output.vt100 import Vt100_Output

import protocol as p
from client_cli.connection import Connection
from client_cli.game_kind import GameKind
from client_cli.game_session import GameSession
from client_cli.play import Play
from client_cli.screen import PlayScreen
from client_cli.theme import Theme


class TerminalScreen:
    """One practice game on the terminal client's play screen; use inside its event loop."""

    def __init__(self, url: str, game: str) -> None:
        self.game = game
        self.conn = Connection(url, f"tui{uuid.uuid4().hex[:6]}", None)
        self.session = GameSession(kind=GameKind.PRACTICE, game=game)
        self.play = Play(self.conn, self.session, _Quiet())
        # Kept: the pipe is closed when its context manager goes (in close()).
        self._pipe = create_pipe_input()
        self.keys = self._pipe.__enter__()
        self.drawn = io.StringIO()
        output = Vt100_Output(self.drawn, lambda: Size(rows=24, columns=80), term="xterm")
        # The application takes its input and output from the session it is built in.
        with create_app_session(input=self.keys, output=output):
            self.screen = PlayScreen(self.play, Theme.from_options(ascii_only=False))
        self.screen.app.after_render += self._rendered
        self.play.listener = self.screen
        self._waiting: tuple[int, asyncio.Future[None]] | None = None
        self._app: asyncio.Task[None] | None = None

    async def open(self, seed: int) -> None:
        welcome = await self.conn.open()
        self.session.me, self.session.my_name = welcome.player, welcome.name
        self.play.start_tasks()
        self._app = asyncio.create_task(self.screen.run())
        await self.deal(seed)

    async def deal(self, seed: int) -> None:
        reply = await self.conn.request(p.Practice(game=self.game, seed=seed))
        self.play.take(reply, reply=True)

    @property
    def state(self) -> p.State:
        assert self.session.state is not None
        return self.session.state

    def legal(self) -> list[str]:
        return self.session.legal_moves()

    async def move(self, move: str) -> float:
        """Milliseconds from the move typed (Enter) to the screen drawn with its reply."""
        done = asyncio.get_running_loop().create_future()
        self._waiting = (self.state.n + 1, done)
        t0 = time.perf_counter()
        self.keys.send_text(move + "\r")
        await done
        return (time.perf_counter() - t0) * 1000

    def _rendered(self, _app: object) -> None:
        if self._waiting is None or self.session.state is None:
            return
        n, done = self._waiting
        if self.session.state.n >= n and not done.done():
            self._waiting = None
            done.set_result(None)

    async def close(self) -> None:
        self.screen.exit()
        if self._app is not None:
            await self._app
        await self.play.stop()
        await self.conn.close()
        self._pipe.__exit__(None, None, None)


class _Quiet:
    """The listener until the screen takes over (nothing to print to)."""

    def changed(self) -> None:
        pass

    def message(self, message: dict[str, Any]) -> None:
        pass
