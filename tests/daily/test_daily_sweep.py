"""The midnight sweeper on the real store: attempts left open are closed once, ranked once,
however many instances sweep at the same moment, and a backlog larger than a batch empties."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import AsyncIterator
from dataclasses import replace

import pytest
from support.server_proc import delete_namespace

import engine
from server.config import DEFAULT, Config
from server.daily.seeds import DAY_MS, day_start_s
from server.daily.service import DailyService
from server.store.redis_client import create_redis
from server.store.scripts import Status
from server.store.store import Store

DAY = dt.date(2030, 7, 1)
MIDNIGHT_MS = int(day_start_s(DAY) * 1000) + DAY_MS


@pytest.fixture
async def stores(redis_url: str, redis_namespace: str) -> AsyncIterator[list[Store]]:
    """Two stores, as two server instances would have, on one Redis and namespace."""
    config = Config(namespace=redis_namespace, redis_url=redis_url)
    out = []
    for instance in ("inst-a", "inst-b"):
        store = Store(config, create_redis(config, redis_url), instance)
        await store.open()
        out.append(store)
    yield out
    for store in out:
        await store.close()
    delete_namespace(redis_url, redis_namespace)


async def test_open_attempts_are_closed_and_ranked_exactly_once(stores: list[Store]) -> None:
    services = [
        DailyService(s, b"sweep-secret", lambda: MIDNIGHT_MS / 1000 - 60, engine.GAMES)
        for s in stores
    ]
    a, b = services
    players = []
    n = DEFAULT.daily_sweep_batch * 2 + 50  # more than two batches
    for i in range(n):
        player, _token = await stores[0].create_player(f"p{i}", 0)
        record, created = await a.attempt(player, f"p{i}", "bakers_game", MIDNIGHT_MS - 60_000 + i)
        assert created and not record.finished
        players.append(player)
    # The last one resigns before midnight (as the server writes it): ranked at once, and not
    # closed again by the sweeper.
    resigned = replace(record, finished=True, resigned=True, finished_at_ms=MIDNIGHT_MS - 1000,
                       ver=record.ver + 1)  # fmt: skip
    outcome = await stores[1].write_move(resigned, "", record.ver, b"")
    assert outcome.status == Status.APPLIED
    await b.finished(resigned)
    assert (await a.boards.board("bakers_game", DAY.isoformat())).total == 1

    assert await a.sweep(MIDNIGHT_MS - 1) == []  # nothing is due before midnight
    closed_a, closed_b = await asyncio.gather(
        a.sweep(MIDNIGHT_MS + 500), b.sweep(MIDNIGHT_MS + 500)
    )
    # The lock let one instance do the work; it got through the whole backlog.
    assert sorted([len(closed_a), len(closed_b)]) == [0, n - 1]
    assert await a.sweep(MIDNIGHT_MS + 2000) == []
    assert await b.sweep(MIDNIGHT_MS + 2000) == []

    board = await a.boards.board("bakers_game", DAY.isoformat(), limit=100)
    assert board.total == n
    for i in (0, n // 2, n - 2):
        loaded = await stores[1].load_game(f"d.{DAY.isoformat()}.bakers_game.{players[i]}")
        assert loaded is not None
        rec = loaded[0]
        assert rec.finished and rec.timed_out and rec.finished_at_ms == MIDNIGHT_MS
        mine = await a.boards.board("bakers_game", DAY.isoformat(), asker=players[i])
        assert mine.me is not None and mine.me.time_ms == MIDNIGHT_MS - (MIDNIGHT_MS - 60_000 + i)
        _, stats = await a.stats.player_stats(("bakers_game",), players[i], DAY)
        assert stats["bakers_game"].played == 1
    last = await a.boards.board("bakers_game", DAY.isoformat(), asker=players[-1])
    assert last.me is not None and last.me.time_ms == 59_000 - (n - 1)
    assert await stores[0].redis.zcard(stores[0].keys.open_attempts()) == 0
