"""The daily feature's stores (leaderboards, stats) give the same answers on a Redis Cluster
as on a single Redis: their Lua scripts and pipelines keep to one slot per call."""

from __future__ import annotations

import datetime as dt
import random
import uuid

import msgspec
import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster

from server.store.boards import LeaderboardStore, Result
from server.store.keys import Keys
from server.store.stats_repo import StatsRepo

GAMES = ("doublets", "quatorze")
DAYS = [dt.date(2026, 3, 10) + dt.timedelta(days=i) for i in range(4)]


async def play_days(redis, namespace: str) -> list:
    """Enter the same pseudo-random results, then read every board and every player's stats."""
    keys = Keys(namespace)
    boards, stats = LeaderboardStore(redis, keys), StatsRepo(redis, keys)
    rnd = random.Random(7)
    players = [f"p{i:02d}" for i in range(12)]
    for day in DAYS:
        for game in GAMES:
            for player in rnd.sample(players, 8):
                result = Result(
                    player, f"name-{player}", rnd.randint(0, 52), rnd.randint(10, 300),
                    rnd.randint(1_000, 900_000), rnd.random() < 0.3,
                )  # fmt: skip
                await boards.record_day(game, day.isoformat(), result)
                await stats.record(game, day, result)
    out: list = []
    for game in GAMES:
        for date in [*(d.isoformat() for d in DAYS), "all"]:
            board = await boards.board(game, date, limit=20, asker="p03", around_me=True)
            out.append(msgspec.to_builtins(board))
    for player in players:
        out.append(msgspec.to_builtins(await stats.player_stats(GAMES, player, DAYS[-1])))
    return out


async def test_daily_boards_and_stats_agree_between_cluster_and_single_redis(
    redis_cluster, redis_url: str
) -> None:
    namespace = f"t{uuid.uuid4().hex[:10]}"
    cluster = RedisCluster.from_url(redis_cluster.url)
    single = aioredis.from_url(redis_url)
    try:
        on_cluster = await play_days(cluster, namespace)
        on_single = await play_days(single, namespace)
    finally:
        await cluster.aclose()
        await single.aclose()
    assert on_cluster == on_single
    # The comparison means something only if the boards are full and ranked...
    assert on_cluster[0]["total"] == 8 and on_cluster[0]["entries"][0]["rank"] == 1
    # ...and if the keys really were spread over the masters.
    for node in redis_cluster.nodes:
        plain = aioredis.Redis(host=node.host, port=node.port)
        try:
            assert [k async for k in plain.scan_iter(match=f"{{{namespace}:*")], node.port
        finally:
            await plain.aclose()


async def test_a_day_board_of_the_previous_layout_is_upgraded_on_a_cluster(redis_cluster) -> None:
    """The upgrade reads each attempt's game record, which lives under its player's hash
    tag, in another slot than the board: on a cluster it must still find them."""
    namespace = f"t{uuid.uuid4().hex[:10]}"
    keys = Keys(namespace)
    cluster = RedisCluster.from_url(redis_cluster.url)
    game, date = "quatorze", "2026-03-01"
    rows = [("a1a1a1a1a1a1a1a1", 4, 5_000, True), ("b2b2b2b2b2b2b2b2", 4, 900_000, False)]
    try:
        for seq, (player, score, time_ms, resigned) in enumerate(rows, 1):
            entry = msgspec.json.encode(
                {"name": player[:2], "score": score, "moves": 3, "time_ms": time_ms, "won": False}
            )
            await cluster.hset(keys.day_entries(game, date), player, f"{seq:010d}".encode() + entry)
            old = (63 - score) << 47 | time_ms << 16 | 3  # the previous version's packing
            await cluster.zadd(keys.day_board(game, date), {f"{seq:010d}:{player}": old})
            meta = keys.game(f"d.{date}.{game}.{player}")
            assert meta is not None
            await cluster.hset(meta.meta, "resigned", "1" if resigned else "0")
        board = await LeaderboardStore(cluster, keys).board(game, date)
        assert [(e.rank, e.player, e.resigned) for e in board.entries] == [
            (1, "b2b2b2b2b2b2b2b2", False),
            (2, "a1a1a1a1a1a1a1a1", True),
        ]
    finally:
        for key in (keys.day_entries(game, date), keys.day_board(game, date),
                    keys.day_layout(game, date)):  # fmt: skip
            await cluster.delete(key)
        for player, *_ in rows:
            meta = keys.game(f"d.{date}.{game}.{player}")
            assert meta is not None
            await cluster.delete(meta.meta)
        await cluster.aclose()
