"""One timer for the keepalive pings of every connection of a server.

A keepalive loop per connection (a task asleep between pings, a timeout around each
pong) cost a task, a coroutine frame and a timer handle per connection, and the loop's
scheduling of 20,000 of them (about 3 % of the CPU at 7,500 players). Here a single
timer walks a wheel of buckets, one per `resolution` seconds: each connection waits in
the bucket of the next time it wants to be visited, and a tick touches only the buckets
that are due, so an idle connection costs a set entry, not a task.

What a visit does (send a ping, close an unanswered one) is the member's business
(`Due.keepalive`, in server/edge/connection.py); the ticker only keeps time.
"""

from __future__ import annotations

import asyncio
import heapq
import logging
import math
from typing import Protocol

log = logging.getLogger(__name__)


class Due(Protocol):
    def keepalive(self, now: float) -> float | None:
        """A visit at loop time `now`; returns when to be visited next (None: never)."""
        ...


class Ticker:
    """Visits each member at (or up to `resolution` seconds after) the time it asked for."""

    def __init__(self, resolution: float) -> None:
        self.resolution = resolution
        self._loop = asyncio.get_running_loop()
        self._buckets: dict[int, set[Due]] = {}  # slot -> members due in it
        self._slots: list[int] = []  # heap of the slots that have a bucket
        self._slot_of: dict[Due, int] = {}  # member -> its slot
        self._timer: asyncio.TimerHandle | None = None
        self._timer_slot = 0  # the slot the timer fires for
        self._firing = -1  # the slot being visited (nothing joins it while it is)

    def __len__(self) -> int:
        return len(self._slot_of)

    def add(self, member: Due, when: float) -> None:
        """Visit `member` at loop time `when` (instead of any time asked for before)."""
        self.discard(member)
        slot = max(math.ceil(when / self.resolution), self._firing + 1)
        bucket = self._buckets.get(slot)
        if bucket is None:
            bucket = self._buckets[slot] = set()
            heapq.heappush(self._slots, slot)
            # While a tick visits, it arms the timer once at its end, for every re-add.
            if self._firing < 0 and (self._timer is None or slot < self._timer_slot):
                self._arm(slot)
        bucket.add(member)
        self._slot_of[member] = slot

    def discard(self, member: Due) -> None:
        """Visit `member` no more (if it was to be)."""
        slot = self._slot_of.pop(member, None)
        if slot is not None:
            self._buckets[slot].discard(member)  # an empty bucket goes when its slot comes

    def close(self) -> None:
        """Forgets every member and stops the timer."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._buckets.clear()
        self._slots.clear()
        self._slot_of.clear()

    def _arm(self, slot: int) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer_slot = slot
        self._timer = self._loop.call_at(slot * self.resolution, self._tick)

    def _tick(self) -> None:
        # The loop may run a timer a clock tick early: the slot's time counts as come.
        now = max(self._loop.time(), self._timer_slot * self.resolution)
        self._timer = None
        slots, buckets, slot_of = self._slots, self._buckets, self._slot_of
        while slots and slots[0] * self.resolution <= now:
            self._firing = slot = heapq.heappop(slots)
            for member in buckets.pop(slot):
                del slot_of[member]
                try:
                    when = member.keepalive(now)
                except Exception:
                    log.exception("keepalive of %r failed", member)
                    continue
                if when is not None:
                    self.add(member, when)
        self._firing = -1
        if slots:
            self._arm(slots[0])
