"""Hopscotch (Calculation) with the stock's order known: beams, and exact search for
small positions.

A position is the number of cards on each foundation, how many stock cards
have been turned, the waste value (0 for none) and the four reserves as
tuples of values. Suits never matter and the reserves are interchangeable,
so the key sorts them. A full deal's space is far too large to exhaust: a
beam plays the stock card by card and keeps the positions whose reserve
piles unwind best (see `HopscotchRules.promise`), while an exact search with
a small share of the budget settles small positions outright.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from engine.cards import KING, VALUE
from engine.game import DEAL, Game
from engine.games.hopscotch import (
    FOUNDATIONS,
    NEED,
    PILES,
    RESERVES,
    STARTERS,
    TO_FOUNDATION,
    WASTE_TO_RESERVE,
    S,
    W,
)
from engine.solve.cards import value
from engine.solve.search import Budget, DepthFirst, Outcome, exact_and_beams

NFOUND = len(FOUNDATIONS)
NRES = len(RESERVES)
FOUNDATION_CODES = tuple(PILES[i] for i in FOUNDATIONS)
RESERVE_CODES = tuple(PILES[i] for i in RESERVES)
# Move strings by the solver's foundation and reserve numbers, from the engine's.
WASTE_HOME: tuple[str, ...] = TO_FOUNDATION[W]
RESERVE_HOME = tuple(TO_FOUNDATION[r] for r in RESERVES)
ROW = KING + 1  # values 0..13 index the scoring tables
# Weights of the position score that orders the search (tuned on deals 1-100).
W_HOME, W_BLOCKED, W_BREAK, W_USED = 8, 1, 16, 1
# Nodes of the first exact turn (doubling each turn); enough for small positions.
EXACT_SHARE = 500
# The first beam's width, and how much wider each next one is.
BEAM_START, BEAM_GROWTH = 16, 2
_MAX_CACHED = 500_000  # pile costs kept before the cache starts afresh


@dataclass(frozen=True, slots=True)
class Position:
    found: tuple[int, ...]  # cards on f0..f3 (1..13)
    stock: bytes  # the whole stock, top first
    dealt: int
    waste: int  # value, 0 for empty
    res: tuple[bytes, ...]  # bottom first


def _sequence(i: int) -> bytes:
    """The values foundation fi takes, by the engine's rule, from its starting card to its
    King (NEED counts a King as 0)."""
    values = [VALUE[STARTERS[i]]]
    while values[-1] != KING:
        values.append(NEED[i][values[-1]] or KING)
    return bytes(values)


SEQUENCES = tuple(_sequence(i) for i in range(NFOUND))
(FULL,) = {len(sequence) for sequence in SEQUENCES}  # cards on a complete foundation
# WANTED[i][found]: the value foundation fi wants after `found` cards (0: complete).
WANTED = tuple(sequence + b"\0" for sequence in SEQUENCES)


def from_piles(piles: Mapping[str, Sequence[str]]) -> Position:
    # Only a foundation's top card decides what fits, so its height is all the search needs.
    return Position(
        found=tuple(
            SEQUENCES[i].index(value(piles[code][-1])) + 1
            for i, code in enumerate(FOUNDATION_CODES)
        ),
        stock=bytes(value(c) for c in reversed(piles[PILES[S]])),
        dealt=0,
        waste=value(piles[PILES[W]][-1]) if piles[PILES[W]] else 0,
        res=tuple(bytes(value(c) for c in piles[code]) for code in RESERVE_CODES),
    )


def from_game(game: Game) -> Position:
    return from_piles(game.piles)


def wanted(found: int, step: int) -> int:
    """The value the foundation building by `step` wants after `found` cards (0: complete)."""
    return WANTED[step - 1][found]


def _steps_table() -> tuple[tuple[bytes, ...], ...]:
    """STEPS[i][found][card]: cards foundation fi takes before `card` fits (99: never)."""
    table = []
    for i in range(NFOUND):
        rows = []
        for found in range(FULL + 1):
            row = bytearray([99] * ROW)
            for k in range(found, FULL):
                row[WANTED[i][k]] = min(row[WANTED[i][k]], k - found)
            rows.append(bytes(row))
        table.append(tuple(rows))
    return tuple(table)


STEPS = _steps_table()


def urgency(found: tuple[int, ...], card: int) -> int:
    """How soon some foundation wants `card`: 0 means now."""
    return min(STEPS[i][found[i]][card] for i in range(NFOUND))


def home(pos: Position, i: int, j: int | None) -> Position:
    """The waste card (j None) or reserve j's top card onto foundation i."""
    found = (*pos.found[:i], pos.found[i] + 1, *pos.found[i + 1 :])
    if j is None:
        return Position(found, pos.stock, pos.dealt, 0, pos.res)
    res = (*pos.res[:j], pos.res[j][:-1], *pos.res[j + 1 :])
    return Position(found, pos.stock, pos.dealt, pos.waste, res)


class HopscotchRules:
    def __init__(self) -> None:
        # Scoring tables by foundation heights: few distinct ones recur all the time.
        self._cache: dict[tuple[int, ...], tuple[bytes, bytes]] = {}
        # A pile's cost by (foundations, pile): a child differs from its parent in one pile.
        self._pile_costs: dict[tuple[tuple[int, ...], bytes], int] = {}

    def key(self, pos: Position) -> bytes:
        # Within one search the stock is fixed: the count left stands for its contents.
        left = len(pos.stock) - pos.dealt
        return bytes(pos.found) + bytes((left, pos.waste)) + b"\xff".join(sorted(pos.res))

    def won(self, pos: Position) -> bool:
        return pos.dealt == len(pos.stock) and not pos.waste and not any(pos.res)

    def progress(self, pos: Position) -> int:
        return sum(pos.found)

    def children(self, pos: Position) -> list[tuple[str, Position]]:
        wants = [WANTED[i][pos.found[i]] for i in range(NFOUND)]
        kids: list[tuple[str, Position]] = []
        if pos.waste:
            for i in range(NFOUND):
                if wants[i] == pos.waste:
                    kids.append((WASTE_HOME[i], home(pos, i, None)))
        for j, pile in enumerate(pos.res):
            if pile:
                for i in range(NFOUND):
                    if wants[i] == pile[-1]:
                        kids.append((RESERVE_HOME[j][i], home(pos, i, j)))
        if pos.waste:
            seen: set[bytes] = set()
            for j, pile in enumerate(pos.res):
                if pile in seen:
                    continue  # identical reserves give the same position
                seen.add(pile)
                res = (*pos.res[:j], pile + bytes((pos.waste,)), *pos.res[j + 1 :])
                kids.append(
                    (WASTE_TO_RESERVE[j], Position(pos.found, pos.stock, pos.dealt, 0, res))
                )
        elif pos.dealt < len(pos.stock):
            kids.append(
                (
                    DEAL,
                    Position(pos.found, pos.stock, pos.dealt + 1, pos.stock[pos.dealt], pos.res),
                )
            )
        return kids

    def _tables(self, found: tuple[int, ...]) -> tuple[bytes, bytes]:
        """For these foundations: how soon each value 1..13 is wanted (0: now), and
        LEADS[ROW * card + below] == 1 when an unfinished foundation wants `card` and then
        at once `below` (so a pile with `card` on `below` unwinds in one go), or both are
        Kings."""
        tables = self._cache.get(found)
        if tables is None:
            soon = bytes([99] + [urgency(found, v) for v in range(1, KING + 1)])
            leads = bytearray(ROW * ROW)
            for i in range(NFOUND):
                wants = WANTED[i]
                for k in range(found[i], FULL - 1):
                    leads[ROW * wants[k] + wants[k + 1]] = 1
            # Kings go last on every foundation: a pile of Kings blocks nothing.
            leads[ROW * KING + KING] = 1
            tables = self._cache[found] = (soon, bytes(leads))
        return tables

    def promise(self, pos: Position) -> int:
        """Cards home, less every card that covers one wanted sooner than itself, and
        every card that does not lead straight on to the one under it."""
        found = pos.found
        costs = self._pile_costs
        cost = 0
        for pile in pos.res:
            if pile:
                known = costs.get((found, pile))
                if known is None:
                    if len(costs) > _MAX_CACHED:
                        costs.clear()
                    known = costs[(found, pile)] = self._pile_cost(found, pile)
                cost += known
        return W_HOME * sum(found) - cost

    def _pile_cost(self, found: tuple[int, ...], pile: bytes) -> int:
        soon, leads = self._tables(found)
        blocked = breaks = 0
        soonest = 99
        below = 0
        for card in pile:
            u = soon[card]
            if u > soonest:
                blocked += 1
            elif u < soonest:
                soonest = u
            if below and not leads[ROW * card + below]:
                breaks += 1
            below = card
        return W_BLOCKED * blocked + W_BREAK * breaks + W_USED


# A line of moves as a linked list, so that beam entries share their common past.
_Line = tuple[tuple[str, ...], "_Line | None"]


def _unwind(line: _Line | None) -> list[str]:
    parts: list[tuple[str, ...]] = []
    while line is not None:
        parts.append(line[0])
        line = line[1]
    return [move for part in reversed(parts) for move in part]


def _homeward(rules: HopscotchRules, pos: Position) -> list[tuple[tuple[str, ...], Position]]:
    """Every position reachable by reserve-to-foundation moves alone, with the moves."""
    out: list[tuple[tuple[str, ...], Position]] = [((), pos)]
    seen = {rules.key(pos)}
    i = 0
    while i < len(out):
        moves, here = out[i]
        i += 1
        wants = [WANTED[f][here.found[f]] for f in range(NFOUND)]
        for j, pile in enumerate(here.res):
            for f in range(NFOUND):
                if pile and wants[f] == pile[-1]:
                    child = home(here, f, j)
                    k = rules.key(child)
                    if k not in seen:
                        seen.add(k)
                        out.append(((*moves, RESERVE_HOME[j][f]), child))
    return out


def beam_search(root: Position, budget: Budget, width: int) -> Outcome[Position]:
    """Play the stock card by card, keeping the `width` most promising positions.

    Incomplete by design (a position that falls out of the beam is never
    revisited), so it only ever answers "won" or "gave_up".
    """
    rules = HopscotchRules()
    layer: list[tuple[Position, _Line | None]] = [(root, None)]
    nodes = 0
    best, best_line = rules.progress(root), None
    while layer:
        nxt: dict[bytes, tuple[float, Position, _Line]] = {}
        for pos, line in layer:
            for moves, here in _homeward(rules, pos):
                nodes += 1
                if rules.won(here):
                    done = _unwind((moves, line))
                    return Outcome("won", done, done, nodes, rules.progress(here))
                if here.waste:
                    card, dealt, prefix = here.waste, here.dealt, moves
                elif here.dealt < len(here.stock):
                    card, dealt = here.stock[here.dealt], here.dealt + 1
                    prefix = (*moves, DEAL)
                else:
                    continue
                turned = Position(here.found, here.stock, dealt, card, here.res)
                for move, child in rules.children(turned):
                    if move == DEAL or child.waste:
                        continue  # only placements of the turned card
                    k = rules.key(child)
                    if k not in nxt:
                        nxt[k] = (rules.promise(child), child, ((*prefix, move), line))
                if budget.spend():
                    return Outcome("gave_up", [], _unwind(best_line), nodes, best)
        ranked = sorted(nxt.values(), key=lambda t: -t[0])[:width]
        layer = [(child, line) for _, child, line in ranked]
        if layer and rules.progress(layer[0][0]) > best:
            best, best_line = rules.progress(layer[0][0]), layer[0][1]
    return Outcome("gave_up", [], _unwind(best_line), nodes, best)


def search(root: Position, budget: Budget, avoid: Iterable[Position] = ()) -> Outcome[Position]:
    """Exact search (settles small positions) taking turns with beams (find most wins)."""
    return exact_and_beams(
        DepthFirst(HopscotchRules(), root, avoid),
        lambda budget, width: beam_search(root, budget, width),
        budget,
        exact_share=EXACT_SHARE,
        width=BEAM_START,
        growth=BEAM_GROWTH,
    )
