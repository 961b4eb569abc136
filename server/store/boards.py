"""Daily and all-time leaderboards in Redis sorted sets.

Its keys are named in server/store/keys.py (the daily feature's part of the layout).

Day boards rank by score (higher first), then an attempt that was not resigned before one
that was, then time_ms (lower first), then moves (fewer first), and all four are packed into
one sorted-set score, LOWER IS BETTER, so that the order of the zset is the ranking and ZCOUNT
answers "how many are strictly better" in O(log n):

    packed = (63 - score) << 47  |  resigned << 46  |  min(time_ms, 2^30 - 1) << 16
             |  min(moves, 2^16 - 1)

6 + 1 + 30 + 16 = 53 bits, so every packed value is an integer below 2^53 and a double holds
it exactly (Redis scores are doubles). Scores of our games are at most 52 (< 63); a daily
attempt lasts at most a day (86,400,000 ms, far below the 12.4 days that 30 bits hold); moves
are clipped at 65,535, which no real game reaches.

Boards written before the resigned bit (layout 1) packed time in 31 bits at the same place:
since no time reached bit 46, their values read as "not resigned" in this layout, which is
right for every attempt that was not resigned. A board of layout 1 is brought to layout 2 the
first time it is read (`LeaderboardStore.upgrade_day`): the attempts that were resigned
(their game records say so) get the bit and `resigned` in their rows; `:layout` then says 2.

Entries equal on all three share a rank and are listed in the order they finished: each member
is "<SEQ>:<player>" with SEQ the zero-padded finishing sequence number of the board, and Redis
orders members of equal score lexicographically, hence by SEQ. A rank is 1 + the number of
members with a strictly lower packed value, which is the index of the first member having that
value; so within a window of ZRANGE results a member's rank is its index + 1 unless its value
equals the previous member's, in which case it shares that rank.

All-time boards (date "all") rank players by days won (more first), then total score over all
their daily attempts (higher first); players equal on both share a rank and are listed in the
order they reached that tally. Packed the same way, lower is better:

    packed = (2^16 - 1 - min(days_won, 2^16 - 1)) << 37  |  (2^37 - 1 - min(total_score, 2^37 - 1))
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

import msgspec

from protocol.limits import DEFAULT_LIMITS
from protocol.messages import Entry
from server.domain.ids import daily_gid
from server.store import scripts
from server.store.keys import Keys
from server.store.unavailable import unavailable_on_failure

log = logging.getLogger(__name__)
UPGRADED_MEMO = 10_000  # day boards known to be of this layout, kept at hand

SCORE_BITS = 6
RESIGNED_BITS = 1
TIME_BITS = 30
MOVES_BITS = 16
SCORE_CAP = (1 << SCORE_BITS) - 1
TIME_CAP = (1 << TIME_BITS) - 1
MOVES_CAP = (1 << MOVES_BITS) - 1

DAYS_WON_BITS = 16
TOTAL_SCORE_BITS = 37
DAYS_WON_CAP = (1 << DAYS_WON_BITS) - 1
TOTAL_SCORE_CAP = (1 << TOTAL_SCORE_BITS) - 1

SEQ_DIGITS = 10
DAY_LAYOUT = 2  # the layout of day boards this version writes (see the module docstring)
UPGRADE_BATCH = 1000  # rows of a layout-1 board read (and game records asked) at a time
ALL_TIME = "all"
EPOCH = dt.date(1970, 1, 1)


def pack_day(score: int, resigned: bool, time_ms: int, moves: int) -> int:
    """The sorted-set score of a daily result (lower is better; see the module docstring)."""
    s = min(max(score, 0), SCORE_CAP)
    t = min(max(time_ms, 0), TIME_CAP)
    m = min(max(moves, 0), MOVES_CAP)
    return (
        ((SCORE_CAP - s) << (RESIGNED_BITS + TIME_BITS + MOVES_BITS))
        | (int(resigned) << (TIME_BITS + MOVES_BITS))
        | (t << MOVES_BITS)
        | m
    )


def pack_all_time(days_won: int, total_score: int) -> int:
    """The sorted-set score of an all-time row (lower is better)."""
    w = min(max(days_won, 0), DAYS_WON_CAP)
    s = min(max(total_score, 0), TOTAL_SCORE_CAP)
    return ((DAYS_WON_CAP - w) << TOTAL_SCORE_BITS) | (TOTAL_SCORE_CAP - s)


def day_number(date: dt.date) -> int:
    """Days since 1970-01-01: consecutive days are consecutive integers (for streaks)."""
    return (date - EPOCH).days


class Result(msgspec.Struct, frozen=True):
    """One finished daily attempt, as it enters its day's board."""

    player: str
    name: str
    score: int
    moves: int
    time_ms: int
    won: bool
    new: bool = False  # the player was made on the day of the attempt
    resigned: bool = False


class _DayRow(msgspec.Struct, omit_defaults=True):
    name: str
    score: int
    moves: int
    time_ms: int
    won: bool
    new: bool = False  # absent from rows written before players were marked new
    resigned: bool = False  # absent from rows of attempts not resigned, and of layout 1


class Board(msgspec.Struct, omit_defaults=True):
    """A window of one board: the `leaderboard` message without `t`, `re` and `seed`."""

    game: str
    date: str
    total: int
    entries: list[Entry]
    me: Entry | None = None


class AllTimeRow(msgspec.Struct):
    """A player's running totals for one game (the all-time hash's JSON;
    server/store/stats_repo.py)."""

    name: str = ""
    played: int = 0
    won: int = 0
    score: int = 0
    moves: int = 0
    time_ms: int = 0
    streak: int = 0
    streak_end: int = -1
    best_streak: int = 0
    win_streak: int = 0
    win_streak_end: int = -1
    best_win_streak: int = 0


def _row(r: Result) -> _DayRow:
    return _DayRow(r.name, r.score, r.moves, r.time_ms, r.won, r.new, r.resigned)


def _packed(r: Result) -> int:
    return pack_day(r.score, r.resigned, r.time_ms, r.moves)


def _strip_seq(value: bytes | str) -> bytes:
    raw = value.encode() if isinstance(value, str) else value
    return raw[SEQ_DIGITS:]


@unavailable_on_failure
class LeaderboardStore:
    """Reads and writes day boards and all-time boards on a redis.asyncio client."""

    def __init__(
        self,
        redis: Any,
        keys: Keys,
        default_rows: int = DEFAULT_LIMITS.leaderboard_default_rows,
        max_rows: int = DEFAULT_LIMITS.leaderboard_max_rows,
    ) -> None:
        self.redis = redis
        self.keys = keys
        self.default_rows = default_rows  # rows of a window when the asker names none
        self.max_rows = max_rows
        self._record_day = redis.register_script(scripts.RECORD_DAY)
        self._window = redis.register_script(scripts.BOARD_WINDOW)
        self._day_decoder = msgspec.json.Decoder(_DayRow)
        self._all_decoder = msgspec.json.Decoder(AllTimeRow)
        self._upgraded: set[tuple[str, str]] = set()  # (game, date) of layout 2 already

    async def record_day(self, game: str, date: str, result: Result) -> int:
        """Enter a result on its day's board; 0 when the player already has an entry there."""
        seq = await self._record_day(
            keys=self._day_keys(game, date),
            args=[result.player, _packed(result), msgspec.json.encode(_row(result)), DAY_LAYOUT],
        )
        return int(seq)

    async def record_day_many(self, game: str, date: str, results: list[Result]) -> None:
        """Enter many results in pipelined batches (fills boards for tests and benchmarks)."""
        keys = self._day_keys(game, date)
        batch = 2000
        for i in range(0, len(results), batch):
            async with self.redis.pipeline(transaction=False) as pipe:
                for r in results[i : i + batch]:
                    args = [r.player, _packed(r), msgspec.json.encode(_row(r)), DAY_LAYOUT]
                    await self._record_day(keys=keys, args=args, client=pipe)
                await pipe.execute()

    def _day_keys(self, game: str, date: str) -> list[str]:
        k = self.keys
        return [k.day_board(game, date), k.day_entries(game, date), k.day_layout(game, date)]

    async def has_entry(self, game: str, date: str, player: str) -> bool:
        return bool(await self.redis.hexists(self.keys.day_entries(game, date), player))

    async def board(
        self,
        game: str,
        date: str,
        *,
        limit: int | None = None,
        asker: str | None = None,
        around_me: bool = False,
    ) -> Board:
        """A window of the board of `date` (an ISO date or "all"), with the asker's own row."""
        limit = max(1, min(limit or self.default_rows, self.max_rows))
        if date != ALL_TIME:
            await self.upgrade_day(game, date)
        if date == ALL_TIME:
            keys = [self.keys.all_board(game), self.keys.all_stats(game)]
        else:
            keys = [self.keys.day_board(game, date), self.keys.day_entries(game, date)]
        total, start, first_rank, me_rank, me_row, ms, rows = await self._window(
            keys=keys, args=[limit, asker or "", "1" if around_me else "0"]
        )
        entries: list[Entry] = []
        prev_packed: float | None = None
        rank = int(first_rank)
        for i in range(0, len(ms), 2):
            member = ms[i].decode() if isinstance(ms[i], bytes) else ms[i]
            packed = float(ms[i + 1])
            if prev_packed is not None and packed != prev_packed:
                rank = int(start) + i // 2 + 1
            prev_packed = packed
            row = rows[i // 2]
            if not row:  # cannot happen: a member and its row are written by one script
                continue
            entries.append(self._entry(date, rank, member[SEQ_DIGITS + 1 :], row))
        me = self._entry(date, int(me_rank), asker, me_row) if asker and me_row else None
        return Board(game=game, date=date, total=int(total), entries=entries, me=me)

    def _entry(self, date: str, rank: int, player: str, value: bytes | str) -> Entry:
        raw = _strip_seq(value)
        if date == ALL_TIME:
            a = self._all_decoder.decode(raw)
            return Entry(
                rank=rank,
                player=player,
                name=a.name,
                score=a.score,
                moves=a.moves,
                time_ms=a.time_ms,
                won=a.won > 0,
                days_won=a.won,
                played=a.played,
                best_streak=a.best_streak,
            )
        d = self._day_decoder.decode(raw)
        return Entry(
            rank, player, d.name, d.score, d.moves, d.time_ms, d.won, new=d.new, resigned=d.resigned
        )

    async def upgrade_day(self, game: str, date: str) -> None:
        """Bring a day board written before the resigned bit (layout 1) to layout 2: every
        attempt its game record says was resigned gets the bit, and `resigned` in its row.

        Idempotent and safe beside new results (written in layout 2 already): rows that say
        `resigned` are left alone, others are rewritten only if their record was resigned. An
        attempt whose record has expired (finished_race_ttl_s) keeps its place."""
        if (game, date) in self._upgraded:
            return
        layout_key = self.keys.day_layout(game, date)
        if int(await self.redis.get(layout_key) or 1) < DAY_LAYOUT:
            entries_key = self.keys.day_entries(game, date)
            board_key = self.keys.day_board(game, date)
            cursor, moved = 0, 0
            while True:
                cursor, rows = await self.redis.hscan(entries_key, cursor, count=UPGRADE_BATCH)
                moved += await self._upgrade_rows(game, date, board_key, entries_key, rows)
                if not cursor:
                    break
            await self.redis.set(layout_key, DAY_LAYOUT)
            log.info("day board %s %s upgraded to layout %d: %d resigned attempts marked",
                     game, date, DAY_LAYOUT, moved)  # fmt: skip
        if len(self._upgraded) >= UPGRADED_MEMO:
            self._upgraded.clear()
        self._upgraded.add((game, date))

    async def _upgrade_rows(
        self, game: str, date: str, board_key: str, entries_key: str, rows: dict[Any, Any]
    ) -> int:
        candidates: list[tuple[str, bytes, _DayRow]] = []
        for player, value in rows.items():
            player = player.decode() if isinstance(player, bytes) else player
            raw = value.encode() if isinstance(value, str) else value
            row = self._day_decoder.decode(raw[SEQ_DIGITS:])
            if not row.resigned:
                candidates.append((player, raw[:SEQ_DIGITS], row))
        if not candidates:
            return 0
        async with self.redis.pipeline(transaction=False) as pipe:
            for player, _seq, _row in candidates:
                game_keys = self.keys.game(daily_gid(date, game, player))
                assert game_keys is not None  # board members are player ids
                pipe.hget(game_keys.meta, "resigned")
            flags = await pipe.execute()
        moved = 0
        for (player, seq, row), flag in zip(candidates, flags, strict=True):
            if flag not in (b"1", "1"):
                continue
            row.resigned = True
            member = seq.decode() + ":" + player
            packed = pack_day(row.score, True, row.time_ms, row.moves)
            await self.redis.zadd(board_key, {member: packed}, xx=True)
            await self.redis.hset(entries_key, player, seq + msgspec.json.encode(row))
            moved += 1
        return moved
