"""A rated race's ratings on a Redis Cluster, written exactly once.

On a single Redis a rated race's close and its ratings are one APPLY call. On a cluster the
ratings' keys ({ns:rating:GAME}) hash to another slot than the race's, and no script may
write two slots: so the close writes, in the race's slot and in the same call, the ratings
write still to make (the outbox, {ns:race:CODE}:rateout). That write is applied next,
guarded by a marker it creates in the ratings' slot ({ns:rating:GAME}:applied:CODE): applied
a second time (after a crash before the outbox was deleted) it changes nothing. Then the
outbox is deleted. The closed race stays in the running index until then, so the reaper,
which finds it there, applies an outbox that a crash left behind (Races.reap).
"""

from __future__ import annotations

import logging
from typing import Any

import msgspec

from server.domain.changes import MUST_NOT_EXIST, Written
from server.store import scripts
from server.store.keys import Keys
from server.store.unavailable import STORE_ERRORS, StoreUnavailable, unavailable_on_failure
from server.store.writes import Batch

log = logging.getLogger(__name__)

_MARKER_GUARD = 1  # the ratings write's first guard: its marker must not exist yet


class _Pending(msgspec.Struct, array_like=True):
    keys: list[str]
    guards: list[tuple[int, int]]
    ops: list[list[Any]]


@unavailable_on_failure
class RatingOutbox:
    def __init__(self, redis: Any, keys: Keys, instance: str, channel_prefix: str) -> None:
        self.redis = redis
        self.keys = keys
        self.instance = instance
        self.channel_prefix = channel_prefix
        self._apply = redis.register_script(scripts.APPLY)

    def new_write(self, game: str, code: str, ttl_s: int) -> Batch:
        """A ratings write for race `code`, guarded by its marker (to be filled with the
        seats' ratings): it applies once, however often it is run."""
        marker = self.keys.rating_applied(game, code)
        batch = Batch()
        batch.expect(marker, MUST_NOT_EXIST)
        batch.hset(marker, {"race": code})
        if ttl_s:  # the marker outlives the outbox, which expires with the race
            batch.command("EXPIRE", marker, ttl_s)
        return batch

    def record(self, close: Batch, code: str, ratings: Batch, ttl_s: int) -> None:
        """Put `ratings` in the race's outbox, in the batch `close` that closes it."""
        outbox = self.keys.race_rating_outbox(code)
        pending = _Pending(ratings.keys, ratings.guards, ratings.ops)
        close.hset(outbox, {"write": msgspec.json.encode(pending).decode()})
        if ttl_s:
            close.command("EXPIRE", outbox, ttl_s)

    async def flush(self, code: str) -> None:
        """Apply race `code`'s pending ratings write, if it has one, and delete it."""
        outbox = self.keys.race_rating_outbox(code)
        raw = await self.redis.hget(outbox, "write")
        if raw is None:
            return
        pending = msgspec.json.decode(raw, type=_Pending)
        await self.apply(code, Batch(keys=pending.keys, guards=pending.guards, ops=pending.ops))

    async def apply(self, code: str, ratings: Batch) -> None:
        """Apply a closed race's ratings write (once), then delete its outbox."""
        try:
            status, guard = await self._apply(
                keys=ratings.keys, args=ratings.args(self.instance, self.channel_prefix)
            )
        except STORE_ERRORS as exc:
            raise StoreUnavailable(str(exc)) from exc
        if Written(int(status)) is Written.APPLIED:
            log.info("race %s: ratings written", code)
        elif int(guard) == _MARKER_GUARD:
            log.info("race %s: ratings were written already", code)
        else:
            # Decided on ratings that another race of a seat changed before this write: the
            # close is stored, so it cannot be decided again.
            log.warning("race %s: its ratings changed meanwhile; not rated", code)
        await self.redis.delete(self.keys.race_rating_outbox(code))
