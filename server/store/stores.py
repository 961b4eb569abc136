"""The store's repositories, made from one Redis client and wired together.

Each repository keeps one part of what the server keeps in Redis, and every Redis failure
in any of them reaches the caller as StoreUnavailable (server/store/unavailable.py): players
(player_repo.py), games (game_repo.py), races (race_repo.py), the daily challenge
(daily_repo.py, with leaderboards and stats: boards.py, stats_repo.py), presence
(presence_repo.py: instances, connections, who hears what), the quick-race queue
(queue_repo.py) and ratings (rating_repo.py). Every write of a record is version-checked
(server/store/scripts.py: MOVES for moves through the group commit of
server/store/group_commit.py, APPLY for the rest, server/store/batches.py). The rules that
decide the writes live above, in server/play/ and server/daily/.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any

from server.config import Config
from server.store import scripts
from server.store.batches import Batches
from server.store.boards import LeaderboardStore
from server.store.daily_repo import DailyRepo
from server.store.game_repo import GameRepo
from server.store.group_commit import GroupCommit
from server.store.keys import Keys
from server.store.player_repo import PlayerRepo
from server.store.presence_repo import PresenceRepo
from server.store.queue_repo import QueueRepo
from server.store.race_repo import RaceRepo
from server.store.rating_outbox import RatingOutbox
from server.store.rating_repo import RatingRepo
from server.store.stats_repo import StatsRepo
from server.store.unavailable import STORE_ERRORS, unavailable_on_failure

log = logging.getLogger(__name__)


@unavailable_on_failure
class Stores:
    """Everything the server keeps in Redis, one repository for each part."""

    def __init__(self, config: Config, redis: Any, instance: str) -> None:
        self.config = config
        self.redis = redis
        self.instance = instance
        self.keys = keys = Keys(config.namespace)
        batches = Batches(config, redis, instance, keys.instance_channel_prefix())
        self.commit = GroupCommit(
            redis,
            redis.register_script(scripts.MOVES),
            instance,
            keys.instance_channel_prefix(),
            redis.keyslot if config.redis_cluster else None,
        )
        self.players = PlayerRepo(config, redis, keys, instance, batches)
        self.games = GameRepo(config, redis, keys, instance, batches, self.commit)
        self.rating_outbox = RatingOutbox(redis, keys, instance, keys.instance_channel_prefix())
        self.races = RaceRepo(config, redis, keys, instance, batches, self.rating_outbox)
        self.daily = DailyRepo(config, redis, keys, instance, batches)
        self.presence = PresenceRepo(config, redis, keys, instance)
        self.boards = LeaderboardStore(
            redis, keys, config.leaderboard_default_rows, config.leaderboard_max_rows
        )
        self.stats = StatsRepo(redis, keys)
        self.queue = QueueRepo(redis, keys, instance)
        self.ratings = RatingRepo(redis, keys)

    async def open(self) -> None:
        self.commit.start()

    async def close(self) -> None:
        await self.commit.close()
        if self.commit.batches:
            log.info(
                "group commit: %d writes in %d pipelines (%.1f a pipeline)",
                self.commit.writes, self.commit.batches, self.commit.writes / self.commit.batches,
            )  # fmt: skip
        with contextlib.suppress(Exception):
            await self.redis.aclose()

    async def ping(self) -> bool:
        try:
            return bool(await self.redis.ping())
        except STORE_ERRORS:
            return False
