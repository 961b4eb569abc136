"""The ratings page of a game (/ratings/GAME): its quick races' ratings, highest first, in
the leaderboard pages' template and look (no JavaScript)."""

from __future__ import annotations

import datetime as dt
from html import escape
from urllib.parse import quote

from protocol.messages import RatingEntry, RatingsReply
from server.edge.pages import _link, _template, game_title, leaderboard_path


def ratings_path(game: str) -> str:
    return f"/ratings/{quote(game)}"


PROVISIONAL = ' <span class=new title="fewer than 10 rated races">provisional</span>'


def _row(e: RatingEntry) -> str:
    top = ' class="top1"' if e.rank == 1 else ""
    mark = PROVISIONAL if e.provisional else ""
    return (
        f"<tr{top}><td class=rank>{e.rank}</td><td class=name>{escape(e.name)}{mark}</td>"
        f"<td>{e.rating}</td><td>{e.games}</td></tr>"
    )


def render_ratings(board: RatingsReply, *, games: tuple[str, ...], today: dt.date) -> str:
    title = game_title(board.game)
    game_links = " ".join(
        _link(ratings_path(g), game_title(g), current=g == board.game) for g in games
    )
    links = (
        _link(leaderboard_path(board.game, today.isoformat()), "Today's challenge")
        + " "
        + _link(ratings_path(board.game), "Ratings", current=True)
    )
    if board.entries:
        rows = "\n".join(_row(e) for e in board.entries)
        table = (
            "<table>\n<thead><tr><th>Rank</th><th class=name>Player</th><th>Rating</th>"
            f"<th>Races</th></tr></thead>\n<tbody>\n{rows}\n</tbody>\n</table>"
        )
    else:
        table = '<p class="empty">No one has a rating in this game yet.</p>'
    players = "player" if board.total == 1 else "players"
    footer = f"{board.total} rated {players}"
    if len(board.entries) < board.total:
        footer += f", top {len(board.entries)} shown"
    footer += (
        " · ratings from quick races (and races created rated); a new player starts at 1500 "
        "and is provisional for their first 10 rated races"
    )
    heading = f"{title} · ratings"
    return _template("leaderboard.html").substitute(
        title=escape(heading),
        heading=escape(heading),
        subtitle=escape("Quick races, rated by the Plackett-Luce model."),
        game_links=game_links,
        day_links=links,
        table=table,
        footer=footer,
    )
