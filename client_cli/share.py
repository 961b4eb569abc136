"""A daily attempt's result as a few lines to paste into a chat, without spoilers.

Game, date, won or not, score, moves, time and rank, and a small picture of the game:
one character per tenth of its moves, taller for more cards home in that tenth (the
score, in every game here, counts the cards home). Nothing in it tells a card, a move
or the deal. No I/O: the play screen's summary and `--plain` print what this returns.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping

import engine
from client_cli.boards import game_title
from client_cli.game_session import clock
from client_cli.words import count
from protocol import Entry

BARS = "▁▂▃▄▅▆▇█"  # the first is a tenth with no card home
ASCII_BARS = "_.:-=+*#"
UNKNOWN = "?"  # a tenth played before this client saw the game (an attempt resumed)
TENTHS = 10


def progress(scores: Mapping[int, int], moves: int, unicode: bool = True) -> str:
    """Cards home per tenth of a game of `moves` moves, from the score after each move
    seen (`scores`: move count -> score). Empty when no tenth was seen at all."""
    bars = BARS if unicode else ASCII_BARS

    def score_at(n: int) -> int | None:
        seen = [k for k in scores if k <= n]
        return scores[max(seen)] if seen else None

    bounds = [round(i * moves / TENTHS) for i in range(TENTHS + 1)]
    gains: list[int | None] = []
    for lo, hi in itertools.pairwise(bounds):
        before, after = score_at(lo), score_at(hi)
        gains.append(None if before is None or after is None else max(0, after - before))
    known = [g for g in gains if g is not None]
    if not known:
        return ""
    most = max(known) or 1
    top = len(bars) - 1
    return "".join(
        UNKNOWN if g is None else bars[0] if g == 0 else bars[max(1, round(g * top / most))]
        for g in gains
    )


def share_text(
    game: str,
    date: str,
    mine: Entry,
    total: int,
    scores: Mapping[int, int] | None = None,
    unicode: bool = True,
) -> str:
    """The lines to share: `mine` is the player's entry on the day's board (its rank then)."""
    dot = "·" if unicode else "-"
    won = ("Won ✓" if unicode else "Won") if mine.won else "Not won"
    max_score = engine.MAX_SCORE.get(game, 0)
    lines = [
        f"solitaire-race {dot} {game_title(game)} daily {date}",
        f"{won} {dot} {mine.score}/{max_score} {dot} {count(mine.moves, 'move')} {dot} "
        f"{clock(mine.time_ms)} {dot} #{mine.rank} of {total}",
    ]
    picture = progress(scores or {}, mine.moves, unicode)
    if picture:
        lines.append(picture)
    return "\n".join(lines)
