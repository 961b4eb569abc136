"""Spectators on this process: the connections watching each race, and what they hear.

A spectator is a greeted connection that asked `watch {race}` (server/play/spectators.py
decides whether it may, and sends it the race as it stands). From then on it hears what
the race's events say is for its spectators (`Event.spectators`, set where the event is
made: server/play/race_machine.py, server/play/moves.py): the events this process
delivers, its own and those other instances relay to it through the race's interest set,
which a watch joins. Nothing here reads a frame:

- an event's frames for spectators (the race's lobby, start, progress, result) go to them
  as they are;
- its seats' boards become `seat` messages, decided by the race's SpectatorBoards
  (server/play/spectator_boards.py): no card that a seat still playing has not seen.

A spectator whose player takes a seat after watching (they watched the lobby, then joined)
hears nothing more of the race as a spectator: the seat is kept up to date as a seat. A
seat that asks to watch its own race is a spectator like any other. Once the result has
gone out, the race is no longer followed.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

import protocol as p
from server.config import Config
from server.play.spectator_boards import SpectatorBoards
from server.store.events import Event, ForSpectators, SeatSeen

log = logging.getLogger(__name__)


class Spectator(Protocol):
    uid: str
    player: str | None

    def deliver(self, frames: Iterable[bytes]) -> None: ...


@dataclass
class _Race:
    """A race watched from here: its spectators, its seats and what they have seen."""

    # uid -> (connection, whether its player was seated when it began to watch)
    watchers: dict[str, tuple[Spectator, bool]] = field(default_factory=dict)
    seats: frozenset[str] = frozenset()
    boards: SpectatorBoards = field(default_factory=SpectatorBoards)

    def seated(self, players: Iterable[str]) -> None:
        self.seats = frozenset(players)
        self.boards.seats(sorted(self.seats))


class Watchers:
    """The races watched from this process, by whom, and what their spectators may see."""

    def __init__(self, max_per_race: int, max_per_connection: int) -> None:
        self.max_per_race = max_per_race
        self.max_per_connection = max_per_connection
        self._races: dict[str, _Race] = {}
        self._of: dict[str, set[str]] = {}  # uid -> the codes it watches

    @classmethod
    def from_config(cls, config: Config) -> Watchers:
        return cls(config.max_spectators_per_race, config.max_watched_races_per_connection)

    @property
    def following(self) -> bool:
        """Whether any race is watched from here (else delivering events skips all this)."""
        return bool(self._races)

    def count(self, code: str) -> int:
        race = self._races.get(code)
        return len(race.watchers) if race is not None else 0

    def watch(self, session: Spectator, code: str, seats: Iterable[str]) -> str | None:
        """Start following race `code` for `session` (idempotent); None, or why not."""
        race = self._races.get(code)
        if race is not None and session.uid in race.watchers:
            return None
        if race is not None and len(race.watchers) >= self.max_per_race:
            return f"race {code} has as many spectators as this server takes ({self.max_per_race})"
        mine = self._of.get(session.uid, set())
        if len(mine) >= self.max_per_connection:
            return f"a connection watches at most {self.max_per_connection} races at once"
        if race is None:
            race = self._races[code] = _Race()
            race.seated(seats)
        race.watchers[session.uid] = (session, session.player in race.seats)
        self._of.setdefault(session.uid, set()).add(code)
        return None

    def unwatch(self, session: Spectator, code: str) -> None:
        race = self._races.get(code)
        if race is not None:
            race.watchers.pop(session.uid, None)
            if not race.watchers:
                del self._races[code]
        mine = self._of.get(session.uid)
        if mine is not None:
            mine.discard(code)
            if not mine:
                del self._of[session.uid]

    def forget(self, session: Spectator) -> None:
        """The connection has closed: it watches nothing any more."""
        for code in list(self._of.get(session.uid, ())):
            self.unwatch(session, code)

    def seated(self, code: str, players: Iterable[str], seen: Iterable[SeatSeen] = ()) -> None:
        """The race's seats are now `players`, and `seen` says what their games are (as
        read for a new spectator), while it is watched from here."""
        race = self._races.get(code)
        if race is None:
            return
        race.seated(players)
        for s in seen:
            race.boards.note(s.player, s.unseen, not s.finished)

    # ------------------------------------------------------------ following

    def relay(self, events: list[Event]) -> None:
        """Pass on to the spectators what `events` have for the races they watch."""
        races = self._races
        for event in events:
            heard = event.spectators
            if heard is not None and heard.race in races:
                self._follow(races[heard.race], heard, event.frames)

    def _follow(self, race: _Race, heard: ForSpectators, frames: list[bytes]) -> None:
        if heard.seats is not None:
            race.seated(heard.seats)
        out = list(frames)
        if heard.boards:
            out += [p.encode(b) for b in race.boards.boards(heard.race, heard.boards)]
        for session, as_seat in list(race.watchers.values()):
            # A spectator who has taken a seat since sees the race as a seat only.
            if as_seat or session.player not in race.seats:
                session.deliver(out)
        if heard.over:
            self._end(heard.race)

    def _end(self, code: str) -> None:
        """The race is over: it is no longer followed (a watch asks again for its end)."""
        race = self._races.get(code)
        for session, _ in list(race.watchers.values()) if race is not None else ():
            self.unwatch(session, code)
        log.info("race %s is over: its spectators here no longer follow it", code)
