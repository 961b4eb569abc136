"""This process's connected sessions, by player, and local delivery of events (to the
players' connections, and through server/edge/watchers.py to the races' spectators)."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Protocol

from server.config import DEFAULT
from server.edge.watchers import Watchers
from server.play.players import Who
from server.store.events import Event, SeatSeen

log = logging.getLogger(__name__)


class Receiver(Protocol):
    uid: str
    player: str | None

    def deliver(self, frames: Iterable[bytes]) -> None: ...


class Hub:
    def __init__(self, watchers: Watchers | None = None) -> None:
        self._by_player: dict[str, set[Receiver]] = {}
        self.watchers = watchers if watchers is not None else Watchers.from_config(DEFAULT)

    def add(self, session: Receiver) -> None:
        assert session.player is not None
        self._by_player.setdefault(session.player, set()).add(session)

    def remove(self, session: Receiver) -> None:
        if session.player is None:
            return
        self.watchers.forget(session)
        group = self._by_player.get(session.player)
        if group is not None:
            group.discard(session)
            if not group:
                del self._by_player[session.player]

    def sessions(self, player: str) -> list[Receiver]:
        return list(self._by_player.get(player, ()))

    def session(self, player: str, uid: str) -> Receiver | None:
        """The connection `uid` of `player`, if it is on this process."""
        return next((s for s in self._by_player.get(player, ()) if s.uid == uid), None)

    # -- spectators (server/play/spectators.py's Following)

    def watch(self, who: Who, code: str, seats: list[str]) -> str | None:
        session = self.session(who.player, who.uid)
        if session is None:
            return "the connection has closed"
        return self.watchers.watch(session, code, seats)

    def unwatch(self, who: Who, code: str) -> None:
        session = self.session(who.player, who.uid)
        if session is not None:
            self.watchers.unwatch(session, code)

    def seated(self, code: str, seats: list[str], seen: list[SeatSeen]) -> None:
        self.watchers.seated(code, seats, seen)

    def __len__(self) -> int:
        return sum(len(g) for g in self._by_player.values())

    def deliver(self, events: list[Event]) -> None:
        # The sessions' sets are read as they are, not copied per player: delivering only
        # queues frames, and no session joins or leaves the hub meanwhile. (A move's
        # progress goes to every seat of its race: a copy per seat was a measurable part
        # of the move's fan-out.)
        by_player = self._by_player
        for event in events:
            skip, frames = event.skip, event.frames
            for player in event.to:
                group = by_player.get(player)
                if group is None:
                    continue
                for session in group:
                    if session.uid != skip:
                        session.deliver(frames)
        if self.watchers.following:
            try:
                self.watchers.relay(events)
            except Exception:
                # A bug in following a race must not cost its players a reply.
                log.exception("spectators: events not passed on")
