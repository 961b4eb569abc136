"""Grow a stored game to many moves in seconds, through the server's own code.

Playing 100,000 moves over the wire would take minutes at the rate limit; this writes them
as the server would, without the network: the game machine decides each move (and the
snapshot every `snapshot_every` moves) and the store's group commit writes them, a
thousand to a call of the MOVES script. The game must already exist (a `practice` or a
started race's seat).

Baker's Game deal 1 after its first move t1-t7 has a cycle of two moves (9C to a reserve
and back onto the ten), which is how the issue's 100,000-move practice game was made.
"""

from __future__ import annotations

import asyncio
import re
import time
import urllib.request
from dataclasses import replace

import engine
from server.config import Config
from server.domain.changes import Written
from server.play.cache import load
from server.play.game_machine import Applied, GameRules, decide_move
from server.store.redis_client import create_redis
from server.store.stores import Stores

BAKERS_SEED = 1
BAKERS_FIRST = "t1-t7"


def bakers_cycle(count: int, reserve: str = "r0") -> list[str]:
    """The moves of a Baker's Game deal 1 game of `count` moves: t1-t7, then 9C to
    `reserve` and back, again and again."""
    cycle = [f"t7-{reserve}", f"{reserve}-t7"]
    return [BAKERS_FIRST, *(cycle[i % 2] for i in range(count - 1))][:count]


def expected_view(moves: list[str]) -> dict:  # type: ignore[type-arg]
    return engine.replay("bakers_game", BAKERS_SEED, moves).view()


async def grow(redis_url: str, namespace: str, gid: str, moves: list[str]) -> None:
    """Append `moves` to the stored game `gid` (whose list must be a prefix of them)."""
    config = replace(Config(), namespace=namespace)
    store = Stores(config, create_redis(config, redis_url), f"grow-{gid}")
    await store.open()
    try:
        live = await load(store, gid)
        assert live is not None, gid
        rules = GameRules.of(config)
        at = live.n
        while at < len(moves):
            futures = []
            for move in moves[at : at + 1000]:
                now_us = time.time_ns() // 1000
                expect_ver = live.record.ver
                decision = decide_move(live, live.n, move, now_us, rules)
                assert isinstance(decision, Applied), decision
                futures.append(
                    store.games.write_move(
                        decision.record, move, expect_ver, b"", decision.snapshot
                    )
                )
            # Submitted without a pause, so they form one batch, applied in order.
            outcomes = await asyncio.gather(*futures)
            assert all(o is Written.APPLIED for o in outcomes), outcomes[:3]
            at = live.n
    finally:
        await store.close()


def game_metrics(http_url: str) -> dict[str, float]:
    """The game-load counters (solitaire_game_*) of the server at `http_url`, by name and
    labels."""
    with urllib.request.urlopen(http_url + "/metrics", timeout=5) as r:
        text = r.read().decode()
    out: dict[str, float] = {}
    for line in text.splitlines():
        found = re.match(r"(solitaire_game_\w+?)(?:_total)?(\{[^}]*\})? ([0-9.e+-]+)$", line)
        if found:
            out[found.group(1) + (found.group(2) or "")] = float(found.group(3))
    return out
