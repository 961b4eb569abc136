"""Baker's Game solver: its verdicts against Freecell Solver and a brute-force search."""

from __future__ import annotations

import pytest
from solve_reference import brute_force, fc_solve_verdict

import engine
from engine.solve import solve, solve_game

# Deals 1-30, plus a few of fc-solve's winnable ones further on (106 once caught an unsound
# pruning rule: its only wins empty a column by parking a lone King in a reserve).
FC_DEALS = [*range(1, 31), 106, 133, 148, 160, 199]


def test_verdicts_agree_with_fc_solve_and_wins_replay(fc_solve: str) -> None:
    reached = 0
    verdicts = set()
    for seed in FC_DEALS:
        ours = solve("bakers_game", seed, budget_s=3.0)
        if ours.verdict == "gave_up":
            continue
        reached += 1
        verdicts.add(ours.verdict)
        reference = fc_solve_verdict(fc_solve, engine.game_class("bakers_game").dealt_piles(seed))
        assert ours.verdict == reference, f"deal {seed}"
        if ours.verdict == "won":
            assert engine.replay("bakers_game", seed, ours.moves).won, f"deal {seed}"
    assert verdicts == {"won", "unwinnable"}
    assert reached >= len(FC_DEALS) - 3


@pytest.mark.parametrize("seed", [14, 10])
def test_unwinnable_deal_confirmed_by_brute_force(seed: int) -> None:
    # Two deals whose whole reachable space is small enough for an exhaustive search
    # over the engine itself (about 10^5 exact positions).
    ours = solve("bakers_game", seed, budget_s=10.0)
    assert ours.verdict == "unwinnable"
    assert brute_force(engine.new_game("bakers_game", seed), limit=400_000) == "unwinnable"


def test_small_winnable_position_agrees_with_brute_force(fc_solve: str) -> None:
    # Microsoft deal 2's columns with every card below 9 already home.
    cls = engine.game_class("bakers_game")
    dealt = cls.dealt_piles(2)
    piles = {f"f{s}": [r + s for r in "A2345678"] for s in "CDHS"}
    for i in range(8):
        piles[f"t{i}"] = [c for c in dealt[f"t{i}"] if c[0] in "9TJQK"]
    game = cls.from_piles(piles)
    assert brute_force(game) == "won"
    assert fc_solve_verdict(fc_solve, game.piles) == "won"
    result = solve_game(game, budget_s=5.0)
    assert result.verdict == "won"
    replayed = game.copy()
    for move in result.moves:
        replayed.play(move)
    assert replayed.won
