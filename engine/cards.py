"""Cards as small ints, and the tables that name and measure them.

A card is its index in the canonical deck order of RULES.md (rank-major,
clubs-diamonds-hearts-spades), so ``AC`` is 0, ``AS`` is 3 and ``KS`` is 51.
With that numbering ``card // 4`` is the rank index and ``card % 4`` the suit,
and the card one value lower in the same suit is simply ``card - 4``.
"""

from __future__ import annotations

from collections.abc import Iterable
from types import MappingProxyType

RANKS = "A23456789TJQK"
SUITS = "CDHS"
KING = 13

NAMES: tuple[str, ...] = tuple(rank + suit for rank in RANKS for suit in SUITS)
"""Card int -> two-character name, e.g. ``NAMES[9] == "3D"``."""

CARD_IDS = MappingProxyType({name: card for card, name in enumerate(NAMES)})
"""Two-character name -> card int."""

VALUE: tuple[int, ...] = tuple(card // 4 + 1 for card in range(52))
"""Card int -> value, A=1 .. K=13."""

SUIT: tuple[int, ...] = tuple(card % 4 for card in range(52))
"""Card int -> suit index into SUITS."""

FULL_DECK: tuple[int, ...] = tuple(range(52))


def card(value: int, suit: str) -> int:
    """The card of this value (1..13) and suit letter."""
    return (value - 1) * 4 + SUITS.index(suit)


def parse_cards(names: Iterable[str], where: str) -> list[int]:
    """Card names -> card ints; a ValueError names the bad card and where it was."""
    cards = []
    for name in names:
        try:
            cards.append(CARD_IDS[name])
        except (KeyError, TypeError):
            raise ValueError(f"{where}: {name!r} is not a card") from None
    return cards


def rank_name(value: int) -> str:
    """A value as players say it: 'A', '2' .. '10', 'J', 'Q', 'K'."""
    return "10" if value == 10 else RANKS[value - 1]
