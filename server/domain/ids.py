"""Game ids: the one grammar of the names of games, which the store keys and the wire shows.

A race seat is `r.CODE.PID`, a daily attempt `d.DATE.GAME.PID`, a practice game
`p.GAME.NONCE.PID`. Only letters, digits, '.', '-' and '_' appear, so a game id never
holds a brace or a colon that could reach into another key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from server.domain.kinds import GameKind

_GID_CHARS = re.compile(r"[A-Za-z0-9._-]+")


def race_gid(code: str, player: str) -> str:
    return f"r.{code}.{player}"


def daily_gid(date: str, game: str, player: str) -> str:
    return f"d.{date}.{game}.{player}"


def practice_gid(game: str, nonce: str, player: str) -> str:
    return f"p.{game}.{nonce}.{player}"


@dataclass(frozen=True, slots=True)
class GameId:
    """A well-formed game id taken apart: its kind, its player, a race seat's race code, a
    daily attempt's date (as written: not checked as a date) and a daily or practice
    game's game."""

    kind: GameKind
    player: str
    race: str = ""
    date: str = ""
    game: str = ""


def parse_gid(gid: str) -> GameId | None:
    """The parts of `gid`, or None if it is not a well-formed game id."""
    if not _GID_CHARS.fullmatch(gid):
        return None
    parts = gid.split(".")
    if len(parts) == 3 and parts[0] == "r" and all(parts[1:]):
        return GameId(GameKind.RACE, parts[2], parts[1])
    if len(parts) == 4 and parts[0] == "d" and all(parts[1:]):
        return GameId(GameKind.DAILY, parts[3], date=parts[1], game=parts[2])
    if len(parts) == 4 and parts[0] == "p" and all(parts[1:]):
        return GameId(GameKind.PRACTICE, parts[3], game=parts[1])
    return None
