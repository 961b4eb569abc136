"""Ghosts: the earlier runs of an asynchronous race, replayed beside a seat's own game.

While a seat of an asynchronous race plays, it hears, for every seat dealt before it, that
seat's `progress {..., ghost: true}` at the same elapsed time of that seat's game as its
own clock shows. The schedule is made here, per watching seat and in the process where
that seat joined, from what the store keeps: each ghost's moves and the time each was
stored at (the moves' times list). Nothing is produced on other players' moves, so the
move path pays nothing for ghosts.

A ghost still being played (its player dealt earlier and still at it) is followed live:
its moves made after the schedule was read are read again when the schedule runs out.
Its player started `lag` ms before the viewer, so any move it makes from now on falls
at least `lag` ms ahead on the viewer's clock: reading again every `lag` ms (at least
`MIN_POLL_S`) is soon enough to send it on time.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

import engine
import protocol as p
from server.clock import Clock
from server.domain.ids import race_gid
from server.domain.records import GameRecord
from server.play.effects import Applier, Deliver, to_player
from server.play.game_machine import elapsed_ms
from server.store.store import Store

log = logging.getLogger(__name__)

MIN_POLL_S = 0.25  # the shortest wait between two reads of a ghost still being played
HEARTBEAT_S = 5.0  # how often an idle schedule checks that its viewer still plays

Present = Callable[[str], bool]  # whether a player has a connection on this process
Finished = Callable[[str], bool]  # whether a game (gid) is known here to be finished


@dataclass
class Ghost:
    """One earlier run as the schedule knows it: its progress after each stored move, at
    the elapsed time of its own game, as far as it has been read."""

    record: GameRecord
    game: engine.Game
    n: int = 0  # moves replayed so far
    points: list[tuple[int, p.Progress]] = field(default_factory=list)
    sent: int = 0  # points sent so far

    @property
    def done(self) -> bool:
        return self.record.finished

    def point(self, at_ms: int, final: bool = False) -> tuple[int, p.Progress]:
        rec, game = self.record, self.game
        won = bool(game.won)
        over = bool(game.over)
        finished = final and rec.finished
        return at_ms, p.Progress(
            race=rec.race,
            player=rec.player,
            name=rec.name,
            score=int(game.score),
            moves=int(game.moves),
            won=won and finished,
            over=over and finished,
            finished=finished,
            elapsed_ms=at_ms,
            ghost=True,
        )

    def extend(self, record: GameRecord, moves: list[str], times: list[int]) -> None:
        """Replay the moves read after the first `n`, each at its stored time."""
        start = record.started_at_ms
        for move, at in zip(moves, times, strict=False):
            try:
                self.game.play(move)
            except engine.MoveError:  # never stored so; stop rather than guess
                log.warning("ghost %s: stored move %r does not replay", record.gid, move)
                break
            self.n += 1
            self.points.append(self.point(max(0, at - start)))
        self.record = record
        if record.finished:
            self.points.append(self.point(elapsed_ms(record, record.finished_at_ms), True))


class Ghosts:
    """The ghost schedules of this process: one task per watching seat."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        deliver: Deliver,
        present: Present,
        finished: Finished,
    ) -> None:
        self.store = store
        self.clock = clock
        self.applier = Applier(deliver)
        self.present = present
        self.finished = finished
        self._tasks: dict[tuple[str, str], asyncio.Task[None]] = {}

    def follow(self, viewer: GameRecord) -> None:
        """Start sending seat `viewer` (its game as dealt) its ghosts, unless this process
        already does."""
        key = (viewer.race, viewer.player)
        task = self._tasks.get(key)
        if task is not None and not task.done():
            return
        task = asyncio.create_task(self._run(viewer), name=f"ghosts {viewer.race} {viewer.player}")
        self._tasks[key] = task
        task.add_done_callback(lambda t: self._done(key, t))

    def _done(self, key: tuple[str, str], task: asyncio.Task[None]) -> None:
        if self._tasks.get(key) is task:
            del self._tasks[key]
        if not task.cancelled() and task.exception() is not None:
            log.warning("race %s: ghosts of player %s failed: %r", *key, task.exception())

    def __len__(self) -> int:
        return len(self._tasks)

    async def close(self) -> None:
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    # ------------------------------------------------------------ one viewer

    async def _ghosts(self, viewer: GameRecord) -> list[Ghost]:
        """The seats dealt before the viewer, each replayed as far as stored."""
        race = await self.store.load_race(viewer.race)
        if race is None:
            return []
        gids = [race_gid(race.code, s.player) for s in race.seats if s.player != viewer.player]
        records = [r for r in await self.store.load_records(gids) if r is not None]
        earlier = [
            r
            for r in records
            if r.started_at_ms and (r.started_at_ms, r.gid) < (viewer.started_at_ms, viewer.gid)
        ]
        ghosts = []
        for rec in earlier:
            ghost = Ghost(rec, engine.new_game(rec.game, rec.seed))
            ghost.points.append(ghost.point(0))
            await self._read(ghost, rec)
            ghosts.append(ghost)
        return ghosts

    async def _read(self, ghost: Ghost, record: GameRecord) -> None:
        """Read the ghost's moves (and their times) stored since those replayed."""
        gid = record.gid
        moves = await self.store.game_moves(gid, ghost.n, record.n)
        (times,) = await self.store.move_times([gid], ghost.n)
        ghost.extend(record, moves, times[: len(moves)])

    async def _run(self, viewer: GameRecord) -> None:
        ghosts = await self._ghosts(viewer)
        if not ghosts:
            return
        log.info("race %s: player %s races %d ghosts", viewer.race, viewer.player, len(ghosts))
        start = viewer.started_at_ms
        end = viewer.ends_at_ms or 0
        next_read = {g.record.gid: 0.0 for g in ghosts}
        while True:
            if not self.present(viewer.player) or self.finished(viewer.gid):
                return
            now = self.clock.now_ms()
            if end and now >= end:
                return
            at = now - start
            due_now: list[p.Message] = []
            wake = now + HEARTBEAT_S * 1000
            for ghost in ghosts:
                due = None
                while ghost.sent < len(ghost.points) and ghost.points[ghost.sent][0] <= at:
                    due = ghost.points[ghost.sent][1]
                    ghost.sent += 1
                if due is not None:  # catching up: only the latest point counts
                    due_now.append(due)
                if ghost.sent < len(ghost.points):
                    wake = min(wake, start + ghost.points[ghost.sent][0])
                elif not ghost.done:
                    gid = ghost.record.gid
                    if now >= next_read[gid]:
                        record = (await self.store.load_records([gid]))[0]
                        if record is not None:
                            await self._read(ghost, record)
                        lag = max(0, viewer.started_at_ms - ghost.record.started_at_ms)
                        next_read[gid] = now + max(lag, MIN_POLL_S * 1000)
                        if ghost.sent < len(ghost.points):
                            wake = min(wake, start + ghost.points[ghost.sent][0])
                            continue
                    wake = min(wake, int(next_read[gid]))
            if due_now:  # to this process's connections of the viewer only
                applier = self.applier
                applier.deliver(applier.events([to_player(viewer.player, *due_now)]))
            if all(g.done and g.sent >= len(g.points) for g in ghosts):
                return
            delay = (wake - self.clock.now_ms()) / 1000
            if delay > 0:
                await asyncio.sleep(delay)
