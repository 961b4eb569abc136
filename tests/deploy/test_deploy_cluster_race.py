"""Races through two server instances on a local three-master Redis Cluster: one played
straight through, and one during which each instance is restarted in turn (SIGTERM, as in a
rolling upgrade). Nothing acknowledged may be lost, and every player must finish."""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from deploy_race import Player, race_code, seat_and_start
from support.server_proc import ServerProcess

from server.keys import Keys

GAME = "bakers_game"
PLAYERS = 4


@pytest.fixture
def namespace() -> str:
    return f"t{uuid.uuid4().hex[:10]}"


@pytest.fixture
def instances(redis_cluster, namespace: str, tmp_path: Path) -> Iterator[list[ServerProcess]]:
    """Two servers on the cluster, in this test's namespace."""
    servers = [
        ServerProcess(
            redis_cluster.url,
            namespace,
            tmp_path / f"instance{i}",
            env={"SOLITAIRE_REDIS_CLUSTER": "1"},
        )
        for i in range(2)
    ]
    try:
        for server in servers:
            server.start(timeout=60)
        yield servers
    finally:
        for server in servers:
            server.stop()


def make_players(servers: list[ServerProcess], seed: int) -> list[Player]:
    urls = [s.ws_url for s in servers]
    # Alternate the players over the instances, so that every race spans both.
    return [
        Player(f"player{i}", urls, first=i % len(urls), rng=random.Random(seed * 100 + i))
        for i in range(PLAYERS)
    ]


def stored(cluster_url: str, namespace: str, gids: list[str]) -> tuple[dict[str, list[str]], set]:
    """Each game's stored moves, and the cluster nodes that hold them."""
    client = redis.RedisCluster.from_url(cluster_url, decode_responses=True)
    try:
        keys = Keys(namespace)
        moves, nodes = {}, set()
        for gid in gids:
            game = keys.game(gid)
            assert game is not None
            moves[gid] = client.lrange(game.moves, 0, -1)
            nodes.add(client.get_node_from_key(game.moves).name)
        return moves, nodes
    finally:
        client.close()


def stored_result(cluster_url: str, namespace: str, code: str) -> dict:
    client = redis.RedisCluster.from_url(cluster_url, decode_responses=True)
    try:
        raw = client.hget(Keys(namespace).race_meta(code), "result")
    finally:
        client.close()
    assert raw, f"race {code} has no stored result"
    return json.loads(raw)


def check_nothing_lost(players, gids, moves_in_store) -> None:
    for p in players:
        gid = gids[p.name]
        acked = p.acked.get(gid, [])
        # Every acknowledged move is in the store, in order, and nothing else is.
        assert moves_in_store[gid] == acked, p.name


async def test_race_through_two_instances_on_a_redis_cluster(
    redis_cluster, instances: list[ServerProcess], namespace: str
) -> None:
    players = make_players(instances, seed=1)
    host, others = players[0], players[1:]
    try:
        code = await race_code(host, GAME, seed=4242)
        gids = await seat_and_start(host, others, code)
        hold = asyncio.Event()
        hold.set()
        await asyncio.gather(
            *(p.play(gids[p.name], moves=12, pause_s=0, hold=hold) for p in players)
        )
        results = [
            await p.wait_for(lambda m: m["t"] == "result" and m["race"] == code) for p in players
        ]
    finally:
        for p in players:
            await p.close()

    # Both instances served players of this race, and each heard of the other's moves.
    assert {p.connects[0] for p in players} == {s.ws_url for s in instances}
    for p in players:
        movers = {e["player"] for e in p.events if e["t"] == "progress" and e["race"] == code}
        assert movers == {q.player for q in players}, p.name
    # Everyone got the same result, with every seat ranked and the seed revealed.
    assert all(r == results[0] for r in results)
    standings = results[0]["standings"]
    assert {s["player"] for s in standings} == {p.player for p in players}
    assert results[0]["seed"] == 4242
    moves_in_store, nodes = stored(redis_cluster.url, namespace, list(gids.values()))
    check_nothing_lost(players, gids, moves_in_store)
    assert sum(len(m) for m in moves_in_store.values()) > 0
    # A race's keys share one slot, so one node holds all its games.
    assert len(nodes) == 1
    for p in players:
        mine = next(s for s in standings if s["player"] == p.player)
        assert mine["moves"] == len(p.acked.get(gids[p.name], []))


async def test_rolling_restart_of_both_instances_loses_no_acknowledged_move(
    redis_cluster, instances: list[ServerProcess], namespace: str
) -> None:
    players = make_players(instances, seed=2)
    host, others = players[0], players[1:]
    hold = asyncio.Event()
    exit_codes: list[int | None] = []
    stopped_at: list[float] = []

    async def rolling_restart() -> None:
        for server in instances:
            await asyncio.sleep(0.3)  # let moves flow on every instance first
            stopped_at.append(time.monotonic())
            exit_codes.append(await asyncio.to_thread(server.stop))
            await asyncio.to_thread(server.start, 60)
        await asyncio.sleep(0.3)
        hold.set()

    try:
        code = await race_code(host, GAME, seed=777)
        gids = await seat_and_start(host, others, code)
        await asyncio.gather(
            rolling_restart(),
            *(p.play(gids[p.name], moves=60, pause_s=0.08, hold=hold) for p in players),
        )
        finals = [await p.request({"t": "get", "gid": gids[p.name]}) for p in players]
    finally:
        for p in players:
            await p.close()

    # Each instance drained and exited cleanly on SIGTERM, and clients were told to go away.
    assert exit_codes == [0, 0]
    close_codes = [c for p in players for c in p.close_codes]
    assert close_codes.count(1001) >= 2, close_codes
    assert all(len(p.connects) >= 2 for p in players), [p.connects for p in players]
    # The race was under way through the restarts: moves were acknowledged before the first
    # SIGTERM, between the two, and after the second.
    acks = sorted(t for p in players for t in p.ack_times)
    bounds = [float("-inf"), *stopped_at, float("inf")]
    assert all(any(lo < t < hi for t in acks) for lo, hi in itertools.pairwise(bounds))
    # Every player finished, and the race closed with every seat ranked.
    assert all(f["t"] == "state" and f["finished"] for f in finals)
    result = stored_result(redis_cluster.url, namespace, code)
    assert {s["player"] for s in result["standings"]} == {p.player for p in players}
    # No acknowledged move was lost: the store holds exactly what the players saw acknowledged,
    # and the server's own count agrees.
    moves_in_store, _ = stored(redis_cluster.url, namespace, list(gids.values()))
    check_nothing_lost(players, gids, moves_in_store)
    for p, final in zip(players, finals, strict=True):
        assert final["n"] == len(p.acked.get(gids[p.name], []))
    assert sum(len(p.acked.get(gids[p.name], [])) for p in players) > 0
