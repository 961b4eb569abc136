"""A game and a race as records, and the flat string fields the store keeps them as.

Plain data: the rules that change these records live in server/play/ (game_machine.py,
race_machine.py) and server/daily/; the store (server/store/) puts the fields in Redis
hashes. Every record carries a version `ver`, which every write bumps: a write names the
version it was decided on, and the store applies it only if the stored record is still at
that version. Records stored before versions existed read as version 0, which is what
their first write expects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec

import protocol as p
from server.domain.ids import parse_gid
from server.domain.kinds import GameKind, RaceStatus
from server.domain.outcome import Outcome, Termination

__all__ = ["GameRecord", "RaceRecord", "RaceStatus", "seat_entry", "seat_from_entry"]


@dataclass
class GameRecord:
    """What the store keeps for one game besides its move list (all that a replay needs)."""

    gid: str
    kind: GameKind
    game: str
    seed: int
    player: str
    name: str
    race: str = ""  # race code, for kind "race"
    date: str = ""  # ISO date, for kind "daily"
    started_at_ms: int = 0  # 0: not started yet (a race still in its lobby)
    ends_at_ms: int = 0  # 0: no time limit
    outcome: Outcome | None = None  # None: still in play
    finished_at_ms: int = 0
    # Orders seats that finish within the same millisecond (ties are listed in the order
    # they finished); time_ms stays in whole milliseconds.
    finished_at_us: int = 0
    score: int = 0
    moves: int = 0  # the engine's count of the player's moves
    ver: int = 0  # bumped by every write of the game
    n: int = 0  # number of entries in the move list (not a stored field)

    # The outcome as the flags the wire and the stored hash carry.
    @property
    def finished(self) -> bool:
        return self.outcome is not None

    @property
    def won(self) -> bool:
        return self.outcome is not None and self.outcome.won

    @property
    def over(self) -> bool:
        return self.outcome is not None and self.outcome.over

    @property
    def resigned(self) -> bool:
        return self.outcome is not None and self.outcome.resigned

    @property
    def timed_out(self) -> bool:
        return self.outcome is not None and self.outcome.timed_out

    def to_redis(self) -> dict[str, str]:
        out: dict[str, str] = {
            "gid": self.gid, "kind": str(self.kind), "game": self.game,
            "seed": str(self.seed), "player": self.player, "name": self.name,
            "race": self.race, "date": self.date, "started_at_ms": str(self.started_at_ms),
            "ends_at_ms": str(self.ends_at_ms),
        }  # fmt: skip
        out.update(self.changing_fields())
        return out

    def evolve(self, **changes: object) -> GameRecord:
        """A copy with some fields changed (dataclasses.replace, without its checks)."""
        new = object.__new__(GameRecord)
        new.__dict__.update(self.__dict__, **changes)
        return new

    def changing_fields(self) -> dict[str, str]:
        """The stored fields that a move, a resignation, an undo or a close may change."""
        return {
            "score": str(self.score),
            "moves": str(self.moves),
            **_FLAGS[self.outcome],
            "finished_at_ms": str(self.finished_at_ms),
            "finished_at_us": str(self.finished_at_us),
            "ver": str(self.ver),
        }

    def written_fields(self) -> dict[str, str]:
        """The stored fields to write for a move or resignation that led to this record.
        Until a game finishes, a move changes only its score, move count and version: the
        other changing fields are still false or zero."""
        if self.outcome is not None:  # finished (the property costs the move path a call)
            return self.changing_fields()
        return {"score": str(self.score), "moves": str(self.moves), "ver": str(self.ver)}

    @classmethod
    def from_redis(cls, raw: dict[Any, Any], n: int) -> GameRecord:
        d = {_s(k): _s(v) for k, v in raw.items()}
        outcome = Outcome.from_flags(
            finished=d.get("finished") == "1",
            won=d.get("won") == "1",
            over=d.get("over") == "1",
            resigned=d.get("resigned") == "1",
            timed_out=d.get("timed_out") == "1",
        )
        kwargs: dict[str, Any] = {}
        for name, default in _GAME_DEFAULTS.items():
            if name in d:
                kwargs[name] = int(d[name]) if isinstance(default, int) else d[name]
        return cls(
            gid=d.get("gid", ""),
            kind=_kind(d),
            outcome=outcome,
            n=n,
            **kwargs,
        )


# The stored fields read as they are (besides gid, kind and the outcome's flags).
_GAME_DEFAULTS: dict[str, Any] = {
    "game": "", "seed": 0, "player": "", "name": "", "race": "", "date": "",
    "started_at_ms": 0, "ends_at_ms": 0, "finished_at_ms": 0, "finished_at_us": 0,
    "score": 0, "moves": 0, "ver": 0,
}  # fmt: skip


def _kind(d: dict[str, str]) -> GameKind:
    if d.get("kind"):
        return GameKind(d["kind"])
    parsed = parse_gid(d.get("gid", ""))  # never written without one; read as its id says
    return parsed.kind if parsed is not None else GameKind.PRACTICE


def _flags(outcome: Outcome | None) -> dict[str, str]:
    def bit(value: bool) -> str:
        return "1" if value else "0"

    if outcome is None:
        return {k: "0" for k in ("won", "over", "finished", "resigned", "timed_out")}
    return {
        "won": bit(outcome.won),
        "over": bit(outcome.over),
        "finished": "1",
        "resigned": bit(outcome.resigned),
        "timed_out": bit(outcome.timed_out),
    }


# Every outcome's stored flags, made once: the hot path writes them with every move.
_FLAGS: dict[Outcome | None, dict[str, str]] = {
    o: _flags(o) for o in (None, *(Outcome(t) for t in Termination))
}


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
    # Rated (quick races, and `create` with rated): its close changes its seats' ratings.
    rated: bool = False
    # An asynchronous race (a challenge): running from its creation until `ends_at_ms`,
    # the end of its window of `window_s` seconds; each seat is dealt when it joins.
    # Races stored before them have no such fields: live races.
    async_race: bool = False
    window_s: int = 0

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
        if self.rated:  # absent from unrated races, as before ratings existed
            out["rated"] = "1"
        if self.async_race:
            out["async"] = "1"
            out["window_s"] = str(self.window_s)
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
            spectators=d.get("spectators", "1") != "0", rated=d.get("rated") == "1",
            async_race=d.get("async") == "1", window_s=int(d.get("window_s", 0)),
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
