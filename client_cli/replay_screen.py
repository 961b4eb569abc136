"""The replay screen: a finished game played back on the play screen's board.

The board (the same renderers as in play) beside a side panel of where the replay stands
and how the game ended; keys step it (→ ←), jump to its start and end (Home End), play it
by itself (Space) at a speed (+ -). No input line: every key acts at once.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from prompt_toolkit.application import Application
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout import Dimension, FormattedTextControl, HSplit, Layout, VSplit, Window

from client_cli.boards import game_title, render
from client_cli.boards.canvas import Canvas
from client_cli.fullscreen import full_screen_app
from client_cli.game_session import clock
from client_cli.panels import MAIN_WIDTH, SIDE_WIDTH
from client_cli.replayer import Replayer, Stepper, outcome, whose
from client_cli.theme import Theme
from client_cli.words import count

BODY_HEIGHT = 20
KEYS = (
    ("→ ←", "step"),
    ("Home End", "start, end"),
    ("Space", "play, pause"),
    ("+ -", "speed"),
    ("q", "quit"),
)


def replay_panel(replayer: Replayer, stepper: Stepper, theme: Theme) -> Canvas:
    """The side panel: the game, the move the board is at, how the game ended, the keys."""
    replay, result = replayer.replay, replayer.replay.result
    canvas = Canvas(SIDE_WIDTH)
    label, strong = theme.style("class:label"), theme.style("class:title")
    canvas.put(0, 0, game_title(replay.game), strong)
    canvas.put(0, 1, whose(replay)[:SIDE_WIDTH], label)
    canvas.put(0, 2, f"deal {replay.seed}", label)
    n = stepper.n
    last = replay.moves[n - 1] if n else "(the deal)"
    rows = [
        ("Move", f"{n} / {replay.n}"),
        ("Last", last),
        ("Score", f"{replayer.game_at(n).score} / {result.max_score}"),
    ]
    y = 4
    for name, value in rows:
        canvas.put(0, y, f"{name:<7}", label)
        canvas.put(7, y, value)
        y += 1
    y += 1
    canvas.put(0, y, "Ended  ", label)
    canvas.put(7, y, outcome(result), theme.style("class:won") if result.won else "")
    canvas.put(7, y + 1, f"{result.score}/{result.max_score}, {count(result.moves, 'move')}")
    place = f", #{result.rank} of {result.of}" if result.rank is not None else ""
    canvas.put(7, y + 2, f"{clock(result.time_ms)}{place}")
    y += 4
    if stepper.playing:
        mark = "▶" if theme.unicode else ">"
        canvas.put(0, y, f"{mark} playing, {stepper.speed:g} moves/s", theme.style("class:status"))
    else:
        mark = "❚❚" if theme.unicode else "||"
        canvas.put(0, y, f"{mark} paused ({stepper.speed:g} moves/s)", label)
    y += 2
    for keys, what in KEYS if theme.unicode else _ascii_keys():
        canvas.put(0, y, f"{keys:<11}", label)
        canvas.put(11, y, what)
        y += 1
    return canvas


def _ascii_keys() -> tuple[tuple[str, str], ...]:
    return (("Right Left", "step"), *KEYS[1:])


class ReplayScreen:
    def __init__(self, replayer: Replayer, stepper: Stepper, theme: Theme) -> None:
        self.replayer = replayer
        self.stepper = stepper
        self.theme = theme
        self.app: Application[None] = self._build()

    async def run(self) -> None:
        player = asyncio.create_task(self._autoplay())
        try:
            await self.app.run_async()
        finally:
            player.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await player

    async def _autoplay(self) -> None:
        while True:
            await asyncio.sleep(1 / self.stepper.speed)
            if self.stepper.playing:
                self.stepper.forward()
                self.app.invalidate()

    def _build(self) -> Application[None]:
        keys = KeyBindings()
        s = self.stepper
        for names, action in (
            (("right", "l", "n"), s.forward),
            (("left", "h", "p"), s.back),
            (("home", "g", "0"), lambda: s.go(0)),
            (("end", "G", "$"), lambda: s.go(s.last)),
            ((" ", "a"), s.toggle),
            (("+", "="), s.faster),
            (("-",), s.slower),
        ):
            for name in names:
                keys.add(name)(self._binding(action))

        @keys.add("q")
        @keys.add("escape", eager=True)
        @keys.add("c-c")
        @keys.add("c-d")
        def _quit(event: KeyPressEvent) -> None:
            event.app.exit()

        title = Window(FormattedTextControl(self._title), height=1, style="reverse")
        board = Window(FormattedTextControl(self._board, focusable=True), width=MAIN_WIDTH + 1)
        side = Window(FormattedTextControl(self._side), width=SIDE_WIDTH)
        rule = "│" if self.theme.unicode else "|"
        body = VSplit(
            [board, Window(width=1, char=rule), side],
            height=Dimension(min=4, max=BODY_HEIGHT, preferred=BODY_HEIGHT),
        )
        notice = Window(FormattedTextControl(self._notice), height=1)
        return full_screen_app(
            Layout(HSplit([title, body, notice]), focused_element=board), keys, self.theme
        )

    @staticmethod
    def _binding(action: Callable[[], None]) -> Callable[[KeyPressEvent], None]:
        def handler(event: KeyPressEvent) -> None:
            action()
            event.app.invalidate()

        return handler

    def _title(self) -> StyleAndTextTuples:
        replay = self.replayer.replay
        dot = "·" if self.theme.unicode else "-"
        text = f" solitaire-race {dot} {game_title(replay.game)} replay {dot} {whose(replay)}"
        return [("", text)]

    def _board(self) -> StyleAndTextTuples:
        view = self.replayer.view_at(self.stepper.n)
        return render(view, self.theme, BODY_HEIGHT).fragments()

    def _side(self) -> StyleAndTextTuples:
        return replay_panel(self.replayer, self.stepper, self.theme).fragments()

    def _notice(self) -> StyleAndTextTuples:
        if self.stepper.n == self.stepper.last and self.stepper.last:
            return [(self.theme.style("class:status"), "The end of the game. q leaves.")]
        return []
