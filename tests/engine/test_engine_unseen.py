"""`Game.unseen()`: the cards a game has never shown face up, checked against a game's whole
history (every card any view of it ever showed) under random playouts of every game, long
enough to reach Doublets' redeals. Spectators of a race are shown only cards outside every
still-playing seat's `unseen`, so a card reported seen too early would leak a deal."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine
from engine.cards import CARD_IDS

SEEDS = st.integers(min_value=1, max_value=2**31 - 1)


def shown(view: dict) -> set[int]:
    return {CARD_IDS[c] for pile in view["piles"].values() for c in pile}


def as_set(cards: bytes) -> set[int]:
    assert len(set(cards)) == len(cards), "a card listed twice"
    return set(cards)


@pytest.mark.parametrize("game_id", engine.GAMES)
@settings(max_examples=40, deadline=None)
@given(seed=SEEDS, pick=st.randoms(use_true_random=False))
def test_unseen_is_every_card_never_shown(game_id: str, seed: int, pick: random.Random) -> None:
    game = engine.new_game(game_id, seed)
    every = {CARD_IDS[c] for pile in game.piles.values() for c in pile}
    ever = shown(game.view())
    for _ in range(400):
        assert as_set(game.unseen()) == every - ever, game.view()
        moves = game.legal_moves()
        if not moves:
            break
        # Deal often, so that Doublets turns its whole stock and redeals.
        deals = [m for m in moves if m == "deal"]
        game.play(deals[0] if deals and pick.random() < 0.7 else pick.choice(moves))
        ever |= shown(game.view())
    assert as_set(game.unseen()) == every - ever


def test_doublets_redeals_within_a_playout() -> None:
    """The property above reaches Doublets' redeal (else its override would be untested)."""
    game = engine.new_game("doublets", 5)
    while game.redeals_left == 2:
        assert bool(game.unseen()) == bool(game.piles["s"])
        game.play("deal" if "deal" in game.legal_moves() else game.legal_moves()[0])
    assert game.unseen() == b"" and game.piles["s"]
