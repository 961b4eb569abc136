"""The watch screen: a prompt_toolkit full-screen application for spectators.

Layout for an 80x24 terminal, like the play screen's: a title line; one seat's board
(50 columns, the game's own renderer) beside the side panel (the race's clock and every
seat's score, moves and clock, the shown seat marked); a notice line; the keys. Tab or
the arrow keys show the next or previous seat's board, 1 to 9 a seat by its place, q
leaves. Redrawn whenever a message arrives, and every second for the clocks.
"""

from __future__ import annotations

from collections.abc import Callable

from prompt_toolkit.application import Application
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout import Dimension, FormattedTextControl, HSplit, Layout, VSplit, Window

from client_cli.boards import game_title, render
from client_cli.boards.canvas import Canvas
from client_cli.endings import finish_notes
from client_cli.fullscreen import full_screen_app
from client_cli.game_session import clock
from client_cli.panels import MAIN_WIDTH, NAME_WIDTH, SIDE_WIDTH, result_lines
from client_cli.theme import Theme
from client_cli.watching import WatchPhase, WatchSession

BODY_HEIGHT = 20


def board_panel(
    session: WatchSession, theme: Theme, height: int = BODY_HEIGHT
) -> StyleAndTextTuples:
    """The shown seat's board under a line naming it; the lobby before the start; the
    standings once the race is over (until another board is asked for)."""
    strong, label = theme.style("class:title"), theme.style("class:label")
    if session.phase is WatchPhase.DONE and session.result is not None and session.focus < 0:
        canvas = Canvas(MAIN_WIDTH)
        over = {pid for pid, seat in session.seats.items() if seat.over}
        notes = finish_notes(session.result, over, session.limit_ms())
        for y, line in enumerate(result_lines(session.result, "", theme, notes=notes)[:-2]):
            canvas.put_fragments(0, y, line)
        return canvas.fragments()
    seat = session.focused()
    if session.phase in (WatchPhase.CONNECTING, WatchPhase.LOBBY) or seat is None:
        canvas = Canvas(MAIN_WIDTH)
        canvas.put(0, 0, "Race code  ", label)
        canvas.put(11, 0, session.race, strong)
        canvas.put(0, 2, f"Game: {game_title(session.game)}" if session.game else "")
        canvas.put(0, 4, f"Players ({len(session.seats)})", label)
        for y, s in enumerate(session.ordered(), start=5):
            host = " (host)" if s.player == session.host else ""
            canvas.put(2, y, f"{s.name}{host}")
        canvas.put(0, 6 + len(session.seats), "Waiting for the host to start the race…",
                   theme.style("class:status"))  # fmt: skip
        return canvas.fragments()
    canvas = Canvas(MAIN_WIDTH)
    place = f"{session.focus % len(session.seats) + 1}/{len(session.seats)}"
    canvas.put(0, 0, f"{seat.name[:24]}", strong)
    canvas.put(MAIN_WIDTH - len(place) - 1, 0, place, label)
    if seat.view is None:
        canvas.put(0, 2, "No board yet.", label)
        return canvas.fragments()
    return canvas.fragments() + render(seat.view, theme, height - 1).fragments()


def side_panel(session: WatchSession, theme: Theme, height: int = BODY_HEIGHT) -> Canvas:
    canvas = Canvas(SIDE_WIDTH)
    label, strong = theme.style("class:label"), theme.style("class:title")
    canvas.put(0, 0, game_title(session.game) if session.game else "…", strong)
    canvas.put(0, 1, f"race {session.race}", label)
    canvas.put(0, 2, "watching" if session.phase is not WatchPhase.DONE else "race over", label)
    y = 4
    if session.start is not None:
        canvas.put(0, y, "Time   ", label)
        canvas.put(7, y, clock(session.race_ms()))
        y += 1
        limit = session.limit_ms()
        if limit is not None and session.phase is WatchPhase.RUNNING:
            canvas.put(0, y, "Left   ", label)
            canvas.put(7, y, clock(max(0, limit - session.race_ms())))
            y += 1
        y += 1
    header = f"{'Players':<{NAME_WIDTH + 2}}score moves" if session.start else "Players"
    canvas.put(0, y, header, label)
    y += 1
    focused = session.focused() if session.focus >= 0 else None
    rows = max(height - y - 3, 1)
    for seat in session.ordered()[:rows]:
        shown = seat is focused and session.start is not None
        mark = ("▶" if theme.unicode else ">") if shown else " "
        flag = {"won": "✓" if theme.unicode else "W"}.get(session.outcome(seat), " ")
        if flag == " " and seat.finished:
            flag = "·" if theme.unicode else "."
        line = f"{mark}{flag}{seat.name[:NAME_WIDTH]:<{NAME_WIDTH}}"
        if session.start is not None:
            line += f" {_figure(seat.score):>5} {_figure(seat.moves):>5}"
        canvas.put(0, y, line, theme.style("class:me") if shown else "")
        y += 1
    if len(session.seats) > rows:
        canvas.put(0, y, f"  … {len(session.seats) - rows} more", label)
    canvas.put(0, height - 2, "Tab/←→: next board  1-9", label)
    canvas.put(0, height - 1, "s: standings  q: quit" if session.result else "q: quit", label)
    return canvas


def _figure(value: int | None) -> str:
    return "?" if value is None else str(value)


class WatchScreen:
    def __init__(self, session: WatchSession, theme: Theme, on_quit: Callable[[], None]) -> None:
        self.session = session
        self.theme = theme
        self.on_quit = on_quit
        self.app: Application[None] = self._build()

    def changed(self) -> None:
        self.app.invalidate()

    async def run(self) -> None:
        await self.app.run_async()

    def exit(self) -> None:
        if self.app.is_running:
            self.app.exit()

    def _build(self) -> Application[None]:
        keys = KeyBindings()
        session = self.session

        @keys.add("tab")
        @keys.add("right")
        @keys.add("n")
        def _next(event: KeyPressEvent) -> None:
            session.focus = max(session.focus, 0)
            session.turn(1)

        @keys.add("s-tab")
        @keys.add("left")
        @keys.add("p")
        def _previous(event: KeyPressEvent) -> None:
            session.focus = max(session.focus, 0)
            session.turn(-1)

        for digit in "123456789":

            @keys.add(digit)
            def _pick(event: KeyPressEvent, digit: str = digit) -> None:
                session.show(int(digit) - 1)

        @keys.add("s")
        def _standings(event: KeyPressEvent) -> None:
            if session.result is not None:
                session.focus = -1

        @keys.add("q")
        @keys.add("c-c")
        @keys.add("c-d")
        def _quit(event: KeyPressEvent) -> None:
            self.on_quit()

        @keys.add("enter")
        def _leave(event: KeyPressEvent) -> None:
            if session.phase is WatchPhase.DONE:
                self.on_quit()

        rule = "│" if self.theme.unicode else "|"
        title = Window(FormattedTextControl(self._title), height=1, style="reverse")
        board = Window(FormattedTextControl(self._main), width=MAIN_WIDTH + 1)
        side = Window(FormattedTextControl(self._side), width=SIDE_WIDTH)
        body = VSplit(
            [board, Window(width=1, char=rule), side],
            height=Dimension(min=4, max=BODY_HEIGHT, preferred=BODY_HEIGHT),
        )
        notice = Window(FormattedTextControl(self._notice), height=2, wrap_lines=True)
        root = HSplit([title, body, notice])
        return full_screen_app(Layout(root), keys, self.theme, refresh_interval=1.0)

    def _title(self) -> StyleAndTextTuples:
        s = self.session
        dot = "·" if self.theme.unicode else "-"
        game = f" {dot} {game_title(s.game)}" if s.game else ""
        return [("", f" solitaire-race {dot} watching race {s.race}{game}")]

    def _main(self) -> StyleAndTextTuples:
        return list(board_panel(self.session, self.theme))

    def _side(self) -> StyleAndTextTuples:
        return side_panel(self.session, self.theme).fragments()

    def _notice(self) -> StyleAndTextTuples:
        s = self.session
        out: StyleAndTextTuples = []
        if s.status:
            out.append((self.theme.style("class:status"), s.status + "\n"))
        if s.notice:
            out.append(("", self.theme.spell_cards(s.notice)))
        return out
