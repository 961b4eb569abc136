"""The midnight sweeper on the real store: attempts left open are closed once, ranked once,
however many instances sweep at the same moment, and a backlog larger than a batch empties.
An instance that stalls past its sweep lock's time neither carries on beside the instance
that took the lock over nor frees that instance's lock."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import replace

import redis.asyncio as aioredis

import engine
from server.config import DEFAULT
from server.daily.seeds import DAY_MS, day_start_s
from server.daily.service import DailyService
from server.domain.changes import Written
from server.domain.outcome import RESIGNED
from server.domain.records import GameRecord
from server.store.stores import Stores

DAY = dt.date(2030, 7, 1)
MIDNIGHT_MS = int(day_start_s(DAY) * 1000) + DAY_MS


async def test_open_attempts_are_closed_and_ranked_exactly_once(stores: list[Stores]) -> None:
    services = [
        DailyService(s, b"sweep-secret", lambda: MIDNIGHT_MS / 1000 - 60, engine.GAMES)
        for s in stores
    ]
    a, b = services
    players = []
    n = DEFAULT.daily_sweep_batch * 2 + 50  # more than two batches
    for i in range(n):
        player, _token = await stores[0].players.create_player(f"p{i}", 0)
        record, created = await a.attempt(player, f"p{i}", "bakers_game", MIDNIGHT_MS - 60_000 + i)
        assert created and not record.finished
        players.append(player)
    # The last one resigns before midnight (as the server writes it): ranked at once, and not
    # closed again by the sweeper.
    resigned = replace(record, outcome=RESIGNED, finished_at_ms=MIDNIGHT_MS - 1000,
                       ver=record.ver + 1)  # fmt: skip
    written = await stores[1].games.write_move(resigned, "", record.ver, b"")
    assert written is Written.APPLIED
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
        loaded = await stores[1].games.load_game(f"d.{DAY.isoformat()}.bakers_game.{players[i]}")
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


# ---------------------------------------------------------------- the sweep's lock

LOCK_MS = 60_000  # never runs out by itself here: the tests age the lock key when they mean to


class Probe:
    """What the tests see of the sweeps: how often each attempt is ranked, whether two
    instances ever rank at the same time, and the points where an instance is held."""

    def __init__(self) -> None:
        self.ranked: Counter[str] = Counter()
        self.ranking: set[str] = set()  # instances inside rank() now
        self.overlaps: list[str] = []
        self.holds: dict[tuple[str, int, str], Callable[[], Awaitable[None]]] = {}

    async def hold(self, name: str, n: int, where: str) -> None:
        hold = self.holds.get((name, n, where))
        if hold is not None:
            await hold()


class WatchedService(DailyService):
    """A real DailyService that reports each attempt it ranks to a Probe, and can be held
    during or after its n-th rank: the stand-in for an instance that stalls."""

    def __init__(self, store: Stores, name: str, probe: Probe) -> None:
        super().__init__(store, b"sweep-secret", lambda: MIDNIGHT_MS / 1000 - 60, engine.GAMES)
        self.name = name
        self.probe = probe
        self.ranks = 0

    async def rank(self, record: GameRecord) -> None:
        probe = self.probe
        self.ranks += 1
        others = probe.ranking - {self.name}
        if others:
            probe.overlaps.append(f"{self.name} ranked {record.gid} while {others} ranked")
        probe.ranking.add(self.name)
        try:
            await probe.hold(self.name, self.ranks, "during")
            await super().rank(record)
            probe.ranked[record.gid] += 1
        finally:
            probe.ranking.discard(self.name)
        await probe.hold(self.name, self.ranks, "after")


async def open_attempts(service: DailyService, store: Stores, n: int) -> list[str]:
    gids = []
    for i in range(n):
        player, _token = await store.players.create_player(f"p{i}", 0)
        record, _ = await service.attempt(player, f"p{i}", "bakers_game", MIDNIGHT_MS - 60_000 + i)
        gids.append(record.gid)
    return gids


async def age_away(redis: aioredis.Redis, key: str) -> None:
    """Make a lock key run out now, as if its holder had stalled past its time. Waits until
    the holding is gone, not the key: another instance may take the lock at once."""
    holding = await redis.get(key)
    await redis.pexpire(key, 1)
    while holding is not None and await redis.get(key) == holding:
        await asyncio.sleep(0.005)


async def test_an_instance_that_stalled_past_its_lock_never_sweeps_beside_the_next(
    stores: list[Stores], redis: aioredis.Redis
) -> None:
    """Two instances sweep every few milliseconds, each round after round, while one stalls
    between two batches past its lock's time: the other takes over, and from then on the
    stalled one neither carries on nor frees the new holder's lock, so no attempt is ranked
    twice and no two instances ever rank at once."""
    probe = Probe()
    a, b = WatchedService(stores[0], "inst-a", probe), WatchedService(stores[1], "inst-b", probe)
    n = DEFAULT.daily_sweep_batch + 40
    gids = await open_attempts(a, stores[0], n)
    lock_key = stores[0].keys.sweep_lock()
    a_sweeping, b_ranking, a_swept_again = asyncio.Event(), asyncio.Event(), asyncio.Event()

    async def a_started() -> None:
        a_sweeping.set()

    async def a_stalls() -> None:  # after its first batch, until B has taken over
        await age_away(redis, lock_key)
        await b_ranking.wait()

    async def b_is_busy() -> None:  # B, holding the lock, stays at it while A sweeps again
        b_ranking.set()
        await a_swept_again.wait()

    probe.holds[("inst-a", 1, "during")] = a_started
    probe.holds[("inst-a", DEFAULT.daily_sweep_batch, "after")] = a_stalls
    probe.holds[("inst-b", 1, "during")] = b_is_busy

    async def instance(service: WatchedService, start: asyncio.Event | None) -> int:
        if start is not None:
            await start.wait()
        closed = 0
        while await redis.zcard(service.stores.keys.open_attempts()):
            closed += len(await service.sweep(MIDNIGHT_MS + 500, LOCK_MS))
            if service is a:
                a_swept_again.set()
            await asyncio.sleep(0.01)
        return closed

    # B starts once A holds the lock, so that A is the one that stalls.
    closed_a, closed_b = await asyncio.gather(instance(a, None), instance(b, a_sweeping))

    assert probe.overlaps == []
    assert sorted(probe.ranked) == sorted(gids)
    assert {gid: k for gid, k in probe.ranked.items() if k != 1} == {}
    assert (closed_a, closed_b) == (DEFAULT.daily_sweep_batch, n - DEFAULT.daily_sweep_batch)
    assert (await a.boards.board("bakers_game", DAY.isoformat())).total == n
    assert not await redis.exists(lock_key)


async def test_an_expired_holder_cannot_free_the_lock_another_instance_took(
    stores: list[Stores], redis: aioredis.Redis
) -> None:
    probe = Probe()
    a, b = WatchedService(stores[0], "inst-a", probe), WatchedService(stores[1], "inst-b", probe)
    await open_attempts(a, stores[0], 3)
    lock_key = stores[0].keys.sweep_lock()
    tokens: dict[str, str | None] = {}
    a_stalled, a_go, b_ranking, b_go = (asyncio.Event() for _ in range(4))

    async def a_stalls() -> None:
        tokens["a"] = await redis.get(lock_key)
        a_stalled.set()
        await a_go.wait()

    async def b_holds() -> None:
        tokens["b"] = await redis.get(lock_key)
        b_ranking.set()
        await b_go.wait()

    probe.holds[("inst-a", 1, "after")] = a_stalls
    probe.holds[("inst-b", 1, "during")] = b_holds

    sweep_a = asyncio.create_task(a.sweep(MIDNIGHT_MS + 500, LOCK_MS))
    await a_stalled.wait()
    await age_away(redis, lock_key)  # A's lock runs out while A is still at work
    sweep_b = asyncio.create_task(b.sweep(MIDNIGHT_MS + 500, LOCK_MS))
    await b_ranking.wait()  # B took the lock
    assert tokens["a"] and tokens["b"] and tokens["a"] != tokens["b"]

    a_go.set()
    await sweep_a  # A finishes and lets go of what it believes is its lock
    assert await redis.get(lock_key) == tokens["b"]
    assert await redis.pttl(lock_key) > 0

    b_go.set()
    await sweep_b
    assert not await redis.exists(lock_key)  # B's own release frees it
