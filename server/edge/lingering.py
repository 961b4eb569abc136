"""Session workers that wait for their connection's next message, let go once idle.

A session handles its messages in a worker task. Made when a message arrives and ended
when the inbox is empty, it cost a task per message at full load (making, registering
and running it: a measurable part of a move). A worker that waits for the next message
costs a future instead. An idle connection should keep nothing waiting, though: one
timer for the whole process lets go of every worker that has waited through a whole
`period` (so after one to two periods of quiet), and the next message starts a new one.
"""

from __future__ import annotations

import asyncio
from typing import Protocol


class Waiting(Protocol):
    def let_go(self) -> None:
        """End the worker if it is still waiting (a no-op if a message woke it)."""
        ...


class Lingering:
    def __init__(self, period: float) -> None:
        self.period = period
        self._recent: set[Waiting] = set()  # began waiting in the current period
        self._older: set[Waiting] = set()  # began waiting in the period before
        self._timer: asyncio.TimerHandle | None = None

    def __len__(self) -> int:
        return len(self._recent | self._older)

    def add(self, member: Waiting) -> None:
        """`member`'s worker begins to wait."""
        self._recent.add(member)
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self.period, self._sweep)

    def discard(self, member: Waiting) -> None:
        self._recent.discard(member)
        self._older.discard(member)

    def _sweep(self) -> None:
        self._timer = None
        idle = self._older - self._recent  # waiting since before the last sweep, if still
        self._older, self._recent = self._recent, set()
        for member in idle:
            member.let_go()
        if self._older:
            self._timer = asyncio.get_running_loop().call_later(self.period, self._sweep)
