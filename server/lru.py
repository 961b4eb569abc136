"""The one bounded cache of the server: least recently used entries go first.

Every memo of the server (games replayed in memory, the keys of games, races' seats and
lobbies) is one of these, so none of them grows without bound and none forgets all at once.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class LRU(Generic[K, V]):
    """A mapping of at most `size` entries; `get` and `put` make an entry the most recent.

    >>> memo = LRU[str, int](2)
    >>> memo.put("a", 1); memo.put("b", 2); memo.get("a")
    1
    >>> memo.put("c", 3)  # "b" was the least recently used
    >>> memo.get("b") is None, len(memo)
    (True, 2)
    """

    __slots__ = ("_items", "_size")

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError("an LRU holds at least one entry")
        self._size = size
        self._items: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        value = self._items.get(key)
        if value is not None:
            self._items.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        items = self._items
        items[key] = value
        items.move_to_end(key)
        if len(items) > self._size:
            items.popitem(last=False)

    def pop(self, key: K) -> V | None:
        return self._items.pop(key, None)

    def __len__(self) -> int:
        return len(self._items)

    @property
    def capacity(self) -> int:
        """The most entries it holds."""
        return self._size

    def __contains__(self, key: object) -> bool:
        return key in self._items
