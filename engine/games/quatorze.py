"""Quatorze: remove pairs adding up to 14 from a 5x5 grid, in a shared row or column."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from engine.cards import NAMES, VALUE
from engine.errors import IllegalMove
from engine.game import Game, Move

SIZE = 5
CELLS = SIZE * SIZE
PILES = (*(f"c{i}" for i in range(CELLS)), "s")
S = CELLS
PAIR_SUM = 14


def _same_line(a: int, b: int) -> bool:
    return a // SIZE == b // SIZE or a % SIZE == b % SIZE


# Every unordered pair of distinct cells in one row or column, with its move string.
LINE_PAIRS: tuple[tuple[int, int, str], ...] = tuple(
    (a, b, f"c{a}-c{b}") for a in range(CELLS) for b in range(a + 1, CELLS) if _same_line(a, b)
)


class Quatorze(Game):
    game_id = "quatorze"
    title = "Quatorze"
    PILES = PILES
    HIDDEN = frozenset({"s"})
    MOVE_CODES = MappingProxyType({code: i for i, code in enumerate(PILES)})
    MAX_SCORE = 52
    LEAVE_PLAY = True
    MOVE_EXAMPLES = "'c3-c8' (two cells)"

    @classmethod
    def _render_rows(cls, view: Mapping[str, Any]) -> list[str]:
        cells = [view["piles"][f"c{i}"] for i in range(CELLS)]
        lines = [f"s: {view['hidden']['s']} face down"]
        for row in range(SIZE):
            line = cells[row * SIZE : (row + 1) * SIZE]
            lines.append(
                "  ".join(f"c{row * SIZE + i:<2} {c[0] if c else '--'}" for i, c in enumerate(line))
            )
        return lines

    __slots__ = ()

    @classmethod
    def _canonical(cls, src: int, dst: int) -> Move:
        # c8-c3 is the one alternative spelling, and it means c3-c8.
        return (src, dst) if src <= dst else (dst, src)

    @classmethod
    def _layout(cls, order: list[int]) -> list[list[int]]:
        return [[c] for c in order[:CELLS]] + [order[: CELLS - 1 : -1]]

    def _check_position(self) -> None:
        for i in range(CELLS):
            if len(self._p[i]) > 1:
                raise ValueError(f"{PILES[i]} holds more than one card")

    @property
    def score(self) -> int:
        # 2 per pair removed: every card of the deck that is no longer in play.
        return len(self.DECK) - sum(map(len, self._p))

    @property
    def won(self) -> bool:
        return not any(self._p)

    def _move(self, a: int, b: int) -> None:
        if a == S or b == S:
            raise IllegalMove("the stock's cards come out only to refill the grid")
        if a == b:
            raise IllegalMove(f"{PILES[a]} cannot pair with itself")
        p = self._p
        card_a = self._top(a)
        card_b = self._top(b)
        if not _same_line(a, b):
            raise IllegalMove(f"{PILES[a]} and {PILES[b]} share neither a row nor a column")
        if VALUE[card_a] + VALUE[card_b] != PAIR_SUM:
            raise IllegalMove(f"{NAMES[card_a]} and {NAMES[card_b]} do not add up to 14")
        p[a].pop()
        p[b].pop()
        stock = p[S]
        if stock:
            p[a].append(stock.pop())
            if stock:
                p[b].append(stock.pop())
                return
        self._compact()

    def _compact(self) -> None:
        """Move the remaining cards to the first cells, keeping their reading order."""
        p = self._p
        cards = [pile[0] for pile in p[:CELLS] if pile]
        n = len(cards)
        p[:CELLS] = [[c] for c in cards] + [[] for _ in range(CELLS - n)]

    def _values(self) -> list[int]:
        # An empty cell counts as -99 so that no sum with it reaches 14.
        return [VALUE[pile[0]] if pile else -99 for pile in self._p[:CELLS]]

    def _legal_moves(self) -> list[str]:
        value = self._values()
        return [name for a, b, name in LINE_PAIRS if value[a] + value[b] == PAIR_SUM]

    def _has_legal_move(self) -> bool:
        value = self._values()
        return any(value[a] + value[b] == PAIR_SUM for a, b, _ in LINE_PAIRS)
