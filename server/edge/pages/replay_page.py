"""The replay page: one position of a finished game, with links to step through it.

Works without JavaScript (every step is a link, `?n=K`); a short inline script, allowed by
its hash in the page's Content-Security-Policy and nothing else, adds the arrow keys. The
board is the engine's text drawing of the position's public view, cards coloured by suit.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import re
from html import escape
from urllib.parse import quote

import protocol as p
from server.domain.ids import race_gid
from server.edge.pages import _template, format_time, game_title, leaderboard_path

# The arrow keys follow the page's own links (marked data-key); the hint is written by the
# script itself, so that a browser without JavaScript does not promise keys that do nothing.
KEYS_SCRIPT = (
    "document.addEventListener('keydown',function(e){"
    "if(e.altKey||e.ctrlKey||e.metaKey)return;"
    "var a=document.querySelector('a[data-key=\"'+e.key+'\"]');"
    "if(a){e.preventDefault();location.href=a.href;}});"
    "document.getElementById('keys').textContent="
    "'Keys: \\u2190 \\u2192 step, Home and End jump to the start and the end.';"
)
KEYS_SCRIPT_HASH = base64.b64encode(hashlib.sha256(KEYS_SCRIPT.encode()).digest()).decode()
REPLAY_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; "
    f"script-src 'sha256-{KEYS_SCRIPT_HASH}'; base-uri 'none'; form-action 'none'"
)

SUIT_SYMBOLS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}
_CARD = re.compile(r"\b([A2-9TJQK])([CDHS])\b")
MOVES_AROUND = 12  # moves listed either side of the current one


def replay_path(gid: str) -> str:
    return f"/replay/{quote(gid)}"


def _card(match: re.Match[str]) -> str:
    rank, suit = match.groups()
    colour = "red" if suit in "DH" else "black"
    shown = ("10" if rank == "T" else rank) + SUIT_SYMBOLS[suit]
    return f'<span class="c {colour}">{shown}</span>'


def board_html(text: str) -> str:
    """The engine's text board, escaped, with each card in a span of its suit's colour."""
    return _CARD.sub(_card, escape(text))


def outcome(result: p.ReplayResult) -> str:
    if result.won:
        return "Won"
    if result.resigned:
        return "Resigned"
    if result.timed_out:
        return "Out of time"
    return "No moves left" if result.over else "Finished"


def _who(replay: p.ReplayReply) -> str:
    name = escape(replay.name)
    if replay.kind == "race" and replay.race:
        return f"{name} in race {escape(replay.race)}"
    if replay.kind == "daily" and replay.date:
        day = dt.date.fromisoformat(replay.date)
        return f"{name}'s daily challenge of {day:%A} {day.day} {day:%B %Y}"
    return f"{name}'s practice game"


def _step_link(gid: str, n: int, text: str, key: str, rel: str = "") -> str:
    rel_attr = f' rel="{rel}"' if rel else ""
    href = escape(f"{replay_path(gid)}?n={n}")
    return f'<a href="{href}" data-key="{key}"{rel_attr}>{escape(text)}</a>'


def _nav(replay: p.ReplayReply, n: int) -> str:
    gid, last = replay.gid, replay.n
    parts = []
    for target, text, key, rel, enabled in (
        (0, "« Start", "Home", "first", n > 0),
        (n - 1, "◀ Back", "ArrowLeft", "prev", n > 0),
        (n + 1, "Next ▶", "ArrowRight", "next", n < last),
        (last, "End »", "End", "last", n < last),
    ):
        if enabled:
            parts.append(_step_link(gid, target, text, key, rel))
        else:
            parts.append(f'<span class="disabled">{escape(text)}</span>')
    at = f'<span class="at">Move {n} of {last}</span>'
    return " ".join([*parts[:2], at, *parts[2:]])


def _moves(replay: p.ReplayReply, n: int) -> str:
    """The moves around the current position (those `replay` carries, from its `start`),
    each a link to the position after it."""
    if not replay.n:
        return '<p class="muted">No move was played.</p>'
    lo, hi = replay.start, replay.start + len(replay.moves)
    items = []
    if lo > 0:
        items.append('<li class="more">…</li>')
    for i in range(lo, hi):
        label = f"{i + 1}. {replay.moves[i - lo]}"
        if i + 1 == n:
            items.append(f'<li class="current" aria-current="step">{escape(label)}</li>')
        else:
            href = escape(f"{replay_path(replay.gid)}?n={i + 1}")
            items.append(f'<li><a href="{href}">{escape(label)}</a></li>')
    if hi < replay.n:
        items.append('<li class="more">…</li>')
    return f'<ol class="moves">{"".join(items)}</ol>'


def _standings(replay: p.ReplayReply) -> str:
    if not replay.standings or not replay.race:
        return ""
    rows = []
    for line, s in enumerate(replay.standings, 1):
        name = escape(s.name)
        href = escape(replay_path(race_gid(replay.race, s.player)))
        cell = name if s.player == replay.player else f'<a href="{href}">{name}</a>'
        note = "won" if s.won else ("resigned" if s.resigned else "")
        rows.append(
            f"<tr><td class=rank>{s.rank}</td><td class=name>{cell}</td><td>{s.score}</td>"
            f"<td>{s.moves}</td><td>{format_time(s.time_ms)}</td><td>{note}</td>"
            f"<td><code>{escape(replay.race)}:{line}</code></td></tr>"
        )
    head = (
        "<th>Rank</th><th class=name>Player</th><th>Score</th><th>Moves</th><th>Time</th>"
        "<th></th><th>Seat</th>"
    )
    return (
        '<h2>The race</h2><div class="card"><table>'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def render_replay(replay: p.ReplayReply, n: int, board: str) -> str:
    """The page of position `n` (after n moves) of a replay; `board` is its text drawing.
    `replay` carries the moves around `n` (move n among them, when n > 0)."""
    r = replay.result
    moves = f"{r.moves} move{'' if r.moves == 1 else 's'}"
    summary = [outcome(r), f"score {r.score}/{r.max_score}", moves, format_time(r.time_ms)]
    if r.rank is not None and r.of is not None:
        summary.append(f"rank {r.rank} of {r.of}")
    played = "The deal"
    if n:
        played = f"Move {n}: <code>{escape(replay.moves[n - 1 - replay.start])}</code>"
    links = [f'<a href="{escape(replay_path(replay.gid))}.json">moves as JSON</a>']
    if replay.kind == "daily" and replay.date:
        board_link = escape(leaderboard_path(replay.game, replay.date))
        links.insert(0, f'<a href="{board_link}">the day\'s leaderboard</a>')
    return _template("replay.html").substitute(
        title=escape(f"{game_title(replay.game)} replay · {replay.name} · move {n}"),
        heading=escape(f"{game_title(replay.game)} · replay"),
        subtitle=_who(replay),
        summary=escape(" · ".join(summary)),
        nav=_nav(replay, n),
        played=played,
        board=board_html(board),
        moves=_moves(replay, n),
        standings=_standings(replay),
        footer=(
            f"Deal seed <code>{replay.seed}</code>; every position is the engine's replay of "
            f"the stored moves from the deal. See {' or '.join(links)}."
        ),
        script=KEYS_SCRIPT,
    )
