"""Each solver's move generator against the real engine, along random games.

At every position of a random walk: every move a solver generates is legal on
the engine and leads to the position the engine reaches (same canonical key);
every legal engine move leads to a position the solver generates, apart from
the moves a solver leaves out on purpose (documented below).
"""

from __future__ import annotations

import random

import pytest

import engine
from engine.game import Game
from engine.solve import bakers_game, doublets, hopscotch, quatorze

RULES = {
    "bakers_game": (bakers_game, bakers_game.BakersRules()),
    "doublets": (doublets, doublets.DoubletsRules()),
    "hopscotch": (hopscotch, hopscotch.HopscotchRules()),
    "quatorze": (quatorze, quatorze.QuatorzeRules()),
}


def left_out_on_purpose(game: Game, move: str) -> bool:
    """Baker's Game moves the solver never tries: parking the top of a column that is one
    King-led build, and moving such a whole column into an empty one."""
    if game.game_id != "bakers_game" or not move.startswith("t"):
        return False
    col = game.piles[move.split("-")[0]]
    values = ["A23456789TJQK".index(c[0]) + 1 for c in col]
    suits = {c[1] for c in col}
    return values == list(range(13, 13 - len(col), -1)) and len(suits) == 1


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
                if key != here and key not in ours:
                    assert left_out_on_purpose(game, move), f"seed {seed}: {move} missing"
                checked += 1
            game.play(rng.choice(game.legal_moves()))
    assert checked > 200
