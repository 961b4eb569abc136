"""How cards look on screen: suit symbols or letters, red/black colours or none.

A `Theme` turns a card code (`TH`, `AS`: rank then suit) into a short styled label,
and spells the card codes in a server's message the way the board shows them.
Styles are prompt_toolkit style strings; with colour off they are empty, so the
same fragments print as plain text for logs, `--ascii` terminals and NO_COLOR.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

SUIT_SYMBOLS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}
RED_SUITS = frozenset("DH")
RANK_LABELS = {"T": "10"}
RANK_VALUES = {r: i + 1 for i, r in enumerate("A23456789TJQK")}
VALUE_LABELS = {v: RANK_LABELS.get(r, r) for r, v in RANK_VALUES.items()}

# A card code standing alone in a sentence ("JD and 2D do not add up to 14"). Pile codes
# are lower case and race codes are six characters, so neither is mistaken for one.
CARD_CODE = re.compile(r"\b[A2-9TJQK][CDHS]\b")

CARD_WIDTH = 5  # "[10♥]": brackets, a rank of up to two characters, the suit


@dataclass(frozen=True)
class Theme:
    """`unicode`: suit symbols (else letters); `colour`: red/black card faces (else no styles)."""

    unicode: bool = True
    colour: bool = True

    @classmethod
    def from_options(cls, ascii_only: bool, no_colour: bool = False) -> Theme:
        """The theme for the command-line flags, honouring NO_COLOR (https://no-color.org)."""
        colour = not no_colour and not os.environ.get("NO_COLOR")
        return cls(unicode=not ascii_only, colour=colour)

    def suit(self, suit: str) -> str:
        return SUIT_SYMBOLS[suit] if self.unicode else suit

    def card_text(self, card: str) -> str:
        """`10♥`, ` 7♣` (three characters); ASCII `10H`, ` 7C`."""
        rank = RANK_LABELS.get(card[0], card[0])
        return f"{rank:>2}{self.suit(card[1])}"

    def spell_cards(self, text: str) -> str:
        """`TD does not go on 9H` as the board spells it: `10♦ does not go on 9♥`."""
        return CARD_CODE.sub(lambda m: self.card_text(m.group()).strip(), text)

    def card_style(self, card: str) -> str:
        if not self.colour:
            return ""
        return "class:card.red" if card[1] in RED_SUITS else "class:card.black"

    def card(self, card: str | None) -> tuple[str, str]:
        """One card in a slot, `[10♥]`; `None` is an empty slot `[   ]`."""
        if card is None:
            return (self.style("class:slot"), "[   ]")
        return (self.card_style(card), f"[{self.card_text(card)}]")

    def back(self) -> tuple[str, str]:
        """A face-down card."""
        return (self.style("class:card.back"), "[###]" if not self.unicode else "[▒▒▒]")

    def style(self, style: str) -> str:
        return style if self.colour else ""


# The style sheet the play screen installs; the class names above refer to it.
STYLE_RULES = {
    "card.red": "bg:#ffffff fg:#c00000 bold",
    "card.black": "bg:#ffffff fg:#000000 bold",
    "card.back": "bg:#2050a0 fg:#7090d0",
    "slot": "fg:#808080",
    "label": "fg:#a0a0a0",
    "hint": "fg:#50b050",
    "title": "bold",
    "me": "bold fg:#50b0ff",
    "error": "fg:#ff5050 bold",
    "status": "fg:#e0c040",
    "won": "fg:#50d050 bold",
}


def rank_label(value: int) -> str:
    """A card value as people say it: A, 2..10, J, Q, K."""
    return VALUE_LABELS[value]


def card_value(card: str) -> int:
    return RANK_VALUES[card[0]]
