"""A game in play: its stored record and the pure decision on each request.

Nothing here awaits or touches Redis: the handlers load a record, ask these
functions what to do, store what they say, and send what they return.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

import msgspec

import engine
from server import protocol as p


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
    # Orders seats that finish within the same millisecond (PROTOCOL.md lists ties in the
    # order they finished); time_ms stays in whole milliseconds.
    finished_at_us: int = 0
    resigned: bool = False
    timed_out: bool = False
    score: int = 0
    moves: int = 0  # the engine's count of the player's moves
    won: bool = False
    over: bool = False
    n: int = 0  # number of entries in the move list

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
        """The stored fields that a move or a resignation may change."""
        return {
            "score": str(self.score),
            "moves": str(self.moves),
            "won": "1" if self.won else "0",
            "over": "1" if self.over else "0",
            "finished": "1" if self.finished else "0",
            "finished_at_ms": str(self.finished_at_ms),
            "finished_at_us": str(self.finished_at_us),
            "resigned": "1" if self.resigned else "0",
        }

    def written_fields(self) -> dict[str, str]:
        """The stored fields to write for a move or resignation that led to this record.
        Until a game finishes, a move changes only its score and move count: the other
        changing fields are still false or zero."""
        if self.finished:
            return self.changing_fields()
        return {"score": str(self.score), "moves": str(self.moves)}

    @classmethod
    def from_redis(cls, raw: dict[Any, Any], n: int) -> GameRecord:
        d = {_s(k): _s(v) for k, v in raw.items()}
        kwargs: dict[str, Any] = {}
        for name, default in _DEFAULTS.items():
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

    def elapsed_ms(self, now_ms: int) -> int:
        if not self.started_at_ms:
            return 0
        end = self.finished_at_ms if self.finished else now_ms
        if self.ends_at_ms:
            end = min(end, self.ends_at_ms)
        return max(0, end - self.started_at_ms)

    def time_up(self, now_ms: int) -> bool:
        return bool(self.ends_at_ms) and now_ms >= self.ends_at_ms


_DEFAULTS: dict[str, Any] = {
    "gid": "", "kind": "", "game": "", "seed": 0, "player": "", "name": "", "race": "",
    "date": "", "started_at_ms": 0, "ends_at_ms": 0, "finished": False, "finished_at_ms": 0,
    "finished_at_us": 0, "resigned": False, "timed_out": False, "score": 0, "moves": 0,
    "won": False, "over": False, "n": 0,
}  # fmt: skip


def _s(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def dealt_fields(game: Any, now_ms: int) -> dict[str, Any]:
    """The record fields of a game dealt at `now_ms`: the deal's own score and move count
    (Doublets starts at 1); a deal that leaves no move is over, and so finished."""
    over = bool(game.over)
    return {
        "started_at_ms": now_ms,
        "score": int(game.score),
        "moves": int(game.moves),
        "won": bool(game.won),
        "over": over,
        "finished": over,
        "finished_at_ms": now_ms if over else 0,
        "finished_at_us": now_ms * 1000 if over else 0,
    }


@dataclass
class LiveGame:
    """A record with its replayed engine game and move list, as a process caches it."""

    record: GameRecord
    game: Any  # engine.Game
    move_list: list[str] = field(default_factory=list)

    @classmethod
    def replay(cls, record: GameRecord, move_list: list[str]) -> LiveGame:
        game = engine.replay(record.game, record.seed, move_list)
        return cls(record, game, list(move_list))

    def state(self, now_ms: int, re: int | None = None) -> p.State:
        rec = self.record
        return p.State(
            re=re,
            gid=rec.gid,
            kind=rec.kind if rec.kind in ("race", "practice") else "daily",
            game=rec.game,
            n=len(self.move_list),
            view=msgspec.Raw(p.encode_value(self.game.view())),
            score=rec.score,
            won=rec.won,
            over=rec.over,
            finished=rec.finished,
            elapsed_ms=rec.elapsed_ms(now_ms),
            race=rec.race or None,
            date=rec.date or None,
            seed=rec.seed if rec.kind == "practice" else None,
        )

    def progress(self, now_ms: int) -> p.Progress:
        rec = self.record
        return p.Progress(
            race=rec.race,
            player=rec.player,
            name=rec.name,
            score=rec.score,
            moves=rec.moves,
            won=rec.won,
            over=rec.over,
            finished=rec.finished,
            elapsed_ms=rec.elapsed_ms(now_ms),
        )


# ---------------------------------------------------------------- decisions


@dataclass(frozen=True)
class Retransmission:
    """The move was applied before: answer with the current state, apply nothing."""


# Decisions are named tuples: one is made per move, and a frozen dataclass costs a
# setattr call per field to build.


class Refusal(NamedTuple):
    code: str
    msg: str
    time_up: bool = False  # the game's time limit has passed: its race should be closed


class Applied(NamedTuple):
    """The move is legal and was played on the game: `record` is the game's record after it
    (store it, then reply)."""

    record: GameRecord
    move: str


def _closed_refusal(rec: GameRecord, now_ms: int) -> Refusal | None:
    """Why the game takes neither a move nor a resignation at `now_ms`; None if it does."""
    if rec.finished:
        return Refusal(p.ILLEGAL_MOVE, "this game is finished")
    if not rec.started_at_ms or now_ms < rec.started_at_ms:
        return Refusal(p.ILLEGAL_MOVE, "the race has not started")
    if rec.time_up(now_ms):
        return Refusal(p.ILLEGAL_MOVE, "the time limit has passed", time_up=True)
    return None


def decide_move(
    live: LiveGame, n: int, move: str, now_us: int
) -> Retransmission | Refusal | Applied:
    """Check a `move {n, m}` against a game; if it is legal, play it on `live.game` itself.

    No copy: the engine checks a move completely before it changes anything, so a refused
    move leaves `live` as it was. An applied one leaves `live.game` ahead of its record and
    move list, and of the store: the caller keeps `live` out of the cache until the store
    has the move.
    """
    now_ms = now_us // 1000
    count = len(live.move_list)
    if n < count:
        if live.move_list[n] == move:
            return Retransmission()
        return Refusal(p.OUT_OF_ORDER, f"move {n} was {live.move_list[n]!r}; {count} moves applied")
    if n > count:
        return Refusal(p.OUT_OF_ORDER, f"{count} moves applied so far, not {n}")
    rec = live.record
    refusal = _closed_refusal(rec, now_ms)
    if refusal is not None:
        return refusal
    game = live.game
    try:
        game.play(move)
    except engine.MoveError as exc:
        return Refusal(p.ILLEGAL_MOVE, str(exc) or "illegal move")
    over = bool(game.over)
    new = rec.evolve(
        score=int(game.score),
        moves=int(game.moves),
        won=bool(game.won),
        over=over,
        finished=over,
        finished_at_ms=now_us // 1000 if over else 0,
        finished_at_us=now_us if over else 0,
        n=count + 1,
    )
    return Applied(new, move)


def decide_resign(live: LiveGame, now_us: int) -> Refusal | GameRecord:
    rec = live.record
    now_ms = now_us // 1000
    refusal = _closed_refusal(rec, now_ms)
    if refusal is not None:
        return refusal
    return rec.evolve(finished=True, resigned=True, finished_at_ms=now_ms, finished_at_us=now_us)
