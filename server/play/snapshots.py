"""Snapshots of a game's position every `snapshot_every` moves, so that no replay is long.

A game's move list is its truth; a snapshot is derived from it and only saves time. The
move that makes a game's move count a multiple of `snapshot_every` stores the position
after it in the same write (the group commit's MOVES script, into the game's `:snaps`
sorted set, scored by the move count), and an undo drops the snapshots past the new end of
the list in the same write as well, so a snapshot describes the list as it is. A load
(server/play/cache.py) starts from the nearest snapshot and replays at most
`snapshot_every` moves. Whatever a snapshot holds is checked before it is used (it must
decode, be of this deal and this move count, name the stored move before it, rebuild a
legal position, and lead to the stored score and move count after the moves that
follow); one that fails any check is skipped and costs time only: the load starts from an
older one, or from the deal, and writes the missing ones back.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import msgspec

import engine
from server.domain.records import GameRecord
from server.solver_pool import game_at, position_of

log = logging.getLogger(__name__)

FORMAT = 1


class Snapshot(msgspec.Struct, frozen=True):
    """What a snapshot holds: the position after the first `n` moves of the list, whose
    last is `last`."""

    v: int
    game: str
    seed: int
    n: int
    last: str
    moves: int
    piles: dict[str, list[str]]
    extra: dict[str, int]


class BadSnapshot(ValueError):
    """A snapshot that does not fit the game (the reason says why)."""


_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder(Snapshot)


def encode(record: GameRecord, game: engine.Game, n: int, last: str) -> str:
    """The snapshot of `game`, the position after the `n` moves of `record`'s list."""
    pos = position_of(game)
    snap = Snapshot(
        FORMAT, record.game, record.seed, n, last, pos["moves"], pos["piles"], pos["extra"]
    )
    return _ENCODER.encode(snap).decode()


def restore(text: str, record: GameRecord, n: int, last: str | None) -> engine.Game:
    """The position a stored snapshot (scored `n`) holds, checked against the game's record
    and the stored move `last` before it (None: not read). Raises BadSnapshot."""
    try:
        snap = _DECODER.decode(text)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise BadSnapshot(f"undecodable: {exc}") from None
    if snap.v != FORMAT:
        raise BadSnapshot(f"format {snap.v}")
    if (snap.game, snap.seed) != (record.game, record.seed):
        raise BadSnapshot(f"of {snap.game} deal {snap.seed}")
    if snap.n != n or n <= 0:
        raise BadSnapshot(f"says move {snap.n}, stored as {n}")
    if last is not None and snap.last != last:
        raise BadSnapshot(f"follows {snap.last!r}, the list has {last!r}")
    try:
        position = {"piles": snap.piles, "moves": snap.moves, "extra": snap.extra}
        return game_at(record.game, record.seed, position)
    except (ValueError, TypeError, KeyError) as exc:
        raise BadSnapshot(f"not a position: {exc}") from None


@dataclass
class Replayed:
    """A replay's outcome: the position at its end, the last snapshot point it passed (or
    its start) with the position there, the moves after it, and the snapshots it made."""

    game: engine.Game
    base: int
    base_game: engine.Game
    tail: list[str]
    snapshots: list[tuple[int, str]] = field(default_factory=list)


def replay(
    record: GameRecord,
    start: engine.Game,
    start_n: int,
    moves: list[str],
    every: int,
    *,
    keep_last: bool = False,
    snapshots: bool = False,
) -> Replayed:
    """Play `moves` (list entries start_n, start_n + 1, ...) on a copy of `start`.

    The base moves on at each multiple of `every` it passes, so the tail stays short; with
    `keep_last` not onto the very end, so the tail keeps the last move (for an undo). With
    `snapshots` the snapshot of each multiple passed is made too. A move the engine refuses
    raises engine.MoveError: the start was not the position those moves follow.
    """
    game = start.copy()
    base, base_game, tail_from = start_n, start, 0
    made: list[tuple[int, str]] = []
    end = len(moves)
    for i, move in enumerate(moves, 1):
        game.play(move)
        n = start_n + i
        if n % every:
            continue
        if snapshots:
            made.append((n, encode(record, game, n, move)))
        if not (keep_last and i == end):
            base, base_game, tail_from = n, game.copy(), i
    return Replayed(game, base, base_game, moves[tail_from:], made)


def deal(record: GameRecord) -> engine.Game:
    return engine.new_game(record.game, record.seed)
