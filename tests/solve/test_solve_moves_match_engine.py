"""Each solver's move generator against the real engine, along random games.

At every position of a random walk: every move a solver generates is legal on
the engine and leads to the position the engine reaches (same canonical key);
every legal engine move leads to a position the solver generates, or to one
with the same key as where it started.
"""

from __future__ import annotations

import random

import pytest

import engine
from engine.solve import bakers_game, doublets, hopscotch, quatorze

RULES = {
    "bakers_game": (bakers_game, bakers_game.BakersRules()),
    "doublets": (doublets, doublets.DoubletsRules()),
    "hopscotch": (hopscotch, hopscotch.HopscotchRules()),
    "quatorze": (quatorze, quatorze.QuatorzeRules()),
}


@pytest.mark.parametrize("game_id", sorted(RULES))
def test_generated_moves_are_the_engines(game_id: str) -> None:
    module, rules = RULES[game_id]
    rng = random.Random(f"walk-{game_id}")
    checked = 0
    for seed in (1, 2, 3, 77, 1000):
        game = engine.new_game(game_id, seed)
        for _ in range(80):
            if game.over:
                break
            pos = module.from_game(game)
            ours = {}
            for move, child in rules.children(pos):
                after = game.copy()
                after.play(move)  # IllegalMove fails the test
                assert rules.key(module.from_game(after)) == rules.key(child), move
                ours[rules.key(child)] = move
            here = rules.key(pos)
            for move in game.legal_moves():
                after = game.copy()
                after.play(move)
                key = rules.key(module.from_game(after))
                # Only moves that change nothing of substance (a lone King between
                # empty columns, a whole King-led column into an empty one) are left out.
                assert key == here or key in ours, f"seed {seed}: {move} missing"
                checked += 1
            game.play(rng.choice(game.legal_moves()))
    assert checked > 200
