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

# KEYS: all-time board, all-time rows hash, played days, won days, seq counter
# ARGV: player, day number, won ('1'/'0'), score, moves, time_ms, name
# Returns 1 when the result was counted, 0 when that day was already counted for the player.
_RECORD = """
local player, day, won = ARGV[1], tonumber(ARGV[2]), ARGV[3] == '1'
if redis.call('ZADD', KEYS[3], 'NX', day, ARGV[2]) == 0 then return 0 end
if won then redis.call('ZADD', KEYS[4], 'NX', day, ARGV[2]) end
local old = redis.call('HGET', KEYS[2], player)
local s
if old then
  s = cjson.decode(string.sub(old, 11))
else
  s = {played = 0, won = 0, score = 0, moves = 0, time_ms = 0,
       streak = 0, streak_end = -1, best_streak = 0,
       win_streak = 0, win_streak_end = -1, best_win_streak = 0}
end
s.name = ARGV[7]
s.played = s.played + 1
if won then s.won = s.won + 1 end
s.score = s.score + tonumber(ARGV[4])
s.moves = s.moves + tonumber(ARGV[5])
s.time_ms = s.time_ms + tonumber(ARGV[6])
-- The run of consecutive days in `key` that contains day d: its length and last day.
local function run(key, d)
  local lo, hi = d, d
  while redis.call('ZSCORE', key, string.format('%d', lo - 1)) do lo = lo - 1 end
  while redis.call('ZSCORE', key, string.format('%d', hi + 1)) do hi = hi + 1 end
  return hi - lo + 1, hi
end
local function latest(key)
  return tonumber(redis.call('ZRANGE', key, -1, -1)[1])
end
local len, hi = run(KEYS[3], day)
if len > s.best_streak then s.best_streak = len end
if hi == latest(KEYS[3]) then s.streak, s.streak_end = len, hi end
if won then
  len, hi = run(KEYS[4], day)
  if len > s.best_win_streak then s.best_win_streak = len end
  if hi == latest(KEYS[4]) then s.win_streak, s.win_streak_end = len, hi end
end
if old then redis.call('ZREM', KEYS[1], string.sub(old, 1, 10) .. ':' .. player) end
local seq = string.format('%010d', redis.call('INCR', KEYS[5]))
local w = math.min(s.won, tonumber(ARGV[8]))
local sc = math.min(s.score, tonumber(ARGV[9]))
local packed = (tonumber(ARGV[8]) - w) * tonumber(ARGV[10]) + (tonumber(ARGV[9]) - sc)
redis.call('ZADD', KEYS[1], string.format('%.0f', packed), seq .. ':' .. player)
redis.call('HSET', KEYS[2], player, seq .. cjson.encode(s))
return 1
"""


def current(run_length: int, run_end: int, today: dt.date) -> int:
    """A streak still counts if its last day is today or yesterday."""
    return run_length if run_end >= day_number(today) - 1 else 0


class StatsStore:
    """Counts finished daily attempts into players' stats and the all-time boards."""

    def __init__(self, redis: Any, keys: Keys) -> None:
        self.redis = redis
        self.keys = keys
        self._record = redis.register_script(_RECORD)
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
