"""The daily challenge: one deal per game per UTC day, the same for every player.

The deal's seed is HMAC-SHA256(secret, "<date>:<game>") mapped into 1..2^31-1, so nobody can
work it out before the server publishes it (with the day's leaderboard, once the day is over),
and anyone can check afterwards that the deal was fixed in advance.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import engine
import protocol as p
from server.daily.deals import DailyDeal, DailyDeals
from server.daily.seeds import DAY_MS, DaySeeds, day_start_s, parse_date, utc_date
from server.domain.changes import MUST_NOT_EXIST, GameChange, Written
from server.domain.ids import daily_gid, parse_gid
from server.domain.kinds import GameKind
from server.domain.records import GameRecord
from server.play.cache import LiveGames
from server.play.cache import load as load_live
from server.play.effects import Applier, to_player
from server.play.game_machine import dealt_fields, elapsed_ms, timed_out
from server.play.optimistic import Optimistic, Plan, done
from server.play.players import Who
from server.store.boards import ALL_TIME, Board, Result
from server.store.unavailable import StoreUnavailable

if TYPE_CHECKING:
    from server.metrics import Metrics
    from server.store.stores import Stores

log = logging.getLogger(__name__)


class DailyService:
    """The daily challenge over the stores: attempts, dates, seeds, boards and stats.

    `stores` are the server's repositories (server/store/stores.py): a daily attempt is one
    of its games, kind "daily", that ends at the next 00:00 UTC.
    """

    def __init__(
        self,
        stores: Stores,
        seeds: DaySeeds | bytes,
        clock: Callable[[], float],
        games: tuple[str, ...],
        metrics: Metrics | None = None,
        deals: DailyDeals | None = None,
    ) -> None:
        self.stores = stores
        self.deals = deals  # None: the HMAC seed itself (tests of the boards alone)
        self.metrics = metrics
        self.boards = stores.boards
        self.stats = stores.stats
        self.seeds = seeds if isinstance(seeds, DaySeeds) else DaySeeds(seeds)
        self.clock = clock
        self.games = games
        self.runner = Optimistic(1)

    # ------------------------------------------------------------ days and seeds

    def today(self) -> dt.date:
        return utc_date(self.clock())

    def seed(self, game: str, date: dt.date) -> int:
        """The day's HMAC seed: the first candidate for its deal (server/daily/deals.py)."""
        return self.seeds.seed(game, date)

    async def deal(self, game: str, date: dt.date) -> DailyDeal:
        """The deal everyone plays that day: proven winnable, found ahead of time."""
        if self.deals is None:
            return DailyDeal(game, date.isoformat(), self.seed(game, date), [], False, 0)
        return await self.deals.get(game, date)

    async def past_deal(self, game: str, date: dt.date) -> DailyDeal:
        """A finished day's deal as stored; never searched now (a day nobody was dealt, or
        one from before winnable dailies, had the HMAC seed, with no line)."""
        stored = await self.deals.stored(game, date) if self.deals is not None else None
        return stored or DailyDeal(game, date.isoformat(), self.seed(game, date), [], False, 0)

    # ------------------------------------------------------------ attempts

    async def attempt(
        self, player: str, name: str, game: str, now_ms: int
    ) -> tuple[GameRecord, bool]:
        """Today's attempt of `player` at `game`: (record, True) if created now, or the
        unfinished one to resume (record, False). Refused once the attempt is finished."""
        date = utc_date(now_ms / 1000)
        gid = daily_gid(date.isoformat(), game, player)
        loaded = await self.stores.games.load_record(gid)
        if loaded is None:
            if await self.boards.has_entry(game, date.isoformat(), player):
                raise p.Refused(p.ALREADY_PLAYED, f"you have played the {game} daily today")
            deal = await self.deal(game, date)
            record = self._new_record(gid, player, name, game, date, now_ms, deal.seed)
            # Indexed first, so that the sweeper ranks it at midnight whatever happens next.
            await self.stores.daily.index_open_attempt(gid, record.ends_at_ms)
            if await self._create(record):
                if self.metrics is not None:
                    self.metrics.daily_started.labels(game).inc()
                log.info("daily attempt started: player=%s game=%s date=%s", player, game, date)
                if record.finished:  # a deal with no move at all: ranked as it stands
                    await self.finished(record)
                return record, True
            loaded = await self.stores.games.load_record(
                gid
            )  # made meanwhile by another connection
            if loaded is None:
                raise p.Refused(p.UNAVAILABLE, "could not start the daily attempt; try again")
        record = loaded
        if record.finished:
            raise p.Refused(p.ALREADY_PLAYED, f"you have played the {game} daily today")
        return record, False

    async def _create(self, record: GameRecord) -> bool:
        """Store a new attempt and list it among the player's games, in one atomic step (a
        second connection asking at the same moment must never see it half written)."""
        change = GameChange(record, MUST_NOT_EXIST, all_fields=True)
        if await self.stores.games.write_game(change, index_games=True) is not Written.APPLIED:
            return False
        await self.stores.players.keep_player(record.player)  # a player who starts a game is kept
        return True

    def _new_record(
        self, gid: str, player: str, name: str, game: str, date: dt.date, now_ms: int, seed: int
    ) -> GameRecord:
        return GameRecord(
            gid=gid,
            kind=GameKind.DAILY,
            game=game,
            seed=seed,
            player=player,
            name=name,
            date=date.isoformat(),
            ends_at_ms=int(day_start_s(date) * 1000) + DAY_MS,
            **dealt_fields(engine.new_game(game, seed), now_ms),
        )

    async def standing(self, player: str, game: str, now_ms: int) -> p.DailyStatus:
        """Where `player` stands at today's `game`, without dealing anything."""
        date = utc_date(now_ms / 1000)
        day = date.isoformat()
        gid = daily_gid(day, game, player)
        ends_at_ms = int(day_start_s(date) * 1000) + DAY_MS
        (record,) = await self.stores.games.load_records([gid])
        if record is not None:
            return p.DailyStatus(
                game=game,
                date=day,
                status="finished" if record.finished else "in_progress",
                ends_at_ms=ends_at_ms,
                gid=gid,
            )
        # The attempt's record outlives its day by finished_race_ttl_s; its board row for good.
        played = await self.boards.has_entry(game, day, player)
        return p.DailyStatus(
            game=game,
            date=day,
            status="finished" if played else "not_started",
            ends_at_ms=ends_at_ms,
        )

    def result_of(self, record: GameRecord, new: bool = False) -> Result:
        end = record.finished_at_ms or record.ends_at_ms
        return Result(
            player=record.player,
            name=record.name,
            score=record.score,
            moves=record.moves,
            time_ms=elapsed_ms(record, end),
            won=record.won,
            new=new,
            resigned=record.resigned,
        )

    async def finished(self, record: GameRecord) -> None:
        """Rank an attempt that has just finished (called right after its last write).

        A failure here is only logged: the move was acknowledged already, and the attempt stays
        in the open index, so the sweeper ranks it when its day ends.
        """
        try:
            await self.rank(record)
        except StoreUnavailable as exc:
            log.warning("daily %s: ranking deferred to the end of its day: %s", record.gid, exc)

    async def rank(self, record: GameRecord) -> None:
        """Enter a finished attempt on its day's board and in the player's stats.

        Safe to call more than once for the same attempt (both writes are idempotent), so the
        move handler and the sweeper may both do it. Only then does the attempt leave the open
        index; its game record is kept as long as finished races are.
        """
        date = dt.date.fromisoformat(record.date)
        # Marked on the board: a player made that very day (maybe to look at the deal first).
        created_ms = await self.stores.players.player_created_ms(record.player)
        new = created_ms is not None and utc_date(created_ms / 1000) == date
        result = self.result_of(record, new)
        seq = await self.boards.record_day(record.game, record.date, result)
        await self.stats.record(record.game, date, result)
        await self.stores.daily.unindex_open_attempt(record.gid)
        await self.stores.games.expire_games([record.gid], self.stores.config.finished_race_ttl_s)
        if seq and self.metrics is not None:
            self.metrics.daily_finished.labels(record.game).inc()
        if seq:
            log.info(
                "daily ranked: player=%s game=%s date=%s score=%d moves=%d time_ms=%d",
                record.player, record.game, record.date,
                result.score, result.moves, result.time_ms,
            )  # fmt: skip

    async def sweep(self, now_ms: int, lock_ms: int = 10_000) -> list[GameRecord]:
        """Close and rank the attempts whose day is over; returns those closed by this call.

        Any instance may call this every second or so: a short lock lets one of them do the
        work (in batches, for at most half the lock's time per call), and the writes are
        idempotent anyway.
        """
        stores = self.stores
        due = await stores.daily.open_attempts_due(now_ms, stores.config.daily_sweep_batch)
        if not due:
            return []
        lock = stores.daily.sweep_lock(lock_ms / 1000)
        if not await lock.take():
            return []
        closed: list[GameRecord] = []
        deadline = time.monotonic() + lock_ms / 2000
        try:
            while due and time.monotonic() < deadline:
                for gid in due:
                    closed_now = await self._close_one(gid)
                    if closed_now is not None:
                        closed.append(closed_now)
                # Each further batch only while the lock is still ours: an instance that
                # stalled past the lock's time, and lost it to another, stops here.
                if not await lock.renew():
                    log.warning("daily sweep: lost the sweep lock; another instance sweeps")
                    break
                due = await stores.daily.open_attempts_due(now_ms, stores.config.daily_sweep_batch)
        finally:
            await lock.release()
        return closed

    async def _close_one(self, gid: str) -> GameRecord | None:
        stores = self.stores

        async def attempt() -> Plan[GameRecord | None]:
            record = await stores.games.load_record(gid) if parse_gid(gid) is not None else None
            if record is None:
                await stores.daily.unindex_open_attempt(gid)
                return done(None)
            closed = timed_out(record, record.ends_at_ms)
            if closed is record:  # finished before its day ended: ranked, nothing to write

                async def rank() -> None:
                    await self.rank(closed)

                return Plan(rank)

            async def close() -> GameRecord:
                await self.rank(closed)
                log.info("daily attempt closed at the end of its day: player=%s game=%s "
                         "date=%s", record.player, record.game, record.date)  # fmt: skip
                await self._announce(closed)
                return closed

            change = GameChange(closed, record.ver)
            return Plan(close, lambda: stores.games.write_game(change), missing=lambda: None)

        # Tried once: an attempt that moved meanwhile is looked at again by the next pass.
        return await self.runner.run(f"game {gid}", attempt, exhausted=lambda: None)

    async def _announce(self, record: GameRecord) -> None:
        """Send the closed attempt's final `state` to the player's connections, wherever they
        are (best effort: a client that misses it sees `finished` on its next request)."""
        live = await load_live(self.stores, record.gid)
        if live is None:
            return
        live.record = record
        state = live.state(record.ends_at_ms)
        payload = Applier.payload(Applier.events([to_player(record.player, state)]))
        await self.stores.presence.publish(
            await self.stores.presence.player_instances(record.player), payload
        )

    # ------------------------------------------------------------ boards

    async def find_board(
        self,
        game: str,
        date_text: str | None,
        *,
        limit: int | None = None,
        asker: str | None = None,
        around_me: bool = False,
    ) -> tuple[Board, DailyDeal | None]:
        """A board and its deal (None while the day is not over); Refused if there is none."""
        today = self.today()
        if date_text == ALL_TIME:
            board = await self.boards.board(
                game, ALL_TIME, limit=limit, asker=asker, around_me=around_me
            )
            return board, None
        date = today if date_text is None else parse_date(date_text)
        if date is None:
            raise p.Refused(p.BAD_REQUEST, f"bad date {date_text!r}: use YYYY-MM-DD or 'all'")
        if date > today:
            raise p.Refused(p.NOT_FOUND, f"the daily challenge of {date.isoformat()} has not begun")
        board = await self.boards.board(
            game, date.isoformat(), limit=limit, asker=asker, around_me=around_me
        )
        return board, (await self.past_deal(game, date) if date < today else None)

    async def leaderboard(
        self, game: str, date_text: str | None, limit: int | None, asker: str, around_me: bool
    ) -> p.LeaderboardReply:
        start = time.perf_counter()
        found = await self.find_board(
            game, date_text, limit=limit, asker=asker, around_me=around_me
        )
        if self.metrics is not None:  # one round trip to the store: a latency sample
            self.metrics.redis_latency.observe(time.perf_counter() - start)
        return self.leaderboard_message(*found)

    @staticmethod
    def leaderboard_message(board: Board, deal: DailyDeal | None) -> p.LeaderboardReply:
        return p.LeaderboardReply(
            game=board.game,
            date=board.date,
            total=board.total,
            entries=board.entries,
            me=board.me,
            seed=deal.seed if deal is not None else None,
            par=deal.par if deal is not None else None,
            line=deal.line if deal is not None and deal.proven else None,
        )

    # ------------------------------------------------------------ stats

    async def player_stats(self, player: str) -> p.StatsReply:
        name = await self.stores.players.player_name(player)
        if name is None:
            raise p.Refused(p.NOT_FOUND, "no such player")
        _, per_game = await self.stats.player_stats(self.games, player, self.today())
        return p.StatsReply(player=player, name=name, games=per_game)


# ---------------------------------------------------------------- requests


class DailyRequests:
    """The `daily`, `leaderboard` and `stats` requests."""

    def __init__(self, daily: DailyService, cache: LiveGames, now_ms: Callable[[], int]) -> None:
        self.daily = daily
        self.cache = cache
        self.now_ms = now_ms

    async def attempt(self, who: Who, msg: p.Daily) -> list[p.Message]:
        if not msg.confirm:
            return [await self.daily.standing(who.player, msg.game, self.now_ms())]
        record, _created = await self.daily.attempt(who.player, who.name, msg.game, self.now_ms())
        live = await self.cache.get(record.gid, fresh=True)
        if live is None:
            raise p.Refused(p.UNAVAILABLE, "the daily attempt could not be loaded")
        return [live.state(self.now_ms(), msg.id)]

    async def leaderboard(self, who: Who, msg: p.Leaderboard) -> list[p.Message]:
        daily = self.daily
        reply = await daily.leaderboard(msg.game, msg.date, msg.limit, who.player, msg.around_me)
        if daily.metrics is not None:
            daily.metrics.leaderboard_requests.labels("ws").inc()
        reply.re = msg.id
        return [reply]

    async def stats(self, who: Who, msg: p.Stats) -> list[p.Message]:
        reply = await self.daily.player_stats(msg.player or who.player)
        reply.re = msg.id
        return [reply]
