"""Games replayed in this process's memory, so that a move costs one engine step.

The store is the truth: an entry is reloaded whenever a write finds that the
stored game moved on (another process, or a race closing), and `fresh=True`
rereads the record before answering from memory (the record only: a cached game at the
stored version is the stored game).

A load reads the game's newest snapshots and its last `snapshot_every` + 1 moves in one
round trip and replays at most `snapshot_every` moves (server/play/snapshots.py). Only when
the snapshots are missing or unusable does it read further back, in chunks, and replay in
a worker thread rather than in the event loop; it then stores the snapshots it made.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import engine
from server.lru import LRU
from server.play import snapshots
from server.play.game_machine import LiveGame
from server.play.snapshots import BadSnapshot
from server.store.unavailable import StoreUnavailable

if TYPE_CHECKING:
    from server.domain.records import GameRecord
    from server.metrics import Metrics
    from server.store.stores import Stores

log = logging.getLogger(__name__)

ATTEMPTS = 3  # reads far back that may find the game changed before giving up


class LiveGames:
    def __init__(self, stores: Stores, size: int, metrics: Metrics | None = None) -> None:
        self._stores = stores
        self._items: LRU[str, LiveGame] = LRU(size)
        self._turns: dict[str, deque[asyncio.Future[None]]] = {}  # gid -> waiters
        self.metrics = metrics

    async def get(self, gid: str, *, fresh: bool = False) -> LiveGame | None:
        cached = self._items.get(gid)
        if cached is not None and not fresh:
            return cached
        if cached is not None:
            record = await self._stores.games.load_record(gid)
            if record is None:
                self._items.pop(gid)
                return None
            if _same_game(cached.record, record) and cached.n == record.n:
                cached.record = record
                return cached
        live = await self.load(gid)
        if live is None:
            self._items.pop(gid)
            return None
        self.adopt(live)
        return live

    async def load(self, gid: str, *, keep_last: bool = False) -> LiveGame | None:
        """The game as the store has it (not cached here). With `keep_last` its tail keeps
        the last move (what an undo needs), else it may start at the game's end."""
        return await load(self._stores, gid, keep_last=keep_last, metrics=self.metrics)

    def evict(self, gid: str) -> None:
        self._items.pop(gid)

    def take(self, gid: str) -> LiveGame | None:
        """The cached game, out of the cache: the caller owns it outright (a move is decided
        on it in place, game_machine.decide_move) and gives it back with `adopt` once the
        store has what was decided, or drops it. Meanwhile nobody here sees it: a reader
        loads the game as the store has it."""
        return self._items.pop(gid)

    def adopt(self, live: LiveGame) -> None:
        """Cache `live`, a game as the store now has it."""
        # A finished game takes no more moves: kept, it would only fill the cache (a soak
        # of an hour grew it by ~800 games, about 5 KB each, never to be played again).
        # Whatever still reads it (a last `get`, an undo of a practice game) loads it.
        record = live.record
        if record.outcome is not None:  # finished
            self._items.pop(record.gid)
        else:
            self._items.put(record.gid, live)

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


def _same_game(a: GameRecord, b: GameRecord) -> bool:
    """Whether two records are of the same game at the same version (a gid may be reused
    once its game has expired: a new race with the same code, the same player)."""
    return (a.ver, a.seed, a.game, a.started_at_ms) == (b.ver, b.seed, b.game, b.started_at_ms)


async def load(
    stores: Stores, gid: str, *, keep_last: bool = False, metrics: Metrics | None = None
) -> LiveGame | None:
    """A game loaded from the store, from its nearest usable snapshot (see the module's
    docstring); None if there is no such game."""
    every = stores.config.snapshot_every
    loaded = await stores.games.load_position(gid, last=every + 1)
    if loaded is None:
        return None
    record = loaded.record
    if metrics is not None:
        metrics.game_loads.inc()
        metrics.moves_read.inc(len(loaded.moves))
    limit = record.n - 1 if keep_last else record.n  # the highest snapshot that may serve
    candidates = [(at, text) for at, text in loaded.snapshots if at <= limit]
    if loaded.start == 0:
        candidates.append((0, ""))  # the whole list is read: the deal may serve too
    present = {at for at, _ in loaded.snapshots} | {0}
    this = _Load(stores, record, keep_last, present, metrics)
    for at, text in candidates:
        if at and at - 1 < loaded.start:
            break  # older than the moves read: read further back
        offset = at - loaded.start  # loaded.moves[offset] is entry `at`
        last = loaded.moves[offset - 1] if at else None
        live = await this.attempt(at, text, last, loaded.moves[offset:])
        if live is not None:
            return live
    return await this.far()


@dataclass
class _Load:
    """One load of a game: its record as read, and what it found about its snapshots."""

    stores: Stores
    record: GameRecord
    keep_last: bool
    present: set[int]  # scores of the stored snapshots seen, and of the deal (0)
    metrics: Metrics | None
    skipped: set[int] = field(default_factory=set)  # scores of those found unusable

    async def attempt(
        self, at: int, text: str, last: str | None, moves: list[str]
    ) -> LiveGame | None:
        """The game from the snapshot scored `at` (0: the deal) and the moves after it;
        None if the snapshot does not serve (it is then skipped). `last` is the stored
        move before the snapshot (None: not read)."""
        record, metrics = self.record, self.metrics
        every = self.stores.config.snapshot_every
        if at:
            try:
                start = snapshots.restore(text, record, at, last)
            except BadSnapshot as exc:
                self._skip(at, str(exc))
                return None
        else:
            start = snapshots.deal(record)
        off_loop = len(moves) > self.stores.config.game_load_loop_replay_max
        play = functools.partial(
            snapshots.replay, record, start, at, moves, every, keep_last=self.keep_last,
            snapshots=True,
        )  # fmt: skip
        try:
            # The engine is pure Python: a thread still shares the interpreter, but the loop
            # gets its turn every switch interval (5 ms) instead of after the whole replay.
            done = await asyncio.to_thread(play) if off_loop else play()
        except engine.MoveError as exc:
            if not at:
                log.error("game %s: its moves do not replay from the deal: %s", record.gid, exc)
                raise StoreUnavailable(f"game {record.gid} does not replay") from None
            self._skip(at, f"the moves after it do not replay: {exc}")
            return None
        finally:
            if metrics is not None:
                metrics.moves_replayed.labels("thread" if off_loop else "loop").inc(len(moves))
        if at and (int(done.game.score), int(done.game.moves)) != (record.score, record.moves):
            self._skip(at, "the moves after it lead elsewhere than the record says")
            return None
        missing = [(n, text) for n, text in done.snapshots if n not in self.present]
        if missing:
            # Made on the way where none was stored (or a bad one was): kept for next time.
            await self.stores.games.add_snapshots(record.gid, record.ver, missing)
            log.info(
                "game %s: replayed %d moves from move %d; %d snapshots stored",
                record.gid, len(moves), at, len(missing),
            )  # fmt: skip
        base_game = done.base_game if done.base else None
        return LiveGame(record, done.game, done.tail, done.base, base_game)

    def _skip(self, at: int, why: str) -> None:
        log.warning("game %s: snapshot at move %d skipped: %s", self.record.gid, at, why)
        self.skipped.add(at)
        self.present.discard(at)
        if self.metrics is not None:
            self.metrics.bad_snapshots.inc()

    async def far(self) -> LiveGame | None:
        """The slow way, when the newest snapshots cannot serve: from an older usable one,
        or from the deal, reading the moves in chunks (each read with the record, so that
        a game that changes meanwhile is noticed and read again)."""
        stores, gid = self.stores, self.record.gid
        every = stores.config.snapshot_every
        for _ in range(ATTEMPTS):
            record = self.record
            limit = record.n - 1 if self.keep_last else record.n
            stored = await stores.games.load_snapshots(gid, record.n + 1, record.n // every + 1)
            good = [(at, text) for at, text in stored if at not in self.skipped]
            self.present = {at for at, _ in good} | {0}
            candidates = [(at, text) for at, text in good if at <= limit]
            for at, text in [*candidates, (0, "")]:
                if at:
                    # Checked as far as it can be without the moves first: only one that
                    # decodes into a position of this deal costs a read of the list.
                    try:
                        snapshots.restore(text, record, at, None)
                    except BadSnapshot as exc:
                        self._skip(at, str(exc))
                        continue
                moves = await self._read(max(at - 1, 0))
                if moves is None:
                    break  # the game changed: start again from its new record
                last = moves.pop(0) if at else None
                live = await self.attempt(at, text, last, moves)
                if live is not None:
                    return live
            fresh = await stores.games.load_record(gid)
            if fresh is None:
                return None
            self.record = fresh
        raise StoreUnavailable("the game kept changing while it was read")

    async def _read(self, start: int) -> list[str] | None:
        """The game's moves from entry `start` to its end, as its record has them; None if
        the game is no longer at that version."""
        record, step = self.record, self.stores.config.game_load_chunk_moves
        out: list[str] = []
        while start + len(out) < record.n:
            at = start + len(out)
            chunk = await self.stores.games.load_moves(record.gid, at, min(at + step, record.n) - 1)
            if chunk is None or (chunk.record.ver, chunk.record.n) != (record.ver, record.n):
                return None
            if not chunk.moves:
                return None
            if self.metrics is not None:
                self.metrics.moves_read.inc(len(chunk.moves))
            out += chunk.moves
        return out
