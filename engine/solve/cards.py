"""Card strings (RULES.md notation, e.g. `TD`) to the small ints the solvers use."""

from __future__ import annotations

RANKS = "A23456789TJQK"
SUITS = "CDHS"


def value(card: str) -> int:
    """A=1 .. K=13."""
    return RANKS.index(card[0]) + 1


def suit(card: str) -> int:
    """C=0, D=1, H=2, S=3."""
    return SUITS.index(card[1])
