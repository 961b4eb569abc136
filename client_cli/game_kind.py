"""The kinds of game the client plays."""

from __future__ import annotations

from enum import StrEnum


class GameKind(StrEnum):
    """As `state.kind` names them on the wire (which stays a str there, for the kinds a
    newer server may add)."""

    RACE = "race"
    DAILY = "daily"
    PRACTICE = "practice"
