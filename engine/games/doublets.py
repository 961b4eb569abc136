"""Doublets: double the foundation's value each time, modulo 13, from seven reserves."""

from __future__ import annotations

from types import MappingProxyType
from typing import ClassVar

from engine.cards import KING, NAMES, VALUE, rank_name
from engine.errors import IllegalMove
from engine.game import Game

PILES = ("s", "w", "r0", "r1", "r2", "r3", "r4", "r5", "r6", "f")
S, W, F = 0, 1, 9
RESERVES = range(2, 9)
FOUNDATION_GOAL = 48  # every card but the four Kings
REDEALS = 2

# The value that goes onto a foundation topped by value v: 2v mod 13 (never 0, as v < 13).
NEXT_VALUE: tuple[int, ...] = tuple((2 * v) % 13 for v in range(14))

# The deal puts deal_order[0..5] on r0..r5, [6] on the foundation and [7] on r6,
# then replaces Kings in this order.
DEAL_TARGETS = (2, 3, 4, 5, 6, 7, F, 8)
KING_VISIT_ORDER = (2, 3, 4, 5, 6, 7, F, 8)

TO_FOUNDATION = tuple((i, f"{PILES[i]}-f") for i in (W, *RESERVES))


class Doublets(Game):
    game_id = "doublets"
    title = "Doublets"
    PILES = PILES
    HIDDEN = frozenset({"s"})
    MOVE_CODES = MappingProxyType({code: i for i, code in enumerate(PILES)})
    MAX_SCORE = FOUNDATION_GOAL
    EXTRA_STATE: ClassVar[tuple[tuple[str, int], ...]] = (("redeals_left", REDEALS),)
    MOVE_EXAMPLES = "'deal', 'w-f', 'r3-f'"
    RENDER_ROWS = (("s", "w", "f"), tuple(PILES[i] for i in RESERVES))

    __slots__ = ("redeals_left",)
    redeals_left: int

    @classmethod
    def _layout(cls, order: list[int]) -> list[list[int]]:
        piles: list[list[int]] = [[] for _ in PILES]
        for card, target in zip(order, DEAL_TARGETS, strict=False):
            piles[target].append(card)
        stock = order[:7:-1]  # deal_order[8:], with deal_order[8] on top
        for i in KING_VISIT_ORDER:
            pile = piles[i]
            while VALUE[pile[-1]] == KING:
                stock.insert(0, pile.pop())
                pile.append(stock.pop())
        piles[S] = stock
        return piles

    def _check_position(self) -> None:
        for i in RESERVES:
            if len(self._p[i]) > 1:
                raise ValueError(f"{PILES[i]} holds more than one card")
        if not self._p[F]:
            raise ValueError("the foundation needs its base card")
        if not 0 <= self.redeals_left <= REDEALS:
            raise ValueError(f"redeals_left must be 0..{REDEALS}")

    @property
    def score(self) -> int:
        return len(self._p[F])

    @property
    def won(self) -> bool:
        return len(self._p[F]) == FOUNDATION_GOAL

    def unseen(self) -> bytes:
        # A redeal turns the waste face down again, once the whole stock has been dealt:
        # from then on every card has been seen.
        return super().unseen() if self.redeals_left == REDEALS else b""

    def _deal(self) -> None:
        p = self._p
        if p[S]:
            p[W].append(p[S].pop())
        elif not p[W]:
            raise IllegalMove("the stock and the waste are both empty")
        elif not self.redeals_left:
            raise IllegalMove("the stock is empty and no redeals are left")
        else:
            # Reversed, so that the card first dealt to the waste is again the stock's top.
            p[S] = p[W][::-1]
            p[W] = []
            self.redeals_left -= 1

    def _move(self, src: int, dst: int) -> None:
        if dst != F:
            if dst in RESERVES:
                raise IllegalMove(f"nothing moves into {PILES[dst]}: reserves refill by themselves")
            raise IllegalMove("cards move only onto the foundation, 'f'")
        if src == F:
            raise IllegalMove("cards never leave the foundation")
        if src == S:
            raise IllegalMove("the stock's cards come out with 'deal'")
        p = self._p
        card = self._top(src)
        top = p[F][-1]
        need = NEXT_VALUE[VALUE[top]]
        if VALUE[card] != need:
            why = (
                "Kings never go onto the foundation"
                if VALUE[card] == KING
                else (f"it needs a {rank_name(need)}")
            )
            raise IllegalMove(f"{NAMES[card]} does not go on {NAMES[top]}: {why}")
        p[F].append(p[src].pop())
        if src != W:
            if p[W]:
                p[src].append(p[W].pop())
            elif p[S]:
                p[src].append(p[S].pop())

    def _has_legal_move(self) -> bool:
        # Asked after every move: "deal" is legal nearly always, so ask about it first.
        p = self._p
        if p[S] or (p[W] and self.redeals_left):
            return True
        need = NEXT_VALUE[VALUE[p[F][-1]]]
        return any(p[i] and VALUE[p[i][-1]] == need for i, _ in TO_FOUNDATION)

    def _legal_moves(self) -> list[str]:
        p = self._p
        moves = []
        if p[S] or (p[W] and self.redeals_left):
            moves.append("deal")
        need = NEXT_VALUE[VALUE[p[F][-1]]]
        for i, name in TO_FOUNDATION:
            pile = p[i]
            if pile and VALUE[pile[-1]] == need:
                moves.append(name)
        return moves
