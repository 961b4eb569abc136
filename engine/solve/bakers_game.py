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
from dataclasses import dataclass

from engine.game import Game
from engine.solve.cards import suit, value
from engine.solve.search import Budget, Outcome, depth_first

NCOLS = 8
NRES = 4
KING = 13


@dataclass(frozen=True, slots=True)
class Position:
    cols: tuple[bytes, ...]
    res: tuple[int, ...]
    found: tuple[int, ...]


def encode(card: str) -> int:
    return suit(card) * 16 + value(card)


def from_piles(piles: Mapping[str, Sequence[str]]) -> Position:
    """The position held in an engine's `Game.piles` (foundations `fC`..`fS` or `f`)."""
    cols = tuple(bytes(encode(c) for c in piles[f"t{i}"]) for i in range(NCOLS))
    res = tuple(encode(piles[f"r{i}"][-1]) if piles[f"r{i}"] else 0 for i in range(NRES))
    found = [0, 0, 0, 0]
    for code, cards in piles.items():
        if code.startswith("f"):
            for card in cards:
                found[suit(card)] = max(found[suit(card)], value(card))
    return auto_play(Position(cols, res, tuple(found)))


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


def build_length(col: bytes) -> int:
    """How many cards at the top of `col` form a build (same suit, one value apart)."""
    n = 1
    while n < len(col) and col[-n - 1] == col[-n] + 1:
        n += 1
    return n


class BakersRules:
    """Move generation for the shared depth-first search."""

    def key(self, pos: Position) -> bytes:
        return b"\0".join(sorted(pos.cols)) + b"\xff" + bytes(sorted(pos.res))

    def won(self, pos: Position) -> bool:
        return sum(pos.found) == 52

    def progress(self, pos: Position) -> int:
        return sum(pos.found)

    def children(self, pos: Position) -> Iterator[tuple[str, Position]]:
        return self._moves(pos)

    def promise(self, pos: Position) -> int:
        free = pos.res.count(0)
        empty = sum(1 for c in pos.cols if not c)
        # Cards lying above the next card each foundation wants: fewer is better.
        buried = 0
        for col in pos.cols:
            for depth, card in enumerate(reversed(col)):
                if card & 15 == pos.found[card >> 4] + 1:
                    buried += depth
        return 40 * sum(pos.found) + 8 * free + 10 * empty - buried

    def _moves(self, pos: Position) -> Iterator[tuple[str, Position]]:
        cols, res = pos.cols, pos.res
        free = res.count(0)
        limit = free + 1
        empty_col = next((i for i, c in enumerate(cols) if not c), -1)
        first_free = res.index(0) if free else -1
        # Same-suit building: each column top accepts exactly one card, its predecessor.
        wants = {dst[-1] - 1: y for y, dst in enumerate(cols) if dst and dst[-1] & 15 > 1}
        for x, src in enumerate(cols):
            if not src:
                continue
            top = src[-1]
            blen = min(build_length(src), limit)
            for n in range(1, blen + 1):
                y = wants.get(src[-n], -1)
                if y >= 0:
                    yield self._col_move(pos, x, y, n)
            if empty_col >= 0:
                n = KING - (top & 15) + 1
                # Moving a whole King-led column into another empty column changes nothing.
                if n <= blen and n < len(src):
                    yield self._col_move(pos, x, empty_col, n)
            # A column that is one King-led build holds every card on its only possible
            # parent; parking its top in a reserve can never help.
            if first_free >= 0 and not (src[0] & 15 == KING and build_length(src) == len(src)):
                new_res = (*res[:first_free], top, *res[first_free + 1 :])
                new_cols = (*cols[:x], src[:-1], *cols[x + 1 :])
                child = auto_play(Position(new_cols, new_res, pos.found))
                yield f"t{x}-r{first_free}", child
        for r, card in enumerate(res):
            if not card:
                continue
            y = wants.get(card, -1)
            if y < 0 and card & 15 == KING:
                y = empty_col
            if y >= 0:
                new_res = (*res[:r], 0, *res[r + 1 :])
                new_cols = (*cols[:y], cols[y] + bytes((card,)), *cols[y + 1 :])
                yield f"r{r}-t{y}", auto_play(Position(new_cols, new_res, pos.found))

    def _col_move(self, pos: Position, x: int, y: int, n: int) -> tuple[str, Position]:
        cols = list(pos.cols)
        moving = cols[x][-n:]
        cols[x] = cols[x][:-n]
        cols[y] = cols[y] + moving
        return f"t{x}-t{y}", auto_play(Position(tuple(cols), pos.res, pos.found))


def from_game(game: Game) -> Position:
    return from_piles(game.piles)


def search(root: Position, budget: Budget, avoid: Iterable[Position] = ()) -> Outcome[Position]:
    return depth_first(BakersRules(), root, budget, avoid)
