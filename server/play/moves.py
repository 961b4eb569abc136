"""Playing on a game: the one path of every move and resignation, a player's or a bot's.

`Moves.play` takes the game's turn in this process, asks the game machine
(server/play/game_machine.py), has the group commit store the decision (checked against
the game's version), then answers and delivers the events: the new state to the player's
other connections, the progress to the race's seats. A finished game may end its race
(server/play/races.py) or its daily attempt (server/daily/service.py). This is the
server's hot path: its helpers that need not wait are plain functions.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Protocol

import msgspec

import protocol as p
from server.clock import Clock
from server.domain.changes import Written
from server.domain.ids import parse_gid, race_gid
from server.domain.kinds import GameKind
from server.domain.records import GameRecord
from server.metrics import Metrics
from server.play.cache import LiveGames
from server.play.effects import Applier, ToSpectators
from server.play.game_machine import (
    GameRules,
    LiveGame,
    Retransmission,
    TimeUp,
    decide_move,
    decide_resign,
    seat_seen,
)
from server.play.optimistic import Optimistic, Plan, Steps
from server.play.players import Who
from server.play.races import Races
from server.store.events import Event
from server.store.stores import Stores
from server.store.unavailable import StoreUnavailable

log = logging.getLogger(__name__)

RETRIES = 4  # attempts on a game whose stored copy keeps moving on before `unavailable`

Deliver = Callable[[list[Event]], None]


class DailyFinish(Protocol):
    """What moves need of the daily challenge (server/daily/service.py)."""

    async def finished(self, record: GameRecord) -> None: ...


class Moves:
    def __init__(
        self,
        stores: Stores,
        cache: LiveGames,
        races: Races,
        clock: Clock,
        metrics: Metrics,
        deliver: Deliver,
        daily: DailyFinish | None = None,
        rules: GameRules | None = None,
    ) -> None:
        self.stores = stores
        self.cache = cache
        self.races = races
        self.clock = clock
        self.metrics = metrics
        self.rules = rules or GameRules()
        self.runner = Optimistic(RETRIES)
        self.daily = daily
        self.applier = Applier(deliver)

    # ------------------------------------------------------------ requests

    def move(self, who: Who, msg: p.Move) -> Awaitable[list[p.Message]]:
        return self.play(who, msg.gid, msg.id, msg.n, msg.m)

    def resign(self, who: Who, msg: p.Resign) -> Awaitable[list[p.Message]]:
        return self.play(who, msg.gid, msg.id, None, "")

    async def get(self, who: Who, msg: p.Get) -> list[p.Message]:
        live = await self.own_game(who, msg.gid)
        return [live.state(self.clock.now_ms(), msg.id)]

    async def own_game(self, who: Who, gid: str) -> LiveGame:
        """The asker's game `gid`, fresh from the store; Refused if there is none."""
        live = await self.cache.get(gid, fresh=True) if parse_gid(gid) else None
        if live is None or live.record.player != who.player:
            raise p.Refused(p.NOT_FOUND, "no such game")
        return live

    # ------------------------------------------------------------ the move path

    async def play(
        self, who: Who, gid: str, re: int | None, n: int | None, move: str
    ) -> list[p.Message]:
        """A move (`n` given) or a resignation (`n` None) on one of `who`'s games: the
        replies (the game's new state). Raises Refused."""
        # The game's turn, as `async with cache.lock(gid)` takes it, spelled out: the
        # context manager's two coroutines were a measurable part of a move.
        cache = self.cache
        waiter = cache.claim(gid)
        if waiter is not None:
            await cache.wait_turn(gid, waiter)
        try:
            # Again only if the stored game moved on meanwhile (the runner's STALE).
            state = await self.runner.run(
                "game " + gid,
                self._attempt,
                who,
                gid,
                re,
                n,
                move,
                exhausted=_kept_changing,
            )
        except StoreUnavailable as exc:
            cache.evict(gid)  # the move may or may not be stored: read it again
            log.warning("game %s of player %s: store failed: %s", gid, who.player, exc)
            raise StoreUnavailable(str(exc), "the store is unavailable; resend") from exc
        finally:
            cache.release(gid)
        return [state]

    def _attempt(
        self, who: Who, gid: str, re: int | None, n: int | None, move: str
    ) -> Steps[p.State] | Awaitable[Steps[p.State]]:
        """One attempt: load (from the cache when it can), decide, and the write to make.
        Most moves need not wait for any of it (the game cached and current, the race's
        seats known): their plan comes back at once, without a coroutine."""
        cache = self.cache
        # Ours outright from here (the game's turn is ours too): given back once the store
        # has what is decided, or as it was if nothing is; dropped if the write fails.
        live = cache.take(gid)
        if live is None or (n is not None and n != live.n):
            if live is not None:
                cache.adopt(live)  # kept if the store still has it so
            return self._attempt_loading(who, gid, re, n, move)
        seats: list[str] | None = None
        if live.record.kind is GameKind.RACE:
            seats = self.races.known_seats(live.record.race)
            if seats is None:
                cache.adopt(live)
                return self._attempt_loading(who, gid, re, n, move)
        return self._decide(who, gid, re, n, move, live, None, seats)

    async def _attempt_loading(
        self, who: Who, gid: str, re: int | None, n: int | None, move: str
    ) -> Steps[p.State]:
        """An attempt that must wait for the store: the game (not cached, or our copy may be
        behind: a move through another process), a stored move, the race's seats."""
        cache = self.cache
        if parse_gid(gid) is None:
            raise p.Refused(p.NOT_FOUND, "no such game")
        live = await cache.get(gid, fresh=True)
        if live is None or live.record.player != who.player:
            raise p.Refused(p.NOT_FOUND, "no such game")
        cache.take(gid)
        try:
            # A resent move from before the moves kept in memory is checked against the
            # store.
            stored = (
                await self.stores.games.move_at(gid, n) if n is not None and n < live.base else None
            )
            seats: list[str] | None = None
            if live.record.kind is GameKind.RACE:
                seats = self.races.known_seats(live.record.race)
                if seats is None:
                    seats = await self.races.seats(live.record.race)
        except BaseException:
            cache.adopt(live)  # nothing was decided: the game is as it was
            raise
        decided = self._decide(who, gid, re, n, move, live, stored, seats)
        return await decided if inspect.iscoroutine(decided) else decided  # type: ignore[return-value]

    def _decide(
        self,
        who: Who,
        gid: str,
        re: int | None,
        n: int | None,
        move: str,
        live: LiveGame,
        stored: str | None,
        seats: list[str] | None,
    ) -> Steps[p.State] | Awaitable[Steps[p.State]]:
        """Decide on `live` (ours outright): the plan, or an awaitable of the refusal once
        the race whose time is up is closed."""
        cache = self.cache
        # Written only over the game it was decided on (a resignation too): a copy cached
        # here may be stale if another connection of the player moved through another
        # instance, and its version no longer matches the stored one.
        record = live.record
        expect_ver = record.ver
        now_us = self.clock.now_us()
        try:
            if record.player != who.player:
                raise p.Refused(p.NOT_FOUND, "no such game")
            try:
                decision = (
                    decide_move(live, n, move, now_us, self.rules, stored)
                    if n is not None
                    else decide_resign(live, now_us)
                )
            except p.Refused as refused:  # TimeUp's code is illegal_move too
                self.metrics.moves_rejected.labels(refused.code).inc()
                raise
        except BaseException as exc:
            cache.adopt(live)  # nothing was decided: the game is as it was
            if isinstance(exc, TimeUp) and record.kind is GameKind.RACE:
                return self._closing(record.race, exc)
            raise
        if isinstance(decision, Retransmission):
            cache.adopt(live)
            return Plan(lambda: self._again(gid, re))
        # From here `live` is ahead of the store: it goes back to the cache only once the
        # store has the move; should anything fail, it is dropped (and read again).
        now = now_us // 1000
        after = decision.after
        record = after.record
        state = after.state(now)
        # One message for each audience: the applier's events made one by one (Applier.event).
        event = self.applier.event
        events = [event([who.player], state, who.uid)]
        peers: list[str] | None = None
        # An asynchronous race has no seats to tell (nor spectators while it is open): its
        # seats see each other as ghosts, scheduled from the stored moves
        # (server/play/ghosts.py).
        if seats:
            # The race's spectators hear the progress too, and the seat's board, which is
            # decided fair where they are (server/play/spectator_boards.py).
            board = ToSpectators(record.race, None, [seat_seen(after, state)])
            events.append(event(seats, after.progress(now), "", board))
            if record.outcome is not None:
                # Its game ends: the write also says whether the other seats' games had all
                # ended, so that only the last seat to end closes the race (reading the race
                # and its games at every seat's end was a measurable part of a race).
                peers = [race_gid(record.race, s) for s in seats if s != record.player]
        return _MovePlan(
            self, after, move, expect_ver, decision.snapshot, state, re, events, now, peers
        )

    async def _closing(self, race: str, refusal: BaseException) -> Steps[p.State]:
        """The race whose time is up closed, then the move refused."""
        await self.races.close_if_due(race)
        raise refusal

    async def _finished(
        self, record: GameRecord, state: p.State, re: int | None, events: list[Event], last: bool
    ) -> p.State:
        """The answer to the move (or resignation) that finished a game, once stored; `last`:
        the race's other seats may all have ended (False only when the store said they
        had not)."""
        if record.kind is GameKind.DAILY and self.daily is not None:
            # Ranked before its final state goes out: whoever sees that state may ask for
            # the board next and must find the attempt on it.
            await self.daily.finished(record)
        state.re = re
        self.applier.deliver(events)
        if record.kind is GameKind.RACE and last:
            await self.races.close_if_due(record.race)
        return state

    async def _again(self, gid: str, re: int | None) -> p.State:
        """The answer to a move applied before: the game's state as the store has it."""
        fresh = await self.cache.get(gid, fresh=True)
        assert fresh is not None
        return fresh.state(self.clock.now_ms(), re)

    def _stored(self, live: LiveGame, move: str) -> None:
        """The store has the move (or resignation): cache the game as it now is, count, log."""
        record = live.record
        self.cache.adopt(live)
        if move:
            self.metrics.moves_accepted.value += 1
            if log.isEnabledFor(logging.DEBUG):
                log.debug(
                    "game %s (race %s): player %s move %d %s (score %d)",
                    record.gid, record.race or "-", record.player, live.n, move,
                    record.score,
                )  # fmt: skip
        else:
            log.info("game %s: player %s resigned", record.gid, record.player)


class _MovePlan(msgspec.Struct):
    """The plan of a decided move or resignation (optimistic.Steps): write it, then cache
    the game, answer and deliver. Its own plan, rather than a Plan of closures, and a
    struct (made in C): one object per move on the hot path."""

    moves: Moves
    after: LiveGame
    move: str
    expect_ver: int
    snapshot: str
    state: p.State
    re: int | None
    events: list[Event]
    now: int
    peers: list[str] | None  # the race's other seats' games, checked when this one ends
    written: asyncio.Future[Written] | None = None

    def write(self) -> Awaitable[Written]:  # the group commit's future, as it is
        moves = self.moves
        payload = moves.applier.payload(self.events)
        self.written = moves.stores.games.write_move(
            self.after.record,
            self.move,
            self.expect_ver,
            payload,
            self.snapshot,
            self.now,
            self.peers,
        )
        return self.written

    def then(self) -> p.State | Awaitable[p.State]:
        moves, after, state = self.moves, self.after, self.state
        moves._stored(after, self.move)
        record = after.record
        if record.outcome is not None:  # finished
            written = self.written
            last = self.peers is None or written is None or written.result() is Written.APPLIED_LAST
            return moves._finished(record, state, self.re, self.events, last)
        state.re = self.re
        moves.applier.deliver(self.events)
        return state

    @staticmethod
    def missing() -> p.State:
        raise p.Refused(p.NOT_FOUND, "no such game")

    def stale(self) -> None:
        # The stored game moved on: a copy cached meanwhile is behind it.
        self.moves.cache.evict(self.after.record.gid)


def _kept_changing() -> p.State:
    raise p.Refused(p.UNAVAILABLE, "the game kept changing; resend")
