"""Where players are, in Redis: the instances that want a player's or a race's events,
the players' open connections, which instances are running, the channels between them,
and the secret every instance shares.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from typing import Any

from server.config import Config
from server.store.keys import Keys
from server.store.unavailable import unavailable_on_failure


@unavailable_on_failure
class PresenceRepo:
    """Instances, connections and interest sets: who hears what, on which instance."""

    def __init__(self, config: Config, redis: Any, keys: Keys, instance: str) -> None:
        self.config = config
        self.redis = redis
        self.keys = keys
        self.instance = instance

    async def listen(self, *, players: Sequence[str] = (), races: Sequence[str] = ()) -> None:
        """Ask for the events of these players' own games and of these races to reach this
        instance (each joins this instance to their interest set)."""
        sets = [self.keys.player_interest(pl) for pl in players]
        sets += [self.keys.race_interest(code) for code in races]
        if not sets:
            return
        pipe = self.redis.pipeline(transaction=False)
        for key in sets:
            pipe.sadd(key, self.instance)
        await pipe.execute()

    @property
    def instance_channel(self) -> str:
        """The bus channel on which this instance hears its events."""
        return self.keys.instance_channel(self.instance)

    async def player_instances(self, player: str) -> list[str]:
        """The instances where the player has a connection."""
        return sorted(await self.redis.smembers(self.keys.player_interest(player)))

    async def players_instances(self, players: Sequence[str]) -> list[str]:
        """The other instances where any of `players` has a connection."""
        if not players:
            return []
        pipe = self.redis.pipeline(transaction=False)
        for player in players:
            pipe.smembers(self.keys.player_interest(player))
        found: set[str] = set().union(*await pipe.execute())
        return sorted(found - {self.instance})

    async def add_connection(self, player: str, connection: str, ttl_s: int) -> None:
        """Note an open connection of the player's on this instance (kept `ttl_s` after the
        player's last one opened, so that entries a dead instance left behind go too)."""
        key = self.keys.player_connections(player)
        pipe = self.redis.pipeline(transaction=False)
        pipe.hset(key, connection, self.instance)
        pipe.expire(key, ttl_s)
        await pipe.execute()

    async def remove_connections(self, player: str, connections: Sequence[str]) -> None:
        if connections:
            await self.redis.hdel(self.keys.player_connections(player), *connections)

    async def connections(self, player: str) -> dict[str, str]:
        """The player's open connections on any instance: connection id -> instance."""
        return dict(await self.redis.hgetall(self.keys.player_connections(player)))

    async def heartbeat(self, ttl_s: float) -> None:
        """This instance is running (for `ttl_s` more seconds unless said again)."""
        await self.redis.set(self.keys.instance_live(self.instance), "1", px=int(ttl_s * 1000))

    async def live_instances(self, instances: Sequence[str]) -> set[str]:
        """Those of `instances` that are running (this one always is)."""
        others = sorted(set(instances) - {self.instance})
        if not others:
            return {self.instance}
        found = await self.redis.mget([self.keys.instance_live(i) for i in others])
        return {self.instance} | {i for i, v in zip(others, found, strict=True) if v is not None}

    async def publish(self, instances: Sequence[str], payload: bytes) -> None:
        """Relay events to these instances (best effort, as pub/sub is)."""
        for inst in instances:
            await self.redis.publish(self.keys.instance_channel(inst), payload)

    async def secret_or_new(self, proposed: str | None) -> str:
        """The configured secret, else the one kept in the store, made and kept on the
        first start (of any instance: every instance then reads the same)."""
        if proposed:
            return proposed
        key = self.keys.server_config()
        await self.redis.hsetnx(key, "secret", secrets.token_urlsafe(32))
        return str(await self.redis.hget(key, "secret"))
