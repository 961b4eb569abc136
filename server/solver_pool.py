"""Solver searches off the event loop: a bounded process pool, its queues and its jobs.

A search holds a CPU for up to seconds, so it never runs in the server's event loop:
`SolverPool.run` hands a job to one of `solver_workers` processes (spawned, so they
share nothing with the server's sockets) and awaits its answer.

Jobs wait in three lanes, and a free worker takes the next job in this order:

- `DAILY`, a daily deal's search: first, always admitted (every player needs that deal);
- `BOTS` and `HINTS`, in turn (the lane served longer ago goes first), so that a flood of
  hints never starves the bots of running races, nor bots the hints.

Bots and hints admit at most `solver_queue_max` jobs each (waiting or running); one more
raises `SolverBusy` at once rather than queueing without bound (the caller answers
`unavailable`). Daily searches and bots go first come, first served. A hint names its
`owner`, the player asking, and hints are queued fairly between players:

- an owner has at most one job waiting or running (`OwnerBusy`);
- the job of the owner who used the least search time lately (seconds of search, decaying
  with a time constant of USAGE_TAU_S) goes first, then the one that came first: a player
  who asks now and then, or whose hints are quick, is not kept behind players who keep a
  worker busy all the time (whoever was served last: those are served every few seconds
  too, so "served longest ago" put the occasional player last);
- when the lane is full, a job of an owner who used less than the owner of some waiting
  job takes that job's place (that one's caller gets `SolverBusy`), so the players asking
  all the time are the ones turned away;
- an owner's jobs may use on average `owner_share` seconds of search a second, after a
  first `owner_burst_s` (`OverShare` says how long to wait).

A job whose caller stops waiting (a cancelled task: the player's connection closed) is
dropped if it waits, and stopped if it runs: the worker gets SIGUSR1, and its handler
ends the search at once (`SearchCancelled`), so the worker is free for the next job. Such
a job is never charged to its owner's share.

The jobs are plain module-level functions of plain values (they cross a process
boundary): a game is rebuilt in the worker from its deal and moves, or from a position
(`position_of`, `game_at`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import logging
import math
import multiprocessing
import os
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, TypeVar

import engine
from engine.solve import next_seed, solve, solve_game, suggest
from server.lru import LRU

log = logging.getLogger(__name__)

T = TypeVar("T")

DAILY, BOTS, HINTS = "daily", "bots", "hints"
LANES = (DAILY, BOTS, HINTS)
USAGE_TAU_S = 60.0  # an owner's search seconds count for about this long in their turn
CANCEL_SIGNAL = signal.SIGUSR1

Position = dict[str, Any]
"""A game's position as plain values: {"piles": {code: [card names]}, "moves": the engine's
move count, "extra": {counter: value}} (what Game.from_piles takes)."""


class SolverBusy(Exception):
    """The pool takes no more jobs of this kind now; try again later."""


class OwnerBusy(SolverBusy):
    """The owner has a job waiting or running already."""


class SearchCancelled(BaseException):
    """Raised in a worker to end a job whose caller left (a BaseException, so that no
    `except Exception` of a search catches it)."""


class OverShare(SolverBusy):
    """The owner's jobs have used their share of search time; `retry_after_s` from now
    they may search again."""

    def __init__(self, retry_after_s: float) -> None:
        super().__init__(f"search time used up; again in {retry_after_s:.1f} s")
        self.retry_after_s = retry_after_s


@dataclass(eq=False)
class _Job:
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    lane: str
    owner: str | None
    future: asyncio.Future[Any]
    arrival: int  # jobs of owners who used as much go in the order they came
    executor: ProcessPoolExecutor | None = None
    slot: int = -1  # while it runs: its place in the pool's arrays (see _Slots)
    abandoned: bool = False  # its caller left while it ran: no charge, result dropped


@dataclass
class _Owner:
    """An owner's allowance of search seconds as of monotonic time `at` (may be < 0), and
    when a job of theirs last started."""

    level: float
    at: float
    usage: float = 0.0  # search seconds, decaying by USAGE_TAU_S, as of `usage_at`
    usage_at: float = 0.0

    def used(self, now: float) -> float:
        return self.usage * math.exp(-(now - self.usage_at) / USAGE_TAU_S)


class SolverPool:
    def __init__(
        self,
        workers: int,
        queue_max: int,
        *,
        owner_share: float = 0.25,
        owner_burst_s: float = 10.0,
        owners_remembered: int = 10_000,
    ) -> None:
        self.workers = workers
        self.queue_max = max(queue_max, workers)
        self.owner_share = owner_share  # seconds of search per second an owner may use
        self.owner_burst_s = owner_burst_s  # ... after a first burst of this many seconds
        self._executor: ProcessPoolExecutor | None = None
        self._waiting: dict[str, deque[_Job]] = {lane: deque() for lane in LANES}
        self._admitted = dict.fromkeys(LANES, 0)  # jobs waiting or running, per lane
        self._running = 0
        self._owners: dict[str, _Job] = {}  # owners with a job waiting or running: that job
        self._known: LRU[str, _Owner] = LRU(owners_remembered)
        self._last_lane = HINTS  # the last of BOTS and HINTS a worker was given
        self._arrivals = itertools.count()
        self._slots: _Slots | None = None  # made with the pool's processes
        self._free_slots = list(range(workers))

    def _pool(self) -> ProcessPoolExecutor:
        if self._executor is None:
            context = multiprocessing.get_context("spawn")
            self._slots = _Slots(
                context.Array("i", self.workers, lock=False),
                context.Array("b", self.workers, lock=False),
            )
            self._executor = ProcessPoolExecutor(
                max_workers=self.workers,
                mp_context=context,
                initializer=_start_worker,
                initargs=(os.getpid(), self._slots),
            )
        return self._executor

    def pending(self, lane: str) -> int:
        """Jobs of `lane` waiting or running."""
        return self._admitted[lane]

    @property
    def running(self) -> int:
        """Jobs that a worker has been given and not yet finished."""
        return self._running

    async def run(
        self, fn: Callable[..., T], *args: Any, lane: str = HINTS, owner: str | None = None
    ) -> T:
        """`fn(*args)` in a worker process, in its turn in `lane`. Raises SolverBusy when the
        lane is full (never for DAILY), OwnerBusy or OverShare for an `owner`."""
        if lane not in self._admitted:
            raise ValueError(f"no solver lane {lane!r}")
        if owner is not None:
            if owner in self._owners:
                raise OwnerBusy(f"a search for {owner} is already under way")
            wait = self._share_wait(owner, time.monotonic())
            if wait > 0:
                raise OverShare(wait)
        arrival = next(self._arrivals)
        if lane != DAILY and self._admitted[lane] >= self.queue_max:
            self._make_room(lane, self._rank(owner, arrival, time.monotonic()))
        self._admitted[lane] += 1
        job: _Job | None = None
        try:
            for attempt in (1, 2):
                future = asyncio.get_running_loop().create_future()
                job = _Job(fn, args, lane, owner, future, arrival)
                if owner is not None:
                    self._owners[owner] = job
                self._waiting[lane].append(job)
                self._dispatch()
                try:
                    _seconds, result = await job.future
                except BrokenProcessPool:
                    # A worker died (killed, out of memory): that pool is unusable; a new
                    # one is made for the next job. A daily search is tried once more.
                    log.error("solver pool broken (a worker died); starting a new pool")
                    if lane != DAILY or attempt == 2:
                        raise SolverBusy("a solver process died; try again") from None
                    continue
                return result  # type: ignore[no-any-return]
            raise AssertionError("unreachable")
        finally:
            self._admitted[lane] -= 1
            if job is not None and job.executor is None:
                # Never started (its caller left while it waited): dropped from its lane.
                self._release_owner(job)
                with contextlib.suppress(ValueError):
                    self._waiting[lane].remove(job)
            elif job is not None and (job.future.cancelled() or not job.future.done()):
                self._stop_search(job)

    def _dispatch(self) -> None:
        """Start waiting jobs while a worker is free."""
        while self._running < self.workers:
            job = self._next_job()
            if job is None:
                return
            self._running += 1
            job.executor = self._pool()
            assert self._slots is not None
            job.slot = self._free_slots.pop()
            self._slots.cancel[job.slot] = 0
            try:
                started = job.executor.submit(_timed, job.slot, job.fn, *job.args)
            except (BrokenProcessPool, RuntimeError) as exc:
                self._running -= 1
                self._free_slot(job)
                self._drop(job.executor)
                self._release_owner(job)
                job.future.set_exception(BrokenProcessPool(str(exc)))
                continue
            loop = job.future.get_loop()
            started.add_done_callback(functools.partial(_call_in_loop, loop, self._done, job))

    def _next_job(self) -> _Job | None:
        daily = self._pop(DAILY)
        if daily is not None:
            return daily
        first, second = (HINTS, BOTS) if self._last_lane == BOTS else (BOTS, HINTS)
        for lane in (first, second):
            job = self._pop(lane)
            if job is not None:
                self._last_lane = lane
                return job
        return None

    def _pop(self, lane: str) -> _Job | None:
        waiting = self._waiting[lane]
        while waiting and waiting[0].future.done():  # a cancelled caller's job is skipped
            waiting.popleft()
        if not waiting:
            return None
        now = time.monotonic()
        job = min((j for j in waiting if not j.future.done()),
                  key=lambda j: self._rank(j.owner, j.arrival, now))  # fmt: skip
        waiting.remove(job)
        return job

    def _rank(self, owner: str | None, arrival: int, now: float) -> tuple[float, int]:
        """A job's turn: (its owner's recent search seconds, arrival), lowest first."""
        known = self._known.get(owner) if owner is not None else None
        return (0.0 if known is None else known.used(now)), arrival

    def _make_room(self, lane: str, rank: tuple[float, int]) -> None:
        """For a job of `rank` in a full lane: turn away the waiting job of the owner who
        used the most search lately, if more than this job's owner; else SolverBusy."""
        now = time.monotonic()
        waiting = [j for j in self._waiting[lane] if not j.future.done()]
        last = max(waiting, key=lambda j: self._rank(j.owner, j.arrival, now), default=None)
        if last is None or self._rank(last.owner, last.arrival, now) < rank:
            raise SolverBusy(f"{self._admitted[lane]} solver jobs of {lane} pending")
        self._waiting[lane].remove(last)
        last.future.set_exception(SolverBusy("turned away for a player who used less search"))

    def _owner(self, owner: str) -> _Owner:
        known = self._known.get(owner)
        if known is None:
            known = _Owner(self.owner_burst_s, time.monotonic())
            self._known.put(owner, known)
        return known

    def _stop_search(self, job: _Job) -> None:
        """The caller of a running job left: its search is ended in its worker (which is
        then free), and it is neither charged nor answered; its owner may ask again at
        once (their next job may start while this one stops)."""
        job.abandoned = True
        self._release_owner(job)
        slots = self._slots
        if slots is None or job.slot < 0 or job.executor is not self._executor:
            return
        slots.cancel[job.slot] = 1
        pid = slots.pids[job.slot]
        if pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, CANCEL_SIGNAL)
        log.debug("solver job of %s stopped: its caller left", job.owner or job.lane)

    def _free_slot(self, job: _Job) -> None:
        if job.slot >= 0:
            if job.executor is self._executor:
                self._free_slots.append(job.slot)
            job.slot = -1

    def _done(self, job: _Job, started: Future[tuple[float, Any]]) -> None:
        """In the loop, once a worker has finished `job`."""
        self._running -= 1
        self._free_slot(job)
        self._release_owner(job)
        if started.cancelled():
            job.future.cancel()
        elif (exc := started.exception()) is not None:
            if isinstance(exc, BrokenProcessPool):
                self._drop(job.executor)
            if not job.future.done():
                job.future.set_exception(exc)
        else:
            seconds, result = started.result()
            if job.owner is not None and not job.abandoned:
                self._charge(job.owner, seconds)
            if not job.future.done():
                job.future.set_result((seconds, result))
        self._dispatch()

    def _release_owner(self, job: _Job) -> None:
        if job.owner is not None and self._owners.get(job.owner) is job:
            del self._owners[job.owner]

    def _drop(self, executor: ProcessPoolExecutor | None) -> None:
        if executor is not None and executor is self._executor:
            # The jobs still running on it never come back to their slots (see
            # _free_slot): the new pool starts with its own arrays and every slot free.
            self._executor = None
            self._slots = None
            self._free_slots = list(range(self.workers))

    def _level(self, known: _Owner, now: float) -> float:
        return min(self.owner_burst_s, known.level + self.owner_share * (now - known.at))

    def _share_wait(self, owner: str, now: float) -> float:
        known = self._known.get(owner)
        level = self.owner_burst_s if known is None else self._level(known, now)
        return 0.0 if level > 0 else -level / self.owner_share + 0.05

    def _charge(self, owner: str, seconds: float) -> None:
        known, now = self._owner(owner), time.monotonic()
        known.level, known.at = self._level(known, now) - seconds, now
        known.usage, known.usage_at = known.used(now) + seconds, now

    def close(self) -> None:
        """Cancel the jobs that wait; the workers exit once the server process is gone
        (`_watch_parent`), so a long daily search never holds up a shutdown."""
        for waiting in self._waiting.values():
            while waiting:
                waiting.popleft().future.cancel()
        if self._executor is not None:
            executor, self._executor = self._executor, None
            self._slots = None
            executor.shutdown(wait=False, cancel_futures=True)


def _call_in_loop(loop: asyncio.AbstractEventLoop, fn: Callable[..., Any], *args: Any) -> None:
    """From the executor's thread: run `fn(*args)` in `loop` (unless it is closed already)."""
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(fn, *args)


@dataclass
class _Slots:
    """Shared with the workers (inherited when they start): for each slot of a running
    job, the pid of the worker running it and whether its caller left."""

    pids: Any  # multiprocessing Array of int
    cancel: Any  # multiprocessing Array of bool-ish bytes


@dataclass
class _Worker:
    """A worker process's own state: its slots and the slot of the job it runs."""

    slots: _Slots
    current: int = -1

    def on_cancel(self, _signum: int, _frame: Any) -> None:
        # The signal may come late, once this worker runs another job: only the job whose
        # own flag is set is ended.
        if self.current >= 0 and self.slots.cancel[self.current]:
            raise SearchCancelled


# Set in each worker process by _start_worker (a signal handler is process-wide anyway);
# never in the server process.
_WORKER: list[_Worker] = []


def _timed(slot: int, fn: Callable[..., T], *args: Any) -> tuple[float, T]:
    """In a worker: `fn(*args)` and the seconds it took (an owner's share counts them);
    SearchCancelled if the caller left before or while it ran."""
    worker = _WORKER[0] if _WORKER else None
    started = time.perf_counter()
    if worker is None:
        return time.perf_counter() - started, fn(*args)
    worker.slots.pids[slot] = os.getpid()
    worker.current = slot
    try:
        if worker.slots.cancel[slot]:
            raise SearchCancelled
        result = fn(*args)
    finally:
        worker.current = -1
        worker.slots.pids[slot] = 0
    return time.perf_counter() - started, result


def _start_worker(parent: int, slots: _Slots) -> None:
    """In each worker: the cancel signal's handler, then `_watch_parent`."""
    worker = _Worker(slots)
    _WORKER.append(worker)
    signal.signal(CANCEL_SIGNAL, worker.on_cancel)
    _watch_parent(parent)


def _watch_parent(parent: int) -> None:
    """In each worker: run below the server's priority (a search must never slow down the
    event loop's replies on a busy machine), and exit as soon as the server process is gone
    (even after SIGKILL, which gives the server no chance to stop its pool)."""
    with contextlib.suppress(OSError):
        os.nice(19)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, name="watch-parent", daemon=True).start()


# ---------------------------------------------------------------- positions


def position_of(game: engine.Game) -> Position:
    """A game's position as plain values, from which `game_at` rebuilds it exactly."""
    return {
        "piles": game.piles,
        "moves": int(game.moves),
        "extra": {name: getattr(game, name) for name, _ in game.EXTRA_STATE},
    }


def game_at(game_id: str, seed: int, position: Position) -> engine.Game:
    """The game of deal `seed` in `position` (ValueError or TypeError if it is none)."""
    cls = engine.game_class(game_id)
    return cls.from_piles(
        position["piles"], moves=position["moves"], seed=seed, **position["extra"]
    )


# ---------------------------------------------------------------- jobs (run in a worker)


def find_daily_deal(
    game_id: str, first_seed: int, budget_nodes: int, budget_s: float, max_candidates: int
) -> dict[str, Any]:
    """The first of first_seed, first_seed+1, ... proven winnable within the budget.

    Returns {seed, line, candidates, seconds, proven}; when none of `max_candidates` deals
    is proven winnable, the fallback is the first candidate itself, with no line
    (proven False), so that every instance still falls back to the same deal.
    """
    started = time.perf_counter()
    seed = first_seed
    for tried in range(1, max_candidates + 1):
        result = solve(game_id, seed, budget_nodes=budget_nodes, budget_s=budget_s)
        if result.verdict == "won":
            return {
                "seed": seed,
                "line": list(result.moves),
                "candidates": tried,
                "seconds": time.perf_counter() - started,
                "proven": True,
            }
        seed = next_seed(seed)
    return {
        "seed": first_seed,
        "line": [],
        "candidates": max_candidates,
        "seconds": time.perf_counter() - started,
        "proven": False,
    }


def _rebuilt(
    game_id: str, seed: int, base: Position | None, moves: Sequence[str]
) -> tuple[engine.Game, engine.Game]:
    """The start position (`base`, None: the deal) and the position after `moves`."""
    start = engine.new_game(game_id, seed) if base is None else game_at(game_id, seed, base)
    game = start.copy()
    for move in moves:
        game.play(move)
    return start, game


def hint(
    game_id: str, seed: int, base: Position | None, moves: Sequence[str], budget_s: float
) -> tuple[str | None, str]:
    """(move, verdict) for the position after `moves` from `base` (None: the deal), see
    engine suggest; the hint leads back to none of the positions those moves went through."""
    start, game = _rebuilt(game_id, seed, base, moves)
    return suggest(game, budget_s, moves_so_far=list(moves), start=start)


def line(game_id: str, seed: int, position: Position, budget_s: float) -> tuple[str, list[str]]:
    """(verdict, line) from `position`: the winning line when won, else the line to the
    best position the search saw."""
    result = solve_game(game_at(game_id, seed, position), budget_s=budget_s)
    return result.verdict, list(result.moves if result.verdict == "won" else result.best_line)
