"""A queue entry: a player waiting for a quick race (server/play/matcher.py decides the
races, server/store/queue_repo.py keeps the entries)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Waiting:
    """A player waiting for a quick race of `game` since `since_ms`, with their rating."""

    player: str
    name: str
    game: str
    rating: int
    since_ms: int
