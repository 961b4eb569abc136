"""A race: who may join and start it, when it ends, and how its seats rank (pure)."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field, replace
from typing import Any

import msgspec

import protocol as p
from server.play.game_machine import GameRecord
from server.play.ranking import rank_key, ranked
from server.store.keys import race_gid

LOBBY = "lobby"
RUNNING = "running"
DONE = "done"


def new_code(length: int) -> str:
    return "".join(secrets.choice(p.RACE_ALPHABET) for _ in range(length))


def new_seed() -> int:
    return secrets.randbelow(p.SEED_MAX) + 1


def normalise_code(text: str) -> str | None:
    """The race code a user typed, upper-cased, or None if it cannot be one."""
    code = text.strip().upper()
    if len(code) != 6 or any(c not in p.RACE_ALPHABET for c in code):
        return None
    return code


@dataclass
class Race:
    code: str
    game: str
    seed: int
    host: str
    max_players: int
    time_limit_s: int  # 0: no limit
    status: str = LOBBY
    created_ms: int = 0
    starts_at_ms: int = 0
    ends_at_ms: int = 0  # 0: no limit
    ver: int = 0  # bumped by every change of the race itself (seats, status)
    gver: int = 0  # bumped by every write to one of its games
    seats: list[p.Seat] = field(default_factory=list)
    result_json: str = ""  # the result as the close script stored it (JSON); "" until done

    # -- storage
    def to_redis(self) -> dict[str, str]:
        return {
            "code": self.code, "game": self.game, "seed": str(self.seed), "host": self.host,
            "max_players": str(self.max_players), "time_limit_s": str(self.time_limit_s),
            "status": self.status, "created_ms": str(self.created_ms),
            "starts_at_ms": str(self.starts_at_ms), "ends_at_ms": str(self.ends_at_ms),
            "ver": str(self.ver),
        }  # fmt: skip

    @classmethod
    def from_redis(cls, raw: dict[Any, Any], seats: list[p.Seat]) -> Race:
        d = {_s(k): _s(v) for k, v in raw.items()}
        return cls(
            code=d["code"], game=d["game"], seed=int(d["seed"]), host=d["host"],
            max_players=int(d["max_players"]), time_limit_s=int(d["time_limit_s"]),
            status=d["status"], created_ms=int(d.get("created_ms", 0)),
            starts_at_ms=int(d.get("starts_at_ms", 0)), ends_at_ms=int(d.get("ends_at_ms", 0)),
            ver=int(d.get("ver", 0)), gver=int(d.get("gver", 0)), seats=seats,
            result_json=d.get("result", ""),
        )  # fmt: skip

    # -- questions
    def seated(self, player: str) -> bool:
        return any(s.player == player for s in self.seats)

    def gid(self, player: str) -> str:
        return race_gid(self.code, player)

    def gids(self) -> list[str]:
        return [self.gid(s.player) for s in self.seats]

    def players(self) -> list[str]:
        return [s.player for s in self.seats]

    def join_refusal(self, player: str) -> tuple[str, str] | None:
        """Why `player` may not take a seat (None: they may, or already have one)."""
        if self.seated(player):
            return None
        if self.status != LOBBY:
            return (p.RACE_STARTED, f"race {self.code} has already started")
        if len(self.seats) >= self.max_players:
            return (p.RACE_FULL, f"race {self.code} is full ({self.max_players} players)")
        return None

    def start_refusal(self, player: str) -> tuple[str, str] | None:
        if player != self.host:
            return (p.NOT_HOST, f"only the host may start race {self.code}")
        if self.status != LOBBY:
            return (p.RACE_STARTED, f"race {self.code} has already started")
        return None

    def stored_result(self) -> p.Result | None:
        """The result every seat was sent when the race closed (None while it has not).

        Decoded from what the close stored, never ranked again: the seats' records may
        have expired or changed since, and a repeat must equal the original.
        """
        if self.status != DONE or not self.result_json:
            return None
        return msgspec.json.decode(self.result_json, type=p.Result)

    def deadline_ms(self, untimed_max_s: int) -> int:
        """When the race closes whatever happens."""
        if self.ends_at_ms:
            return self.ends_at_ms
        return self.starts_at_ms + untimed_max_s * 1000

    # -- messages
    def lobby(self) -> p.Lobby:
        return p.Lobby(race=self.code, game=self.game, host=self.host, players=list(self.seats))

    def created(self) -> p.Created:
        return p.Created(
            race=self.code,
            game=self.game,
            max_players=self.max_players,
            time_limit_s=self.time_limit_s or None,
        )

    def start_message(self) -> p.Start:
        return p.Start(
            race=self.code,
            game=self.game,
            starts_at_ms=self.starts_at_ms,
            ends_at_ms=self.ends_at_ms or None,
        )

    def new_game_record(self, seat: p.Seat) -> GameRecord:
        return GameRecord(
            gid=self.gid(seat.player),
            kind="race",
            game=self.game,
            seed=self.seed,
            player=seat.player,
            name=seat.name,
            race=self.code,
        )


def is_complete(games: list[GameRecord]) -> bool:
    return bool(games) and all(g.finished for g in games)


def close_records(games: list[GameRecord], end_ms: int) -> list[GameRecord]:
    """The seats' records as the race closes: unfinished seats stop at `end_ms`."""
    return [
        g if g.finished else replace(g, finished=True, finished_at_ms=end_ms, timed_out=True)
        for g in games
    ]


def result(race: Race, games: list[GameRecord]) -> p.Result:
    """The race's result from its seats' final records (all finished)."""
    seat_index = {s.player: i for i, s in enumerate(race.seats)}

    def time_ms(g: GameRecord) -> int:
        return max(0, g.finished_at_ms - race.starts_at_ms)

    order = ranked(
        games,
        key=lambda g: rank_key(g.score, time_ms(g), g.moves),
        finish_order=lambda g: (
            g.finished_at_ms,
            g.finished_at_us,
            seat_index.get(g.player, 0),
        ),
    )
    standings = [
        p.Standing(
            rank=rank,
            player=g.player,
            name=g.name,
            score=g.score,
            moves=g.moves,
            time_ms=time_ms(g),
            won=g.won,
            resigned=g.resigned,
        )
        for rank, g in order
    ]
    return p.Result(race=race.code, game=race.game, seed=race.seed, standings=standings)


def _s(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
