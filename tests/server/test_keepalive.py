"""The keepalive Ticker (server/edge/keepalive.py): one timer visiting each member when due."""

from __future__ import annotations

import asyncio

from server.edge.keepalive import Ticker


class Member:
    def __init__(self, name: str, seen: list[str], again: float | None = None) -> None:
        self.name, self.seen, self.again = name, seen, again

    def keepalive(self, now: float) -> float | None:
        self.seen.append(self.name)
        if self.again is None:
            return None
        when, self.again = now + self.again, None  # once more, then never
        return when


async def test_members_are_visited_in_order_of_their_times_and_dropped_ones_never():
    loop = asyncio.get_running_loop()
    ticker = Ticker(0.01)
    seen: list[str] = []
    now = loop.time()
    late, early, gone = Member("late", seen), Member("early", seen, again=0.1), Member("x", seen)
    ticker.add(late, now + 0.3)
    ticker.add(early, now + 0.05)
    ticker.add(gone, now + 0.1)
    ticker.discard(gone)
    assert len(ticker) == 2
    while len(ticker):
        await asyncio.sleep(0.05)
    # early twice (its visit asked for another, 0.1 s on), before late; the discarded never.
    assert seen == ["early", "early", "late"]
    ticker.close()


async def test_adding_again_moves_a_member_to_its_new_time():
    loop = asyncio.get_running_loop()
    ticker = Ticker(0.01)
    seen: list[str] = []
    a, b = Member("a", seen), Member("b", seen)
    now = loop.time()
    ticker.add(a, now + 0.05)
    ticker.add(b, now + 0.1)
    ticker.add(a, now + 0.2)  # instead of 0.05
    while len(ticker):
        await asyncio.sleep(0.05)
    assert seen == ["b", "a"]
    ticker.close()
