"""Games replayed in this process's memory, so that a move costs one engine step.

The store is the truth: an entry is reloaded whenever a write finds that the
stored game moved on (another process, or a race closing), and `fresh=True`
rereads the record before answering from memory.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from typing import Any

from server.games import LiveGame

log = logging.getLogger(__name__)


class LiveGames:
    def __init__(self, store: Any, size: int) -> None:
        self._store = store
        self._size = size
        self._items: OrderedDict[str, LiveGame] = OrderedDict()
        self._locks: dict[str, list[Any]] = {}  # gid -> [lock, users]

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

    def adopt(self, live: LiveGame) -> None:
        """Cache `live`, a game as the store now has it."""
        gid = live.record.gid
        self._items[gid] = live
        self._items.move_to_end(gid)
        while len(self._items) > self._size:
            self._items.popitem(last=False)

    def lock(self, gid: str) -> _GameLock:
        """Serialises the requests of this process on one game (the store guards the rest)."""
        return _GameLock(self._locks, gid)


class _GameLock:
    """`async with`: one request at a time per game; the entry lives while anyone uses it."""

    __slots__ = ("_entry", "_gid", "_locks")

    def __init__(self, locks: dict[str, list[Any]], gid: str) -> None:
        self._locks, self._gid = locks, gid
        self._entry: list[Any] = []

    async def __aenter__(self) -> None:
        entry = self._locks.get(self._gid)
        if entry is None:
            entry = self._locks[self._gid] = [asyncio.Lock(), 0]
        entry[1] += 1
        self._entry = entry
        await entry[0].acquire()

    async def __aexit__(self, *exc: object) -> None:
        entry = self._entry
        entry[0].release()
        entry[1] -= 1
        if entry[1] == 0:
            del self._locks[self._gid]
