"""Baker's Game: exact search over a compact position.

A card is `suit * 16 + value` (value 1..13), so a card sits on another of the
same suit one value higher exactly when `lower + 1 == upper`. Columns are
`bytes` (bottom first), reserves a tuple of four ints (0 for empty), and the
foundations four values (0 for empty). Every child has had auto-play applied,
exactly as the engine does, so the move strings replay move for move.

Canonical key: the sorted columns plus the sorted reserves. Column order and
reserve order never matter to the future; the foundations follow from the
cards still in play.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import NamedTuple

from engine.cards import KING
from engine.game import Game
from engine.games.bakers_game import COLUMNS, DECK_SIZE, FOUNDATIONS, MOVE_NAME, PILES, RESERVES
from engine.solve.cards import suit, value
from engine.solve.search import Budget, Outcome, depth_first

NCOLS = len(COLUMNS)
NRES = len(RESERVES)
COLUMN_CODES = tuple(PILES[i] for i in COLUMNS)
RESERVE_CODES = tuple(PILES[i] for i in RESERVES)
FOUNDATION_CODES = tuple(PILES[i] for i in FOUNDATIONS)  # by suit, as engine.cards.SUITS
# Move strings by the solver's column and reserve numbers, made once from the engine's.
COL_TO_COL = tuple(tuple(MOVE_NAME[x][y] for y in COLUMNS) for x in COLUMNS)
COL_TO_RES = tuple(tuple(MOVE_NAME[x][r] for r in RESERVES) for x in COLUMNS)
RES_TO_COL = tuple(tuple(MOVE_NAME[r][y] for y in COLUMNS) for r in RESERVES)
# Weight of each card lying on top of the next card a foundation wants, against 40 per
# card home. Picked on deals 1-400 by positions searched before a win (8: 390,000 in all;
# 1: 475,000; 15: 385,000 but worse on deals 201-400 than on 1-200).
W_BURIED = 8


class Position(NamedTuple):
    """Columns (bytes, bottom first), reserves (0: empty), foundation heights by suit."""

    cols: tuple[bytes, ...]
    res: tuple[int, ...]
    found: tuple[int, ...]


def encode(card: str) -> int:
    return suit(card) * 16 + value(card)


def from_piles(piles: Mapping[str, Sequence[str]]) -> Position:
    """The position held in an engine's `Game.piles`."""
    cols = tuple(bytes(encode(c) for c in piles[code]) for code in COLUMN_CODES)
    res = tuple(encode(piles[code][-1]) if piles[code] else 0 for code in RESERVE_CODES)
    # A foundation runs from its Ace upwards: its top card's value is its height.
    found = tuple(value(piles[code][-1]) if piles[code] else 0 for code in FOUNDATION_CODES)
    return auto_play(Position(cols, res, found))


def auto_play(pos: Position) -> Position:
    """Send every column top and reserve card that fits to its foundation, repeatedly."""
    cols, res, found = list(pos.cols), list(pos.res), list(pos.found)
    moved = True
    changed = False
    while moved:
        moved = False
        for i, col in enumerate(cols):
            while col and col[-1] & 15 == found[col[-1] >> 4] + 1:
                found[col[-1] >> 4] += 1
                col = col[:-1]
                moved = True
            cols[i] = col
        for i, card in enumerate(res):
            if card and card & 15 == found[card >> 4] + 1:
                found[card >> 4] += 1
                res[i] = 0
                moved = True
        changed |= moved
    if not changed:
        return pos
    return Position(tuple(cols), tuple(res), tuple(found))


def settle(pos: Position, uncovered: bytes) -> Position:
    """Auto-play after a move from a settled position that uncovered `uncovered`'s top:
    only that card can have become playable, so nothing else needs looking at."""
    if uncovered and uncovered[-1] & 15 == pos.found[uncovered[-1] >> 4] + 1:
        return auto_play(pos)
    return pos


def build_length(col: bytes) -> int:
    """How many cards at the top of `col` form a build (same suit, one value apart)."""
    n = 1
    while n < len(col) and col[-n - 1] == col[-n] + 1:
        n += 1
    return n


class BakersRules:
    """Move generation for the shared depth-first search."""

    def __init__(self) -> None:
        # Build length by column: the same columns recur across many positions.
        self._builds: dict[bytes, int] = {}
        # Cards above the wanted ones, by (column, wanted cards): columns recur too.
        self._buried: dict[tuple[bytes, bytes], int] = {}

    def key(self, pos: Position) -> bytes:
        return b"\0".join(sorted(pos.cols)) + b"\xff" + bytes(sorted(pos.res))

    def won(self, pos: Position) -> bool:
        return sum(pos.found) == DECK_SIZE

    def progress(self, pos: Position) -> int:
        return sum(pos.found)

    def children(self, pos: Position) -> Iterator[tuple[str, Position]]:
        return self._moves(pos)

    def promise(self, pos: Position) -> int:
        # More cards home, room to move, and few cards on top of the next card each
        # foundation wants.
        wanted = bytes(s * 16 + v + 1 for s, v in enumerate(pos.found) if v < KING)
        cache = self._buried
        buried = 0
        for col in pos.cols:
            depth = cache.get((col, wanted))
            if depth is None:
                depth = 0
                for card in wanted:
                    at = col.find(card)
                    if at >= 0:
                        depth += len(col) - 1 - at
                cache[(col, wanted)] = depth
            buried += depth
        empty = pos.cols.count(b"")
        return 40 * sum(pos.found) + 8 * pos.res.count(0) + 10 * empty - W_BURIED * buried

    def _moves(self, pos: Position) -> Iterator[tuple[str, Position]]:
        cols, res, found = pos.cols, pos.res, pos.found
        builds = self._builds
        free = res.count(0)
        limit = free + 1
        empty_col = -1
        # Same-suit building: each column top accepts exactly one card, its predecessor.
        wants = {}
        for y, dst in enumerate(cols):
            if not dst:
                if empty_col < 0:
                    empty_col = y
            elif dst[-1] & 15 > 1:
                wants[dst[-1] - 1] = y
        first_free = res.index(0) if free else -1
        for x, src in enumerate(cols):
            if not src:
                continue
            top = src[-1]
            blen = builds.get(src)
            if blen is None:
                blen = builds[src] = build_length(src)
            if blen > limit:
                blen = limit
            for n in range(1, blen + 1):
                y = wants.get(src[-n], -1)
                if y >= 0:
                    yield self._col_move(pos, x, y, n)
            if empty_col >= 0:
                n = KING - (top & 15) + 1
                # Moving a whole King-led column into another empty column changes nothing.
                if n <= blen and n < len(src):
                    yield self._col_move(pos, x, empty_col, n)
            # Even a column that is one King-led build may park its top: emptying a
            # column that way can be the only road to a win (deal 106).
            if first_free >= 0:
                rest = src[:-1]
                child = Position(
                    (*cols[:x], rest, *cols[x + 1 :]),
                    (*res[:first_free], top, *res[first_free + 1 :]),
                    found,
                )
                if rest and rest[-1] & 15 == found[rest[-1] >> 4] + 1:
                    child = auto_play(child)
                yield COL_TO_RES[x][first_free], child
        for r, card in enumerate(res):
            if not card:
                continue
            y = wants.get(card, -1)
            if y < 0 and card & 15 == KING:
                y = empty_col
            if y >= 0:
                # The position was settled and this move uncovers nothing: no auto-play.
                yield (
                    RES_TO_COL[r][y],
                    Position(
                        (*cols[:y], cols[y] + bytes((card,)), *cols[y + 1 :]),
                        (*res[:r], 0, *res[r + 1 :]),
                        found,
                    ),
                )

    def _col_move(self, pos: Position, x: int, y: int, n: int) -> tuple[str, Position]:
        cols = list(pos.cols)
        moving = cols[x][-n:]
        cols[x] = cols[x][:-n]
        cols[y] = cols[y] + moving
        return COL_TO_COL[x][y], settle(Position(tuple(cols), pos.res, pos.found), cols[x])


def from_game(game: Game) -> Position:
    return from_piles(game.piles)


def search(root: Position, budget: Budget, avoid: Iterable[Position] = ()) -> Outcome[Position]:
    return depth_first(BakersRules(), root, budget, avoid)
