"""How the store fails: one error, StoreUnavailable, whatever Redis or the socket raised.

Every public coroutine of the store's classes (its repositories of players, games, races,
the daily challenge and presence, the batches they share, the leaderboards and stats, the
leases, and Stores, which wires them) is wrapped by `unavailable_on_failure`, so that the
layers above catch one error and never import a Redis client's: a Redis failure anywhere in
the store reaches them as StoreUnavailable (a `Refused` with code `unavailable`, which the
session answers as such).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from redis.exceptions import RedisError

import protocol as p


class StoreUnavailable(p.Refused):
    """Redis could not be reached or failed; the request may be retried."""

    def __init__(self, detail: str, message: str = "the store is unavailable; try again") -> None:
        super().__init__(p.UNAVAILABLE, message)
        self.detail = detail

    def __str__(self) -> str:
        return self.detail


# What Redis and its client raise when they fail (redis-py raises its own errors, and
# OSError from the socket): turned into StoreUnavailable at the store's edge.
REDIS_FAILURES: tuple[type[Exception], ...] = (RedisError, OSError)
# Everything a caller of the store may see fail; the process's own start-up also sees the
# Redis client's errors directly (before there is a store).
STORE_ERRORS: tuple[type[Exception], ...] = (StoreUnavailable, *REDIS_FAILURES)

C = TypeVar("C", bound=type)


def unavailable_on_failure(cls: C) -> C:
    """Class decorator: every public coroutine method raises StoreUnavailable for any
    Redis failure (see the module's docstring)."""
    for name, method in list(vars(cls).items()):
        if not name.startswith("_") and inspect.iscoroutinefunction(method):
            setattr(cls, name, _translated(method))
    return cls


def _translated(method: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    @functools.wraps(method)
    async def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return await method(*args, **kwargs)
        except REDIS_FAILURES as exc:
            raise StoreUnavailable(f"{method.__qualname__}: {exc}") from exc

    return call
