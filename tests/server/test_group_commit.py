"""The group commit sends one batch at a time, on the real store: the writes that arrive
while a batch waits for the store, in however many loop turns, go together in the next
one. Bigger batches are what make a move cheaper under load (a script call, its parse and
its fsync shared by more moves: server/store/group_commit.py has the figures)."""

from __future__ import annotations

import asyncio

import redis.asyncio as aioredis

from server.domain.changes import Written
from server.store.stores import Stores


async def test_writes_arriving_while_a_batch_waits_go_together_in_the_next(
    stores: list[Stores], redis_url: str, redis_namespace: str
) -> None:
    commit = stores[0].commit
    batches, writes = commit.batches, commit.writes

    def write(i: int) -> asyncio.Future[Written]:
        # Games that do not exist: each write is answered MISSING, but batched all the same.
        keys = [f"{redis_namespace}:gc:{i}:{part}" for part in ("meta", "moves", "inst", "times")]
        return commit.submit(keys, 1, "deal", {"ver": "2"}, b"", at_ms=1)

    admin = aioredis.Redis.from_url(redis_url)
    try:
        # Held by the store for a while, so that the first batch is surely still in flight
        # while the others arrive, in three separate turns of the loop.
        await admin.execute_command("CLIENT", "PAUSE", 400, "ALL")
        first = [write(0)]
        await asyncio.sleep(0.05)
        later = []
        for turn in range(3):
            later += [write(1 + turn * 10 + k) for k in range(10)]
            await asyncio.sleep(0.05)
        assert not any(f.done() for f in first + later)
        answers = await asyncio.wait_for(asyncio.gather(*first, *later), 10)
    finally:
        await admin.execute_command("CLIENT", "UNPAUSE")
        await admin.aclose()
    assert answers == [Written.MISSING] * 31
    assert commit.writes - writes == 31
    assert commit.batches - batches == 2  # the first alone, then the thirty together
