"""What the client knows about the game being played, fed with server messages.

No I/O here: `GameSession.apply` takes a decoded message and updates the
state, the race panel and the phase; the play screen and the plain mode only
read it. The server is authoritative, so everything shown comes from its
messages; the clock alone runs locally between two states.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from client_cli.messages import (
    Created,
    Leaderboard,
    Lobby,
    Progress,
    Result,
    Start,
    State,
    parse,
)
from client_cli.moves import legal_moves


@dataclass
class Seat:
    player: str
    name: str
    score: int = 0
    moves: int = 0
    won: bool = False
    over: bool = False
    finished: bool = False
    elapsed_ms: int = 0


@dataclass
class GameSession:
    kind: str  # "race", "daily" or "practice"
    game: str
    me: str = ""
    my_name: str = ""  # as the welcome has it
    race: str | None = None
    host: str | None = None
    phase: str = "connecting"  # lobby, playing, finished (waiting for the result), result, done
    state: State | None = None
    state_at: float = 0.0
    start: Start | None = None
    time_limit_s: int | None = None
    seats: dict[str, Seat] = field(default_factory=dict)
    result: Result | None = None
    leaderboard: Leaderboard | None = None
    notice: str = ""
    notice_is_error: bool = False
    status: str = ""
    _legal: tuple[int, list[str]] | None = None

    # -- feeding -------------------------------------------------------------------------

    def apply(self, message: dict[str, Any], reply: bool = False) -> bool:
        """Take in one server message; True if it concerned this game.

        `reply`: the message answers this client's own request (a daily's first state
        comes only that way, as the player may have other unfinished dailies)."""
        kind = message.get("t")
        if kind == "welcome":
            self.me = str(message.get("player", self.me))
            self.my_name = str(message.get("name", self.my_name))
            return False
        parsed = parse(message)
        if isinstance(parsed, State):
            return self._apply_state(parsed, reply)
        if isinstance(parsed, Created):
            self.race = parsed.race
            self.time_limit_s = parsed.time_limit_s
            self.phase = "lobby"
            return True
        if isinstance(parsed, Lobby) and self._is_my_race(parsed.race):
            self.race, self.host = parsed.race, parsed.host
            if self.phase in ("connecting", "lobby"):
                self.phase = "lobby"
            for p in parsed.players:
                self.seats.setdefault(p.player, Seat(p.player, p.name)).name = p.name
            seated = {p.player for p in parsed.players}
            if self.phase == "lobby":
                for pid in list(self.seats):
                    if pid not in seated:
                        del self.seats[pid]
            return True
        if isinstance(parsed, Start) and self._is_my_race(parsed.race):
            self.start = parsed
            if self.phase in ("connecting", "lobby"):
                self.phase = "playing"
            return True
        if isinstance(parsed, Progress) and self._is_my_race(parsed.race):
            seat = self.seats.setdefault(parsed.player, Seat(parsed.player, parsed.name))
            seat.name, seat.score, seat.moves = parsed.name, parsed.score, parsed.moves
            seat.won, seat.over, seat.finished = parsed.won, parsed.over, parsed.finished
            seat.elapsed_ms = parsed.elapsed_ms
            return True
        if isinstance(parsed, Result) and self._is_my_race(parsed.race):
            if parsed == self.result:
                return False  # sent again (asked for after a reconnect): nothing new
            self.result = parsed
            self.phase = "result"
            return True
        if isinstance(parsed, Leaderboard):
            self.leaderboard = parsed
            return True
        return False

    def _is_my_race(self, race: str) -> bool:
        return self.kind == "race" and (self.race is None or race == self.race)

    def _apply_state(self, state: State, reply: bool) -> bool:
        if state.game != self.game or state.kind != self.kind:
            return False
        if self.kind == "race" and self.race is not None and state.race != self.race:
            return False
        current = self.state
        if current is None and self.kind in ("daily", "practice") and not reply:
            return False
        if current is not None and current.gid != state.gid:
            return False
        if current is not None and state.n < current.n and not (reply and self.kind == "practice"):
            return False  # an older state overtaken by a newer one (undo's reply is not)
        self.state = state
        self.state_at = time.monotonic()
        if self.kind == "race":
            self.race = state.race
            if self.phase in ("connecting", "lobby"):
                self.phase = "playing"
            if self.me:
                seat = self.seats.setdefault(self.me, Seat(self.me, self.my_name or "you"))
                seat.score, seat.moves = state.score, state.n
                seat.won, seat.over, seat.finished = state.won, state.over, state.finished
        elif self.phase == "connecting":
            self.phase = "playing"
        if state.finished and self.phase == "playing":
            self.phase = "finished"
        elif not state.finished and self.phase == "finished" and self.kind == "practice":
            self.phase = "playing"  # a practice game's end was undone
        return True

    def behind_after_reconnect(self) -> bool:
        """After a reconnect: may this race have moved on unheard while we were away?

        A race under way may have had moves, or its result: joining it again brings every
        seat's progress, or the result. A player away from a lobby for longer than the
        server waits has left it: joining again takes a seat back.
        """
        if self.kind != "race" or self.race is None or self.result is not None:
            return False
        return self.phase in ("lobby", "playing", "finished")

    def say(self, text: str, error: bool = False) -> None:
        self.notice, self.notice_is_error = text, error

    # -- reading -------------------------------------------------------------------------

    def legal_moves(self) -> list[str]:
        state = self.state
        if state is None or state.finished:
            return []
        if self._legal is None or self._legal[0] != id(state):
            self._legal = (id(state), legal_moves(state.view))
        return self._legal[1]

    def elapsed_ms(self) -> int:
        state = self.state
        if state is None:
            return 0
        if state.finished or self.phase not in ("playing",):
            return state.elapsed_ms
        return state.elapsed_ms + int((time.monotonic() - self.state_at) * 1000)

    def remaining_ms(self) -> int | None:
        """Time left in a race with a limit, from the race's own clock (no clock skew)."""
        if self.start is None or self.start.ends_at_ms is None:
            return None
        limit = self.start.ends_at_ms - self.start.starts_at_ms
        return max(0, limit - self.elapsed_ms())

    def standings_panel(self) -> list[Seat]:
        return sorted(self.seats.values(), key=lambda s: (-s.score, s.elapsed_ms, s.moves))


def clock(ms: int) -> str:
    seconds = max(ms, 0) // 1000
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02}:{secs:02}" if hours else f"{minutes}:{secs:02}"
