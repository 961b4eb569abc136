"""Baker's Game: FreeCell with building down by suit, four free cells, auto-play home."""

from __future__ import annotations

from types import MappingProxyType

from engine.cards import KING, NAMES, SUITS, VALUE
from engine.errors import IllegalMove
from engine.game import Game

RESERVES = range(0, 4)
FOUNDATIONS = range(4, 8)  # foundation of suit s is pile 4 + s
COLUMNS = range(8, 16)
PILES = (
    *(f"r{i}" for i in range(4)),
    *(f"f{s}" for s in SUITS),
    *(f"t{i}" for i in range(8)),
)
FOUNDATION = -1  # the move code "f": the foundation of the moving card's suit
SOURCES = (*RESERVES, *COLUMNS)
DECK_SIZE = 52

# MOVE_NAME[src][dst]: the move string between two piles (tableau and reserves).
MOVE_NAME: tuple[tuple[str, ...], ...] = tuple(
    tuple(f"{PILES[a]}-{PILES[b]}" for b in range(len(PILES))) for a in range(len(PILES))
)


def _next_on_foundation(foundation: list[int], suit: int) -> int:
    """The card that goes onto this suit's foundation next (52 or more when it is full)."""
    return foundation[-1] + 4 if foundation else suit


class BakersGame(Game):
    game_id = "bakers_game"
    title = "Baker's Game"
    PILES = PILES
    MOVE_CODES = MappingProxyType({**{PILES[i]: i for i in (*RESERVES, *COLUMNS)}, "f": FOUNDATION})
    MAX_SCORE = DECK_SIZE
    MOVE_EXAMPLES = "'t3-r0', 'r1-t5', 't0-t4', 't2-f'"
    RENDER_ROWS = (PILES[0:4], PILES[4:8], *((PILES[i],) for i in COLUMNS))

    __slots__ = ()

    @classmethod
    def _layout(cls, order: list[int]) -> list[list[int]]:
        piles: list[list[int]] = [[] for _ in PILES]
        for i, card in enumerate(order):
            piles[COLUMNS[i % 8]].append(card)
        return piles

    def _check_position(self) -> None:
        p = self._p
        for i in RESERVES:
            if len(p[i]) > 1:
                raise ValueError(f"{PILES[i]} holds more than one card")
        for s in range(4):
            if p[4 + s] != list(range(s, 4 * len(p[4 + s]), 4)):
                raise ValueError(f"{PILES[4 + s]} must run from the Ace of its suit upwards")

    @property
    def score(self) -> int:
        p = self._p
        return len(p[4]) + len(p[5]) + len(p[6]) + len(p[7])

    @property
    def won(self) -> bool:
        p = self._p
        return len(p[4]) + len(p[5]) + len(p[6]) + len(p[7]) == DECK_SIZE

    def _settle(self) -> None:
        """Auto-play: send every reserve card and column top that fits home, until none does."""
        p = self._p
        moved = True
        while moved:
            moved = False
            for i in SOURCES:
                pile = p[i]
                if pile:
                    card = pile[-1]
                    home = p[4 + (card & 3)]
                    if card == (home[-1] + 4 if home else card & 3):
                        home.append(pile.pop())
                        moved = True

    def _settle_after(self, src: int) -> None:
        # Before the move no card could go home (the position was settled) and the
        # foundations have not changed, so only the card the move uncovered can start
        # a new round of auto-play.
        pile = self._p[src]
        if pile:
            card = pile[-1]
            home = self._p[4 + (card & 3)]
            if card == (home[-1] + 4 if home else card & 3):
                self._settle()

    def _move(self, src: int, dst: int) -> None:
        if src == FOUNDATION:
            raise IllegalMove("cards never leave the foundations")
        if dst == FOUNDATION:
            self._to_foundation(src)
        elif src in RESERVES:
            if dst in RESERVES:
                raise IllegalMove("there is no move from one reserve to another")
            self._reserve_to_column(src, dst)
        elif dst in RESERVES:
            self._column_to_reserve(src, dst)
        else:
            self._column_to_column(src, dst)

    def _to_foundation(self, src: int) -> None:
        card = self._top(src)
        suit = card & 3
        home = self._p[4 + suit]
        need = _next_on_foundation(home, suit)
        if card != need:
            raise IllegalMove(
                f"{NAMES[card]} does not go on {PILES[4 + suit]}: it needs {NAMES[need]}"
            )
        home.append(self._p[src].pop())
        self._settle()

    def _column_to_reserve(self, src: int, dst: int) -> None:
        self._top(src)
        p = self._p
        if p[dst]:
            raise IllegalMove(f"{PILES[dst]} is not empty")
        p[dst].append(p[src].pop())
        self._settle_after(src)

    def _reserve_to_column(self, src: int, dst: int) -> None:
        card = self._top(src)
        p = self._p
        column = p[dst]
        if column:
            if column[-1] != card + 4:
                raise IllegalMove(f"{NAMES[card]} does not go on {NAMES[column[-1]]}")
        elif VALUE[card] != KING:
            raise IllegalMove(f"only a King goes onto the empty column {PILES[dst]}")
        column.append(p[src].pop())
        self._settle_after(src)

    def _column_to_column(self, src: int, dst: int) -> None:
        if src == dst:
            raise IllegalMove(f"{PILES[src]} cannot move onto itself")
        top = self._top(src)
        p = self._p
        source = p[src]
        target = p[dst]
        if target:
            under = target[-1]
            # The moved build's bottom card must be `under - 4`: same suit, one lower.
            gap = under - top
            n = gap // 4
            if gap <= 0 or gap % 4 or not _is_build(source, n):
                raise IllegalMove(f"{NAMES[top]} does not go on {NAMES[under]}")
        else:
            n = KING - VALUE[top] + 1  # the build down to this suit's King
            if not _is_build(source, n):
                raise IllegalMove(
                    f"only a King, or a build led by a King, goes onto the empty column "
                    f"{PILES[dst]}"
                )
        free = (not p[0]) + (not p[1]) + (not p[2]) + (not p[3])
        if n > free + 1:
            raise IllegalMove(
                f"moving {n} cards needs {n - 1} empty reserves; there "
                + ("is 1" if free == 1 else f"are {free}")
            )
        target.extend(source[-n:])
        del source[-n:]
        self._settle_after(src)

    def _has_legal_move(self) -> bool:
        p = self._p
        # Any card can go to an empty reserve: the common case needs no move generation.
        if not (p[0] and p[1] and p[2] and p[3]) and any(p[x] for x in COLUMNS):
            return True
        return bool(self._legal_moves())

    def _legal_moves(self) -> list[str]:
        p = self._p
        names = MOVE_NAME
        moves = []
        free = [r for r in RESERVES if not p[r]]
        limit = len(free) + 1
        for x in COLUMNS:
            source = p[x]
            if not source:
                continue
            top = source[-1]
            # Length of the build on top of x, capped at what may move at once.
            length = 1
            i = len(source) - 1
            while length < limit and i and source[i - 1] == source[i] + 4:
                length += 1
                i -= 1
            row = names[x]
            for r in free:
                moves.append(row[r])
            to_empty = KING - VALUE[top] + 1 <= length
            for y in COLUMNS:
                target = p[y]
                if target:
                    gap = target[-1] - top
                    if gap > 0 and not gap & 3 and gap >> 2 <= length:
                        moves.append(row[y])
                elif to_empty and y != x:
                    moves.append(row[y])
        for r in RESERVES:
            if p[r]:
                card = p[r][-1]
                row = names[r]
                for y in COLUMNS:
                    target = p[y]
                    if (target[-1] == card + 4) if target else card >= 48:
                        moves.append(row[y])
        return moves


def _is_build(column: list[int], n: int) -> bool:
    """Whether the top n cards of the column form a build (each one lower, same suit)."""
    if n > len(column):
        return False
    return all(column[-k - 1] == column[-k] + 4 for k in range(1, n))
