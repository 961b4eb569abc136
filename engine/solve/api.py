"""The solvers' public entry points: solve a deal or a game in progress, find a
winnable deal, suggest a move.

Every solver reads the full truth of a game (`Game.piles`, stock order
included), searches its own compact positions and answers with RULES.md
move strings that replay on the engine move for move.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from types import MappingProxyType, ModuleType

from engine.deal import MAX_SEED, MIN_SEED
from engine.game import Game
from engine.registry import game_class, new_game
from engine.solve import bakers_game, doublets, hopscotch, quatorze
from engine.solve.search import Budget, Verdict

# Used when a caller gives neither a node nor a time budget: no search here is
# ever unbounded by accident (Hopscotch's space is far too large to exhaust).
DEFAULT_BUDGET_S = 10.0

# Each module offers from_game(game) -> its position and search(position, budget) -> Outcome.
SOLVERS: MappingProxyType[str, ModuleType] = MappingProxyType(
    {
        "bakers_game": bakers_game,
        "doublets": doublets,
        "hopscotch": hopscotch,
        "quatorze": quatorze,
    }
)


@dataclass(frozen=True)
class SolveResult:
    """A solver's answer.

    verdict: "won" (moves is a winning line), "unwinnable" (every reachable
    position was searched: no line wins) or "gave_up" (the budget ran out).
    best_line leads to the position with the most cards home that the search
    saw (the winning line itself when won); hints fall back on it.
    """

    game_id: str
    verdict: Verdict
    moves: list[str]
    nodes: int
    seconds: float
    best_line: list[str]


def solve(
    game_id: str, seed: int, *, budget_nodes: int | None = None, budget_s: float | None = None
) -> SolveResult:
    """Solve deal `seed` of `game_id` from its start (ValueError for a bad game or seed)."""
    return solve_game(new_game(game_id, seed), budget_nodes=budget_nodes, budget_s=budget_s)


def solve_game(
    game: Game, *, budget_nodes: int | None = None, budget_s: float | None = None
) -> SolveResult:
    """Solve a game from its current position, knowing its hidden cards.

    With neither budget given the search stops after DEFAULT_BUDGET_S seconds.
    Both may be given; the first one spent stops the search. The game is not changed.
    """
    return _solve(game, budget_nodes, budget_s, ())


def _solve(
    game: Game, budget_nodes: int | None, budget_s: float | None, avoid: Sequence[Game]
) -> SolveResult:
    if budget_nodes is None and budget_s is None:
        budget_s = DEFAULT_BUDGET_S
    budget = Budget(nodes=budget_nodes, seconds=budget_s)
    if game.won:
        return SolveResult(game.game_id, "won", [], 0, 0.0, [])
    solver = SOLVERS[game.game_id]
    out = solver.search(solver.from_game(game), budget, [solver.from_game(seen) for seen in avoid])
    return SolveResult(
        game_id=game.game_id,
        verdict=out.verdict,
        moves=list(out.moves),
        nodes=budget.used,
        seconds=budget.elapsed(),
        best_line=list(out.best_line),
    )


def next_seed(seed: int) -> int:
    """The seed after `seed`, wrapping from 2^31-1 back to 1."""
    return seed + 1 if seed < MAX_SEED else MIN_SEED


def find_winnable_seed(
    game_id: str, first_seed: int, *, budget_s_each: float, max_tries: int
) -> tuple[int, list[str]]:
    """The first of first_seed, first_seed+1, ... (wrapping within 1..2^31-1) that the
    solver proves winnable within `budget_s_each` seconds, and its winning line.

    LookupError when none of `max_tries` seeds was proven winnable.
    """
    game_class(game_id)  # ValueError for an unknown game, before any search
    seed = first_seed
    for _ in range(max_tries):
        result = solve(game_id, seed, budget_s=budget_s_each)
        if result.verdict == "won":
            return seed, result.moves
        seed = next_seed(seed)
    raise LookupError(f"no winnable {game_id} deal found in {max_tries} seeds from {first_seed}")


def best_move(game: Game, budget_s: float, *, moves_so_far: Sequence[str] = ()) -> str | None:
    """A hint: the next move of a winning line from here, else the first move of the line
    to the best position the search found, else any legal move; None when none is left.

    `moves_so_far` are the moves that led from the deal to `game` (a practice game
    keeps them for undo). The hint then never leads back to a position the game has
    already been through; in Baker's Game, where moves can be undone by other moves,
    that is what makes following hint after hint end in a win rather than a loop.
    """
    return suggest(game, budget_s, moves_so_far=moves_so_far)[0]


def suggest(
    game: Game,
    budget_s: float,
    *,
    moves_so_far: Sequence[str] = (),
    start: Game | None = None,
) -> tuple[str | None, Verdict]:
    """best_move with the verdict of the search behind it: "won" (the move is on a winning
    line), "unwinnable" (proven lost from here) or "gave_up" (the best line found).

    `moves_so_far` lead from `start` to `game` (default: from the deal); a server that
    keeps only a game's recent moves passes the position they start from."""
    legal = game.legal_moves()
    if not legal:
        return None, "won" if game.won else "unwinnable"
    earlier: list[Game] = []
    past: Game | None = None
    if moves_so_far:
        if start is not None:
            past = start.copy()
        elif game.seed is not None:
            past = new_game(game.game_id, game.seed)
    if past is not None:
        for move in moves_so_far:
            earlier.append(past.copy())
            past.play(move)
    result = _solve(game, None, budget_s, earlier)
    if result.verdict == "unwinnable" and earlier:
        # Lost only without the positions already passed through: a win may still go back
        # through one of them. Check with what is left of the budget before saying so.
        result = _solve(game, None, max(budget_s - result.seconds, 0.0), ())
    line = result.moves if result.verdict == "won" else result.best_line
    if line:
        return line[0], result.verdict
    return legal[0], result.verdict
