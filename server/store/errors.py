"""How the store fails: what the layers above catch, without importing a Redis client."""

from __future__ import annotations

from redis.exceptions import RedisError

import protocol as p


class StoreUnavailable(p.Refused):
    """Redis could not be reached or failed; the request may be retried."""

    def __init__(self, detail: str, message: str = "the store is unavailable; try again") -> None:
        super().__init__(p.UNAVAILABLE, message)
        self.detail = detail

    def __str__(self) -> str:
        return self.detail


# Everything a store call may raise when Redis fails (redis-py raises its own errors, and
# OSError from the socket), for the one place that answers requests.
STORE_ERRORS: tuple[type[Exception], ...] = (StoreUnavailable, RedisError, OSError)
