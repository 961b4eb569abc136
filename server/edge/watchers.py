"""Spectators on this process: the connections watching each race, and what they hear.

A spectator is a greeted connection that asked `watch {race}` (server/play/spectators.py
decides whether it may, and sends it the race as it stands). From then on it hears the
race from the very events this process delivers to the race's seats: its own, and those
other instances relay to it through the race's interest set, which a watch joins. So the
move path does nothing for spectators, and a race nobody watches here costs nothing here.
Of those events:

- a seat's own `state` in the race becomes a `seat` message: that seat's board exactly as
  its player sees it (their public view), without the fields only they need (`gid`);
- the race's `lobby`, `start`, `progress` and `result` go to the spectators as they are,
  once each (a start reaches every seat in an event of its own, with the same frame);
- nothing else: never a seat's daily or practice game, nor any other race.

A spectator whose player takes a seat (they watched the lobby, then joined) hears nothing
more of the race as a spectator: the seats are kept up to date from the race's lobbies.
Once the result has gone out, the race is no longer followed.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Protocol

import msgspec

import protocol as p
from server.config import Config
from server.store.events import Event

log = logging.getLogger(__name__)


class Spectator(Protocol):
    uid: str
    player: str | None

    def deliver(self, frames: Iterable[bytes]) -> None: ...


class _Frame(msgspec.Struct, kw_only=True):
    """The fields of an event's frame that following a race needs (the view left as the
    bytes it came in: it is passed on, never read)."""

    t: str = ""
    race: str | None = None
    gid: str = ""
    n: int = 0
    view: msgspec.Raw = msgspec.Raw(b"\xc0")
    score: int = 0
    won: bool = False
    over: bool = False
    finished: bool = False
    elapsed_ms: int = 0
    players: list[p.Seat] | None = None  # a lobby's


_DECODER = msgspec.msgpack.Decoder(_Frame)
# What spectators hear as the seats do; a `state` becomes a `seat` board.
_AS_THEY_ARE = frozenset({"lobby", "start", "progress", "result"})


class Watchers:
    """The races watched from this process, by whom, and who is seated in them."""

    def __init__(self, max_per_race: int, max_per_connection: int) -> None:
        self.max_per_race = max_per_race
        self.max_per_connection = max_per_connection
        self._by_race: dict[str, dict[str, Spectator]] = {}  # code -> uid -> connection
        self._of: dict[str, set[str]] = {}  # uid -> the codes it watches
        self._seats: dict[str, frozenset[str]] = {}  # code -> seated players
        self._races_of: dict[str, set[str]] = {}  # seated player -> watched codes
        self._last: dict[str, bytes] = {}  # code -> the last frame passed on as it was

    @classmethod
    def from_config(cls, config: Config) -> Watchers:
        return cls(config.max_spectators_per_race, config.max_watched_races_per_connection)

    @property
    def following(self) -> bool:
        """Whether any race is watched from here (else delivering events skips all this)."""
        return bool(self._races_of)

    def count(self, code: str) -> int:
        return len(self._by_race.get(code, ()))

    def watch(self, session: Spectator, code: str, seats: Iterable[str]) -> str | None:
        """Start following race `code` for `session` (idempotent); None, or why not."""
        watchers = self._by_race.get(code, {})
        if session.uid in watchers:
            self.seated(code, seats)
            return None
        if len(watchers) >= self.max_per_race:
            return f"race {code} has as many spectators as this server takes ({self.max_per_race})"
        mine = self._of.get(session.uid, set())
        if len(mine) >= self.max_per_connection:
            return f"a connection watches at most {self.max_per_connection} races at once"
        self._by_race.setdefault(code, {})[session.uid] = session
        self._of.setdefault(session.uid, set()).add(code)
        self.seated(code, seats)
        return None

    def unwatch(self, session: Spectator, code: str) -> None:
        watchers = self._by_race.get(code)
        if watchers is not None:
            watchers.pop(session.uid, None)
            if not watchers:
                self._drop(code)
        mine = self._of.get(session.uid)
        if mine is not None:
            mine.discard(code)
            if not mine:
                del self._of[session.uid]

    def forget(self, session: Spectator) -> None:
        """The connection has closed: it watches nothing any more."""
        for code in list(self._of.get(session.uid, ())):
            self.unwatch(session, code)

    def seated(self, code: str, players: Iterable[str]) -> None:
        """The race's seats are now `players` (while it is watched from here)."""
        if code not in self._by_race:
            return
        new = frozenset(players)
        old = self._seats.get(code, frozenset())
        for player in old - new:
            self._unindex(player, code)
        for player in new - old:
            self._races_of.setdefault(player, set()).add(code)
        self._seats[code] = new

    # ------------------------------------------------------------ following

    def relay(self, events: list[Event]) -> None:
        """Pass on to the spectators what `events` tell of the races they watch."""
        races_of = self._races_of
        for event in events:
            codes: set[str] | None = None
            for player in event.to:
                found = races_of.get(player)
                if found:
                    codes = found if codes is None else codes | found
            if codes:
                self._follow(event.frames, codes)

    def _follow(self, frames: list[bytes], codes: set[str]) -> None:
        for frame in frames:
            try:
                head = _DECODER.decode(frame)
            except (msgspec.DecodeError, msgspec.ValidationError):
                continue  # not a race frame of ours
            code = head.race
            if code is None or code not in codes:
                continue
            if head.t == "state":
                # The state's gid names the seat: r.CODE.PLAYER.
                player = head.gid.rsplit(".", 1)[-1]
                if not head.gid.startswith("r.") or player not in self._seats.get(code, ()):
                    continue
                out = p.encode(
                    p.SeatBoard(
                        race=code,
                        player=player,
                        n=head.n,
                        view=head.view,
                        score=head.score,
                        won=head.won,
                        over=head.over,
                        finished=head.finished,
                        elapsed_ms=head.elapsed_ms,
                    )
                )
            elif head.t in _AS_THEY_ARE:
                if frame == self._last.get(code):
                    continue
                self._last[code] = out = frame
                if head.t == "lobby" and head.players is not None:
                    self.seated(code, [s.player for s in head.players])
            else:
                continue
            self._send(code, out)
            if head.t == "result":
                self._end(code)

    def _send(self, code: str, frame: bytes) -> None:
        seats = self._seats.get(code, frozenset())
        for session in self._by_race.get(code, {}).values():
            # A spectator who has taken a seat since sees the race as a seat only.
            if session.player not in seats:
                session.deliver((frame,))

    def _end(self, code: str) -> None:
        """The race is over: it is no longer followed (a watch asks again for its end)."""
        for session in list(self._by_race.get(code, {}).values()):
            self.unwatch(session, code)
        log.info("race %s is over: its spectators here no longer follow it", code)

    def _drop(self, code: str) -> None:
        self._by_race.pop(code, None)
        self._last.pop(code, None)
        for player in self._seats.pop(code, frozenset()):
            self._unindex(player, code)

    def _unindex(self, player: str, code: str) -> None:
        codes = self._races_of.get(player)
        if codes is not None:
            codes.discard(code)
            if not codes:
                del self._races_of[player]
