"""How a bot chooses its moves and how long it thinks: the one policy that the server's bot
seats (server/play/bots.py) and the load benchmark's bot clients (bench/server.py) both use.

Pure, like the rest of `engine/`: the caller passes its own `random.Random`.

- "easy" works from the public view alone (what any client sees): a card home when it
  can, otherwise any legal move, and now and then a careless one.
- "medium" and "hard" follow a solver's line (the server computes it from the full deal;
  `planned` is its next move); medium strays from it now and then, hard never does.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from typing import Any

from engine.views import legal_moves_from_view

STRENGTHS = ("easy", "medium", "hard")
DEFAULT_STRENGTH = "medium"

# Think time per move: a log-normal around the median (seconds), with this spread.
THINK_MEDIAN_S = {"easy": 3.0, "medium": 2.0, "hard": 1.2}
THINK_SIGMA = {"easy": 0.5, "medium": 0.4, "hard": 0.3}
# Chance of playing the view policy's move instead of the planned one.
STRAY = {"easy": 1.0, "medium": 0.15, "hard": 0.0}
# Chance that the view policy plays any legal move rather than its best guess.
CARELESS = {"easy": 0.3, "medium": 0.1, "hard": 0.0}


def uses_solver(strength: str) -> bool:
    """Whether bots of this strength follow a solver's line (the server's full truth)."""
    return STRAY[strength] < 1.0


def think_time(strength: str, rng: random.Random, scale: float = 1.0) -> float:
    """Seconds a bot of `strength` takes over its next move (never above 4 medians)."""
    median = THINK_MEDIAN_S[strength]
    drawn = rng.lognormvariate(math.log(median), THINK_SIGMA[strength])
    return min(drawn, 4 * median) * scale


def _goes_home(move: str) -> bool:
    """A move that puts a card on a foundation (Quatorze's pairs always do)."""
    source, _, target = move.partition("-")
    return target.startswith("f") or (source.startswith("c") and target.startswith("c"))


def view_move(view: Mapping[str, Any], rng: random.Random, careless: float = 0.0) -> str | None:
    """A move chosen from the public view: a card home if any (one at random), else any
    move but `deal` if there is one, else `deal`; with chance `careless` any legal move.
    None when no move is left."""
    legal = sorted(legal_moves_from_view(view))
    if not legal:
        return None
    if rng.random() < careless:
        return rng.choice(legal)
    home = [m for m in legal if _goes_home(m)]
    if home:
        return rng.choice(home)
    other = [m for m in legal if m != "deal"]
    return rng.choice(other) if other else legal[0]


def choose_move(
    view: Mapping[str, Any], strength: str, rng: random.Random, planned: str | None = None
) -> str | None:
    """The move a bot of `strength` plays in `view`; `planned` is the next move of the
    solver's line (medium and hard), if any. None when no move is left."""
    if planned is not None and rng.random() >= STRAY[strength]:
        return planned
    return view_move(view, rng, CARELESS[strength])
