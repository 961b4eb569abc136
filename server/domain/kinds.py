"""The kinds of game a player plays, and the statuses of a race."""

from __future__ import annotations

import enum


class GameKind(enum.StrEnum):
    """What a game is part of (the strings are the stored values and the wire's `kind`)."""

    RACE = "race"
    DAILY = "daily"
    PRACTICE = "practice"


class RaceStatus(enum.StrEnum):
    """A race's status as stored (the strings are the stored values)."""

    LOBBY = "lobby"
    RUNNING = "running"
    DONE = "done"
