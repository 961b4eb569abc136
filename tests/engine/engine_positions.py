"""Building positions for rule tests: piles as space-separated card names."""

from __future__ import annotations

import engine
from engine.game import Game


def position(game_id: str, *, moves: int = 0, **piles_and_counters: str | int) -> Game:
    """A game of ``game_id`` in a hand-made position.

    String keyword arguments are piles (``t0="KS QS"``, bottom card first); int ones are
    counters such as Doublets' ``redeals_left``. Piles left out are empty.
    """
    piles = {k: v.split() for k, v in piles_and_counters.items() if isinstance(v, str)}
    counters = {k: v for k, v in piles_and_counters.items() if isinstance(v, int)}
    return engine.game_class(game_id).from_piles(piles, moves=moves, **counters)


def shown(game: Game) -> dict[str, str]:
    """The game's non-empty piles as space-separated names, for compact comparisons."""
    return {code: " ".join(cards) for code, cards in game.piles.items() if cards}


def refused(game: Game, move: object, kind: type[engine.MoveError] = engine.IllegalMove) -> str:
    """Play a move that must be refused with ``kind`` (IllegalMove unless told: a move the
    rules forbid); check that nothing changed; return the reason."""
    before = game.copy()
    view = game.view()
    try:
        game.play(move)
    except engine.MoveError as error:
        assert type(error) is kind, f"{move!r} raised {type(error).__name__}: {error}"
        assert game == before
        assert game.view() == view
        return str(error)
    raise AssertionError(f"{move!r} was accepted")
