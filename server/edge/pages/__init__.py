"""Static HTML pages served on the WebSocket port (every player name escaped). The leaderboard
carries no JavaScript; the replay page (replay.py) a few lines for its keys, by their hash."""

from __future__ import annotations

import datetime as dt
from functools import cache
from html import escape
from importlib import resources
from string import Template
from urllib.parse import quote

from protocol.messages import Entry
from server.domain.ids import daily_gid
from server.store.boards import ALL_TIME, Board

GAME_TITLES = {
    "doublets": "Doublets",
    "quatorze": "Quatorze",
    "bakers_game": "Baker's Game",
    "hopscotch": "Hopscotch",
}


@cache
def _template(name: str) -> Template:
    return Template(resources.files(__package__).joinpath(name).read_text(encoding="utf-8"))


def game_title(game: str) -> str:
    return GAME_TITLES.get(game, game.replace("_", " ").title())


def leaderboard_path(game: str, date: str) -> str:
    return f"/leaderboard/{quote(game)}/{quote(date)}"


def format_time(ms: int) -> str:
    """Minutes and seconds to a tenth, hours when needed: 83_400 -> "1:23.4"."""
    tenths = ms // 100
    s, t = divmod(tenths, 10)
    m, s = divmod(s, 60)
    h, m = divmod(m, 60)
    return f"{h}:{m:02d}:{s:02d}.{t}" if h else f"{m}:{s:02d}.{t}"


NEW_TITLE = "a player made on this day"


def _day_row(e: Entry, replay: str | None) -> str:
    won = '<span class="won" title="won">✓</span>' if e.won else ""
    if e.resigned:  # why it ranks after an equal score played out
        won = '<span title="ranked after equal scores played out">resigned</span>'
    top = ' class="top1"' if e.rank == 1 else ""
    new = f' <span class="new" title="{NEW_TITLE}">new</span>' if e.new else ""
    name = escape(e.name)
    if replay is not None:
        name = f'<a href="{escape(replay)}" title="replay this game">{name}</a>'
    return (
        f"<tr{top}><td class=rank>{e.rank}</td><td class=name>{name}{new}</td>"
        f"<td>{e.score}</td><td>{e.moves}</td><td>{format_time(e.time_ms)}</td><td>{won}</td></tr>"
    )


def _all_row(e: Entry) -> str:
    top = ' class="top1"' if e.rank == 1 else ""
    return (
        f"<tr{top}><td class=rank>{e.rank}</td><td class=name>{escape(e.name)}</td>"
        f"<td>{e.days_won or 0}</td><td>{e.score}</td><td>{e.played or 0}</td>"
        f"<td>{e.best_streak or 0}</td></tr>"
    )


def _replay_of(board: Board, e: Entry) -> str:
    return "/replay/" + quote(daily_gid(board.date, board.game, e.player))


def _table(board: Board, replays: bool) -> str:
    if not board.entries:
        return '<p class="empty">No one has finished this one yet.</p>'
    if board.date == ALL_TIME:
        head = (
            "<th>Rank</th><th class=name>Player</th><th>Days won</th>"
            "<th>Total score</th><th>Played</th><th>Best streak</th>"
        )
        rows = "\n".join(_all_row(e) for e in board.entries)
    else:
        head = (
            "<th>Rank</th><th class=name>Player</th><th>Score</th>"
            "<th>Moves</th><th>Time</th><th>Won</th>"
        )
        rows = "\n".join(
            _day_row(e, _replay_of(board, e) if replays else None) for e in board.entries
        )
    return f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{rows}\n</tbody>\n</table>"


def _link(href: str, text: str, *, current: bool = False, rel: str = "") -> str:
    if current:
        return f'<span class="current" aria-current="page">{escape(text)}</span>'
    rel_attr = f' rel="{rel}"' if rel else ""
    return f'<a href="{escape(href)}"{rel_attr}>{escape(text)}</a>'


def render_leaderboard(
    board: Board,
    *,
    games: tuple[str, ...],
    today: dt.date,
    seed: int | None,
    par: int | None = None,
    line: list[str] | None = None,
    replays: bool = False,
) -> str:
    """The page of one board: its rows, links to the other games and to the days around it;
    `replays`: each name links to the replay of that player's game (days over only)."""
    title = game_title(board.game)
    game_links = " ".join(
        _link(leaderboard_path(g, board.date), game_title(g), current=g == board.game)
        for g in games
    )
    if board.date == ALL_TIME:
        heading = f"{title} · all time"
        subtitle = "Ranked by days won, then total score over every daily challenge."
        day_links = _link(leaderboard_path(board.game, today.isoformat()), "Today's challenge")
        day_links += " " + _link(f"/ratings/{quote(board.game)}", "Ratings")
    else:
        day = dt.date.fromisoformat(board.date)
        heading = f"{title} · daily challenge"
        status = "in progress" if day == today else "final"
        subtitle = f"{day:%A} {day.day} {day:%B %Y} (UTC) · {status}"
        prev = day - dt.timedelta(days=1) if day > dt.date.min else day
        nxt = day + dt.timedelta(days=1)
        prev_link = _link(leaderboard_path(board.game, prev.isoformat()), f"← {prev}", rel="prev")
        if prev == day:
            prev_link = f'<span class="disabled">← {prev}</span>'
        if nxt <= today:
            next_link = _link(leaderboard_path(board.game, nxt.isoformat()), f"{nxt} →", rel="next")
        else:
            next_link = f'<span class="disabled">{nxt} →</span>'
        all_link = _link(leaderboard_path(board.game, ALL_TIME), "All time")
        ratings = _link(f"/ratings/{quote(board.game)}", "Ratings")
        day_links = f"{prev_link} {all_link} {ratings} {next_link}"
    shown = len(board.entries)
    players = "player" if board.total == 1 else "players"
    footer = f"{board.total} {players}"
    if shown < board.total:
        footer += f", top {shown} shown"
    if any(e.new for e in board.entries):
        footer += f" · <span class=new>new</span>: {NEW_TITLE}"
    if seed is not None:
        footer += f" · deal seed <code>{seed}</code> (replay it with the engine)"
        if par is not None and line:
            # Move strings are RULES.md's (letters, digits, '-'), escaped all the same.
            footer += (
                f'<p class="par">Par {par}: a winning line found by the solver, '
                f"<code>{escape(' '.join(line))}</code></p>"
            )
    elif board.date != ALL_TIME:
        footer += " · the deal's seed is published when the day is over"
    if replays and board.entries and board.date != ALL_TIME:
        footer += '<p class="replays">Each name links to the replay of that game, move by move.</p>'

    return _template("leaderboard.html").substitute(
        title=escape(f"{heading}{'' if board.date == ALL_TIME else ' ' + board.date}"),
        heading=escape(heading),
        subtitle=escape(subtitle),
        game_links=game_links,
        day_links=day_links,
        table=_table(board, replays and board.date != ALL_TIME),
        footer=footer,
    )
