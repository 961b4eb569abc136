"""Locks and leases held in Redis: redis-py's own Lock (owner-checked release, extend).

The logic asks for a named lock and holds it; it never sees Redis. A lock that its holder
stops renewing expires, so a dead instance's work passes to another.
"""

from __future__ import annotations

import contextlib
import secrets
from typing import Any

from redis.asyncio.lock import Lock
from redis.exceptions import LockError

from server.store.unavailable import unavailable_on_failure


@unavailable_on_failure
class Lease:
    """A lock held while its holder renews it (non-blocking: taken now or not at all)."""

    def __init__(self, redis: Any, key: str, seconds: float, owner: str) -> None:
        self._owner = owner
        # Not thread-local: an asyncio holder is a task, and the token belongs to this object.
        self._lock = Lock(redis, key, timeout=seconds, blocking=False, thread_local=False)

    async def take(self) -> bool:
        # The token says who holds the lock (for operators) and is this holding's alone.
        token = f"{self._owner}:{secrets.token_hex(16)}"
        return bool(await self._lock.acquire(blocking=False, token=token))

    async def renew(self) -> bool:
        """Extend the lease by its whole length; False if it was lost (expired and taken)."""
        try:
            return bool(await self._lock.reacquire())
        except LockError:
            return False

    async def release(self) -> None:
        """Free the lease if this holder still has it (another holder's is left alone)."""
        with contextlib.suppress(LockError):
            await self._lock.release()
