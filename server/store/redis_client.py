"""Redis clients: how the server makes them, and what their failure is called.

Every client of the server (store, bus, group commit) is made by `create_redis`, so
connection options, the cluster switch and the hiredis packer live in one place.
"""

from __future__ import annotations

import asyncio
from typing import Any

import hiredis
import redis.asyncio as aioredis
from redis.asyncio.cluster import ClusterPipeline, RedisCluster
from redis.exceptions import DataError

from server.config import Config


def create_redis(config: Config, url: str, *, decode_responses: bool = True) -> Any:
    """The one place where Redis clients are made.

    With `redis_cluster`, `url` names one node of a Redis Cluster and the client finds the
    others. Every key carries a hash tag (server/store/keys.py), so each script and pipeline entry
    touches one slot; the bus's plain PUBLISH/SUBSCRIBE works on any node, since a cluster
    forwards every published message to all its nodes.
    """
    options: dict[str, Any] = {
        "decode_responses": decode_responses,
        "health_check_interval": 30,
        "socket_keepalive": True,
        "max_connections": MAX_CONNECTIONS,
    }
    if config.redis_cluster:
        return WaitingRedisCluster.from_url(url, **options)
    if url.startswith("redis://"):
        options["connection_class"] = HiredisPackingConnection
    # Blocking: under a burst, requests wait their turn for a connection instead of failing.
    pool = aioredis.BlockingConnectionPool.from_url(url, timeout=10, **options)
    return aioredis.Redis(connection_pool=pool)


MAX_CONNECTIONS = 64  # per client, and per node of a cluster
# A node's connections that the cluster client's own work may hold beyond commands and
# pipelines (a pub/sub subscription takes one of the node's connections for good).
CLUSTER_RESERVED_CONNECTIONS = 4


class WaitingRedisCluster(RedisCluster):
    """redis-py's cluster client, whose callers wait for a free connection instead of failing.

    The cluster client raises MaxConnectionsError (with no message) once a node has
    `max_connections` in use, where the single-node client waits (BlockingConnectionPool).
    Hundreds of players leaving at once (an instance's players when it drains, a bot
    process stopping) then failed as `unavailable`. Here at most that many commands and
    pipelines, less the reserve, are in flight through this client at once; each holds at
    most one connection of a node, so no node runs out.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        permits = kwargs.get("max_connections", MAX_CONNECTIONS) - CLUSTER_RESERVED_CONNECTIONS
        self.in_flight = asyncio.Semaphore(max(1, permits))

    async def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        async with self.in_flight:
            return await super().execute_command(*args, **kwargs)

    def pipeline(self, transaction: Any | None = None, shard_hint: Any | None = None) -> Any:
        if shard_hint:
            return super().pipeline(transaction, shard_hint)  # refused by redis-py, as there
        # redis-py's own pipeline() makes its ClusterPipeline the same way; its stubs call an
        # attribute abstract that the class sets at run time.
        return WaitingClusterPipeline(self, transaction)  # type: ignore[abstract]


class WaitingClusterPipeline(ClusterPipeline):
    """A pipeline of WaitingRedisCluster: it waits for one of the client's permits."""

    async def execute(self, raise_on_error: bool = True, allow_redirections: bool = True) -> Any:
        client = self.cluster_client
        assert isinstance(client, WaitingRedisCluster)
        async with client.in_flight:
            return await super().execute(raise_on_error, allow_redirections)


class HiredisPackingConnection(aioredis.Connection):
    """redis-py's asyncio connection, packing commands with hiredis.

    Its own packer is Python (about 1 µs an argument, the largest cost of a move's write);
    redis-py's synchronous client already packs with hiredis when it is installed.
    """

    def pack_command(self, *args: Any) -> list[bytes]:
        if isinstance(args[0], str):
            args = (*args[0].encode().split(), *args[1:])
        elif b" " in args[0]:
            args = (*args[0].split(), *args[1:])
        try:
            return [hiredis.pack_command(args)]
        except TypeError as exc:
            raise DataError(str(exc)) from exc
