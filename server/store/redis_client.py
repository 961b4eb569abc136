"""Redis clients: how the server makes them, and what their failure is called.

Every client of the server (store, bus, group commit) is made by `create_redis`, so
connection options, the cluster switch and the hiredis packer live in one place.
"""

from __future__ import annotations

from typing import Any

import hiredis
import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
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
        "max_connections": 64,
    }
    if config.redis_cluster:
        return RedisCluster.from_url(url, **options)
    if url.startswith("redis://"):
        options["connection_class"] = HiredisPackingConnection
    # Blocking: under a burst, requests wait their turn for a connection instead of failing.
    pool = aioredis.BlockingConnectionPool.from_url(url, timeout=10, **options)
    return aioredis.Redis(connection_pool=pool)


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
