"""Races in Redis: a race and its seats, written with its seats' games in one
version-checked batch; the index of running races (by deadline); the bot seats and the
races whose bots are to be driven.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from server.domain.changes import RaceChange, Written
from server.domain.ids import race_gid
from server.domain.records import GameRecord, RaceRecord, seat_entry, seat_from_entry
from server.store import scripts
from server.store.batches import Repo
from server.store.game_repo import queue_records, records_read
from server.store.locks import Lease
from server.store.rating_outbox import RatingOutbox
from server.store.rating_repo import HISTORY_KEPT
from server.store.unavailable import STORE_ERRORS, StoreUnavailable, unavailable_on_failure
from server.store.writes import Batch


def _point_json(point: Any) -> str:
    return msgspec.json.encode(point).decode()


@unavailable_on_failure
@dataclass(eq=False)
class RaceRepo(Repo):
    """Races, the running index and bot seats; a rated race's close writes its ratings."""

    rating_outbox: RatingOutbox  # a rated close's ratings, on a Redis Cluster

    def __post_init__(self) -> None:
        self._unindex = self.redis.register_script(scripts.UNINDEX)
        # For tests only: die (SIGKILL) between a rated close and its ratings on a cluster.
        self._kill_before_ratings = os.environ.get("SOLITAIRE_TEST_KILL_BEFORE_RATINGS") == "1"

    async def load_race(self, code: str) -> RaceRecord | None:
        return (await self.load_race_records(code, []))[0]

    async def load_race_records(
        self, code: str, gids: Sequence[str]
    ) -> tuple[RaceRecord | None, list[GameRecord | None]]:
        """A race and, in the same round trip, the records of games `gids` (its seats'
        games, when the caller knows them)."""
        pipe = self.redis.pipeline(transaction=False)
        pipe.hgetall(self.keys.race_meta(code))
        pipe.lrange(self.keys.race_seats(code), 0, -1)
        queue_records(pipe, self.keys, gids)
        meta, seats, *raw = await pipe.execute()
        if not meta or "status" not in meta:
            return None, []
        race = RaceRecord.from_redis(meta, [seat_from_entry(s) for s in seats])
        return race, records_read(gids, raw)

    def race_batch(self, change: RaceChange) -> Batch:
        """The batch that makes a race change: the race's version checked, and every seat
        game written checked at its own version, all under the race's hash tag."""
        k, code = self.keys, change.race.code
        meta, seats, interest = k.race_meta(code), k.race_seats(code), k.race_interest(code)
        batch = Batch()
        batch.expect(meta, change.expect_ver)
        for game in change.games:
            keys = self.keys.game(game.record.gid)
            assert keys is not None
            batch.expect(keys.meta, game.expect_ver)
        batch.hset(meta, change.race.to_redis())
        if change.new_seats:
            batch.command("RPUSH", seats, *[seat_entry(s) for s in change.new_seats])
        for seat in change.gone_seats:
            batch.command("LREM", seats, 0, seat_entry(seat))
            gone = self.keys.game(race_gid(code, seat.player))
            assert gone is not None
            batch.command("DEL", gone.meta)
            batch.command("DEL", gone.moves)
            batch.command("DEL", gone.snaps)
            batch.command("DEL", gone.times)
        if change.instances:
            batch.command("SADD", interest, *change.instances)
        for game in change.games:
            keys = self.keys.game(game.record.gid)
            assert keys is not None
            record = game.record
            batch.hset(
                keys.meta, record.to_redis() if game.all_fields else record.changing_fields()
            )
        # Every key of the race lives as long as the race: a lobby or a finished race
        # expires, a running one does not.
        for key in [meta, seats, interest, *self._seat_game_keys(change.race)]:
            if change.ttl_s:
                batch.command("EXPIRE", key, change.ttl_s)
            else:
                batch.command("PERSIST", key)
        if not self.config.redis_cluster:
            self._rate(batch, change)
        elif change.ratings:
            self.rating_outbox.record(batch, code, self._cluster_ratings(change), change.ttl_s)
        batch.relay_to(interest, change.payload)
        return batch

    def _rate(self, batch: Batch, change: RaceChange) -> None:
        """A rated close's new ratings, each checked at the version the close read: a
        rating changed since (another race of the player closed) makes the close stale."""
        for c in change.ratings:
            r = c.rating
            key = self.keys.rating(r.game, r.player)
            history = self.keys.rating_history(r.game, r.player)
            batch.expect(key, c.expect_ver)
            batch.hset(key, r.to_redis())
            batch.command("ZADD", self.keys.rating_board(r.game), c.shown, r.player)
            batch.command("RPUSH", history, _point_json(c.point))
            batch.command("LTRIM", history, -HISTORY_KEPT, -1)

    def _cluster_ratings(self, change: RaceChange) -> Batch:
        """A rated close's ratings write on a Redis Cluster (server/store/rating_outbox.py)."""
        race = change.race
        batch = self.rating_outbox.new_write(race.game, race.code, change.ttl_s)
        self._rate(batch, change)
        return batch

    def _seat_game_keys(self, race: RaceRecord) -> list[str]:
        out: list[str] = []
        for s in race.seats:
            keys = self.keys.game(race_gid(race.code, s.player))
            assert keys is not None
            out += (keys.meta, keys.moves, keys.snaps, keys.times)
        return out

    async def write_race(self, change: RaceChange) -> Written:
        return await self.batches.apply(self.race_batch(change))

    async def start_race(self, change: RaceChange, deadline_ms: int) -> Written:
        """Index the race among the running ones, then start it. Indexed first, so that a
        crash right after the start cannot leave the race without a timer (a race indexed
        but never started is dropped from the index by the reaper)."""
        index = Batch()
        index.command("ZADD", self.keys.running_index(), deadline_ms, change.race.code)
        return (await self.batches.apply_in_order([index, self.race_batch(change)]))[1]

    async def close_race(self, change: RaceChange, deadline_ms: int) -> Written:
        """Close the race, then drop it from the running index (where it was entered with
        `deadline_ms`) if the close went through (the race is at its closed version)."""
        code = change.race.code
        if self.config.redis_cluster:
            # The index and the race hash to different slots: one after the other. So do a
            # rated race's ratings (one slot per game): the close stores them in its outbox,
            # applied now, or by the reaper if this process dies first (the race stays
            # indexed until they are).
            status = await self.write_race(change)
            if status is Written.APPLIED:
                if change.ratings:
                    if self._kill_before_ratings:
                        os.kill(os.getpid(), signal.SIGKILL)
                    await self.rating_outbox.apply(code, self._cluster_ratings(change))
                await self.unindex(code, deadline_ms)
            return status
        unindex = Batch()
        unindex.expect(self.keys.race_meta(code), change.race.ver)
        unindex.command("ZREM", self.keys.running_index(), code)
        return (await self.batches.apply_in_order([self.race_batch(change), unindex]))[0]

    async def running(self, until_ms: float | None = None) -> list[tuple[str, int]]:
        """Running races (code, deadline), those due by `until_ms` only if given."""
        hi = "+inf" if until_ms is None else until_ms
        rows = await self.redis.zrangebyscore(
            self.keys.running_index(), "-inf", hi, withscores=True
        )
        return [(code, int(score)) for code, score in rows]

    async def unindex(self, code: str, score: int) -> None:
        """Drop a race from the running index, unless it was entered again since."""
        try:
            await self._unindex(keys=[self.keys.running_index()], args=[code, score])
        except STORE_ERRORS as exc:
            raise StoreUnavailable(str(exc)) from exc

    async def add_race_bot(self, code: str, player: str, strength: str) -> None:
        key = self.keys.race_bots(code)
        pipe = self.redis.pipeline(transaction=False)
        pipe.hset(key, player, strength)
        pipe.expire(key, self.config.lobby_ttl_s)
        await pipe.execute()

    async def race_bots(self, code: str) -> dict[str, str]:
        """A race's bot seats: player -> strength (empty if it has none)."""
        return dict(await self.redis.hgetall(self.keys.race_bots(code)))

    async def index_bot_race(self, code: str, ttl_s: int) -> bool:
        """List a started race among those whose bots are to be driven; False if it has
        no bot seats."""
        key = self.keys.race_bots(code)
        if not await self.redis.expire(key, ttl_s):
            return False
        await self.redis.sadd(self.keys.bot_index(), code)
        return True

    async def bot_races(self) -> list[str]:
        return sorted(await self.redis.smembers(self.keys.bot_index()))

    async def unindex_bot_race(self, code: str) -> None:
        await self.redis.srem(self.keys.bot_index(), code)

    def bot_lease(self, code: str, seconds: float) -> Lease:
        """The lease of the instance that drives a race's bots."""
        return Lease(self.redis, self.keys.race_bot_lease(code), seconds, self.instance)
