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
import heapq
import itertools
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

import engine
import protocol as p
from server.clock import Clock
from server.domain.ids import race_gid
from server.domain.records import GameRecord
from server.play.effects import Applier, Deliver, to_player
from server.play.game_machine import elapsed_ms, time_up, timed_out
from server.store.events import Event
from server.store.stores import Stores

log = logging.getLogger(__name__)

MIN_POLL_S = 0.25  # the shortest wait between two reads of a ghost still being played
HEARTBEAT_S = 5.0  # how often an idle schedule checks that its viewer still plays
# Ghost progress goes out on ticks of this many ms (a progress is at most this late, a
# few ms on average): one timer for every schedule of the process, and a viewer's ghosts
# due in the same tick leave in one write.
TICK_MS = 10

Present = Callable[[str], bool]  # whether a player has a connection on this process
Finished = Callable[[str], bool]  # whether a game (gid) is known here to be finished


@dataclass
class Ghost:
    """One earlier run as a viewer's schedule knows it: after each stored move, its
    progress at the elapsed time of its own game (made and encoded once, when read), as
    far as it has been read."""

    record: GameRecord
    game: engine.Game
    events: Callable[[p.Progress], list[Event]]  # a progress as the viewer's events
    n: int = 0  # moves replayed so far
    points: list[tuple[int, list[Event]]] = field(default_factory=list)
    sent: int = 0  # points sent (or skipped) so far

    @property
    def done(self) -> bool:
        return self.record.finished

    def point(self, at_ms: int, final: bool = False) -> tuple[int, list[Event]]:
        rec, game = self.record, self.game
        finished = final and rec.finished
        progress = p.Progress(
            race=rec.race,
            player=rec.player,
            name=rec.name,
            score=int(game.score),
            moves=int(game.moves),
            won=bool(game.won) and finished,
            over=bool(game.over) and finished,
            finished=finished,
            elapsed_ms=at_ms,
            ghost=True,
        )
        return at_ms, self.events(progress)

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


@dataclass
class Schedule:
    """One watching seat's ghosts, and when they are next due."""

    viewer: GameRecord
    ghosts: list[Ghost]
    end_ms: int  # the seat's own time limit's end, or the race's window's end
    next_read: dict[str, float] = field(default_factory=dict)
    wake_ms: int = 0  # when it is next due (0: not armed)
    task: asyncio.Task[None] | None = None
    stopped: bool = False


class Ghosts:
    """The ghost schedules of this process, one per watching seat, due by a heap that one
    timer serves on ticks of TICK_MS (a plain callback, no task per viewer: a ghost
    event costs its share of a tick and a delivery); a task only to read a ghost still
    being played."""

    def __init__(
        self,
        stores: Stores,
        clock: Clock,
        deliver: Deliver,
        present: Present,
        finished: Finished,
    ) -> None:
        self.stores = stores
        self.clock = clock
        self.applier = Applier(deliver)
        self.present = present
        self.finished = finished
        self._schedules: dict[tuple[str, str], Schedule] = {}
        self._starting: dict[tuple[str, str], asyncio.Task[None]] = {}
        self._due: list[tuple[int, int, Schedule]] = []
        self._order = itertools.count()
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = 0

    def follow(self, viewer: GameRecord) -> None:
        """Start sending seat `viewer` (its game as dealt) its ghosts, unless this process
        already does."""
        key = (viewer.race, viewer.player)
        schedule = self._schedules.get(key)
        if schedule is not None:
            # Back on a connection of its own: where each ghost stands, as sent before.
            again = [e for g in schedule.ghosts if g.sent for e in g.points[g.sent - 1][1]]
            self.applier.deliver(again)
            return
        if key in self._starting:
            return
        task = asyncio.create_task(self._start(key, viewer), name=f"ghosts {key[0]} {key[1]}")
        self._starting[key] = task
        task.add_done_callback(lambda t: self._started(key, t))

    def _started(self, key: tuple[str, str], task: asyncio.Task[None]) -> None:
        self._starting.pop(key, None)
        if not task.cancelled() and task.exception() is not None:
            log.warning("race %s: ghosts of player %s failed: %r", *key, task.exception())

    def __len__(self) -> int:
        return len(self._schedules) + len(self._starting)

    async def close(self) -> None:
        for schedule in list(self._schedules.values()):
            self._stop(schedule)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        tasks = list(self._starting.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    # ------------------------------------------------------------ one viewer

    async def _start(self, key: tuple[str, str], viewer: GameRecord) -> None:
        race = await self.stores.races.load_race(viewer.race)
        if race is None:
            return
        gids = [race_gid(race.code, s.player) for s in race.seats if s.player != viewer.player]
        records = [r for r in await self.stores.games.load_records(gids) if r is not None]
        earlier = [
            r
            for r in records
            if r.started_at_ms and (r.started_at_ms, r.gid) < (viewer.started_at_ms, viewer.gid)
        ]
        if not earlier:
            return
        applier, player = self.applier, viewer.player

        def events(progress: p.Progress) -> list[Event]:
            return applier.events([to_player(player, progress)])

        ghosts = []
        for rec in earlier:
            ghost = Ghost(rec, engine.new_game(rec.game, rec.seed), events)
            ghost.points.append(ghost.point(0))
            await self._read(ghost, rec)
            ghosts.append(ghost)
        end = min(viewer.ends_at_ms or race.ends_at_ms, race.ends_at_ms or viewer.ends_at_ms)
        schedule = Schedule(viewer, ghosts, end, {g.record.gid: 0.0 for g in ghosts})
        self._schedules[key] = schedule
        log.info("race %s: player %s races %d ghosts", viewer.race, viewer.player, len(ghosts))
        self._fire(schedule)

    async def _read(self, ghost: Ghost, record: GameRecord) -> None:
        """Read the ghost's moves (and their times) stored since those replayed."""
        gid = record.gid
        moves = await self.stores.games.game_moves(gid, ghost.n, record.n)
        (times,) = await self.stores.games.move_times([gid], ghost.n)
        if not record.finished and time_up(record, self.clock.now_ms()):
            # Its own time limit is over: it ended there, though the race has not closed it.
            record = timed_out(record, record.ends_at_ms)
        ghost.extend(record, moves, times[: len(moves)])

    def _stop(self, schedule: Schedule) -> None:
        schedule.stopped = True
        schedule.wake_ms = 0  # its heap entry is skipped when it comes up
        if schedule.task is not None:
            schedule.task.cancel()
        key = (schedule.viewer.race, schedule.viewer.player)
        if self._schedules.get(key) is schedule:
            del self._schedules[key]

    def _fire(self, schedule: Schedule) -> None:
        """Send what is due (of a ghost behind, only its latest progress), then arm the
        schedule for its next due progress."""
        schedule.wake_ms = 0
        viewer = schedule.viewer
        if schedule.stopped or not self.present(viewer.player) or self.finished(viewer.gid):
            self._stop(schedule)
            return
        now = self.clock.now_ms()
        if schedule.end_ms and now >= schedule.end_ms:
            self._stop(schedule)
            return
        start = viewer.started_at_ms
        at = now - start
        due: list[Event] = []
        wake = now + int(HEARTBEAT_S * 1000)
        stale: list[Ghost] = []
        for ghost in schedule.ghosts:
            points, i = ghost.points, ghost.sent
            if i < len(points) and points[i][0] <= at:
                while i + 1 < len(points) and points[i + 1][0] <= at:
                    i += 1
                due += points[i][1]
                i += 1
                ghost.sent = i
            if i < len(points):
                wake = min(wake, start + points[i][0])
            elif not ghost.done:
                read_at = schedule.next_read[ghost.record.gid]
                if now >= read_at:
                    stale.append(ghost)
                else:
                    wake = min(wake, int(read_at))
        if due:  # to this process's connections of the viewer only
            self.applier.deliver(due)
        if all(g.done and g.sent >= len(g.points) for g in schedule.ghosts):
            self._stop(schedule)
            return
        if stale:
            schedule.task = asyncio.create_task(self._reread(schedule, stale))
            return
        self._arm(schedule, wake)

    def _arm(self, schedule: Schedule, wake_ms: int) -> None:
        schedule.wake_ms = wake_ms
        heapq.heappush(self._due, (wake_ms, next(self._order), schedule))
        tick = -(-wake_ms // TICK_MS) * TICK_MS  # the first tick at or after it
        if self._timer is None or tick < self._timer_at:
            if self._timer is not None:
                self._timer.cancel()
            delay = max(0.0, (tick - self.clock.now_ms()) / 1000)
            self._timer = asyncio.get_running_loop().call_later(delay, self._tick)
            self._timer_at = tick

    def _tick(self) -> None:
        """Fire every schedule due by now, then wait for the next tick with one due."""
        self._timer = None
        now = self.clock.now_ms()
        due = self._due
        while due and due[0][0] <= now:
            wake, _, schedule = heapq.heappop(due)
            if schedule.wake_ms != wake or schedule.stopped:
                continue  # re-armed or stopped since
            try:
                self._fire(schedule)
            except Exception:
                log.exception("race %s: ghosts of player %s failed", schedule.viewer.race,
                              schedule.viewer.player)  # fmt: skip
                self._stop(schedule)
        if due and self._timer is None:
            tick = -(-due[0][0] // TICK_MS) * TICK_MS
            delay = max(0.0, (tick - self.clock.now_ms()) / 1000)
            self._timer = asyncio.get_running_loop().call_later(delay, self._tick)
            self._timer_at = tick

    async def _reread(self, schedule: Schedule, stale: list[Ghost]) -> None:
        """Read again the ghosts still being played whose read moves have all been sent."""
        try:
            now = self.clock.now_ms()
            for ghost in stale:
                gid = ghost.record.gid
                record = (await self.stores.games.load_records([gid]))[0]
                if record is not None:
                    await self._read(ghost, record)
                lag = max(0, schedule.viewer.started_at_ms - ghost.record.started_at_ms)
                schedule.next_read[gid] = now + max(lag, MIN_POLL_S * 1000)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the store is down: try again at the next poll
            log.warning("race %s: ghosts not read: %s", schedule.viewer.race, exc)
            for ghost in stale:
                schedule.next_read[ghost.record.gid] = now + MIN_POLL_S * 1000
        schedule.task = None
        if not schedule.stopped:
            self._fire(schedule)
