"""Quatorze with the stock's order known: search over the choice of pairs.

A position is the 25 cell values (0 for an empty cell) and how many stock
cards have been dealt. Suits never matter in Quatorze, so positions that
differ only in suits share a key.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from engine.game import Game
from engine.games.quatorze import CELLS, LINE_PAIRS, PAIR_SUM, PILES, Quatorze, S
from engine.solve.cards import value
from engine.solve.search import Budget, Outcome, depth_first

TOTAL = len(Quatorze.DECK)
CELL_CODES = PILES[:CELLS]
STOCK_CODE = PILES[S]
# Every pair of cells (a < b) sharing a row or a column, in the engine's order.
PAIRS: tuple[tuple[int, int], ...] = tuple((a, b) for a, b, _ in LINE_PAIRS)


@dataclass(frozen=True, slots=True)
class Position:
    grid: bytes  # 25 values, 0 for empty
    stock: bytes  # the whole stock, top first
    dealt: int  # stock cards already dealt
    removed: int  # cards removed so far


def from_piles(piles: Mapping[str, Sequence[str]]) -> Position:
    grid = bytes(value(piles[code][-1]) if piles[code] else 0 for code in CELL_CODES)
    stock = bytes(value(c) for c in reversed(piles[STOCK_CODE]))
    on_table = sum(1 for v in grid if v) + len(stock)
    return Position(grid, stock, 0, TOTAL - on_table)


def remove_pair(pos: Position, a: int, b: int) -> Position:
    """Remove cells a < b, refill from the stock, compact once the stock is out."""
    grid = bytearray(pos.grid)
    grid[a] = grid[b] = 0
    dealt = pos.dealt
    for cell in (a, b):
        if dealt < len(pos.stock):
            grid[cell] = pos.stock[dealt]
            dealt += 1
    if 0 in grid[: CELLS - grid.count(0)]:
        cards = bytes(v for v in grid if v)
        grid = bytearray(cards + bytes(CELLS - len(cards)))
    return Position(bytes(grid), pos.stock, dealt, pos.removed + 2)


class QuatorzeRules:
    def key(self, pos: Position) -> bytes:
        # Within one search the stock is fixed, so the count left stands for its contents.
        return pos.grid + bytes((len(pos.stock) - pos.dealt,))

    def won(self, pos: Position) -> bool:
        return pos.dealt == len(pos.stock) and not any(pos.grid)

    def progress(self, pos: Position) -> int:
        return pos.removed

    def children(self, pos: Position) -> list[tuple[str, Position]]:
        grid = pos.grid
        return [
            (name, remove_pair(pos, a, b))
            for a, b, name in LINE_PAIRS
            if grid[a] and grid[a] + grid[b] == PAIR_SUM
        ]

    def promise(self, pos: Position) -> int:
        # Positions with more pairs on offer tend to go further.
        grid = pos.grid
        return sum(1 for a, b in PAIRS if grid[a] and grid[a] + grid[b] == PAIR_SUM)


def from_game(game: Game) -> Position:
    return from_piles(game.piles)


def search(root: Position, budget: Budget, avoid: Iterable[Position] = ()) -> Outcome[Position]:
    return depth_first(QuatorzeRules(), root, budget, avoid)
