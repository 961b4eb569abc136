"""Version-checked batches of writes, run by the APPLY script (server/store/scripts.py),
and what every repository is made with (Repo).

Every repository that writes a record checks its version through here, so that a write
decided on a stale read is refused the same way wherever it is made.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from server.config import Config
from server.domain.changes import Written
from server.store import scripts
from server.store.keys import Keys
from server.store.unavailable import STORE_ERRORS, StoreUnavailable, unavailable_on_failure
from server.store.writes import Batch


@unavailable_on_failure
class Batches:
    """Runs batches of writes (server/store/writes.py), each checked against the versions
    it expects, and relays their events to the instances interested."""

    def __init__(self, config: Config, redis: Any, instance: str, channel_prefix: str) -> None:
        self.config = config
        self.redis = redis
        self.instance = instance
        self.channel_prefix = channel_prefix
        self._apply = redis.register_script(scripts.APPLY)

    async def apply(self, batch: Batch) -> Written:
        """Run one version-checked batch (the APPLY script)."""
        try:
            status, _guard = await self._apply(
                keys=batch.keys, args=batch.args(self.instance, self.channel_prefix)
            )
        except STORE_ERRORS as exc:
            raise StoreUnavailable(str(exc)) from exc
        return Written(int(status))

    async def apply_in_order(self, batches: Sequence[Batch]) -> list[Written]:
        """Batches in one pipeline (on a single Redis one connection runs them in order);
        on a Redis Cluster, whose batches may live on different nodes, one after the other."""
        if self.config.redis_cluster:
            return [await self.apply(b) for b in batches]
        try:
            async with self.redis.pipeline(transaction=False) as pipe:
                for b in batches:
                    await self._apply(
                        keys=b.keys, args=b.args(self.instance, self.channel_prefix), client=pipe
                    )
                replies = await pipe.execute()
        except STORE_ERRORS as exc:
            raise StoreUnavailable(str(exc)) from exc
        return [Written(int(reply[0])) for reply in replies]


@dataclass(eq=False)
class Repo:
    """What a repository is made with (server/store/stores.py makes them all from one
    Redis client): the settings, the client, the key layout, this instance's id and the
    batches it writes with. A repository that needs more sets it up in __post_init__."""

    config: Config
    redis: Any
    keys: Keys
    instance: str
    batches: Batches

    def __post_init__(self) -> None:
        """Nothing more here (a repository's own set-up overrides it)."""
