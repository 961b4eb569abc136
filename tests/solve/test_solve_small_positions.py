"""Every verdict of the Quatorze, Doublets and Hopscotch solvers on small positions,
checked by a brute-force search over the engine itself; won lines replay to a win."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable

import pytest
from solve_positions import doublets_endgame, hopscotch_endgame, quatorze_endgame
from solve_reference import brute_force

from engine.game import Game
from engine.solve import solve_game

WANTED = 6
DOUBLETS_SEEDS = [2, 3, 7, 8, 12, 13, 19, 26]

MAKERS: dict[str, Callable[[random.Random, int], Game]] = {
    "quatorze": lambda rng, n: quatorze_endgame(rng),
    "doublets": lambda rng, n: doublets_endgame(rng, DOUBLETS_SEEDS[n % len(DOUBLETS_SEEDS)]),
    "hopscotch": lambda rng, n: hopscotch_endgame(rng),
}


@pytest.mark.parametrize("game_id", sorted(MAKERS))
def test_verdicts_match_brute_force(game_id: str) -> None:
    # Most random small positions are won, so the solver picks which ones to check (up
    # to WANTED of each verdict); the brute force alone decides whether it was right.
    rng = random.Random(f"small-{game_id}")
    tally: Counter[str] = Counter()
    for n in range(2000):
        game = MAKERS[game_id](rng, n)
        result = solve_game(game, budget_s=5.0)
        if tally[result.verdict] >= WANTED:
            if min(tally["won"], tally["unwinnable"]) >= WANTED:
                break
            continue
        truth = brute_force(game, limit=50_000)
        if truth is None:
            continue
        assert result.verdict == truth, f"position {n}: {game.piles}"
        if result.verdict == "won":
            replayed = game.copy()
            for move in result.moves:
                replayed.play(move)
            assert replayed.won
        tally[truth] += 1
    assert tally["won"] >= 3 and tally["unwinnable"] >= 3, tally
