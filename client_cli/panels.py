"""Text panels around the board: the side panel, the lobby, the race standings and
the daily leaderboard. Pure functions from a `GameSession` to styled fragments,
so the screen, the plain-text summaries and the tests share them."""

from __future__ import annotations

import textwrap
import time

from client_cli.boards import game_title
from client_cli.boards.canvas import Canvas, Fragment
from client_cli.game_kind import GameKind
from client_cli.game_phase import Phase
from client_cli.game_session import GameSession, clock
from client_cli.links import only_here, race_link
from client_cli.moves import game_moves
from client_cli.theme import Theme
from protocol import Entry, LeaderboardReply, RematchOffer, Result

SIDE_WIDTH = 28
MAIN_WIDTH = 50
NAME_WIDTH = 12


def side_panel(session: GameSession, theme: Theme, height: int = 20) -> Canvas:
    canvas = Canvas(SIDE_WIDTH)
    state = session.state
    label, strong = theme.style("class:label"), theme.style("class:title")
    y = 0
    canvas.put(0, y, game_title(session.game), strong)
    y += 1
    if session.kind is GameKind.RACE and session.race:
        canvas.put(0, y, f"race {session.race}", label)
    elif session.kind is GameKind.DAILY:
        date = state.date if state is not None else ""
        canvas.put(0, y, f"daily {date}".rstrip(), label)
    elif session.kind is GameKind.PRACTICE:
        seed = state.seed if state is not None and state.seed is not None else ""
        canvas.put(0, y, f"practice {seed}".rstrip(), label)
    y += 2
    if state is not None:
        max_score = state.view.get("max_score", "?")
        for name, value in (
            ("Score", f"{state.score} / {max_score}"),
            ("Moves", str(state.n)),
            ("Time", clock(session.elapsed_ms())),
        ):
            canvas.put(0, y, f"{name:<7}", label)
            canvas.put(7, y, value)
            y += 1
        remaining = session.remaining_ms()
        if remaining is not None:
            canvas.put(0, y, "Left   ", label)
            canvas.put(7, y, clock(remaining))
            y += 1
        for line in _outcome(session):
            canvas.put(0, y, line, theme.style("class:won"))
            y += 1
        for line in _waiting(session):
            canvas.put(0, y, line, theme.style("class:status"))
            y += 1
    if session.kind is GameKind.RACE and session.seats:
        y += 1
        # Before the deal nobody has figures yet: names only.
        figures = session.phase is not Phase.LOBBY
        header = f"{'Players':<{NAME_WIDTH + 3}}score moves" if figures else "Players"
        canvas.put(0, y, header, label)
        y += 1
        rows = max(height - y - 3, 1)
        seats = session.standings_panel()
        for seat in seats[:rows]:
            mark = "▶" if seat.player == session.me else " "
            if not theme.unicode:
                mark = ">" if seat.player == session.me else " "
            flag = "✓" if seat.won else ("·" if seat.finished else " ")
            if not theme.unicode:
                flag = "W" if seat.won else ("." if seat.finished else " ")
            style = theme.style("class:me") if seat.player == session.me else ""
            name = f"{seat.name[:NAME_WIDTH]:<{NAME_WIDTH}}"
            line = f"{mark}{flag}{name}"
            if figures:
                line += f" {_figure(seat.score):>5} {_figure(seat.moves):>5}"
            canvas.put(0, y, line, style)
            y += 1
            if seat.ghost and figures and y < height - 3:
                # An earlier run: what it had at one's own elapsed time, and its clock then.
                canvas.put(0, y, f"  ghost {clock(seat.elapsed_ms)}", label)
                y += 1
        if len(seats) > rows:
            canvas.put(0, y, f"  … {len(seats) - rows} more", label)
            y += 1
    if session.phase is Phase.PLAYING and height - 2 > y:
        keys = "Tab: legal moves" + ("  d: deal" if game_moves(session.game).deals else "")
        canvas.put(0, height - 2, keys, label)
        commands = (
            "undo  hint  quit  help" if session.kind is GameKind.PRACTICE else "resign  quit  help"
        )
        canvas.put(0, height - 1, commands, label)
    return canvas


def _figure(value: int | None) -> str:
    """A seat's score or move count; `?` until the client has heard it."""
    return "?" if value is None else str(value)


def _outcome(session: GameSession) -> list[str]:
    """How one's own game ended, in words."""
    state = session.state
    if state is None:
        return []
    if not state.finished:
        return ["Time's up!"] if session.kind is GameKind.RACE and session.out_of_time() else []
    if state.won:
        return ["You won!"]
    if state.over:
        return ["No moves left."]
    if session.time_up or session.kind is GameKind.DAILY:
        return ["Finished."]
    return ["You resigned."]


def _waiting(session: GameSession) -> list[str]:
    """While one's own game is over and the race's is not: what the player waits for."""
    if session.kind is not GameKind.RACE or session.result is not None:
        return []
    state = session.state
    if state is None or not (state.finished or session.out_of_time()):
        return []
    if session.async_race:
        return open_until(session.closes_at_ms)
    others = session.waiting_for()
    if session.out_of_time() or not others:
        return ["Waiting for the standings…"]
    who = f"Waiting for {others} player{'' if others == 1 else 's'}"
    if session.limit_ms() is not None:
        return [who, "to finish or time's up,", "then the standings."]
    return [who, "to finish, then the", "standings."]


def open_until(closes_at_ms: int | None) -> list[str]:
    """An asynchronous race one has played, still open: until when, in lines that fit
    the side panel."""
    if closes_at_ms is None:
        return ["The race is still open:", "the standings come once", "everyone has played."]
    until = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(closes_at_ms / 1000))
    return [
        "The race is still open",
        f"until {until};",
        "the standings come then,",
        "or once all have played.",
    ]


def lobby_panel(session: GameSession, theme: Theme) -> Canvas:
    canvas = Canvas(MAIN_WIDTH)
    strong, label = theme.style("class:title"), theme.style("class:label")
    canvas.put(0, 0, "Race code  ", label)
    canvas.put(11, 0, session.race or "…", strong)
    y = 1
    if session.race and session.web and not session.quick:
        link = race_link(session.web, session.race)
        canvas.put(0, y, "Share it:  ", label)
        if len(link) > MAIN_WIDTH - 11:
            y += 1
        canvas.put(0 if y > 1 else 11, y, link)
        canvas.put(0, y + 1, "Open it in a browser or: solitaire race join LINK")
        y += 2
        if only_here(session.web):
            canvas.put(0, y, "It works on this machine only: see the README,", label)
            canvas.put(0, y + 1, '"Race friends on other machines".', label)
            y += 2
    limit = f"{session.time_limit_s} s" if session.time_limit_s else "none"
    canvas.put(0, y + 1, f"Game: {game_title(session.game)}    time limit: {limit}")
    canvas.put(0, y + 3, f"Players ({len(session.seats)})", label)
    y += 4
    for seat in session.seats.values():
        host = " (host)" if seat.player == session.host else ""
        you = " (you)" if seat.player == session.me else ""
        canvas.put(2, y, f"{seat.name}{host}{you}")
        y += 1
    y += 1
    if session.quick:
        canvas.put(0, y, "A quick race, rated: it starts by itself in a few seconds.",
                   theme.style("class:status"))  # fmt: skip
    elif session.host and session.me and session.host != session.me:
        canvas.put(0, y, "Waiting for the host to start the race…", theme.style("class:status"))
    else:
        canvas.put(0, y, "Press Enter to start the race.", theme.style("class:status"))
    return canvas


TIME_UP = "Time's up: the race ended before your game did."


def result_panel(
    result: Result,
    me: str,
    theme: Theme,
    time_up: bool = False,
    web: str = "",
    offer: RematchOffer | None = None,
    notes: dict[str, str] | None = None,
) -> Canvas:
    canvas = Canvas(MAIN_WIDTH)
    for y, line in enumerate(result_lines(result, me, theme, time_up, web, offer, notes=notes)):
        canvas.put_fragments(0, y, line)
    return canvas


def result_lines(
    result: Result,
    me: str,
    theme: Theme,
    time_up: bool = False,
    web: str = "",
    offer: RematchOffer | None = None,
    keys: bool = True,
    notes: dict[str, str] | None = None,
) -> list[list[Fragment]]:
    """The standings; `time_up`: the time limit closed the race while one's game was open;
    then how to replay any seat (one's own line as the example), and its web page (`web`:
    the server's HTTP address, if known); `offer`: a rematch one may join; `keys`: what
    the keys do, for the screen; `notes`: how each seat's game ended (GameSession's
    finish_notes), else won or resigned only."""
    strong, label = theme.style("class:title"), theme.style("class:label")
    lines: list[list[Fragment]] = [
        [(strong, f"Race {result.race} is over: {game_title(result.game)}")],
        [(label, "Seed "), (strong, str(result.seed)), (label, " (replay the deal with it)")],
    ]
    if time_up:
        lines.append([(theme.style("class:status"), TIME_UP)])
    lines += [
        [],
        [(label, f" #  {'Player':<{NAME_WIDTH}}  {'':<8} Score Moves    Time")],
    ]
    for s in result.standings:
        note = (notes or {}).get(s.player) or ("won" if s.won else "resigned" if s.resigned else "")
        style = theme.style("class:me") if s.player == me else ""
        text = (
            f"{s.rank:>2}  {s.name[:NAME_WIDTH]:<{NAME_WIDTH}}  {note:<8} "
            f"{s.score:>5} {s.moves:>5} {clock(s.time_ms):>7}"
        )
        lines.append([(style, text)])
    mine = (result.rating or {}).get(me)
    if mine is not None:
        arrow = "→" if theme.unicode else "->"
        change = mine.after - mine.before
        lines += [[(label, "Your rating "), (strong, f"{mine.before} {arrow} {mine.after}"),
                   (label, f" ({change:+d})")]]  # fmt: skip
    lines += [[], *replay_lines(result, me, theme, web)]
    if keys:
        status = theme.style("class:status")
        lines += [[], *[[(status, text)] for text in result_keys(result, me, offer)]]
    return lines


def replay_lines(result: Result, me: str, theme: Theme, web: str = "") -> list[list[Fragment]]:
    """How to replay the race's seats: `solitaire replay CODE:LINE`, and the web page.
    The command has a line of its own: with a 12-character code it would not fit in the
    panel's width after its label."""
    lines = [s.player for s in result.standings]
    mine = f"{result.race}:{lines.index(me) + 1 if me in lines else 1}"
    label = theme.style("class:label")
    out: list[list[Fragment]] = [
        [(label, f"Replays (lines 1-{len(lines)}):")],
        [("", f"solitaire replay {mine}")],
    ]
    if web:
        out.append([("", f"{web}/replay/{mine}")])
    return out


def result_keys(result: Result, me: str, offer: RematchOffer | None) -> list[str]:
    """Under the standings: what Enter and r do (r only for the race's players)."""
    if offer is not None:
        asked = "You asked" if offer.player == me else f"{offer.name[:NAME_WIDTH]} asks"
        return [f"{asked} for a rematch:", f"press r to join race {offer.next}, Enter to leave."]
    if any(s.player == me for s in result.standings):
        return ["Press Enter to leave, r for a rematch."]
    return ["Press Enter to leave."]


def leaderboard_lines(
    board: LeaderboardReply, me: str, theme: Theme, width: int = 78
) -> list[list[Fragment]]:
    """A board as text; a past day's ends with its par and winning line (wrapped to `width`)."""
    strong, label = theme.style("class:title"), theme.style("class:label")
    lines: list[list[Fragment]] = []
    all_time = board.date == "all"
    title = f"Daily {game_title(board.game)}, {'all time' if all_time else board.date}"
    if board.me is not None:
        title += f": you are #{board.me.rank} of {board.total}"
    else:
        title += f": {board.total} player{'' if board.total == 1 else 's'}"
    lines.append([(strong, title)])
    if board.seed is not None:
        lines.append([(label, f"Seed {board.seed} (the day is over)")])
    lines.append([])
    if all_time:
        header = f" #    {'Player':<{NAME_WIDTH}} Score Played   Won Streak"
    else:
        header = f" #    {'Player':<{NAME_WIDTH}} {'':<3} Score Moves    Time"
    lines.append([(label, header)])
    for entry in board.entries:
        lines.append([_entry_line(entry, me, theme, all_time)])
    if not board.entries:
        lines.append([(label, "  (nobody yet)")])
    if any(e.new for e in board.entries):
        lines.append([(label, "new: a player made on that day")])
    if board.par is not None and board.line:
        lines.append([])
        lines.append([(label, f"Par {board.par}: a winning line found by the solver:")])
        lines += [[("", row)] for row in textwrap.wrap(" ".join(board.line), width)]
    return lines


def _entry_line(entry: Entry, me: str, theme: Theme, all_time: bool = False) -> Fragment:
    mine = entry.player == me
    mark = ("▶" if theme.unicode else ">") if mine else " "
    name = f"{entry.name[:NAME_WIDTH]:<{NAME_WIDTH}}"
    if all_time:
        text = (
            f"{mark}{entry.rank:>4} {name} {entry.score:>5} {_num(entry.played):>6} "
            f"{_num(entry.days_won):>5} {_num(entry.best_streak):>6}"
        )
    else:
        note = "won" if entry.won else ""
        text = (
            f"{mark}{entry.rank:>4} {name} {note:<3} "
            f"{entry.score:>5} {entry.moves:>5} {clock(entry.time_ms):>7}"
            f"{' new' if entry.new else ''}{' resigned' if entry.resigned else ''}"
        )
    return (theme.style("class:me") if mine else "", text)


def _num(value: int | None) -> str:
    return "-" if value is None else str(value)


def leaderboard_panel(board: LeaderboardReply, me: str, theme: Theme) -> Canvas:
    canvas = Canvas(MAIN_WIDTH)
    lines = leaderboard_lines(board, me, theme, width=MAIN_WIDTH)
    lines += [[], [(theme.style("class:status"), "Press Enter to leave.")]]
    for y, line in enumerate(lines):
        canvas.put_fragments(0, y, line)
    return canvas


def plain_text(lines: list[list[Fragment]]) -> str:
    return "\n".join("".join(text for _, text in line) for line in lines)
