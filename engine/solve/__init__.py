"""Solvers for the four games (issue 7): winnable dailies, practice hints, bots.

    from engine.solve import solve, solve_game, find_winnable_seed, best_move
    r = solve("bakers_game", 2, budget_s=2.0)
    r.verdict, r.moves, r.nodes, r.seconds    # "won", [...], 1234, 0.05

See docs/solvers.md for how each game is searched and what the verdicts promise.
"""

from engine.solve.api import (
    DEFAULT_BUDGET_S,
    SolveResult,
    best_move,
    find_winnable_seed,
    next_seed,
    solve,
    solve_game,
    suggest,
)

__all__ = [
    "DEFAULT_BUDGET_S",
    "SolveResult",
    "best_move",
    "find_winnable_seed",
    "next_seed",
    "solve",
    "solve_game",
    "suggest",
]
