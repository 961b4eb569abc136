"""Optimistic concurrency: load, decide, write if the version is unchanged, else again.

Every race and game operation runs through `Optimistic.run`: an attempt loads what it
needs and decides (a machine of server/play/), and returns a `Plan`: the write to make,
which the store applies only if the records are still at the versions the decision was
made on, and what to do once it is applied. The runner makes the write and reads the
store's answer, the same way for every operation:

- APPLIED (APPLIED_LAST too): the plan's `then` runs and gives the answer;
- STALE (something changed since the load): the attempt runs again, at most `retries`
  times in all, after which the operation is refused as `unavailable` (or ends as the
  caller's `exhausted` says);
- MISSING (the record is gone): the plan's `missing` answers (by default: refused as
  `not_found`).

A plan without a write (nothing to store) answers at once. Tests make a real concurrent
write between an attempt's load and its write with `interposed` (a hook called there), so
the stale and missing paths are driven on the real store, not only by chance under load.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from types import CoroutineType
from typing import Any, Generic, Protocol, TypeVar

import protocol as p
from server.domain.changes import Written

log = logging.getLogger(__name__)

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)
Write = Callable[[], Awaitable[Written]]
# What tests run between an attempt's decision and its write: (what, attempt number).
Interpose = Callable[[str, int], Awaitable[None]]


@dataclass(slots=True)
class Plan(Generic[T]):
    """One attempt's decision: `write` to make (None: nothing to store), then `then` for the
    answer once it is applied (or at once without a write; an awaitable only when it must
    wait: the move path answers most moves without one); `missing` answers when the store
    finds the record gone (None: the runner refuses as `not_found`); `stale` is told when it
    finds it changed, before the next attempt."""

    then: Callable[[], T | Awaitable[T]]
    write: Write | None = None
    missing: Callable[[], T] | None = None
    stale: Callable[[], None] | None = None  # told that the write found the record changed


class Steps(Protocol[T_co]):
    """What the runner asks of a plan (a `Plan`, or an object of the hot path that is its
    own plan, so that a move makes one object rather than a plan and its closures)."""

    @property
    def then(self) -> Callable[[], T_co | Awaitable[T_co]]: ...
    @property
    def write(self) -> Write | None: ...
    @property
    def missing(self) -> Callable[[], T_co] | None: ...
    @property
    def stale(self) -> Callable[[], None] | None: ...


# What an attempt or a plan's `then` may give to be awaited: a coroutine (an `async def`'s)
# or a future (a task, the group commit's). Checked by type rather than with
# inspect.isawaitable, whose ABC check costs the move path on every plain answer.
_AWAITABLES = (CoroutineType, asyncio.Future)


async def answer(value: T) -> T:
    return value


def done(value: T) -> Plan[T]:
    """A plan that stores nothing and answers `value`."""
    return Plan(lambda: answer(value))


class Optimistic:
    """The one retry loop of version-checked writes (see the module's docstring)."""

    def __init__(self, retries: int) -> None:
        self.retries = retries
        self._interpose: Interpose | None = None

    @contextlib.contextmanager
    def interposed(self, hook: Interpose) -> Iterator[None]:
        """For tests: call `hook(what, attempt)` after every decision, before its write."""
        self._interpose = hook
        try:
            yield
        finally:
            self._interpose = None

    async def run(
        self,
        what: str,
        attempt: Callable[..., Steps[T] | Awaitable[Steps[T]]],
        *args: object,
        retries: int | None = None,
        exhausted: Callable[[], T] | None = None,
    ) -> T:
        """Run `attempt` until its write is applied (see the module's docstring). `what`
        names the record for messages and logs ("race ABC", "game r.ABC.x"); `attempt` is
        called with `args` (no closure to make per operation). An attempt
        may return its plan at once (the move path, when it need not wait) or an awaitable
        of it."""
        bound = self.retries if retries is None else retries
        # isinstance with the tuple inline and `reply` typed Any rather than cast(): the
        # move path runs this loop once per move, and each helper call costs it.
        awaitables = _AWAITABLES
        reply: Any
        for n in range(bound):
            got: Any = attempt(*args)
            plan: Steps[T] = await got if isinstance(got, awaitables) else got
            write = plan.write
            if write is None:
                reply = plan.then()
                return await reply if isinstance(reply, awaitables) else reply  # type: ignore[no-any-return]
            if self._interpose is not None:
                await self._interpose(what, n)
            written = await write()
            if written is Written.APPLIED or written is Written.APPLIED_LAST:
                reply = plan.then()
                return await reply if isinstance(reply, awaitables) else reply  # type: ignore[no-any-return]
            if written is Written.MISSING:
                if plan.missing is not None:
                    return plan.missing()
                raise p.Refused(p.NOT_FOUND, f"no {what}")
            if plan.stale is not None:
                plan.stale()
            log.debug("%s changed before our write (attempt %d of %d)", what, n + 1, bound)
        log.warning("%s kept changing: gave up after %d attempts", what, bound)
        if exhausted is not None:
            return exhausted()
        raise p.Refused(p.UNAVAILABLE, f"the {what.split(' ')[0]} kept changing; try again")
