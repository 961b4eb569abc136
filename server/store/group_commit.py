"""The group commit: game writes (moves, resignations) that arrive together go to Redis
in one script call, and no caller hears back before its own write is confirmed."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import msgspec
from redis.exceptions import NoScriptError, RedisError, ResponseError

from server.domain.changes import Written
from server.store.unavailable import StoreUnavailable

log = logging.getLogger(__name__)

_HEADS_ENCODER = msgspec.msgpack.Encoder()
# The script's status numbers as Written members, looked up rather than converted by
# calling the enum (EnumType.__call__ runs in Python: a measurable part of each move).
_WRITTEN: Mapping[int, Written] = MappingProxyType({w.value: w for w in Written})


@dataclass(slots=True)
class Write:
    """One game write waiting in the group commit: a move or a resignation."""

    keys: list[str]  # game meta, moves, interest set, times (and snapshots, with a snapshot)
    expect_ver: int
    move: str
    fields: dict[str, str]
    payload: bytes
    future: asyncio.Future[Written]
    snapshot: str = ""  # the position after the move, to keep (server/play/snapshots.py)
    at_ms: int = 0  # when the move was made (kept with it)
    # How many peer game metas end `keys`, checked for having ended once the write is
    # applied (APPLIED_LAST if all have); -1: none checked.
    peers: int = -1


class GroupCommit:
    """Batches game writes; each caller awaits its own outcome.

    A batch is one call of the MOVES script, which checks and applies its writes one by
    one: Redis runs it atomically, so each write still sees the stored game as it is, and
    redis-py packs and parses one command per batch instead of one per write. On a Redis
    Cluster the writes are grouped by slot (a script may touch one slot only), one call
    per slot, all in one pipeline.

    Up to `in_flight` batches run at once (one by default): while one waits for Redis, the
    writes that arrive meanwhile form the next. One batch at a time makes the batches as
    large as the load: a script call, its parse and its fsync are shared by more moves.
    Against two at a time (2026-12-06, bench/server.py in the same run): flat out 95
    writes a call against 56, 0.92 of the CPU a move and 1.05 times the throughput; at a
    human pace (bench/capacity.py, runs minutes apart) 8,000 racing players held where
    7,000 were, the server's CPU a move 193 to 205 us against 234, the store's 56 to 58
    against 79. Two writes of one game are never in flight together (the
    handlers take turns per game while they wait), and the script checks the stored
    move count itself, so the order between batches does not matter.

    On a single Redis each batch in flight has a connection of its own, outside the
    shared pool: checking a connection out of redis-py's pool and back in cost about
    half of a batch's CPU.
    """

    def __init__(
        self,
        redis: Any,
        script: Any,
        origin: str,
        channel_prefix: str,
        slot_of: Callable[[str], int] | None = None,
        in_flight: int = 1,
    ) -> None:
        self._redis = redis
        # The MOVES script as registered (redis-py's Script): its sha and text. It is sent as
        # a raw EVALSHA: redis-py's pipelines check every script before each execute,
        # a round trip more per batch.
        self._script = script
        self._origin = origin
        self._prefix = channel_prefix
        self._slot_of = slot_of  # None: a single Redis, where any keys may share a call
        self._pending: list[Write] = []
        self._wake = asyncio.Event()
        self._slots = asyncio.Semaphore(in_flight)
        self._in_flight = in_flight
        self._clients: list[Any] = []  # single-connection clients, one per batch in flight
        self._writers: set[asyncio.Task[None]] = set()
        self._task: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closing = False
        self.batches = 0
        self.writes = 0

    def start(self) -> None:
        # Kept, not looked up per write: asyncio.get_running_loop() makes a getpid system
        # call on Python 3.11, a measurable part of a move.
        self._loop = asyncio.get_running_loop()
        if self._slot_of is None:
            self._clients = [self._redis.client() for _ in range(self._in_flight)]
        self._task = asyncio.create_task(self._run(), name="group-commit")

    def submit(
        self,
        keys: list[str],
        expect_ver: int,
        move: str,
        fields: dict[str, str],
        payload: bytes,
        snapshot: str = "",
        at_ms: int = 0,
        peers: int = -1,
    ) -> asyncio.Future[Written]:
        """Queues a write; the future completes once it is in Redis (or fails with
        StoreUnavailable). A plain function: the move path awaits one future, no more.
        With a `snapshot`, `keys` names the game's snapshots fifth; the last `peers` keys
        are the metas of games checked for having ended once the write is applied."""
        assert self._loop is not None, "GroupCommit.start() first"
        fut: asyncio.Future[Written] = self._loop.create_future()
        if self._closing:
            fut.set_exception(StoreUnavailable("the server is shutting down"))
            return fut
        self._pending.append(
            Write(keys, expect_ver, move, fields, payload, fut, snapshot, at_ms, peers)
        )
        self._wake.set()
        return fut

    async def close(self) -> None:
        """Write everything already submitted, then stop."""
        self._closing = True
        self._wake.set()
        if self._task is not None:
            await self._task
        for client in self._clients:
            with contextlib.suppress(Exception):
                await client.aclose()

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            if self._pending:
                await self._slots.acquire()
                batch, self._pending = self._pending, []
                writer = asyncio.create_task(self._write_then_release(batch))
                self._writers.add(writer)
                writer.add_done_callback(self._writers.discard)
                if self._pending:
                    self._wake.set()
            if self._closing and not self._pending:
                if self._writers:
                    await asyncio.gather(*self._writers, return_exceptions=True)
                return

    async def _write_then_release(self, batch: list[Write]) -> None:
        try:
            await self._write(batch)
        finally:
            self._slots.release()

    async def _write(self, batch: list[Write]) -> None:
        self.batches += 1
        self.writes += len(batch)
        groups = self._group(batch)
        try:
            replies = await self._execute(groups)
            lost = [isinstance(r, NoScriptError) for r in replies]
            if any(lost):
                # Redis restarted without its script cache: load the script, run those again.
                self._script.sha = await self._redis.script_load(self._script.script)
                redo = [g for g, x in zip(groups, lost, strict=True) if x]
                again = iter(await self._execute(redo))
                replies = [next(again) if x else r for r, x in zip(replies, lost, strict=True)]
        except (RedisError, OSError) as exc:
            log.warning("group commit of %d writes failed: %s", len(batch), exc)
            for w in batch:
                if not w.future.done():
                    w.future.set_exception(StoreUnavailable(str(exc)))
            return
        for writes, reply in zip(groups, replies, strict=True):
            for i, w in enumerate(writes):
                if w.future.done():  # its caller was cancelled
                    continue
                if isinstance(reply, Exception):
                    w.future.set_exception(
                        StoreUnavailable(str(reply)) if isinstance(reply, RedisError) else reply
                    )
                else:
                    w.future.set_result(_WRITTEN[int(reply[i])])

    def _group(self, batch: list[Write]) -> list[list[Write]]:
        """The batch's writes, split into those that one script call may make together."""
        if self._slot_of is None:
            return [batch]
        by_slot: dict[int, list[Write]] = {}
        for w in batch:
            by_slot.setdefault(self._slot_of(w.keys[0]), []).append(w)
        return list(by_slot.values())

    async def _execute(self, groups: list[list[Write]]) -> list[Any]:
        """One MOVES call per group: the calls' replies (or errors)."""
        if self._slot_of is None:  # a single Redis: one group, on a connection of our own
            client = self._clients.pop()
            try:
                return [await client.execute_command(*self._moves_call(groups[0]))]
            except ResponseError as exc:  # the script's own failure (or NOSCRIPT)
                return [exc]
            finally:
                self._clients.append(client)
        pipe = self._redis.pipeline(transaction=False)
        for writes in groups:
            # Spelled out because redis-py's cluster pipeline refuses its evalsha() helper;
            # the raw command is routed by its first key's slot like any other.
            pipe.execute_command(*self._moves_call(writes))
        return list(await pipe.execute(raise_on_error=False))

    def _moves_call(self, writes: list[Write]) -> list[Any]:
        """The EVALSHA command of the MOVES script for `writes`."""
        keys: list[str] = []
        heads: list[
            tuple[int, str, int, dict[str, str], int]
            | tuple[int, str, int, dict[str, str], int, str]
            | tuple[int, str, int, dict[str, str], int, str, int]
        ] = []
        for w in writes:
            keys += w.keys
            if w.peers >= 0:
                heads.append(
                    (w.expect_ver, w.move, len(w.payload), w.fields, w.at_ms, w.snapshot, w.peers)
                )
            elif w.snapshot:
                heads.append((w.expect_ver, w.move, len(w.payload), w.fields, w.at_ms, w.snapshot))
            else:
                heads.append((w.expect_ver, w.move, len(w.payload), w.fields, w.at_ms))
        payloads = b"".join([w.payload for w in writes])
        return [
            "EVALSHA", self._script.sha, len(keys), *keys, self._origin, self._prefix,
            _HEADS_ENCODER.encode(heads), payloads,
        ]  # fmt: skip
