"""The play screen: a prompt_toolkit full-screen application.

Layout for an 80x24 terminal: a title line; the board (50 columns) beside
the side panel (score, moves, clock, the race's players); a notice line for
the server's answers and connection news; the move line, which completes the
legal moves on Tab. The board is redrawn from the `GameSession` whenever a
message arrives, and every second for the clock.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable
from typing import Any

from prompt_toolkit.application import Application
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.filters import Condition, has_completions
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.key_binding.bindings.completion import generate_completions
from prompt_toolkit.layout import (
    BufferControl,
    Dimension,
    Float,
    FloatContainer,
    FormattedTextControl,
    HSplit,
    Layout,
    VSplit,
    Window,
)
from prompt_toolkit.layout.menus import CompletionsMenu
from prompt_toolkit.layout.processors import BeforeInput

from client_cli.boards import game_title, render
from client_cli.fullscreen import full_screen_app
from client_cli.game_kind import GameKind
from client_cli.game_phase import Phase
from client_cli.game_session import GameSession
from client_cli.panels import (
    MAIN_WIDTH,
    SIDE_WIDTH,
    leaderboard_panel,
    lobby_panel,
    result_panel,
    side_panel,
)
from client_cli.play import Play
from client_cli.theme import Theme

BODY_HEIGHT = 20


class MoveCompleter(Completer):
    """Completes the legal moves of the current board (and the few commands)."""

    def __init__(self, session: GameSession) -> None:
        self.session = session

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterable[Completion]:
        typed = document.text_before_cursor.strip().lower()
        for move in self.session.legal_moves():
            if move.startswith(typed):
                yield Completion(move, start_position=-len(document.text_before_cursor))


class PlayScreen:
    def __init__(self, play: Play, theme: Theme) -> None:
        self.play = play
        self.session = play.session
        self.theme = theme
        self.input = Buffer(
            completer=MoveCompleter(self.session),
            complete_while_typing=False,
            multiline=False,
            accept_handler=self._accept,
        )
        self.app: Application[None] = self._build()
        play.confirm_resign = True

    # -- Listener ------------------------------------------------------------------------

    def changed(self) -> None:
        self.app.invalidate()

    def message(self, message: dict[str, Any]) -> None:
        pass

    # -- running -------------------------------------------------------------------------

    async def run(self) -> None:
        await self.app.run_async()

    def exit(self) -> None:
        if self.app.is_running:
            self.app.exit()

    # -- layout --------------------------------------------------------------------------

    def _build(self) -> Application[None]:
        keys = KeyBindings()

        @keys.add("tab")
        def _complete(event: KeyPressEvent) -> None:
            generate_completions(event)

        @keys.add("c-c")
        @keys.add("c-d", filter=~has_completions)
        def _quit(event: KeyPressEvent) -> None:
            self.play.submit("quit")

        @keys.add("escape", eager=True)
        def _cancel(event: KeyPressEvent) -> None:
            event.current_buffer.cancel_completion()

        # One key on the standings: ask for a rematch, or join the one a player offered.
        @keys.add("r", filter=Condition(self._rematch_key))
        @keys.add("R", filter=Condition(self._rematch_key))
        def _rematch(event: KeyPressEvent) -> None:
            self.play.submit("rematch")

        title = Window(FormattedTextControl(self._title), height=1, style="reverse")
        board = Window(FormattedTextControl(self._main), width=MAIN_WIDTH + 1)
        side = Window(FormattedTextControl(self._side), width=SIDE_WIDTH)
        rule = "│" if self.theme.unicode else "|"
        # On a terminal shorter than 24 lines the board gives way first, never the move line.
        body = VSplit(
            [board, Window(width=1, char=rule), side],
            height=Dimension(min=4, max=BODY_HEIGHT, preferred=BODY_HEIGHT),
        )
        notice = Window(
            FormattedTextControl(self._notice),
            height=Dimension(min=1, max=2, preferred=2),
            wrap_lines=True,
        )
        line = Window(
            BufferControl(self.input, input_processors=[BeforeInput(self._prompt)]),
            height=1,
        )
        root = FloatContainer(
            HSplit([title, body, notice, line]),
            floats=[
                Float(
                    xcursor=True,
                    ycursor=True,
                    content=CompletionsMenu(max_height=8, scroll_offset=1),
                )
            ],
        )
        return full_screen_app(
            Layout(root, focused_element=line), keys, self.theme, refresh_interval=1.0
        )

    def _rematch_key(self) -> bool:
        s = self.session
        return s.phase is Phase.RESULT and s.in_result() and not self.input.text

    def _accept(self, buffer: Buffer) -> bool:
        text = buffer.text
        self.play.submit(text)
        return False  # clears the line

    def _title(self) -> StyleAndTextTuples:
        s = self.session
        what = "daily challenge" if s.kind is GameKind.DAILY else str(s.kind)
        dot = "·" if self.theme.unicode else "-"
        text = f" solitaire-race {dot} {game_title(s.game)} {what}"
        if s.race:
            text += f" {dot} {s.race}"
        return [("", text)]

    def _main(self) -> StyleAndTextTuples:
        s = self.session
        if s.phase is Phase.RESULT and s.result is not None:
            offer = s.rematch_offer
            notes = s.finish_notes()
            canvas = result_panel(s.result, s.me, self.theme, s.time_up, s.web, offer, notes)
        elif s.phase is Phase.DONE and s.leaderboard is not None:
            canvas = leaderboard_panel(s.leaderboard, s.me, self.theme)
        elif s.phase is Phase.LOBBY:
            canvas = lobby_panel(s, self.theme)
        elif s.state is not None:
            canvas = render(s.state.view, self.theme, BODY_HEIGHT)
        else:
            return [("", "Connecting…")]
        return canvas.fragments()

    def _side(self) -> StyleAndTextTuples:
        return side_panel(self.session, self.theme, BODY_HEIGHT).fragments()

    def _notice(self) -> StyleAndTextTuples:
        s = self.session
        out: StyleAndTextTuples = []
        width = max(self.app.output.get_size().columns, 20) if self.app.is_running else 80
        if s.status:
            out.append((self.theme.style("class:status"), s.status + "\n"))
        if s.notice:
            style = "class:error" if s.notice_is_error else ""
            # Cards as the board spells them (10♦, not the server's TD), wrapped at words.
            text = "\n".join(textwrap.wrap(self.theme.spell_cards(s.notice), width))
            out.append((self.theme.style(style), text))
        return out

    def _prompt(self) -> StyleAndTextTuples:
        s = self.session
        if self.play.resign_pending:
            return [("", "resign? y/n> ")]
        if s.phase is Phase.LOBBY:
            return [("", "lobby> ")]
        if s.phase is Phase.RESULT and s.in_result():
            return [("", "Enter leaves, r rematch> ")]
        if s.phase in (Phase.RESULT, Phase.DONE):
            return [("", "Enter to leave> ")]
        if s.phase is Phase.FINISHED:
            if s.kind is GameKind.PRACTICE:
                return [("", "game over: undo or quit> ")]
            if s.kind is GameKind.DAILY:
                return [("", "fetching your rank> ")]
            return [("", "waiting for the standings> ")]
        if s.kind is GameKind.RACE and s.out_of_time():
            return [("", "time's up: waiting for the standings> ")]
        return [("", "move> ")]
