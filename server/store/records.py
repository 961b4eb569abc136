"""What the store keeps for a game and for a race, and how each maps to a Redis hash.

Plain data: the rules that change these records live in server/play/ (game_machine.py,
race_machine.py) and server/daily/. Every record carries a version `ver`, which every
write bumps: a write names the version it was decided on, and the store applies it only
if the stored record is still at that version (server/store/scripts.py). Records stored
before versions existed read as version 0, which is what their first write expects.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

import msgspec

import protocol as p


class RaceStatus(enum.StrEnum):
    """A race's status as stored (the strings are the stored values)."""

    LOBBY = "lobby"
    RUNNING = "running"
    DONE = "done"


@dataclass
class GameRecord:
    """What the store keeps for one game besides its move list (all that a replay needs)."""

    gid: str
    kind: str  # "race", "daily" or "practice"
    game: str
    seed: int
    player: str
    name: str
    race: str = ""  # race code, for kind "race"
    date: str = ""  # ISO date, for kind "daily"
    started_at_ms: int = 0  # 0: not started yet (a race still in its lobby)
    ends_at_ms: int = 0  # 0: no time limit
    finished: bool = False
    finished_at_ms: int = 0
    # Orders seats that finish within the same millisecond (ties are listed in the order
    # they finished); time_ms stays in whole milliseconds.
    finished_at_us: int = 0
    resigned: bool = False
    timed_out: bool = False
    score: int = 0
    moves: int = 0  # the engine's count of the player's moves
    won: bool = False
    over: bool = False
    ver: int = 0  # bumped by every write of the game
    n: int = 0  # number of entries in the move list (not a stored field)

    def to_redis(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for name, value in self.__dict__.items():
            if name == "n":
                continue
            out[name] = ("1" if value else "0") if isinstance(value, bool) else str(value)
        return out

    def evolve(self, **changes: Any) -> GameRecord:
        """A copy with some fields changed (dataclasses.replace, without its checks)."""
        new = object.__new__(GameRecord)
        new.__dict__.update(self.__dict__, **changes)
        return new

    def changing_fields(self) -> dict[str, str]:
        """The stored fields that a move, a resignation, an undo or a close may change."""
        return {
            "score": str(self.score),
            "moves": str(self.moves),
            "won": "1" if self.won else "0",
            "over": "1" if self.over else "0",
            "finished": "1" if self.finished else "0",
            "finished_at_ms": str(self.finished_at_ms),
            "finished_at_us": str(self.finished_at_us),
            "resigned": "1" if self.resigned else "0",
            "timed_out": "1" if self.timed_out else "0",
            "ver": str(self.ver),
        }

    def written_fields(self) -> dict[str, str]:
        """The stored fields to write for a move or resignation that led to this record.
        Until a game finishes, a move changes only its score, move count and version: the
        other changing fields are still false or zero."""
        if self.finished:
            return self.changing_fields()
        return {"score": str(self.score), "moves": str(self.moves), "ver": str(self.ver)}

    @classmethod
    def from_redis(cls, raw: dict[Any, Any], n: int) -> GameRecord:
        d = {_s(k): _s(v) for k, v in raw.items()}
        kwargs: dict[str, Any] = {}
        for name, default in _GAME_DEFAULTS.items():
            if name == "n" or name not in d:
                continue
            value = d[name]
            if isinstance(default, bool):
                kwargs[name] = value == "1"
            elif isinstance(default, int):
                kwargs[name] = int(value)
            else:
                kwargs[name] = value
        return cls(n=n, **kwargs)


_GAME_DEFAULTS: dict[str, Any] = {
    "gid": "", "kind": "", "game": "", "seed": 0, "player": "", "name": "", "race": "",
    "date": "", "started_at_ms": 0, "ends_at_ms": 0, "finished": False, "finished_at_ms": 0,
    "finished_at_us": 0, "resigned": False, "timed_out": False, "score": 0, "moves": 0,
    "won": False, "over": False, "ver": 0, "n": 0,
}  # fmt: skip


@dataclass
class RaceRecord:
    """A race as stored: settings, status, times, seats and (once done) its result."""

    code: str
    game: str
    seed: int
    host: str
    max_players: int
    time_limit_s: int  # 0: no limit
    status: RaceStatus = RaceStatus.LOBBY
    created_ms: int = 0
    starts_at_ms: int = 0
    ends_at_ms: int = 0  # 0: no limit
    ver: int = 0  # bumped by every change of the race itself (seats, status)
    seats: list[p.Seat] = field(default_factory=list)
    result_json: str = ""  # the result as stored when the race closed (JSON); "" until done
    rematch: str = ""  # once done: the code of its rematch, decided once ("" until asked)
    # Whether it may be watched (Create.spectators). Races stored before spectators existed
    # have no such field: they may be watched, as every race by default.
    spectators: bool = True

    def to_redis(self) -> dict[str, str]:
        out = {
            "code": self.code, "game": self.game, "seed": str(self.seed), "host": self.host,
            "max_players": str(self.max_players), "time_limit_s": str(self.time_limit_s),
            "status": str(self.status), "created_ms": str(self.created_ms),
            "starts_at_ms": str(self.starts_at_ms), "ends_at_ms": str(self.ends_at_ms),
            "ver": str(self.ver), "spectators": "1" if self.spectators else "0",
        }  # fmt: skip
        if self.result_json:
            out["result"] = self.result_json
        if self.rematch:
            out["rematch"] = self.rematch
        return out

    @classmethod
    def from_redis(cls, raw: dict[Any, Any], seats: list[p.Seat]) -> RaceRecord:
        d = {_s(k): _s(v) for k, v in raw.items()}
        return cls(
            code=d["code"], game=d["game"], seed=int(d["seed"]), host=d["host"],
            max_players=int(d["max_players"]), time_limit_s=int(d["time_limit_s"]),
            status=RaceStatus(d["status"]), created_ms=int(d.get("created_ms", 0)),
            starts_at_ms=int(d.get("starts_at_ms", 0)), ends_at_ms=int(d.get("ends_at_ms", 0)),
            ver=int(d.get("ver", 0)), seats=seats, result_json=d.get("result", ""),
            rematch=d.get("rematch", ""),
            spectators=d.get("spectators", "1") != "0",
        )  # fmt: skip

    def players(self) -> list[str]:
        return [s.player for s in self.seats]

    def stored_result(self) -> p.Result | None:
        """The result every seat was sent when the race closed (None while it has not)."""
        if self.status != RaceStatus.DONE or not self.result_json:
            return None
        return msgspec.json.decode(self.result_json, type=p.Result)


def seat_entry(seat: p.Seat) -> str:
    """A seat as an entry of the race's seats list. Names are printable: never a tab."""
    return f"{seat.player}\t{seat.name}"


def seat_from_entry(entry: str) -> p.Seat:
    player, _, name = entry.partition("\t")
    return p.Seat(player=player, name=name)


def _s(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
