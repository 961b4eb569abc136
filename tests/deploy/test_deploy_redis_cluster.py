"""The local Redis Cluster fixture is a real cluster, and it behaves as the server assumes:
keys spread over the masters, hash-tagged keys share a slot, and a plain PUBLISH sent on
one node reaches a subscriber connected to another; and the server's cluster client waits
for a connection under a burst."""

from __future__ import annotations

import asyncio
import dataclasses
import uuid

import pytest
import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import ResponseError

from server.config import Config
from server.store.redis_client import MAX_CONNECTIONS, create_redis


async def test_three_masters_serve_all_slots_and_share_the_keys(redis_cluster) -> None:
    client = RedisCluster.from_url(redis_cluster.url)
    try:
        ns = f"t{uuid.uuid4().hex[:8]}"
        for i in range(90):
            await client.set(f"{ns}:k{i}", i)
        counts = []
        for node in redis_cluster.nodes:
            plain = aioredis.Redis(host=node.host, port=node.port)
            counts.append(len([k async for k in plain.scan_iter(match=f"{ns}:*")]))
            await plain.aclose()
        assert sum(counts) == 90
        assert all(c > 0 for c in counts), counts
    finally:
        await client.aclose()


async def test_hash_tagged_keys_share_a_slot_and_untagged_ones_do_not(redis_cluster) -> None:
    client = RedisCluster.from_url(redis_cluster.url)
    try:
        tagged = ["sr:race:{ABC234}:meta", "sr:race:{ABC234}:seats"]
        assert len({client.keyslot(k) for k in tagged}) == 1
        # A Lua script over keys of one slot runs on the node that owns it.
        script = client.register_script(
            "redis.call('SET', KEYS[1], 1); return redis.call('INCR', KEYS[2])"
        )
        assert await script(keys=tagged) == 1
        untagged = ["sr:race:ABC234:meta", "sr:race:XYZ789:meta"]
        assert client.keyslot(untagged[0]) != client.keyslot(untagged[1])
        node = client.get_node_from_key(untagged[0])
        with pytest.raises(ResponseError, match="don't hash to the same slot"):
            await client.execute_command("MSET", untagged[0], 1, untagged[1], 2, target_nodes=node)
    finally:
        await client.aclose()


async def test_publish_on_one_node_reaches_a_subscriber_on_another(redis_cluster) -> None:
    first, last = redis_cluster.nodes[0], redis_cluster.nodes[-1]
    channel = f"t{uuid.uuid4().hex[:8]}:race:{{ABC234}}"
    subscriber = aioredis.Redis(host=first.host, port=first.port)
    publisher = aioredis.Redis(host=last.host, port=last.port)
    pubsub = subscriber.pubsub()
    try:
        await pubsub.subscribe(channel)
        assert (await pubsub.get_message(timeout=5))["type"] == "subscribe"
        await publisher.publish(channel, b"hello")
        message = None
        async with asyncio.timeout(10):
            while message is None:
                message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1)
        assert message["data"] == b"hello"
    finally:
        await pubsub.aclose()
        await subscriber.aclose()
        await publisher.aclose()


def test_the_compose_cluster_init_leaves_a_formed_cluster_alone(redis_cluster) -> None:
    """The one-shot init runs again on every `docker compose up`: on a formed cluster it must
    succeed without touching it (the fixture formed this one with the same command)."""
    before = [redis_cluster.cluster_info(node) for node in redis_cluster.nodes]
    out = redis_cluster.run_init()
    assert out.returncode == 0, out.stdout + out.stderr
    assert "--cluster create" not in out.stdout and "Performing hash slots" not in out.stdout
    after = [redis_cluster.cluster_info(node) for node in redis_cluster.nodes]
    assert [a["cluster_current_epoch"] for a in after] == [
        b["cluster_current_epoch"] for b in before
    ]
    assert all(a["cluster_state"] == "ok" for a in after)


async def test_a_burst_beyond_the_connection_limit_waits_instead_of_failing(redis_cluster) -> None:
    """More commands and pipelines in flight at once than a node's connection limit: the
    server's cluster client queues them (as its single-node client does) where redis-py's
    raised MaxConnectionsError, which the server reported as `unavailable` (seen: hundreds of
    players leaving at once). Each BLPOP holds its connection for its whole timeout."""
    client = create_redis(dataclasses.replace(Config(), redis_cluster=True), redis_cluster.url)
    burst = 3 * MAX_CONNECTIONS
    try:
        key = "{burst-test}:empty"

        async def pipelined() -> list[object]:
            pipe = client.pipeline(transaction=False)
            pipe.blpop([key], 0.1)
            result: list[object] = await pipe.execute()
            return result

        replies = await asyncio.gather(*(client.blpop([key], 0.1) for _ in range(burst)))
        assert replies == [None] * burst
        piped = await asyncio.gather(*(pipelined() for _ in range(burst)))
        assert piped == [[None]] * burst
    finally:
        await client.aclose()
