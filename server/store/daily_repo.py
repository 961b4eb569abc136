"""The daily challenge in Redis: each day's deals, the index of attempts not yet ranked
(by the end of their day), and the locks of the instance searching a deal or closing
the attempts whose day is over. Leaderboards and stats are server/store/boards.py and
server/store/stats_repo.py.
"""

from __future__ import annotations

from server.domain.changes import MUST_NOT_EXIST, Written
from server.store.batches import Repo
from server.store.locks import Lease
from server.store.unavailable import unavailable_on_failure
from server.store.writes import Batch


@unavailable_on_failure
class DailyRepo(Repo):
    """Daily deals, open attempts and the daily locks."""

    async def index_open_attempt(self, gid: str, ends_at_ms: int) -> None:
        await self.redis.zadd(self.keys.open_attempts(), {gid: ends_at_ms})

    async def unindex_open_attempt(self, gid: str) -> None:
        await self.redis.zrem(self.keys.open_attempts(), gid)

    async def open_attempts_due(self, now_ms: int, count: int) -> list[str]:
        """Daily attempts not yet ranked whose day ended by `now_ms` (at most `count`)."""
        return list(
            await self.redis.zrangebyscore(
                self.keys.open_attempts(), "-inf", now_ms, start=0, num=count
            )
        )

    async def stored_deal(self, game: str, day: str) -> dict[str, str]:
        """The day's deal as stored (server/daily/deals.py), or {} if none is yet."""
        return dict(await self.redis.hgetall(self.keys.day_deal(game, day)))

    async def store_deal_once(self, game: str, day: str, fields: dict[str, str]) -> bool:
        """Store the day's deal unless one is stored already; False if one was."""
        batch = Batch()
        key = self.keys.day_deal(game, day)
        batch.expect(key, MUST_NOT_EXIST)
        batch.hset(key, fields)
        return await self.batches.apply(batch) is Written.APPLIED

    def deal_lock(self, game: str, day: str, seconds: float) -> Lease:
        """The lock of the instance searching for a day's deal."""
        return Lease(self.redis, self.keys.day_deal_lock(game, day), seconds, self.instance)

    def sweep_lock(self, seconds: float) -> Lease:
        """The lock of the instance closing the daily attempts whose day is over."""
        return Lease(self.redis, self.keys.sweep_lock(), seconds, self.instance)
