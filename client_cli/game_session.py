"""What the client knows about the game being played, fed with server messages.

No I/O here: `GameSession.apply` takes a message (the protocol's struct) and updates the
state, the race panel and the phase (by client_cli/game_phase.py's table, and says which
phase the message made it enter); the play screen and the plain mode only read it. The
server is authoritative, so everything shown comes from its messages; the clock alone
runs locally between two states.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, fields

from client_cli.endings import finish_notes
from client_cli.game_kind import GameKind
from client_cli.game_phase import Cue, Phase, next_phase
from client_cli.messages import Event, Welcomed
from client_cli.moves import legal_moves
from protocol import (
    ChallengesReply,
    Created,
    LeaderboardReply,
    Lobby,
    Progress,
    RematchOffer,
    Result,
    Start,
    State,
)

# What a rematch keeps of the race before it: who one is, the game, its time limit (a
# rematch has the same), and the connection's news and server address.
KEPT_BY_A_REMATCH = (
    "kind", "game", "me", "my_name", "time_limit_s", "status", "status_fades", "web",
)  # fmt: skip


@dataclass
class SeatFigures:
    """Where a player of a race stands as this client has heard it; None: not known (yet).
    A seat of one's own race (Seat) and of a watched one (client_cli/watching.py) alike."""

    player: str
    name: str
    score: int | None = None
    moves: int | None = None
    won: bool = False
    over: bool = False
    finished: bool = False
    elapsed_ms: int = 0


@dataclass
class Seat(SeatFigures):
    """One player of one's own race."""

    heard: bool = False  # a `progress` (or, for oneself, a `state`) has told where they are
    # An earlier run of an asynchronous race: its figures are those it had at one's own
    # elapsed time, and `elapsed_ms` its clock then.
    ghost: bool = False


@dataclass(frozen=True)
class Applied:
    """What one message did: whether it concerned this game, and the phase it made the
    game enter (None: the phase stayed as it was)."""

    concerned: bool
    entered: Phase | None = None

    def __bool__(self) -> bool:
        return self.concerned


@dataclass
class GameSession:
    kind: GameKind
    game: str
    me: str = ""
    my_name: str = ""  # as the welcome has it
    race: str | None = None
    host: str | None = None
    # A quick race (solitaire quick): it starts by itself; nobody else may join it.
    quick: bool = False
    phase: Phase = Phase.CONNECTING  # moved on only by _advance
    state: State | None = None
    state_at: float = 0.0
    start: Start | None = None
    time_limit_s: int | None = None
    seats: dict[str, Seat] = field(default_factory=dict)
    # Every seat plays the same deal: the score of one's own game before any move is every
    # seat's until they move (Doublets starts at 1, Baker's Game often above 0).
    start_score: int | None = None
    # The race's clock, from the last state of an unfinished game: (elapsed ms, when). It
    # keeps running once one's own game (and its clock) has stopped.
    race_clock: tuple[int, float] | None = None
    # The result came while one's own game was still open: the time limit ended the race.
    time_up: bool = False
    result: Result | None = None
    leaderboard: LeaderboardReply | None = None
    # A player of the finished race asked for a rematch: the race to join.
    rematch_offer: RematchOffer | None = None
    notice: str = ""
    notice_is_error: bool = False
    status: str = ""
    status_fades: bool = False  # good news ("Reconnected") gives way once the player types
    web: str = ""  # the server's HTTP address (its replay pages), once connected
    # One's own game's score after each move seen (move count -> score), for a daily's share.
    scores: dict[int, int] = field(default_factory=dict)
    _legal: tuple[int, list[str]] | None = None
    # An asynchronous race (a challenge): each seat on its own clock, the others as ghosts;
    # it stays open until `closes_at_ms` (once known) or until every seat has played.
    async_race: bool = False
    closes_at_ms: int | None = None

    def __post_init__(self) -> None:
        self.kind = GameKind(self.kind)  # a kind given by name is taken as the enum

    # -- feeding -------------------------------------------------------------------------

    def apply(self, message: Event, reply: bool = False) -> Applied:
        """Take in one server message: whether it concerned this game (the result is
        true then), and the phase it entered.

        `reply`: the message answers this client's own request (a daily's first state
        comes only that way, as the player may have other unfinished dailies)."""
        before = self.phase
        concerned = self._take(message, reply)
        return Applied(concerned, self.phase if self.phase is not before else None)

    def ranked(self) -> Applied:
        """A daily's rank is in (fetched by the client): nothing more to wait for."""
        before = self.phase
        self._advance(Cue.RANKED)
        return Applied(True, self.phase if self.phase is not before else None)

    def _advance(self, cue: Cue) -> None:
        self.phase = next_phase(self.phase, cue)

    def _take(self, message: Event, reply: bool) -> bool:
        if isinstance(message, Welcomed):
            self.me, self.my_name = message.welcome.player, message.welcome.name
            return False
        if isinstance(message, State):
            return self._apply_state(message, reply)
        if isinstance(message, Created):
            self.race = message.race
            self.time_limit_s = message.time_limit_s
            self._advance(Cue.CREATED)
            return True
        if isinstance(message, Lobby) and self._is_my_race(message.race):
            self.race, self.host = message.race, message.host
            self._advance(Cue.LOBBY)
            # Before the start every seat is at the deal; a lobby heard later (joining a race
            # under way again) names the seats but says nothing of where they are: the
            # `progress` the server sends after it does.
            at_deal = self.phase is Phase.LOBBY
            for p in message.players:
                seat = self.seats.setdefault(p.player, Seat(p.player, p.name))
                seat.name = p.name
                if at_deal and not seat.heard:
                    seat.moves = 0
            seated = {p.player for p in message.players}
            if self.phase is Phase.LOBBY:
                for pid in list(self.seats):
                    if pid not in seated:
                        del self.seats[pid]
            return True
        if isinstance(message, Start) and self._is_my_race(message.race):
            self.start = message
            self.async_race = self.async_race or message.async_
            if message.ends_at_ms is not None:
                self.time_limit_s = (message.ends_at_ms - message.starts_at_ms) // 1000
            self._advance(Cue.START)
            return True
        if isinstance(message, Progress) and self._is_my_race(message.race):
            seat = self.seats.setdefault(message.player, Seat(message.player, message.name))
            seat.name, seat.score, seat.moves = message.name, message.score, message.moves
            seat.won, seat.over, seat.finished = message.won, message.over, message.finished
            seat.elapsed_ms = message.elapsed_ms
            seat.heard = True
            seat.ghost = message.ghost
            return True
        if isinstance(message, ChallengesReply) and self.kind is GameKind.RACE:
            for entry in message.races:
                if entry.race == self.race:
                    self.async_race = True
                    self.closes_at_ms = entry.closes_at_ms
                    return True
            return False
        if isinstance(message, Result) and self._is_my_race(message.race):
            if message == self.result:
                return False  # sent again (asked for after a reconnect): nothing new
            self.result = message
            own = self.state
            self.time_up = own is not None and not own.finished and self.phase is Phase.PLAYING
            self._advance(Cue.RESULT)
            # Every seat's final figures (a finished race joined later has had no `progress`).
            for s in message.standings:
                seat = self.seats.setdefault(s.player, Seat(s.player, s.name))
                seat.score, seat.moves, seat.heard = s.score, s.moves, True
                seat.won, seat.finished, seat.elapsed_ms = s.won, True, s.time_ms
            return True
        if isinstance(message, RematchOffer) and self.kind is GameKind.RACE:
            if message.race != self.race or message == self.rematch_offer:
                return False
            self.rematch_offer = message
            return True
        if isinstance(message, LeaderboardReply):
            self.leaderboard = message
            return True
        return False

    def next_race(self, code: str) -> None:
        """On to race `code`, a rematch of this one: everything about the race before goes."""
        fresh = GameSession(kind=self.kind, game=self.game)
        for f in fields(self):
            if f.name not in KEPT_BY_A_REMATCH:
                setattr(self, f.name, getattr(fresh, f.name))
        self.race = code

    def in_result(self) -> bool:
        """One had a seat in the finished race (only its players may ask for a rematch)."""
        return self.result is not None and any(s.player == self.me for s in self.result.standings)

    def _is_my_race(self, race: str) -> bool:
        return self.kind is GameKind.RACE and (self.race is None or race == self.race)

    def _apply_state(self, state: State, reply: bool) -> bool:
        if state.game != self.game or state.kind != self.kind:
            return False
        if self.kind is GameKind.RACE and self.race is not None and state.race != self.race:
            return False
        current = self.state
        if current is None and self.kind is not GameKind.RACE and not reply:
            return False
        if current is not None and current.gid != state.gid:
            return False
        undo = reply and self.kind is GameKind.PRACTICE  # an undo's reply is older, not stale
        if current is not None and state.n < current.n and not undo:
            return False  # an older state overtaken by a newer one (undo's reply is not)
        was_finished = current is not None and current.finished
        self.state = state
        self.state_at = time.monotonic()
        self.scores[state.n] = state.score
        if self.kind is GameKind.RACE:
            self.race = state.race
            if not state.finished or not was_finished:
                self.race_clock = (state.elapsed_ms, self.state_at)
            if state.n == 0:
                self._at_deal(state)
            if self.me:
                seat = self.seats.setdefault(self.me, Seat(self.me, self.my_name or "you"))
                seat.score, seat.moves, seat.heard = state.score, state.n, True
                seat.won, seat.over, seat.finished = state.won, state.over, state.finished
                seat.elapsed_ms = state.elapsed_ms
        if state.finished:
            self._advance(Cue.OVER)
        elif was_finished and self.kind is GameKind.PRACTICE:
            self._advance(Cue.UNDONE)
        else:
            self._advance(Cue.OPEN)
        return True

    def _at_deal(self, state: State) -> None:
        """One's own game before any move: every seat not heard from since the deal is there."""
        self.start_score = state.score
        for seat in self.seats.values():
            if not seat.heard and seat.moves == 0:
                seat.score = state.score
                seat.won, seat.over, seat.finished = state.won, state.over, state.over

    def behind_after_reconnect(self) -> bool:
        """After a reconnect: may this race have moved on unheard while we were away?

        A race under way may have had moves, or its result: joining it again brings every
        seat's progress, or the result. A player away from a lobby for longer than the
        server waits has left it: joining again takes a seat back.
        """
        if self.kind is not GameKind.RACE or self.race is None or self.result is not None:
            return False
        return self.phase in (Phase.LOBBY, Phase.PLAYING, Phase.FINISHED)

    def say(self, text: str, error: bool = False) -> None:
        self.notice, self.notice_is_error = text, error

    def typed(self) -> None:
        """The player typed a line: good connection news has been seen, and gives way."""
        if self.status_fades:
            self.status, self.status_fades = "", False

    # -- reading -------------------------------------------------------------------------

    def legal_moves(self) -> list[str]:
        state = self.state
        if state is None or state.finished:
            return []
        if self._legal is None or self._legal[0] != id(state):
            self._legal = (id(state), legal_moves(state.view))
        return self._legal[1]

    def finish_notes(self) -> dict[str, str]:
        """How each seat's game ended, for the standings (client_cli/endings.py)."""
        if self.result is None:
            return {}
        limit = self.limit_ms()
        if limit is None and self.time_limit_s is not None:
            limit = self.time_limit_s * 1000
        over = {pid for pid, seat in self.seats.items() if seat.over}
        return finish_notes(self.result, over, limit)

    def limit_ms(self) -> int | None:
        if self.start is None or self.start.ends_at_ms is None:
            return None
        return self.start.ends_at_ms - self.start.starts_at_ms

    def elapsed_ms(self) -> int:
        """One's own clock: running while one plays, stopped at the end (or the time limit)."""
        state = self.state
        if state is None:
            return 0
        mine = self._my_standing_ms()
        if mine is not None:
            return mine
        elapsed = state.elapsed_ms
        if not state.finished and self.phase is Phase.PLAYING:
            elapsed += int((time.monotonic() - self.state_at) * 1000)
        limit = self.limit_ms()
        return elapsed if limit is None else min(elapsed, limit)

    def _my_standing_ms(self) -> int | None:
        if self.result is None:
            return None
        return next((s.time_ms for s in self.result.standings if s.player == self.me), None)

    def remaining_ms(self) -> int | None:
        """Time left in a race with a limit, from the race's own clock (no clock skew).

        It keeps running after one's own game ends, as the others play on; once the
        result is in it is 0 if the time ran out, else there is nothing left to count."""
        limit = self.limit_ms()
        if limit is None:
            return None
        if self.result is not None:
            return 0 if self.time_up else None
        if self.race_clock is None:
            return limit
        elapsed, since = self.race_clock
        if self.phase in (Phase.PLAYING, Phase.FINISHED):
            elapsed += int((time.monotonic() - since) * 1000)
        return max(0, limit - elapsed)

    def out_of_time(self) -> bool:
        """The race's time has run out (by the result, or by the clock before it comes)."""
        return self.time_up or (self.result is None and self.remaining_ms() == 0)

    def waiting_for(self) -> int:
        """How many other seats have not finished, as far as this client knows."""
        return sum(1 for s in self.seats.values() if s.player != self.me and not s.finished)

    def standings_panel(self) -> list[Seat]:
        def key(s: Seat) -> tuple[bool, int, int, int]:
            return (s.score is None, -(s.score or 0), s.elapsed_ms, s.moves or 0)

        return sorted(self.seats.values(), key=key)


def clock(ms: int) -> str:
    seconds = max(ms, 0) // 1000
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02}:{secs:02}" if hours else f"{minutes}:{secs:02}"
