"""Card names (RULES.md notation, e.g. `TD`) to the small ints the solvers use, read off
the engine's own card tables so that the solvers never restate the deck."""

from __future__ import annotations

from engine.cards import CARD_IDS, SUIT, VALUE


def value(card: str) -> int:
    """A=1 .. K=13."""
    return VALUE[CARD_IDS[card]]


def suit(card: str) -> int:
    """The suit's index in engine.cards.SUITS: C=0, D=1, H=2, S=3."""
    return SUIT[CARD_IDS[card]]
