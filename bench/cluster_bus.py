#!/usr/bin/env python3
"""Benchmark: what one event on the bus costs each node of a Redis Cluster, plain PUBLISH
against sharded SPUBLISH, as the cluster grows.

    .venv/bin/python -m bench.cluster_bus [--masters 3,6] [--messages 20000] [--bytes 1100]

The server sends a race's events to another instance with a plain PUBLISH on that
instance's channel (deploy/README, "Redis Cluster"): a cluster forwards every plain
PUBLISH over its bus to every node, so each event costs every node some CPU, however many
nodes there are. A sharded SPUBLISH goes to the one node that owns the channel's slot. This
bench measures both, for the capacity model's "what limits the store" (deploy/README):

- for each count of `--masters`, starts a Redis Cluster of that many valkey-server masters
  of its own on this machine (bench/local_cluster.py, formed as deploy/compose.redis-cluster.yml
  forms one) and waits until its links have settled;
- one subscriber listens on one channel, as an instance listens on its own: for PUBLISH
  with SUBSCRIBE on a node other than the publisher's, for SPUBLISH with SSUBSCRIBE on the
  node that owns the channel's slot;
- a publisher on the first node sends `--messages` messages of `--bytes` bytes (about what a
  race move's progress is: bench/store_cost.py measured 1.08 KB), pipelined 100 at a time,
  then waits until the subscriber has received every one; SPUBLISH is sent to the node that
  owns the slot (as a cluster client would);
- reads each node's CPU (INFO used_cpu_user + used_cpu_sys) before and after, subtracts
  what the node spent in an idle window of the same length (the cluster's own gossip),
  and prints each node's CPU per message (µs) by role (the node the publisher talks to,
  the subscriber's node, any other node), their sum over the cluster, and the ratio of
  PUBLISH's sum to SPUBLISH's in the same run.

The CPU counters tick with the kernel's accounting (milliseconds at a time): the default
20,000 messages make each node's figure several hundred ticks' worth. Loopback only, at
most 8 masters, stops by itself.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import redis.asyncio as aioredis

from bench.local_cluster import LocalRedisCluster

BATCH = 100
RECEIVE_TIMEOUT_S = 120.0
MAX_MASTERS = 8


@dataclass
class Window:
    """One load's CPU per message on each node, idle work taken out."""

    kind: str
    per_node_us: list[float]
    roles: list[str]

    @property
    def total_us(self) -> float:
        return sum(self.per_node_us)


async def node_cpu(urls: list[str]) -> list[float]:
    """Each node's CPU seconds so far (all its threads)."""
    out = []
    for url in urls:
        r = aioredis.Redis.from_url(url)
        try:
            info = await r.info("cpu")
        finally:
            await r.aclose()
        out.append(float(info["used_cpu_user"]) + float(info["used_cpu_sys"]))
    return out


async def slot_owner(cluster: LocalRedisCluster, channel: str) -> int:
    """The index (in cluster.nodes) of the node that owns `channel`'s slot."""
    r = aioredis.Redis.from_url(cluster.node_urls[0])
    try:
        slot = int(await r.execute_command("CLUSTER", "KEYSLOT", channel))  # type: ignore[no-untyped-call]
        ranges = await r.execute_command("CLUSTER", "SLOTS")  # type: ignore[no-untyped-call]
    finally:
        await r.aclose()
    for start, end, master, *_ in ranges:
        if int(start) <= slot <= int(end):
            port = int(master[1])
            return [node.port for node in cluster.nodes].index(port)
    raise RuntimeError(f"no node owns slot {slot}")


async def load(
    cluster: LocalRedisCluster, sharded: bool, messages: int, payload: bytes
) -> tuple[list[float], float, list[str]]:
    """Sends `messages` events and waits for them all: each node's CPU seconds spent, the
    seconds it took, and each node's role."""
    urls = cluster.node_urls
    channel = f"bench-bus:{uuid.uuid4().hex[:8]}"
    owner = await slot_owner(cluster, channel)
    listen_on = owner if sharded else (1 if len(urls) > 1 else 0)
    publish_to = owner if sharded else 0
    sub_client = aioredis.Redis.from_url(urls[listen_on])
    pub_client = aioredis.Redis.from_url(urls[publish_to])
    pubsub = sub_client.pubsub(ignore_subscribe_messages=True)
    try:
        if sharded:
            await pubsub.ssubscribe(channel)
        else:
            await pubsub.subscribe(channel)
        await pubsub.get_message(timeout=1.0)  # the subscription's confirmation
        before = await node_cpu(urls)
        began = time.perf_counter()
        received = 0

        async def receive() -> None:
            nonlocal received
            while received < messages:
                got = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
                if got is not None and got["type"] in ("message", "smessage"):
                    received += 1

        receiver = asyncio.create_task(receive())
        command = "SPUBLISH" if sharded else "PUBLISH"
        for at in range(0, messages, BATCH):
            pipe = pub_client.pipeline(transaction=False)
            for _ in range(min(BATCH, messages - at)):
                pipe.execute_command(command, channel, payload)
            await pipe.execute()
        await asyncio.wait_for(receiver, RECEIVE_TIMEOUT_S)
        took = time.perf_counter() - began
        after = await node_cpu(urls)
    finally:
        await pubsub.aclose()
        await sub_client.aclose()
        await pub_client.aclose()
    roles = []
    for i in range(len(urls)):
        role = []
        if i == publish_to:
            role.append("publisher's")
        if i == listen_on:
            role.append("subscriber's")
        roles.append(" and ".join(role) or "other")
    return [a - b for a, b in zip(after, before, strict=True)], took, roles


async def idle(urls: list[str], seconds: float) -> list[float]:
    """Each node's CPU seconds over `seconds` with nothing sent (the cluster's gossip)."""
    before = await node_cpu(urls)
    await asyncio.sleep(seconds)
    after = await node_cpu(urls)
    return [a - b for a, b in zip(after, before, strict=True)]


async def measure(cluster: LocalRedisCluster, sharded: bool, args: argparse.Namespace) -> Window:
    payload = os.urandom(args.bytes // 2).hex().encode()[: args.bytes]
    spent, took, roles = await load(cluster, sharded, args.messages, payload)
    quiet = await idle(cluster.node_urls, took)
    per_node = [max(0.0, s - q) * 1e6 / args.messages for s, q in zip(spent, quiet, strict=True)]
    return Window("SPUBLISH" if sharded else "PUBLISH", per_node, roles)


def report(masters: int, windows: list[Window]) -> list[str]:
    out = [f"\n  {masters} masters:"]
    for w in windows:
        by_role = ", ".join(
            f"node {i} ({role}) {us:.1f}"
            for i, (role, us) in enumerate(zip(w.roles, w.per_node_us, strict=True))
        )
        out.append(f"    {w.kind:>8}: {w.total_us:6.1f} us a message over the cluster; {by_role}")
    plain, sharded = windows
    others = [
        us for role, us in zip(plain.roles, plain.per_node_us, strict=True) if role == "other"
    ]
    if others:
        mean = sum(others) / len(others)
        out.append(f"    a node that neither publishes nor listens spends {mean:.1f} us on "
                   "each plain PUBLISH (forwarded to it over the cluster bus)")  # fmt: skip
    if sharded.total_us > 0:
        out.append(
            f"    PUBLISH / SPUBLISH over the cluster: x{plain.total_us / sharded.total_us:.2f}"
        )
    return out


async def run(args: argparse.Namespace) -> int:
    print(f"bench/cluster_bus.py: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} "
          f"(others' work shares the cores); {args.messages} messages of {args.bytes} bytes, "
          f"pipelined {BATCH} at a time; CPU per message per node, idle work "
          "taken out")  # fmt: skip
    for masters in args.masters:
        with tempfile.TemporaryDirectory(prefix="bench-cluster-bus-") as d:
            cluster = LocalRedisCluster(root=Path(d), masters=masters, fsync="everysec")
            with cluster:
                windows = [await measure(cluster, sharded, args) for sharded in (False, True)]
        print("\n".join(report(masters, windows)), flush=True)
    return 0


def masters_list(text: str) -> list[int]:
    try:
        counts = [int(v) for v in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"comma-separated counts, not {text!r}") from None
    if not counts or any(not 3 <= c <= MAX_MASTERS for c in counts):
        raise argparse.ArgumentTypeError(f"each count 3..{MAX_MASTERS}")
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 2)[2])  # fmt: skip
    parser.add_argument(
        "--masters",
        type=masters_list,
        default=[3, 6],
        help="cluster sizes, comma-separated, one cluster each (default 3,6)",
    )
    parser.add_argument("--messages", type=int, default=20_000,
                        help="messages per load (default 20000)")  # fmt: skip
    parser.add_argument("--bytes", type=int, default=1100,
                        help="bytes per message (default 1100)")  # fmt: skip
    args = parser.parse_args()
    if not (100 <= args.messages <= 1_000_000 and 1 <= args.bytes <= 1 << 20):
        parser.error("--messages 100..1000000, --bytes 1..1048576")
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())
