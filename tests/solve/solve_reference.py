"""Independent references for the solvers' verdicts.

- fc_solve_verdict: Freecell Solver (`fc-solve -g ko_bakers_game`, exactly our
  Baker's Game rules) on a Baker's Game position.
- brute_force: plain exhaustive search over the real engine (Game.copy() and
  legal_moves), keyed on the exact piles, with none of the solvers' shortcuts.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence

from engine.game import Game

FC_SUIT_ORDER = "HCDS"


def fc_board(piles: Mapping[str, Sequence[str]]) -> str:
    """A Baker's Game position in fc-solve's board format."""
    found = []
    for s in FC_SUIT_ORDER:
        cards = piles[f"f{s}"]
        found.append(f"{s}-{cards[-1][0] if cards else '0'}")
    cells = [piles[f"r{i}"][-1] if piles[f"r{i}"] else "-" for i in range(4)]
    lines = [f"Foundations: {' '.join(found)}", f"Freecells: {' '.join(cells)}"]
    lines += [": " + " ".join(piles[f"t{i}"]) for i in range(8)]
    return "\n".join(lines) + "\n"


def fc_solve_verdict(fc_solve: str, piles: Mapping[str, Sequence[str]]) -> str:
    """'won' or 'unwinnable' as fc-solve (no iteration limit) finds it."""
    done = subprocess.run(
        [fc_solve, "-g", "ko_bakers_game", "-"],
        input=fc_board(piles),
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "FREECELL_SOLVER_QUIET": "1"},
    )
    if "This game is solveable." in done.stdout:
        return "won"
    assert "I could not solve this game." in done.stdout, done.stdout[-500:] + done.stderr
    return "unwinnable"


def _exact_key(game: Game) -> tuple:
    piles = tuple(tuple(cards) for _, cards in sorted(game.piles.items()))
    return piles, getattr(game, "redeals_left", None)


def brute_force(game: Game, limit: int = 200_000) -> str | None:
    """'won' or 'unwinnable' by trying every legal move everywhere; None past `limit` states."""
    seen = {_exact_key(game)}
    stack = [game]
    while stack:
        here = stack.pop()
        if here.won:
            return "won"
        for move in here.legal_moves():
            child = here.copy()
            child.play(move)
            key = _exact_key(child)
            if key not in seen:
                seen.add(key)
                stack.append(child)
        if len(seen) > limit:
            return None
    return "unwinnable"
