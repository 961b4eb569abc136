"""The daily challenge: one deal per game per UTC day, the same for every player.

The deal's seed is HMAC-SHA256(secret, "<date>:<game>") mapped into 1..2^31-1, so nobody can
work it out before the server publishes it (with the day's leaderboard, once the day is over),
and anyone can check afterwards that the deal was fixed in advance.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import logging
import re
from collections.abc import Callable
from typing import Any

from server import protocol as p
from server.games import GameRecord
from server.keys import daily_gid
from server.leaderboard import (
    ALL_TIME,
    DEFAULT_LIMIT,
    Board,
    Entry,
    Keys,
    LeaderboardStore,
    Result,
)
from server.stats import GameStats, StatsStore

log = logging.getLogger(__name__)

DAY_MS = 86_400_000
SWEEP_BATCH = 200

SEED_MAX = 2**31 - 1
SECRET_BYTES = 32
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def daily_seed(secret: bytes, date: dt.date | str, game: str) -> int:
    """The seed of `game`'s daily deal on `date` (the one place that chooses daily deals)."""
    day = date.isoformat() if isinstance(date, dt.date) else date
    digest = hmac.new(secret, f"{day}:{game}".encode(), hashlib.sha256).digest()
    # 64 bits reduced modulo 2^31 - 1: the bias is below 2^-32, invisible.
    return int.from_bytes(digest[:8], "big") % SEED_MAX + 1


def utc_date(now_s: float) -> dt.date:
    """The UTC calendar date at `now_s` seconds since the epoch (the server's clock)."""
    return dt.datetime.fromtimestamp(now_s, dt.UTC).date()


def day_start_s(date: dt.date) -> float:
    """Seconds since the epoch at 00:00 UTC of `date`."""
    return dt.datetime(date.year, date.month, date.day, tzinfo=dt.UTC).timestamp()


def parse_date(text: object) -> dt.date | None:
    """A strict YYYY-MM-DD date, or None for anything else (wrong type, shape or calendar day)."""
    if not isinstance(text, str) or not _ISO_DATE.fullmatch(text):
        return None
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        return None


class LeaderboardReply(p.Message, tag="leaderboard"):
    """The `leaderboard` message (and the JSON of /leaderboard/GAME/DATE.json)."""

    game: str
    date: str
    total: int
    entries: list[Entry]
    me: Entry | None = None
    seed: int | None = None


class StatsReply(p.Message, tag="stats"):
    """The `stats` message: a player's daily statistics per game."""

    player: str
    name: str
    games: dict[str, GameStats]


class DailyRefused(Exception):
    """A daily request that gets an `error` reply."""

    def __init__(self, code: str, msg: str) -> None:
        super().__init__(msg)
        self.code = code
        self.msg = msg


# Close an attempt whose day is over, as it stands. KEYS: game meta. ARGV: end ms.
# Returns 1 closed now, 0 already finished, -1 no such game.
_CLOSE_ATTEMPT = """
local st = redis.call('HMGET', KEYS[1], 'finished', 'started_at_ms')
if not st[2] then return -1 end
if st[1] == '1' then return 0 end
redis.call('HSET', KEYS[1], 'finished', '1', 'finished_at_ms', ARGV[1], 'timed_out', '1')
return 1
"""


class DailyService:
    """The daily challenge over the stores: attempts, dates, seeds, boards and stats.

    `store` is the server's game store (server/store.py): a daily attempt is one of its games,
    kind "daily", that ends at the next 00:00 UTC.
    """

    def __init__(
        self,
        store: Any,
        secret: bytes,
        clock: Callable[[], float],
        games: tuple[str, ...],
    ) -> None:
        self.store = store
        self.redis = store.redis
        self.keys = Keys(store.config.namespace)
        self.boards = LeaderboardStore(self.redis, self.keys)
        self.stats = StatsStore(self.redis, self.keys)
        self.secret = secret
        self.clock = clock
        self.games = games
        self._close = self.redis.register_script(_CLOSE_ATTEMPT)

    # ------------------------------------------------------------ days and seeds

    def today(self) -> dt.date:
        return utc_date(self.clock())

    def seed(self, game: str, date: dt.date) -> int:
        return daily_seed(self.secret, date, game)

    # ------------------------------------------------------------ attempts

    async def attempt(self, player: str, name: str, game: str, now_ms: int) -> GameRecord:
        """Today's attempt of `player` at `game`: created now, or the unfinished one resumed."""
        date = utc_date(now_ms / 1000)
        gid = daily_gid(date.isoformat(), game, player)
        loaded = await self.store.load_game(gid)
        if loaded is None:
            if await self.boards.has_entry(game, date.isoformat(), player):
                raise DailyRefused(p.ALREADY_PLAYED, f"you have played the {game} daily today")
            ends = int(day_start_s(date) * 1000) + DAY_MS
            record = GameRecord(
                gid=gid,
                kind="daily",
                game=game,
                seed=self.seed(game, date),
                player=player,
                name=name,
                date=date.isoformat(),
                started_at_ms=now_ms,
                ends_at_ms=ends,
            )
            # Indexed first, so that the sweeper ranks it at midnight whatever happens next.
            await self.redis.zadd(self.keys.open_attempts(), {gid: ends})
            if await self.store.create_game(record):
                await self.store.add_player_game(player, gid)
                log.info("daily attempt started: player=%s game=%s date=%s", player, game, date)
                return record
            loaded = await self.store.load_game(gid)  # made meanwhile by another connection
            if loaded is None:
                raise DailyRefused(p.UNAVAILABLE, "could not start the daily attempt; try again")
        record = loaded[0]
        if record.finished:
            raise DailyRefused(p.ALREADY_PLAYED, f"you have played the {game} daily today")
        return record

    def result_of(self, record: GameRecord) -> Result:
        end = record.finished_at_ms or record.ends_at_ms
        return Result(
            player=record.player,
            name=record.name,
            score=record.score,
            moves=record.moves,
            time_ms=record.elapsed_ms(end),
            won=record.won,
        )

    async def finished(self, record: GameRecord) -> None:
        """Rank a finished attempt on its day's board and count it in the player's stats.

        Safe to call more than once for the same attempt (both writes are idempotent), so the
        move handler and the sweeper may both do it.
        """
        result = self.result_of(record)
        date = dt.date.fromisoformat(record.date)
        seq = await self.boards.record_day(record.game, record.date, result)
        await self.stats.record(record.game, date, result)
        await self.redis.zrem(self.keys.open_attempts(), record.gid)
        if seq:
            log.info(
                "daily ranked: player=%s game=%s date=%s score=%d moves=%d time_ms=%d",
                record.player, record.game, record.date,
                result.score, result.moves, result.time_ms,
            )  # fmt: skip

    async def sweep(self, now_ms: int, owner: str, lock_ms: int = 10_000) -> list[GameRecord]:
        """Close and rank the attempts whose day is over; returns those closed by this call.

        Any instance may call this every second or so: a short lock lets one of them do the
        work, and the writes are idempotent anyway.
        """
        due = await self.redis.zrangebyscore(
            self.keys.open_attempts(), "-inf", now_ms, start=0, num=SWEEP_BATCH
        )
        if not due:
            return []
        got = await self.redis.set(self.keys.sweep_lock(), owner, nx=True, px=lock_ms)
        if not got:
            return []
        closed: list[GameRecord] = []
        try:
            for raw in due:
                gid = raw.decode() if isinstance(raw, bytes) else raw
                closed_now = await self._close_one(gid)
                if closed_now is not None:
                    closed.append(closed_now)
        finally:
            await self.redis.delete(self.keys.sweep_lock())
        return closed

    async def _close_one(self, gid: str) -> GameRecord | None:
        keys = self.store.game_keys(gid)
        if keys is None:
            await self.redis.zrem(self.keys.open_attempts(), gid)
            return None
        status = int(await self._close(keys=[keys.meta], args=[await self._ends_at(keys.meta)]))
        loaded = await self.store.load_game(gid)
        if status < 0 or loaded is None:
            await self.redis.zrem(self.keys.open_attempts(), gid)
            return None
        record = loaded[0]
        await self.finished(record)
        if status == 1:
            log.info("daily attempt closed at the end of its day: player=%s game=%s date=%s",
                     record.player, record.game, record.date)  # fmt: skip
            return record
        return None

    async def _ends_at(self, meta_key: str) -> int:
        return int(await self.redis.hget(meta_key, "ends_at_ms") or 0)

    # ------------------------------------------------------------ boards

    async def find_board(
        self,
        game: str,
        date_text: str | None,
        *,
        limit: int = DEFAULT_LIMIT,
        asker: str | None = None,
        around_me: bool = False,
    ) -> tuple[Board, int | None] | str:
        """A board and its seed (None while the day is not over), or why there is none."""
        today = self.today()
        if date_text == ALL_TIME:
            board = await self.boards.board(
                game, ALL_TIME, limit=limit, asker=asker, around_me=around_me
            )
            return board, None
        date = today if date_text is None else parse_date(date_text)
        if date is None:
            return f"bad date {date_text!r}: use YYYY-MM-DD or 'all'"
        if date > today:
            return f"the daily challenge of {date.isoformat()} has not begun"
        board = await self.boards.board(
            game, date.isoformat(), limit=limit, asker=asker, around_me=around_me
        )
        return board, (self.seed(game, date) if date < today else None)

    async def leaderboard(
        self, game: str, date_text: str | None, limit: int | None, asker: str, around_me: bool
    ) -> LeaderboardReply:
        found = await self.find_board(
            game, date_text, limit=limit or DEFAULT_LIMIT, asker=asker, around_me=around_me
        )
        if isinstance(found, str):
            code = p.BAD_REQUEST if found.startswith("bad date") else p.NOT_FOUND
            raise DailyRefused(code, found)
        return self.leaderboard_message(*found)

    @staticmethod
    def leaderboard_message(board: Board, seed: int | None) -> LeaderboardReply:
        return LeaderboardReply(
            game=board.game,
            date=board.date,
            total=board.total,
            entries=board.entries,
            me=board.me,
            seed=seed,
        )

    # ------------------------------------------------------------ stats

    async def player_stats(self, player: str) -> StatsReply:
        name = await self.store.player_name(player)
        if name is None:
            raise DailyRefused(p.NOT_FOUND, "no such player")
        _, per_game = await self.stats.player_stats(self.games, player, self.today())
        return StatsReply(player=player, name=name, games=per_game)
