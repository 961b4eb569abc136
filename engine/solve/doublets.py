"""Doublets with the stock's order known: search with memo on the position.

Only values matter in Doublets (suits never do), and the seven reserves are
interchangeable, so the key is: foundation top, sorted reserve values, waste,
remaining stock and redeals used. The foundation wants (2 x top) mod 13 next.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from engine.cards import KING
from engine.game import DEAL, Game
from engine.games.doublets import (
    FOUNDATION_GOAL,
    NEXT_VALUE,
    PILES,
    REDEALS,
    RESERVES,
    TO_FOUNDATION,
    F,
    S,
    W,
)
from engine.solve.cards import value
from engine.solve.search import Budget, DepthFirst, Outcome, beam, exact_and_beams

NRES = len(RESERVES)
GOAL = FOUNDATION_GOAL
MAX_REDEALS = REDEALS
RESERVE_CODES = tuple(PILES[i] for i in RESERVES)
_HOME = dict(TO_FOUNDATION)  # pile index -> its move onto the foundation
WASTE_HOME = _HOME[W]
RESERVE_HOME = tuple(_HOME[i] for i in RESERVES)
# Nodes of the first exact turn, then the first beam's width and its growth per turn.
EXACT_SHARE = 20_000
BEAM_START, BEAM_GROWTH = 50, 4


@dataclass(frozen=True, slots=True)
class Position:
    top: int  # value on top of the foundation
    count: int  # cards on the foundation, base included
    res: tuple[int, ...]  # seven values, 0 for an empty reserve
    waste: bytes  # bottom first
    stock: bytes  # top first
    redeals: int  # redeals used


def from_piles(piles: Mapping[str, Sequence[str]], redeals_left: int = MAX_REDEALS) -> Position:
    res = tuple(value(piles[code][-1]) if piles[code] else 0 for code in RESERVE_CODES)
    foundation = piles[PILES[F]]
    return Position(
        top=value(foundation[-1]),
        count=len(foundation),
        res=res,
        waste=bytes(value(c) for c in piles[PILES[W]]),
        stock=bytes(value(c) for c in reversed(piles[PILES[S]])),
        redeals=MAX_REDEALS - redeals_left,
    )


class DoubletsRules:
    def key(self, pos: Position) -> bytes:
        head = bytes((pos.top, pos.redeals, len(pos.waste))) + bytes(sorted(pos.res))
        return head + pos.waste + pos.stock

    def won(self, pos: Position) -> bool:
        return pos.count == GOAL

    def progress(self, pos: Position) -> int:
        return pos.count

    def promise(self, pos: Position) -> int:
        # A King pulled into a reserve blocks it for good: the one resource that runs out.
        return pos.count - 30 * pos.res.count(KING)

    def children(self, pos: Position) -> list[tuple[str, Position]]:
        need = NEXT_VALUE[pos.top]
        kids: list[tuple[str, Position]] = []
        if pos.waste and pos.waste[-1] == need:
            kids.append(
                (
                    WASTE_HOME,
                    Position(need, pos.count + 1, pos.res, pos.waste[:-1], pos.stock, pos.redeals),
                )
            )
        done: set[int] = set()
        for i, v in enumerate(pos.res):
            if v == need and v not in done:
                done.add(v)
                kids.append((RESERVE_HOME[i], self._from_reserve(pos, i, need)))
        if pos.stock:
            kids.append(
                (
                    DEAL,
                    Position(
                        pos.top,
                        pos.count,
                        pos.res,
                        pos.waste + pos.stock[:1],
                        pos.stock[1:],
                        pos.redeals,
                    ),
                )
            )
        elif pos.waste and pos.redeals < MAX_REDEALS:
            kids.append(
                (DEAL, Position(pos.top, pos.count, pos.res, b"", pos.waste, pos.redeals + 1))
            )
        return kids

    @staticmethod
    def _from_reserve(pos: Position, i: int, need: int) -> Position:
        waste, stock = pos.waste, pos.stock
        if waste:
            refill, waste = waste[-1], waste[:-1]
        elif stock:
            refill, stock = stock[0], stock[1:]
        else:
            refill = 0
        res = (*pos.res[:i], refill, *pos.res[i + 1 :])
        return Position(need, pos.count + 1, res, waste, stock, pos.redeals)


def from_game(game: Game) -> Position:
    return from_piles(game.piles, redeals_left=game.redeals_left)  # type: ignore[attr-defined]


def search(root: Position, budget: Budget, avoid: Iterable[Position] = ()) -> Outcome[Position]:
    """Exact search (finds most wins at once) taking turns with beams (find the rest)."""
    rules = DoubletsRules()
    return exact_and_beams(
        DepthFirst(rules, root, avoid),
        lambda budget, width: beam(rules, root, budget, width),
        budget,
        exact_share=EXACT_SHARE,
        width=BEAM_START,
        growth=BEAM_GROWTH,
    )
