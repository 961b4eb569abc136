"""Hopscotch: four foundations counting by ones, twos, threes and fours, fed from four reserves."""

from __future__ import annotations

from types import MappingProxyType

from engine.cards import FULL_DECK, KING, NAMES, VALUE, card, rank_name
from engine.errors import IllegalMove
from engine.game import Game

PILES = ("s", "w", "f0", "f1", "f2", "f3", "r0", "r1", "r2", "r3")
S, W = 0, 1
FOUNDATIONS = range(2, 6)  # foundation fi is pile 2 + i and counts by i + 1
RESERVES = range(6, 10)
STARTERS = tuple(card(v, "C") for v in (1, 2, 3, 4))  # AC 2C 3C 4C begin f0..f3
CARDS_IN_PLAY = 48

# NEED[i][v]: the value (mod 13, King = 0) that goes onto foundation fi topped by value v.
NEED: tuple[tuple[int, ...], ...] = tuple(
    tuple((v + i + 1) % 13 for v in range(KING + 1)) for i in range(4)
)
WASTE_TO_RESERVE = tuple(f"w-{PILES[r]}" for r in RESERVES)
TO_FOUNDATION: tuple[tuple[str, ...], ...] = tuple(
    tuple(f"{PILES[src]}-{PILES[f]}" for f in FOUNDATIONS) for src in range(len(PILES))
)


class Hopscotch(Game):
    game_id = "hopscotch"
    title = "Hopscotch"
    PILES = PILES
    HIDDEN = frozenset({"s"})
    MOVE_CODES = MappingProxyType({code: i for i, code in enumerate(PILES)})
    DECK = tuple(c for c in FULL_DECK if c not in STARTERS)
    CARDS = frozenset(FULL_DECK)
    MAX_SCORE = CARDS_IN_PLAY
    MOVE_EXAMPLES = "'deal', 'w-f2', 'w-r0', 'r3-f1'"
    RENDER_ROWS = (("s", "w"), PILES[2:6], *((PILES[i],) for i in RESERVES))

    __slots__ = ()

    @classmethod
    def _layout(cls, order: list[int]) -> list[list[int]]:
        piles: list[list[int]] = [[] for _ in PILES]
        piles[S] = order[::-1]  # deal_order[0] on top
        for i, starter in enumerate(STARTERS):
            piles[FOUNDATIONS[i]] = [starter]
        return piles

    def _check_position(self) -> None:
        if len(self._p[W]) > 1:
            raise ValueError("the waste holds at most one card")
        for f in FOUNDATIONS:
            if not self._p[f]:
                raise ValueError(f"{PILES[f]} needs its starting card")

    @property
    def score(self) -> int:
        p = self._p
        return len(p[2]) + len(p[3]) + len(p[4]) + len(p[5]) - 4

    @property
    def won(self) -> bool:
        p = self._p
        return not (p[0] or p[1] or p[6] or p[7] or p[8] or p[9])

    def _deal(self) -> None:
        p = self._p
        if p[W]:
            raise IllegalMove(f"the waste is not empty: play {NAMES[p[W][-1]]} first")
        if not p[S]:
            raise IllegalMove("the stock is empty")
        p[W].append(p[S].pop())

    def _move(self, src: int, dst: int) -> None:
        if src in FOUNDATIONS:
            raise IllegalMove("cards never leave the foundations")
        if src == S:
            raise IllegalMove("the stock's cards come out with 'deal'")
        if dst in (S, W):
            raise IllegalMove(f"nothing moves onto {'the stock' if dst == S else 'the waste'}")
        p = self._p
        moving = self._top(src)
        if dst in RESERVES:
            if src != W:
                raise IllegalMove("reserve cards go only to the foundations")
            p[dst].append(p[W].pop())
            return
        foundation = p[dst]
        top = VALUE[foundation[-1]]
        if top == KING:
            raise IllegalMove(f"{PILES[dst]} is complete")
        need = NEED[dst - 2][top]
        if VALUE[moving] % 13 != need:
            raise IllegalMove(
                f"{NAMES[moving]} does not go on {NAMES[foundation[-1]]}: "
                f"{PILES[dst]} counts by {dst - 1} and needs a {rank_name(need or KING)}"
            )
        foundation.append(p[src].pop())

    def _legal_moves(self) -> list[str]:
        p = self._p
        moves: list[str] = []
        # Value (mod 13) each foundation takes next; -1 for a completed one.
        needs = []
        for f in FOUNDATIONS:
            top = VALUE[p[f][-1]]
            needs.append(-1 if top == KING else NEED[f - 2][top])
        waste = p[W]
        if waste:
            value = VALUE[waste[-1]] % 13
            names = TO_FOUNDATION[W]
            moves.extend(names[i] for i in range(4) if needs[i] == value)
            moves.extend(WASTE_TO_RESERVE)
        elif p[S]:
            moves.append("deal")
        for r in RESERVES:
            pile = p[r]
            if pile:
                value = VALUE[pile[-1]] % 13
                names = TO_FOUNDATION[r]
                moves.extend(names[i] for i in range(4) if needs[i] == value)
        return moves
