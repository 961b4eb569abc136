"""Solver searches off the event loop: a bounded process pool and the jobs it runs.

A search holds a CPU for up to seconds, so it never runs in the server's event loop:
`SolverPool.run` hands a job to one of `solver_workers` processes (spawned, so they
share nothing with the server's sockets) and awaits its answer. At most
`solver_queue_max` jobs wait or run at once; one more raises `SolverBusy` at once rather
than queueing without bound (the caller answers `unavailable`).

The jobs are plain module-level functions of plain values (they cross a process
boundary): a game is rebuilt in the worker from its deal and moves, or from a position
(`position_of`, `game_at`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

import engine
from engine.solve import next_seed, solve, solve_game, suggest

log = logging.getLogger(__name__)

T = TypeVar("T")

Position = dict[str, Any]
"""A game's position as plain values: {"piles": {code: [card names]}, "moves": the engine's
move count, "extra": {counter: value}} (what Game.from_piles takes)."""


class SolverBusy(Exception):
    """Every slot of the pool is taken; try again later."""


class SolverPool:
    def __init__(self, workers: int, queue_max: int) -> None:
        self.workers = workers
        self.queue_max = max(queue_max, workers)
        self._executor: ProcessPoolExecutor | None = None
        self._queued = 0

    def _pool(self) -> ProcessPoolExecutor:
        if self._executor is None:
            self._executor = ProcessPoolExecutor(
                max_workers=self.workers,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_watch_parent,
                initargs=(os.getpid(),),
            )
        return self._executor

    async def run(self, fn: Callable[..., T], *args: Any, essential: bool = False) -> T:
        """`fn(*args)` in a worker process; SolverBusy if too many jobs are pending
        (unless `essential`: a daily deal's search waits its turn instead)."""
        if self._queued >= self.queue_max and not essential:
            raise SolverBusy(f"{self._queued} solver jobs pending")
        self._queued += 1
        try:
            loop = asyncio.get_running_loop()
            for attempt in (1, 2):
                try:
                    return await loop.run_in_executor(self._pool(), fn, *args)
                except BrokenProcessPool:
                    # A worker died (killed, out of memory): the pool is unusable; a new one
                    # is made for the next job. An essential job is tried once more.
                    log.error("solver pool broken (a worker died); starting a new pool")
                    self._executor = None
                    if not essential or attempt == 2:
                        raise SolverBusy("a solver process died; try again") from None
            raise AssertionError("unreachable")
        finally:
            self._queued -= 1

    def close(self) -> None:
        """Cancel the jobs that wait; the workers exit once the server process is gone
        (`_watch_parent`), so a long daily search never holds up a shutdown."""
        if self._executor is not None:
            executor, self._executor = self._executor, None
            executor.shutdown(wait=False, cancel_futures=True)


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


def position_of(game: Any) -> Position:
    """A game's position as plain values, from which `game_at` rebuilds it exactly."""
    return {
        "piles": game.piles,
        "moves": int(game.moves),
        "extra": {name: getattr(game, name) for name, _ in game.EXTRA_STATE},
    }


def game_at(game_id: str, seed: int, position: Position) -> Any:
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


def _rebuilt(game_id: str, seed: int, base: Position | None, moves: Sequence[str]) -> Any:
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
