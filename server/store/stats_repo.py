"""Players' daily-challenge statistics per game, and the all-time boards they feed.

For each game a player has one row (server/store/boards.py's `AllTimeRow`, kept in the game's
all-time hash): daily attempts finished (`played`), won, totals of score, moves and time, and two
streaks, each with its best:

- `streak`: consecutive UTC days on which the player finished the daily of that game;
- `win_streak`: consecutive UTC days on which they won it.

A current streak is alive while its last day is today or yesterday; after that it reads as 0.
The days themselves are kept in two small sorted sets per player and game, so a result that
arrives late (an attempt closed at midnight after the next day's was already finished) still
joins the right run. Recording is idempotent per (game, player, day): retrying it is harmless.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import msgspec

from protocol.messages import GameStats
from server.store import scripts
from server.store.boards import (
    DAYS_WON_CAP,
    SEQ_DIGITS,
    TOTAL_SCORE_BITS,
    TOTAL_SCORE_CAP,
    AllTimeRow,
    Result,
    day_number,
)
from server.store.keys import Keys
from server.store.unavailable import unavailable_on_failure


def current(run_length: int, run_end: int, today: dt.date) -> int:
    """A streak still counts if its last day is today or yesterday."""
    return run_length if run_end >= day_number(today) - 1 else 0


@unavailable_on_failure
class StatsRepo:
    """Counts finished daily attempts into players' stats and the all-time boards."""

    def __init__(self, redis: Any, keys: Keys) -> None:
        self.redis = redis
        self.keys = keys
        self._record = redis.register_script(scripts.RECORD_STATS)
        self._decoder = msgspec.json.Decoder(AllTimeRow)

    async def record(self, game: str, date: dt.date, result: Result) -> bool:
        """Count one daily result; False when that day was already counted for the player."""
        k = self.keys
        done = await self._record(
            keys=[
                k.all_board(game),
                k.all_stats(game),
                k.played_days(game, result.player),
                k.won_days(game, result.player),
                k.all_seq(game),
            ],
            args=[
                result.player,
                day_number(date),
                "1" if result.won else "0",
                result.score,
                result.moves,
                result.time_ms,
                result.name,
                DAYS_WON_CAP,
                TOTAL_SCORE_CAP,
                1 << TOTAL_SCORE_BITS,
            ],
        )
        return bool(done)

    async def row(self, game: str, player: str) -> AllTimeRow | None:
        raw = await self.redis.hget(self.keys.all_stats(game), player)
        if raw is None:
            return None
        value = raw.encode() if isinstance(raw, str) else raw
        return self._decoder.decode(value[SEQ_DIGITS:])

    async def player_stats(
        self, games: tuple[str, ...], player: str, today: dt.date
    ) -> tuple[str | None, dict[str, GameStats]]:
        """The player's last known name (None if they never finished a daily) and stats per game."""
        name: str | None = None
        out: dict[str, GameStats] = {}
        for game in games:
            r = await self.row(game, player)
            if r is None:
                out[game] = GameStats()
                continue
            name = name or r.name
            last: str | msgspec.UnsetType = msgspec.UNSET
            if r.streak_end >= 0:
                last = (dt.date(1970, 1, 1) + dt.timedelta(days=r.streak_end)).isoformat()
            out[game] = GameStats(
                played=r.played,
                won=r.won,
                streak=current(r.streak, r.streak_end, today),
                best_streak=r.best_streak,
                win_streak=current(r.win_streak, r.win_streak_end, today),
                best_win_streak=r.best_win_streak,
                total_score=r.score,
                last_played=last,
            )
        return name, out
