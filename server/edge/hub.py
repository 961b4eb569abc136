"""This process's connected sessions, by player, and local delivery of events."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from server.store.bus import Event


class Receiver(Protocol):
    uid: str
    player: str | None

    def deliver(self, frames: Iterable[bytes]) -> None: ...


class Hub:
    def __init__(self) -> None:
        self._by_player: dict[str, set[Receiver]] = {}

    def add(self, session: Receiver) -> None:
        assert session.player is not None
        self._by_player.setdefault(session.player, set()).add(session)

    def remove(self, session: Receiver) -> None:
        if session.player is None:
            return
        group = self._by_player.get(session.player)
        if group is not None:
            group.discard(session)
            if not group:
                del self._by_player[session.player]

    def sessions(self, player: str) -> list[Receiver]:
        return list(self._by_player.get(player, ()))

    def __len__(self) -> int:
        return sum(len(g) for g in self._by_player.values())

    def deliver(self, events: list[Event]) -> None:
        for event in events:
            for player in event.to:
                for session in self.sessions(player):
                    if session.uid != event.skip:
                        session.deliver(event.frames)
