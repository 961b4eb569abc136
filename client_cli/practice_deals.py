"""Winnable practice deals: `solitaire practice` deals one the solver has won, as the
server does for dailies (docs/solvers.md), unless asked for any deal.

The candidates are a random deal number and the ones after it; the first the solver wins
within the bound is dealt. If none is won within `MAX_CANDIDATES` searches, the first
candidate is dealt, and the player is told it could not be proven winnable.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

import protocol as p
from engine.solve import solve

# Per candidate, as a daily's search (server setting daily_budget_nodes), with a shorter
# time bound since a player waits for it: most deals are won in a small part of this.
BUDGET_NODES = 60_000
BUDGET_S = 1.0
# As many as a daily's search (server setting daily_max_candidates): about a third of Baker's
# Game deals are winnable and the solver proves most others unwinnable in about 0.1 s, so ten
# left one player in seventy without a winnable deal; forty leave about one in thirty million.
MAX_CANDIDATES = 40


@dataclass(frozen=True)
class PickedDeal:
    seed: int
    proven: bool  # the solver won it within the bound
    tried: int  # deals searched


def random_seed() -> int:
    return secrets.randbelow(p.SEED_MAX) + 1


def next_seed(seed: int) -> int:
    return seed % p.SEED_MAX + 1


def winnable_deal(
    game: str,
    first: int,
    budget_nodes: int = BUDGET_NODES,
    budget_s: float = BUDGET_S,
    max_candidates: int = MAX_CANDIDATES,
) -> PickedDeal:
    """The first of `first`, `first + 1`, ... that the solver wins within the bound."""
    seed = first
    for tried in range(1, max_candidates + 1):
        if solve(game, seed, budget_nodes=budget_nodes, budget_s=budget_s).verdict == "won":
            return PickedDeal(seed, True, tried)
        seed = next_seed(seed)
    return PickedDeal(first, False, max_candidates)


def told(picked: PickedDeal) -> str:
    """What the player is told about the deal."""
    if picked.proven:
        return f"Deal {picked.seed} is winnable: the solver won it."
    return f"Deal {picked.seed}: no deal of {picked.tried} tried was proven winnable in time."
