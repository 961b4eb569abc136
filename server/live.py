"""Games replayed in this process's memory, so that a move costs one engine step.

The store is the truth: an entry is reloaded whenever a write finds that the
stored game moved on (another process, or a race closing), and `fresh=True`
rereads the record before answering from memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict
from collections.abc import AsyncIterator
from typing import Any

from server.games import LiveGame

log = logging.getLogger(__name__)


class LiveGames:
    def __init__(self, store: Any, size: int) -> None:
        self._store = store
        self._size = size
        self._items: OrderedDict[str, LiveGame] = OrderedDict()
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}

    async def get(self, gid: str, *, fresh: bool = False) -> LiveGame | None:
        cached = self._items.get(gid)
        if cached is not None and not fresh:
            self._items.move_to_end(gid)
            return cached
        loaded = await self._store.load_game(gid)
        if loaded is None:
            self._items.pop(gid, None)
            return None
        record, moves = loaded
        cached = self._items.get(gid)
        if cached is not None and cached.move_list == moves:
            cached.record = record
            self._items.move_to_end(gid)
            return cached
        live = LiveGame.replay(record, moves)
        self._items[gid] = live
        while len(self._items) > self._size:
            self._items.popitem(last=False)
        return live

    def evict(self, gid: str) -> None:
        self._items.pop(gid, None)

    @contextlib.asynccontextmanager
    async def lock(self, gid: str) -> AsyncIterator[None]:
        """Serialises the requests of this process on one game (the store guards the rest)."""
        lock, users = self._locks.get(gid, (None, 0))
        if lock is None:
            lock = asyncio.Lock()
        self._locks[gid] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._locks[gid]
            if users <= 1:
                del self._locks[gid]
            else:
                self._locks[gid] = (lock, users - 1)
