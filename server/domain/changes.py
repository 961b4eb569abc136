"""The writes the logic decides to make, named in records (never in keys), and what the
store answers: a write names the version it was decided on and is applied only if the
stored record is still at that version."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

import protocol as p
from server.domain.ratings import PlayerRating, RatingPoint
from server.domain.records import GameRecord, RaceRecord

MUST_NOT_EXIST = -1  # the expected version of a record that is created by the write


class Written(enum.IntEnum):
    """What a version-checked write found (the store's scripts answer these numbers)."""

    APPLIED = 1
    # Applied, and the other games it was checked with (its race's other seats) had all
    # ended: the write ended the last game of its race (server/store/scripts.py's MOVES).
    APPLIED_LAST = 2
    STALE = 0  # the record is not at the version the write was decided on: read it again
    MISSING = -1  # no such record


@dataclass
class GameChange:
    """Store `record`'s fields (all of them with `all_fields`, else those a move or a close
    changes) if the stored game is at version `expect_ver` (MUST_NOT_EXIST: a new game)."""

    record: GameRecord
    expect_ver: int
    all_fields: bool = False


@dataclass
class RatingChange:
    """A player's new rating after a rated race, checked against the version it was
    decided on (MUST_NOT_EXIST: their first rating in the game), with the history entry
    and the displayed integer the ratings board sorts by."""

    rating: PlayerRating
    expect_ver: int
    point: RatingPoint
    shown: int


@dataclass
class RaceChange:
    """A change of a race: the race as it now is (its version bumped), checked against the
    version it was decided on, with the seats it adds or frees and the writes of its seats'
    games."""

    race: RaceRecord
    expect_ver: int  # MUST_NOT_EXIST for a new race
    new_seats: list[p.Seat] = field(default_factory=list)
    # Seats freed (a player who left the lobby): taken off the seats list, their games deleted.
    gone_seats: list[p.Seat] = field(default_factory=list)
    games: list[GameChange] = field(default_factory=list)
    # Instances that must hear the race's events from now on (where its players are).
    instances: list[str] = field(default_factory=list)
    ttl_s: int = 0  # > 0: every key of the race expires after this long; 0: they persist
    payload: bytes = b""  # events relayed to the other instances once written
    # A rated race's close: its seats' new ratings, written in the same batch as the close.
    ratings: list[RatingChange] = field(default_factory=list)
