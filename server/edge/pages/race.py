"""The race page, /race/CODE: what a spectator is sent on `watch`, as one HTML page.

Every seat's board is the engine's text drawing of that seat's public view (what its own
player sees), its cards written as on the replay page (10♥, red suits in red), with its
score, moves and clock; a finished race adds its standings, a link to every seat's replay
and, when one was asked for, to the rematch. While
the race is on, the page asks the browser to load it again every REFRESH_S seconds (a
meta refresh: the pages carry no script). Nothing here reads a seed: a page is made from
the spectator's messages only, and shows no seed even once the result has one.
"""

from __future__ import annotations

from html import escape
from typing import Any

import msgspec

import engine
import protocol as p
from server.edge.pages import _template, format_time, game_title
from server.edge.pages.replay_page import board_html, replay_path

REFRESH_S = 2


def race_path(code: str) -> str:
    return f"/race/{code}"


def _view(board: p.SeatBoard) -> dict[str, Any]:
    view = board.view
    if isinstance(view, msgspec.Raw):
        return dict(msgspec.msgpack.decode(view))
    return dict(view)


def _ending(standing: p.Standing, board: p.SeatBoard | None, limit_ms: int | None) -> str:
    """How a ranked seat's game ended: won, resigned, stuck (no move left) or time up."""
    if standing.won:
        return '<span class="won">won</span>'
    if standing.resigned:
        return "resigned"
    if board is not None and board.over:
        return "stuck"
    if limit_ms is not None and standing.time_ms >= limit_ms:
        return "time up"
    return "stuck"


def _outcome(
    board: p.SeatBoard | None, standing: p.Standing | None, limit_ms: int | None = None
) -> str:
    if standing is not None:
        return _ending(standing, board, limit_ms)
    if board is None:
        return ""
    if board.won:
        return '<span class="won">won</span>'
    if board.over:
        return "stuck"
    return "finished" if board.finished else "playing"


def _seat_card(
    seat: p.Seat,
    host: bool,
    board: p.SeatBoard | None,
    progress: p.Progress | None,
    standing: p.Standing | None,
    limit_ms: int | None = None,
) -> str:
    badge = ' <span class="badge">host</span>' if host else ""
    head = f'<h2><span class="name">{escape(seat.name)}{badge}</span>'
    head += f"<span>{_outcome(board, standing, limit_ms)}</span></h2>"
    if board is None:
        return f'<section class="card seat">{head}<p class="figures">waiting</p></section>'
    view = _view(board)
    moves = progress.moves if progress is not None else view.get("moves", board.n)
    figures = (
        f"score {board.score} / {view.get('max_score', '?')} · moves {moves} · "
        f"time {format_time(board.elapsed_ms)}"
    )
    drawing = board_html(engine.render_text(view))
    return (
        f'<section class="card seat">{head}<div class="figures">{figures}</div>'
        f"<pre>{drawing}</pre></section>"
    )


def _standings(
    result: p.Result,
    boards: dict[str, p.SeatBoard],
    limit_ms: int | None,
    offer: p.RematchOffer | None,
) -> str:
    rows = []
    for line, s in enumerate(result.standings, 1):
        top = ' class="top1"' if s.rank == 1 else ""
        how = _ending(s, boards.get(s.player), limit_ms)
        replay = escape(f"{replay_path(result.race)}:{line}")  # RACE:LINE, as the client says
        rows.append(
            f"<tr{top}><td class=rank>{s.rank}</td><td class=name>{escape(s.name)}</td>"
            f"<td>{s.score}</td><td>{s.moves}</td><td>{format_time(s.time_ms)}</td>"
            f'<td>{how}</td><td><a href="{replay}">replay</a></td></tr>'
        )
    head = (
        "<th>Rank</th><th class=name>Player</th><th>Score</th><th>Moves</th><th>Time</th>"
        "<th></th><th></th>"
    )
    body = "\n".join(rows)
    rematch = ""
    if offer is not None:
        link = escape(race_path(offer.next))
        rematch = (
            f'<p class="rematch">{escape(offer.name)} asked for a rematch: '
            f'<a href="{link}">race {escape(offer.next)}</a></p>'
        )
    return (
        f'<div class="card standings"><table>\n<thead><tr>{head}</tr></thead>\n'
        f"<tbody>\n{body}\n</tbody>\n</table>{rematch}</div>"
    )


def render_race(messages: list[p.Message], now_ms: int) -> str:
    """The page of a race from what `watch` answers (its lobby first)."""
    lobby = next(m for m in messages if isinstance(m, p.Lobby))
    start = next((m for m in messages if isinstance(m, p.Start)), None)
    result = next((m for m in messages if isinstance(m, p.Result)), None)
    offer = next((m for m in messages if isinstance(m, p.RematchOffer)), None)
    limit_ms = None
    if start is not None and start.ends_at_ms is not None:
        limit_ms = start.ends_at_ms - start.starts_at_ms
    boards = {m.player: m for m in messages if isinstance(m, p.SeatBoard)}
    progress = {m.player: m for m in messages if isinstance(m, p.Progress)}
    standings = {s.player: s for s in result.standings} if result is not None else {}
    title = game_title(lobby.game)
    players = len(lobby.players)
    seated = f"{players} player{'s' if players != 1 else ''}"
    if start is None:
        subtitle = f"In the lobby, {seated}: waiting for the host to start"
        names = "".join(f"<li>{escape(s.name)}</li>" for s in lobby.players)
        seats = f'<div class="card"><ul class="players">{names}</ul></div>'
    else:
        if result is not None:
            subtitle = f"Finished · {seated}"
        else:
            subtitle = f"Running · {seated} · {format_time(max(0, now_ms - start.starts_at_ms))}"
            if start.ends_at_ms is not None:
                subtitle += f" · {format_time(max(0, start.ends_at_ms - now_ms))} left"
        cards = [
            _seat_card(
                s,
                s.player == lobby.host,
                boards.get(s.player),
                progress.get(s.player),
                standings.get(s.player),
                limit_ms,
            )
            for s in lobby.players
        ]
        seats = '<div class="seats">\n' + "\n".join(cards) + "\n</div>"
    live = result is None
    refresh = f'<meta http-equiv="refresh" content="{REFRESH_S}">\n' if live else ""
    footer = (
        f"Live: this page reloads every {REFRESH_S} s. Each board is what its player sees; "
        f"face-down cards stay face down. Watch it in a terminal with "
        f"<code>solitaire watch {escape(lobby.race)}</code>."
        if live
        else "The race is over: these are the final boards."
    )
    return _template("race.html").substitute(
        refresh=refresh,
        title=escape(f"Race {lobby.race} · {title}"),
        heading=escape(f"{title} · race {lobby.race}"),
        subtitle=escape(subtitle),
        standings=_standings(result, boards, limit_ms, offer) if result is not None else "",
        seats=seats,
        footer=footer,
    )
