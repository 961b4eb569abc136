"""The quick-race queue in the store: one hash of entries for every game (one hash tag,
so the matcher reads the whole queue in one command and takes a race's players out of it
in one script), the matcher's lease, and the quick races waiting for their start time."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from server.domain.queue import Waiting
from server.store import scripts
from server.store.keys import Keys
from server.store.locks import Lease
from server.store.unavailable import STORE_ERRORS, StoreUnavailable, unavailable_on_failure


def encode_entry(w: Waiting) -> str:
    # Names are printable (never a tab); the game comes first (QUEUE_PUT reads it).
    return f"{w.game}\t{w.rating}\t{w.since_ms}\t{w.name}"


def decode_entry(player: str, raw: str) -> Waiting | None:
    parts = raw.split("\t", 3)
    if len(parts) != 4:
        return None
    game, rating, since, name = parts
    try:
        return Waiting(player, name, game, int(rating), int(since))
    except ValueError:
        return None


@unavailable_on_failure
class QueueRepo:
    def __init__(self, redis: Any, keys: Keys, instance: str) -> None:
        self.redis = redis
        self.keys = keys
        self.instance = instance
        self._put = redis.register_script(scripts.QUEUE_PUT)
        self._take = redis.register_script(scripts.QUEUE_TAKE)

    async def put(self, entry: Waiting) -> Waiting:
        """Queue `entry`'s player (in place of any entry for another game); the entry as it
        then stands (a player already waiting for that game keeps their first)."""
        try:
            raw = await self._put(
                keys=[self.keys.queue_entries()],
                args=[entry.player, encode_entry(entry), entry.game],
            )
        except STORE_ERRORS as exc:
            raise StoreUnavailable(str(exc)) from exc
        stored = decode_entry(entry.player, str(raw))
        return stored if stored is not None else entry

    async def drop(self, player: str) -> bool:
        """Take `player` out of the queue; False if they were not waiting."""
        return bool(await self.redis.hdel(self.keys.queue_entries(), player))

    async def entry(self, player: str) -> Waiting | None:
        raw = await self.redis.hget(self.keys.queue_entries(), player)
        return decode_entry(player, raw) if raw is not None else None

    async def entries(self) -> list[Waiting]:
        raw = await self.redis.hgetall(self.keys.queue_entries())
        out = [decode_entry(player, value) for player, value in raw.items()]
        return [w for w in out if w is not None]

    async def take(self, entries: Sequence[Waiting]) -> bool:
        """Take a formed race's players out of the queue, all or none (none if any of them
        left or queued again since the matcher read the queue)."""
        args: list[str] = []
        for w in entries:
            args += (w.player, encode_entry(w))
        try:
            return bool(await self._take(keys=[self.keys.queue_entries()], args=args))
        except STORE_ERRORS as exc:
            raise StoreUnavailable(str(exc)) from exc

    async def busy(self) -> bool:
        """Whether anyone waits in the queue or any quick race waits for its start."""
        pipe = self.redis.pipeline(transaction=False)
        pipe.exists(self.keys.queue_entries())
        pipe.exists(self.keys.starting_index())
        waiting, starting = await pipe.execute()
        return bool(waiting or starting)

    def lease(self, seconds: float) -> Lease:
        """The lease of the instance that runs the matcher."""
        return Lease(self.redis, self.keys.queue_lease(), seconds, self.instance)

    async def schedule_start(self, code: str, at_ms: int) -> None:
        await self.redis.zadd(self.keys.starting_index(), {code: at_ms})

    async def due_starts(self, now_ms: int) -> list[str]:
        return list(await self.redis.zrangebyscore(self.keys.starting_index(), "-inf", now_ms))

    async def unschedule(self, code: str) -> None:
        await self.redis.zrem(self.keys.starting_index(), code)
