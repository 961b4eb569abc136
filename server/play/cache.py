"""Games replayed in this process's memory, so that a move costs one engine step.

The store is the truth: an entry is reloaded whenever a write finds that the
stored game moved on (another process, or a race closing), and `fresh=True`
rereads the record before answering from memory.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from typing import TYPE_CHECKING

from server.lru import LRU
from server.play.game_machine import LiveGame

if TYPE_CHECKING:
    from server.store.store import Store

log = logging.getLogger(__name__)


class LiveGames:
    def __init__(self, store: Store, size: int) -> None:
        self._store = store
        self._items: LRU[str, LiveGame] = LRU(size)
        self._turns: dict[str, deque[asyncio.Future[None]]] = {}  # gid -> waiters

    async def get(self, gid: str, *, fresh: bool = False) -> LiveGame | None:
        cached = self._items.get(gid)
        if cached is not None and not fresh:
            return cached
        loaded = await self._store.load_game(gid)
        if loaded is None:
            self._items.pop(gid)
            return None
        record, moves = loaded
        cached = self._items.get(gid)
        if cached is not None and cached.move_list == moves:
            cached.record = record
            return cached
        live = LiveGame.replay(record, moves)
        self._items.put(gid, live)
        return live

    def evict(self, gid: str) -> None:
        self._items.pop(gid)

    def adopt(self, live: LiveGame) -> None:
        """Cache `live`, a game as the store now has it."""
        self._items.put(live.record.gid, live)

    def peek(self, gid: str) -> LiveGame | None:
        """The cached game as it is, without asking the store; None if not cached."""
        return self._items.get(gid)

    # Requests of this process on one game take turns (the store guards the rest). The
    # hot path (a move on a game nobody else is using) takes its turn without awaiting.

    def lock(self, gid: str) -> _Turn:
        """`async with`: a turn on the game, for moves and every other request."""
        return _Turn(self, gid)

    def claim(self, gid: str) -> asyncio.Future[None] | None:
        """Takes the game's turn: None if it is ours now, else a future to pass to
        `wait_turn`. Every claim ends with `release`."""
        waiters = self._turns.get(gid)
        if waiters is None:
            self._turns[gid] = deque()
            return None
        waiter = asyncio.get_running_loop().create_future()
        waiters.append(waiter)
        return waiter

    async def wait_turn(self, gid: str, waiter: asyncio.Future[None]) -> None:
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release(gid)  # the turn was handed to us just as we were cancelled
            raise

    def release(self, gid: str) -> None:
        """Ends a turn: hands the game to the next waiter, if any."""
        waiters = self._turns[gid]
        while waiters:
            waiter = waiters.popleft()
            if not waiter.done():  # a cancelled waiter is done
                waiter.set_result(None)
                return
        del self._turns[gid]


class _Turn:
    """One request's turn on one game; waits only if another request has it."""

    __slots__ = ("_games", "_gid")

    def __init__(self, games: LiveGames, gid: str) -> None:
        self._games, self._gid = games, gid

    async def __aenter__(self) -> None:
        waiter = self._games.claim(self._gid)
        if waiter is not None:
            await self._games.wait_turn(self._gid, waiter)

    async def __aexit__(self, *exc: object) -> None:
        self._games.release(self._gid)
