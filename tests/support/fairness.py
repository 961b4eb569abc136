"""The tests' own account of what a race's spectators may see, made from the games' whole
histories (every card any view of a seat's game ever showed), not from the server's or
the engine's bookkeeping: a spectator sees a card face up only once every seat still
playing has seen it in its own game; any other card is left out of its pile and counted
face down there (the view's `hidden`)."""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any

import engine


def shown(view: dict[str, Any]) -> set[str]:
    """Every card a view shows face up."""
    return {c for pile in view["piles"].values() for c in pile}


@dataclass
class SeatHistory:
    """One seat's game as the test played it, and every card it has ever shown."""

    game: Any
    seen: set[str] = field(default_factory=set)
    playing: bool = True
    moves: list[str] = field(default_factory=list)

    @classmethod
    def deal(cls, game_id: str, seed: int) -> SeatHistory:
        game = engine.new_game(game_id, seed)
        return cls(game, shown(game.view()))

    def play(self, move: str) -> None:
        self.game.play(move)
        self.moves.append(move)
        self.seen |= shown(self.game.view())
        if self.game.over:
            self.playing = False


def allowed(seats: list[SeatHistory]) -> set[str] | None:
    """The cards every seat still playing has seen (None: no seat plays, nothing hidden)."""
    playing = [s.seen for s in seats if s.playing]
    return set.intersection(*playing) if playing else None


def fair_view(view: dict[str, Any], cards: set[str] | None) -> dict[str, Any]:
    """What a spectator may see of `view` when only `cards` may be shown face up."""
    if cards is None:
        return view
    out = copy.deepcopy(view)
    for code, pile in view["piles"].items():
        keep = [c for c in pile if c in cards]
        out["piles"][code] = keep
        if len(keep) != len(pile):
            out["hidden"][code] = out["hidden"].get(code, 0) + len(pile) - len(keep)
    return out


def is_fair_subset(board: dict[str, Any], own: dict[str, Any]) -> bool:
    """Whether `board` is `own` (a seat's own view) with some face-up cards taken out and
    counted face down in their piles, and nothing else changed."""
    for code, pile in own["piles"].items():
        kept = board["piles"].get(code)
        if kept is None or [c for c in pile if c in kept] != kept:
            return False
        extra = board["hidden"].get(code, 0) - own["hidden"].get(code, 0)
        if extra != len(pile) - len(kept):
            return False
    rest = {k: v for k, v in board.items() if k not in ("piles", "hidden")}
    return rest == {k: v for k, v in own.items() if k not in ("piles", "hidden")}


_SUIT_OF_GLYPH = {"♣": "C", "♦": "D", "♥": "H", "♠": "S"}


def card_names(text: str) -> set[str]:
    """The cards named in a text: as letter codes (`TH`) or as the web pages write them
    (`10♥`)."""
    codes = set(re.findall(r"\b[A2-9TJQK][CDHS]\b", text))
    for rank, suit in re.findall(r"(10|[A2-9JQK])([♣♦♥♠])", text):
        codes.add(("T" if rank == "10" else rank) + _SUIT_OF_GLYPH[suit])
    return codes
