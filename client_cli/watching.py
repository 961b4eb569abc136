"""Watching a race as a spectator: what the client knows of it, fed with server messages.

No I/O here: `WatchSession.apply` takes a message (the protocol's struct) and updates the
seats (each one's board as its own player sees it, score, moves and clock) and the phase;
the watch screen and `--plain` only read it. The server sends every seat's `seat` board
after each of its moves, and the race's `lobby`, `start`, `progress` and `result`. A board
older than the one shown (its `n` is lower) is passed over: after a `watch` the server may
still send the boards of moves made while it answered.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from client_cli.game_session import SeatFigures
from client_cli.messages import Event, Welcomed
from protocol import Lobby, Progress, Result, SeatBoard, Start


class WatchPhase(StrEnum):
    CONNECTING = "connecting"  # nothing heard of the race yet
    LOBBY = "lobby"  # not started
    RUNNING = "running"
    DONE = "done"  # the standings are in


@dataclass
class WatchSeat(SeatFigures):
    """One player of the watched race, and their board."""

    view: dict[str, Any] | None = None
    n: int = -1  # the move count of the board shown (-1: none yet)
    heard_at: float = 0.0  # when `elapsed_ms` was told (the clock runs on from there)


@dataclass
class WatchSession:
    race: str
    game: str = ""
    host: str = ""
    phase: WatchPhase = WatchPhase.CONNECTING
    start: Start | None = None
    result: Result | None = None
    seats: dict[str, WatchSeat] = field(default_factory=dict)  # in the order they joined
    focus: int = 0  # the seat whose board is shown
    notice: str = ""
    status: str = ""

    # -- feeding -------------------------------------------------------------------------

    def apply(self, message: Event) -> bool:
        """Take in one server message; True if it concerned the race."""
        if isinstance(message, Welcomed):
            return False
        race = getattr(message, "race", None)
        if race != self.race:
            return False
        now = time.monotonic()
        if isinstance(message, Lobby):
            self.game, self.host = message.game, message.host
            seats = {}
            for player in message.players:
                known = self.seats.get(player.player) or WatchSeat(player.player, player.name)
                known.name = player.name
                seats[player.player] = known
            self.seats = seats
            self.focus = min(self.focus, max(len(seats) - 1, 0))
            if self.phase is WatchPhase.CONNECTING:
                self.phase = WatchPhase.LOBBY
            return True
        if isinstance(message, Start):
            self.start = message
            if self.phase in (WatchPhase.CONNECTING, WatchPhase.LOBBY):
                self.phase = WatchPhase.RUNNING
            return True
        if isinstance(message, SeatBoard):
            seat = self.seats.get(message.player)
            if seat is None or message.n < seat.n:
                return False
            seat.view, seat.n, seat.score = dict(message.view), message.n, message.score
            seat.moves = int(seat.view.get("moves", message.n))
            seat.won, seat.over, seat.finished = message.won, message.over, message.finished
            seat.elapsed_ms, seat.heard_at = message.elapsed_ms, now
            if self.phase in (WatchPhase.CONNECTING, WatchPhase.LOBBY):
                self.phase = WatchPhase.RUNNING
            return True
        if isinstance(message, Progress):
            seat = self.seats.get(message.player)
            if seat is None:
                return False
            seat.score, seat.moves = message.score, message.moves
            seat.won, seat.over, seat.finished = message.won, message.over, message.finished
            seat.elapsed_ms, seat.heard_at = message.elapsed_ms, now
            return True
        if isinstance(message, Result):
            self.result = message
            self.phase = WatchPhase.DONE
            for standing in message.standings:
                seat = self.seats.get(standing.player)
                if seat is not None:
                    seat.score, seat.moves, seat.finished = standing.score, standing.moves, True
                    seat.elapsed_ms, seat.won = standing.time_ms, standing.won
            self.notice = "The race is over. s: the standings; Tab: the boards; Enter or q leaves."
            return True
        return False

    # -- reading -------------------------------------------------------------------------

    def ordered(self) -> list[WatchSeat]:
        return list(self.seats.values())

    def focused(self) -> WatchSeat | None:
        seats = self.ordered()
        return seats[self.focus % len(seats)] if seats else None

    def turn(self, step: int) -> None:
        """Show the next (or previous) seat's board."""
        if self.seats:
            self.focus = (self.focus + step) % len(self.seats)

    def show(self, index: int) -> bool:
        if 0 <= index < len(self.seats):
            self.focus = index
            return True
        return False

    def limit_ms(self) -> int | None:
        if self.start is None or self.start.ends_at_ms is None:
            return None
        return self.start.ends_at_ms - self.start.starts_at_ms

    def elapsed_ms(self, seat: WatchSeat) -> int:
        """A seat's clock: running while it plays and the race is on, never past the limit."""
        elapsed = seat.elapsed_ms
        if not seat.finished and self.phase is WatchPhase.RUNNING and seat.heard_at:
            elapsed += int((time.monotonic() - seat.heard_at) * 1000)
        limit = self.limit_ms()
        return elapsed if limit is None else min(elapsed, limit)

    def race_ms(self) -> int:
        """How long the race has run (the longest clock of a seat still playing)."""
        return max((self.elapsed_ms(s) for s in self.seats.values()), default=0)

    def outcome(self, seat: WatchSeat) -> str:
        if self.result is not None:
            for s in self.result.standings:
                if s.player == seat.player:
                    return "won" if s.won else ("resigned" if s.resigned else "finished")
        if seat.won:
            return "won"
        if seat.over:
            return "no moves left"
        if seat.finished:
            return "finished"
        return "playing" if self.phase is WatchPhase.RUNNING else ""
