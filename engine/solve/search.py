"""The search shared by every solver: exact depth-first graph search, beam search,
and the budget they share.

Each game supplies a small rules object (`SearchRules`) over its own compact
state; this module owns the loops, the transposition set, the budget and the
bookkeeping of the line that led to the best position seen.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Generic, Literal, Protocol, TypeVar

Verdict = Literal["won", "unwinnable", "gave_up"]

S = TypeVar("S")

# A move and the line before it, as beam search grows lines without copying them.
Line = tuple[str, "Line"] | None

# The deadline is checked once every this many nodes: a few milliseconds of search
# at most, which is all a time budget can be overrun by.
_CLOCK_EVERY = 256


class SearchRules(Protocol[S]):
    """What a game tells the search about its positions."""

    def children(self, state: S) -> Iterable[tuple[str, S]]:
        """(move string, resulting state) for every move worth trying."""
        ...

    def key(self, state: S) -> Hashable:
        """A canonical key: equal keys must have the same future (up to renaming piles)."""
        ...

    def won(self, state: S) -> bool: ...

    def progress(self, state: S) -> int:
        """Cards home; picks the line to the best position when the search gives up."""
        ...

    def promise(self, state: S) -> float:
        """Higher is tried first; only ever computed for positions not seen before."""
        ...


@dataclass
class Budget:
    """A node budget and/or a wall-clock budget (None: no limit of that kind).

    The clock starts when the budget is made. Several searches may share one
    budget; `used` counts the nodes of all of them.
    """

    nodes: int | None = None
    seconds: float | None = None
    used: int = 0
    _started: float = field(default_factory=time.perf_counter, repr=False)

    def elapsed(self) -> float:
        return time.perf_counter() - self._started

    def spend(self) -> bool:
        """Count one node; True once the budget is exhausted."""
        self.used += 1
        if self.nodes is not None and self.used >= self.nodes:
            return True
        if self.seconds is not None and self.used % _CLOCK_EVERY == 0:
            return self.elapsed() >= self.seconds
        return False

    def out(self) -> bool:
        """Exhausted already, without counting a node."""
        if self.nodes is not None and self.used >= self.nodes:
            return True
        return self.seconds is not None and self.elapsed() >= self.seconds


@dataclass
class Outcome(Generic[S]):
    """What one search found (before it is turned into a public SolveResult)."""

    verdict: Verdict
    moves: list[str]
    best_line: list[str]
    nodes: int
    progress: int = 0  # rules.progress of where best_line leads


class DepthFirst(Generic[S]):
    """Depth-first search of every position reachable from `root`, each once.

    A position's key joins the transposition set when the position is first
    generated, so it is never generated again; children are tried best first
    by `rules.promise`. When the stack empties without a win, every reachable
    position has been seen and the deal is proven unwinnable. The winning line
    is the path on the stack when a won position is generated.

    `run` may be called again after it gave up: it carries on where it stopped.
    Positions in `avoid` count as seen from the start: the search never
    enters them (hints use this to never lead back to where a game has been).
    """

    def __init__(self, rules: SearchRules[S], root: S, avoid: Iterable[S] = ()) -> None:
        self.rules = rules
        self.nodes = 0
        self._seen = {rules.key(p) for p in avoid}
        self._seen.add(rules.key(root))
        self._path: list[str] = []
        self._best = rules.progress(root)
        self._best_line: list[str] = []
        self._won = rules.won(root)
        self._stack = [] if self._won else [self._expand(root)]

    def _expand(self, state: S) -> Iterator[tuple[str, S]]:
        rules, seen = self.rules, self._seen
        fresh = []
        for move, child in rules.children(state):
            k = rules.key(child)
            if k not in seen:
                seen.add(k)
                fresh.append((rules.promise(child), move, child))
        fresh.sort(key=lambda t: -t[0])
        return iter([(move, child) for _, move, child in fresh])

    def run(self, budget: Budget, cap: int | None = None) -> Outcome[S]:
        """Search on until decided, the budget is spent, or `cap` more nodes were entered."""
        if self._won:
            return Outcome("won", self._path.copy(), self._path.copy(), self.nodes, self._best)
        rules, stack, path = self.rules, self._stack, self._path
        entered = 0
        while stack:
            for move, child in stack[-1]:
                self.nodes += 1
                entered += 1
                path.append(move)
                score = rules.progress(child)
                if rules.won(child):
                    self._won, self._best = True, score
                    return Outcome("won", path.copy(), path.copy(), self.nodes, score)
                if score > self._best:
                    self._best, self._best_line = score, path.copy()
                stack.append(self._expand(child))
                if budget.spend() or entered == cap:
                    return Outcome("gave_up", [], self._best_line.copy(), self.nodes, self._best)
                break
            else:
                stack.pop()
                if stack:
                    path.pop()
        return Outcome("unwinnable", [], self._best_line.copy(), self.nodes, self._best)


def depth_first(
    rules: SearchRules[S], root: S, budget: Budget, avoid: Iterable[S] = ()
) -> Outcome[S]:
    """Search from `root` until decided or out of budget (see DepthFirst)."""
    return DepthFirst(rules, root, avoid).run(budget)


def beam(rules: SearchRules[S], root: S, budget: Budget, width: int) -> Outcome[S]:
    """Breadth-first by number of moves, keeping the `width` most promising positions of
    each depth (by `rules.promise`). Incomplete by design: it answers "won" or "gave_up".
    """

    def unwind(line: Line) -> list[str]:
        moves: list[str] = []
        while line is not None:
            moves.append(line[0])
            line = line[1]
        return moves[::-1]

    seen = {rules.key(root)}
    layer: list[tuple[S, Line]] = [(root, None)]
    best, best_line = rules.progress(root), None
    while layer:
        scored: list[tuple[float, int, S, Line]] = []
        for state, line in layer:
            for move, child in rules.children(state):
                k = rules.key(child)
                if k in seen:
                    continue
                seen.add(k)
                child_line = (move, line)
                if rules.won(child):
                    moves = unwind(child_line)
                    return Outcome("won", moves, moves, budget.used, rules.progress(child))
                if budget.spend():
                    return Outcome("gave_up", [], unwind(best_line), budget.used, best)
                scored.append((rules.promise(child), len(scored), child, child_line))
        scored.sort(key=lambda t: (-t[0], t[1]))
        layer = [(child, line) for _, _, child, line in scored[:width]]
        if layer and rules.progress(layer[0][0]) > best:
            best, best_line = rules.progress(layer[0][0]), layer[0][1]
    return Outcome("gave_up", [], unwind(best_line), budget.used, best)


def exact_and_beams(
    exact: DepthFirst[S],
    beam_search: Callable[[Budget, int], Outcome[S]],
    budget: Budget,
    *,
    exact_share: int,
    width: int,
    growth: int,
) -> Outcome[S]:
    """Exact depth-first search and beams of growing width, taking turns.

    The exact search settles what it can (won or proven unwinnable) and is resumed
    each turn with twice the share; the beams, each `growth` times wider than the
    last, find wins that a depth-first search stuck deep in a hopeless branch would
    take far too long to reach.
    """
    best: Outcome[S] | None = None
    while True:
        out = exact.run(budget, cap=exact_share)
        if out.verdict != "gave_up":
            return out
        if best is None or out.progress > best.progress:
            best = out
        if budget.out():
            break
        out = beam_search(budget, width)
        if out.verdict == "won":
            return out
        if out.progress > best.progress:
            best = out
        if budget.out():
            break
        exact_share, width = exact_share * 2, width * growth
    assert best is not None
    return Outcome("gave_up", [], best.best_line, budget.used, best.progress)
