"""A game in play as a pure state machine: each request in, the decision out.

Nothing here awaits or touches Redis: server/play/moves.py loads a game, asks these
functions, stores what they decide and sends what they return. Time is passed in.
This is the one home of a game's rules on the server: when it may move, how many moves
it may have, its clock and time limit, what a move, a resignation, an undo or a close at
the end of its time does to its record, and which moves store a snapshot of the position.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple, TypedDict

import msgspec

import engine
import protocol as p
from server.config import Config
from server.domain.kinds import GameKind
from server.domain.outcome import RESIGNED, STUCK, TIMED_OUT, WON, Outcome
from server.domain.records import GameRecord
from server.play import snapshots
from server.store.events import SeatSeen


@dataclass(frozen=True)
class GameRules:
    """The settings a game's decisions depend on (server/config.py has their meaning)."""

    max_ranked_moves: int = Config.max_ranked_moves  # races and daily attempts
    max_practice_moves: int = Config.max_moves_per_game
    snapshot_every: int = Config.snapshot_every

    @classmethod
    def of(cls, config: Config) -> GameRules:
        cap = config.max_moves_per_game
        return cls(min(config.max_ranked_moves, cap), cap, config.snapshot_every)

    def max_moves(self, kind: GameKind) -> int:
        """The most moves a game of this kind may have: a practice game the protocol's
        limit, a ranked one far fewer (a winning line is a few hundred moves at most)."""
        return self.max_practice_moves if kind is GameKind.PRACTICE else self.max_ranked_moves


class TimeUp(p.Refused):
    """The game's time limit has passed: refused, and its race is due to close."""

    def __init__(self) -> None:
        super().__init__(p.ILLEGAL_MOVE, "the time limit has passed")


def elapsed_ms(rec: GameRecord, now_ms: int) -> int:
    """The game's clock: from its start to its end (or now), never past its time limit."""
    if not rec.started_at_ms:
        return 0
    end = now_ms if rec.outcome is None else rec.finished_at_ms
    if rec.ends_at_ms:
        end = min(end, rec.ends_at_ms)
    return max(0, end - rec.started_at_ms)


def time_up(rec: GameRecord, now_ms: int) -> bool:
    return bool(rec.ends_at_ms) and now_ms >= rec.ends_at_ms


class Dealt(TypedDict):
    """The record fields of a game just dealt (GameRecord's own names)."""

    started_at_ms: int
    score: int
    moves: int
    outcome: Outcome | None
    finished_at_ms: int
    finished_at_us: int


def dealt_fields(game: engine.Game, now_ms: int) -> Dealt:
    """The record fields of a game dealt at `now_ms`: the deal's own score and move count
    (Doublets starts at 1); a deal that leaves no move is over, and so finished."""
    outcome = Outcome.of_position(bool(game.won), bool(game.over))
    over = outcome is not None
    return {
        "started_at_ms": now_ms,
        "score": int(game.score),
        "moves": int(game.moves),
        "outcome": outcome,
        "finished_at_ms": now_ms if over else 0,
        "finished_at_us": now_ms * 1000 if over else 0,
    }


def timed_out(rec: GameRecord, end_ms: int) -> GameRecord:
    """The record of a game closed as it stands at `end_ms` (its race's or its day's end)."""
    if rec.finished:
        return rec
    return rec.evolve(outcome=TIMED_OUT, finished_at_ms=end_ms, ver=rec.ver + 1)


@dataclass(slots=True)
class LiveGame:
    """A record with its replayed engine game, as a process caches it.

    Only the moves after `base` are kept (`tail`), with the position after the first
    `base` moves (`base_game`, None for the deal; never played on): an undo replays the
    tail from there. `base` moves on at each snapshot (server/play/snapshots.py), so the
    tail stays shorter than `snapshot_every` moves whatever the game's length.
    """

    record: GameRecord
    game: engine.Game
    tail: list[str] = field(default_factory=list)
    base: int = 0
    base_game: engine.Game | None = None

    @classmethod
    def replay(cls, record: GameRecord, move_list: list[str]) -> LiveGame:
        game = engine.replay(record.game, record.seed, move_list)
        return cls(record, game, list(move_list))

    @property
    def n(self) -> int:
        """The number of moves in the game's list."""
        return self.base + len(self.tail)

    def start(self) -> engine.Game:
        """A copy of the position after `base` moves."""
        if self.base_game is None:
            return snapshots.deal(self.record)
        return self.base_game.copy()

    def rebase(self) -> None:
        """The current position is the new base (its snapshot is stored)."""
        self.base, self.base_game, self.tail = self.n, self.game.copy(), []

    def state(self, now_ms: int, re: int | None = None) -> p.State:
        rec = self.record
        outcome = rec.outcome
        return p.State(
            re=re,
            gid=rec.gid,
            kind=rec.kind,
            game=rec.game,
            n=self.base + len(self.tail),
            view=msgspec.Raw(p.encode_value(self.game.view())),
            score=rec.score,
            won=outcome is not None and outcome.won,
            over=outcome is not None and outcome.over,
            finished=outcome is not None,
            elapsed_ms=elapsed_ms(rec, now_ms),
            race=rec.race or None,
            date=rec.date or None,
            seed=rec.seed if rec.kind is GameKind.PRACTICE else None,
        )

    def progress(self, now_ms: int) -> p.Progress:
        return progress(self.record, now_ms)

    def board(self, now_ms: int) -> p.SeatBoard:
        """A race seat's board for its spectators: its player's own public view."""
        rec = self.record
        return p.SeatBoard(
            race=rec.race,
            player=rec.player,
            n=self.n,
            view=msgspec.Raw(p.encode_value(self.game.view())),
            score=rec.score,
            won=rec.won,
            over=rec.over,
            finished=rec.finished,
            elapsed_ms=elapsed_ms(rec, now_ms),
        )


def seat_seen(live: LiveGame, state: p.State) -> SeatSeen:
    """A race seat's board for its race's spectators (server/play/spectator_boards.py):
    its `state` (just made of `live`), and the cards never shown. Read off the state rather
    than worked out again: the move path makes one per move."""
    return SeatSeen(
        live.record.player,
        state.n,
        state.view,
        state.score,
        state.won,
        state.over,
        state.finished,
        state.elapsed_ms,
        live.game.unseen(),
    )


def progress(rec: GameRecord, now_ms: int) -> p.Progress:
    """A race seat's `progress` as its record stands at `now_ms`."""
    outcome = rec.outcome
    return p.Progress(
        race=rec.race,
        player=rec.player,
        name=rec.name,
        score=rec.score,
        moves=rec.moves,
        won=outcome is not None and outcome.won,
        over=outcome is not None and outcome.over,
        finished=outcome is not None,
        elapsed_ms=elapsed_ms(rec, now_ms),
    )


# ---------------------------------------------------------------- decisions


class Retransmission(NamedTuple):
    """The move was applied before: answer with the current state, apply nothing."""


# Decisions are named tuples: one is made per move, and a frozen dataclass costs a
# setattr call per field to build.


class Applied(NamedTuple):
    """The move (or resignation: `move` '') is accepted: `after` is the game after it (the
    game decided on, which the caller owns), its record at the next version (store it, then
    reply); `snapshot` (or '') is the position after it, to store with it."""

    after: LiveGame
    move: str
    snapshot: str = ""

    @property
    def record(self) -> GameRecord:
        return self.after.record


def _after(rec: GameRecord, game: engine.Game, end_ms: int, end_us: int, n: int) -> GameRecord:
    """The record of a game whose position is now `game` (after `n` moves), at the next
    version: a game over has finished at `end_ms` (`end_us`)."""
    # Outcome.of_position, inline: once per move.
    outcome = WON if game.won else STUCK if game.over else None
    over = outcome is not None
    return rec.evolve(
        score=int(game.score),
        moves=int(game.moves),
        outcome=outcome,
        finished_at_ms=end_ms if over else 0,
        finished_at_us=end_us if over else 0,
        ver=rec.ver + 1,
        n=n,
    )


def _check_open(rec: GameRecord, now_ms: int) -> None:
    """Refuses when the game takes neither a move nor a resignation at `now_ms`."""
    if rec.outcome is not None:  # finished
        raise p.Refused(p.ILLEGAL_MOVE, "this game is finished")
    if not rec.started_at_ms or now_ms < rec.started_at_ms:
        raise p.Refused(p.ILLEGAL_MOVE, "the race has not started")
    if time_up(rec, now_ms):
        raise TimeUp()


def decide_move(
    live: LiveGame,
    n: int,
    move: str,
    now_us: int,
    rules: GameRules = GameRules(),
    stored: str | None = None,
) -> Retransmission | Applied:
    """Check a `move {n, m}` against a game the caller owns outright (taken out of the cache,
    LiveGames.take: nobody else holds it while it is decided and written); if the move is
    legal, play it there: `live` becomes the game after it, its record at the next version,
    and is `Applied.after`. Raises Refused (TimeUp when the time limit has passed), leaving
    `live` as it was: the engine checks a move completely before it changes anything.
    `stored` is the stored move `n` when `n` is before the moves `live` keeps (the caller
    reads it). In place rather than on a copy: copying a game and its move list, and freeing
    the old ones, cost the move path more than everything else the machine does.
    """
    count = live.n
    if n < count:
        earlier = live.tail[n - live.base] if n >= live.base else stored
        if earlier == move:
            return Retransmission()
        applied = f"{count} move{'' if count == 1 else 's'} applied"
        raise p.Refused(p.OUT_OF_ORDER, f"move {n} was {earlier!r}; {applied}")
    if n > count:
        applied = f"{count} move{'' if count == 1 else 's'} applied"
        raise p.Refused(p.OUT_OF_ORDER, f"{applied} so far, not {n}")
    rec = live.record
    _check_open(rec, now_us // 1000)
    cap = rules.max_moves(rec.kind)
    if count >= cap:
        raise p.Refused(
            p.ILLEGAL_MOVE, f"a {rec.kind} game takes at most {cap} moves; this one has them"
        )
    game = live.game
    try:
        game.play(move)
    except engine.MoveError as exc:
        raise p.Refused(p.ILLEGAL_MOVE, str(exc) or "illegal move") from None
    live.record = _after(rec, game, now_us // 1000, now_us, count + 1)
    live.tail.append(move)
    if (count + 1) % rules.snapshot_every:
        return Applied(live, move)
    snapshot = snapshots.encode(rec, game, count + 1, move)
    live.rebase()  # the store keeps this position with the move: undos replay from here
    return Applied(live, move, snapshot)


def decide_resign(live: LiveGame, now_us: int) -> Applied:
    """A resignation of a game the caller owns outright (as for decide_move)."""
    rec = live.record
    now_ms = now_us // 1000
    _check_open(rec, now_ms)
    new = rec.evolve(
        outcome=RESIGNED,
        finished_at_ms=now_ms,
        finished_at_us=now_us,
        ver=rec.ver + 1,
    )
    live.record = new
    return Applied(live, "")


def decide_undo(live: LiveGame) -> tuple[LiveGame, int]:
    """A practice game with its last move taken back (also after its end, won or lost; never
    after a resignation): the game as it will be once stored, and the number of moves
    replayed to find it. Raises Refused.

    The position is the tail's replay from the base, so `live` must keep its last move
    (a game loaded with `keep_last`, server/play/cache.py, when its tail is empty)."""
    rec = live.record
    if rec.resigned:
        raise p.Refused(p.ILLEGAL_MOVE, "this game was resigned")
    if not live.n:
        raise p.Refused(p.ILLEGAL_MOVE, "no move to undo")
    assert live.tail, "undo needs the game's last move"
    tail = live.tail[:-1]
    game = live.start()
    for move in tail:
        game.play(move)
    # A game over before the last move ended when it first was.
    new = _after(rec, game, rec.finished_at_ms, rec.finished_at_us, live.n - 1)
    return LiveGame(new, game, tail, live.base, live.base_game), len(tail)
